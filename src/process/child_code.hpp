// src/process/child_code.hpp: the mark of code that runs between clone and
// exec, in a child sharing (vfork) or copying the memory of a multithreaded
// supervisor: raw system calls only, no allocation, no locks, and no
// sanitizer instrumentation (its interceptors take locks).
#pragma once

#define CORRAL_CHILD_CODE __attribute__((noinline, no_sanitize("address", "undefined")))
