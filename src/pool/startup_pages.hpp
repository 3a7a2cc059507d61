// src/pool/startup_pages.hpp: a worker gives back the file pages it touched
// only while starting.
//
// Starting a worker reads much more of libnode, ICU's data and the C++
// runtime than a run ever does again: node's and V8's initialisers, the
// startup snapshot made once per process, ICU's time zone and locale tables
// for the warm-up (worker.cc). Those pages stay resident in the worker
// (22 of its 36 MiB after the standard workloads, BENCHMARKS.md) although
// no run needs most of them. The page cache keeps them, shared by every
// process that maps the files, so a page dropped here and needed later is
// a minor fault away, never a read from disk.
#pragma once

#include <cstdint>

namespace corral::pool {

struct DroppedPages {
  std::uint64_t mappings = 0;  // mappings given back
  std::uint64_t bytes = 0;     // their resident bytes before
};

// Drops this process's resident pages of every read-only, file-backed,
// private mapping that holds no page of its own (smaps' `Anonymous: 0 kB`):
// code and constant data, never a page that relocations or anything else
// wrote, which MADV_DONTNEED would lose. With `trim_malloc`, also returns
// malloc's free memory to the kernel. Safe while other threads run (a
// dropped page is faulted back in from the file); call it before the
// lockdown (it reads /proc). Without `trim_malloc` it allocates nothing and
// makes only async-signal-safe calls: the reaper calls it after its fork.
DroppedPages drop_startup_pages(bool trim_malloc);

}  // namespace corral::pool
