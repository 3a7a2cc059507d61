// src/core/companion.hpp: where a corral program finds another program it
// execs (corral-ruby-helper for Ruby guests, corral-engine for the front's
// guest-running commands). One rule, so a packager lays both out alike.
#pragma once

#include <string>

namespace corral::core {

// Companion: a program and the places the build put it.
struct Companion {
  const char* program;       // "corral-engine"
  const char* override_var;  // "CORRAL_RUBY_HELPER", or nullptr for none
  const char* build_dir;     // the build tree (CMake's PROJECT_BINARY_DIR)
  const char* build_path;    // the program in that build tree
  const char* install_path;  // CMAKE_INSTALL_FULL_LIBEXECDIR/corral/PROGRAM
};

// The path of `companion`, first match wins:
//   1. $override_var, when set (an error if it is not an executable file);
//   2. beside the running executable: DIR/PROGRAM, then
//      DIR/../libexec/corral/PROGRAM (an installed bin/corral, or an
//      embedder's program installed into the same prefix);
//   3. build_path, only for a program that lives in build_dir (tests,
//      build/.../corral);
//   4. install_path.
// Empty, with `error` saying where it looked, when none is an executable file.
std::string find_companion(const Companion& companion, std::string& error);

// The running executable's path (/proc/self/exe), empty when unreadable.
std::string self_executable();

}  // namespace corral::core
