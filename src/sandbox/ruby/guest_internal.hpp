// src/sandbox/ruby/guest_internal.hpp: what the parts of a Guest share,
// included by them only: guest.cc (states, their counting allocator,
// output), guest_setup.cc (what a new state is built from), guest_tools.cc
// (the methods guest code reaches the host through) and guest_run.cc (one
// run, from the protected body to its result).
#pragma once

#include <mruby.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/ruby/guest.hpp"

namespace corral::sandbox::ruby {

// Instance variables without @, so guests cannot name them: the FailureCode
// an exception the host raised carries, and a tool module's method table.
inline constexpr char kCodeIvar[] = "__corral_code";
inline constexpr char kToolsIvar[] = "__corral_tools";

inline Guest* guest_of(mrb_state* mrb) { return static_cast<Guest*>(mrb->ud); }

// What a state's counting allocator (guest.cc) keeps: a run may hold
// `limit` bytes past `baseline`, what the state held when the run began.
struct Guest::Heap {
  Guest* guest = nullptr;
  std::int64_t live = 0;
  std::int64_t baseline = 0;
  std::uint64_t limit = kNone;
  bool armed = false;
  std::int64_t since_gc = 0;  // bytes allocated since pace_gc last asked for a GC
};

// One mrb_state with the heap its allocator counts into.
struct Guest::State {
  Heap heap;
  mrb_state* mrb = nullptr;
  ~State() {
    if (mrb) mrb_close(mrb);
  }
};

// guest_setup.cc: run under mrb_protect_error by Guest::open; `error` is
// set when the setup refuses it (a tool path), an mruby exception otherwise.
struct SetupContext {
  Guest* guest;
  std::string* error;
  std::vector<RObject*> created;  // the modules the tool paths made
};

mrb_value setup_state(mrb_state* mrb, void* data);

// guest_tools.cc: the C methods setup_state defines.
mrb_value write_method(mrb_state* mrb, mrb_value self);         // Kernel#__corral_write__
mrb_value missing_tool_method(mrb_state* mrb, mrb_value self);  // a tool module's method_missing
mrb_value tool_method(mrb_state* mrb, mrb_value self);          // every bound tool

// guest_run.cc. What one run's protected body works on; C++ objects live here, outside
// the frames an mruby exception unwinds.
struct RunContext {
  Guest* guest;
  const GuestRequest* request;
  GuestResult* result;
  std::string code;           // the main code, fence stripped
  std::string filename;       // of the source being loaded
  std::string compile_error;  // set when a source did not parse
  std::string value_json;
  std::string why;
  std::vector<std::string> snippet_files;
  mrb_value before_constants;
  bool done = false;  // the body set result itself
};

// Fills `result` from an uncaught exception: a code the host attached, or
// guest_error with "FILE:LINE: message (Class)" and the backtrace.
void describe_exception(mrb_state* mrb, mrb_value exc, GuestResult& result);

}  // namespace corral::sandbox::ruby
