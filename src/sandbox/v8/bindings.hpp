// src/sandbox/v8/bindings.hpp: what a run's context contains and how the
// guest's code is loaded into it.
//
//   bindings.cc  the global template: console, tool namespaces, the
//                no_such_tool interceptor, and their callbacks
//   guest.cc     loading: console and hermetic bootstrap, snippets, the run's code in its
//                eval / execute / call shape; error classification
#pragma once

#include <v8.h>

#include "sandbox/engine.hpp"
#include "sandbox/v8/engine_v8.hpp"

namespace corral::sandbox::v8engine {

// The console object every run's global gets. V8 installs its own console
// (silent without an inspector) after the global template is applied, so
// ours is set on the global once the context exists.
v8::Local<v8::ObjectTemplate> make_console_template(v8::Isolate* isolate);

// The global object template of every run: the bound tools.
v8::Local<v8::ObjectTemplate> make_global_template(v8::Isolate* isolate, const Registry& registry);

// One run in progress inside its context.
struct RunContext {
  V8Engine& engine;
  RunState& run;
  v8::Local<v8::Context> context;
  v8::MicrotaskQueue& queue;
  v8::TryCatch& try_catch;
  RunOutcome& outcome;
  v8::Local<v8::Value> result;  // the run's value (maybe a promise) once run_guest succeeds
};

// Gives a new context corral's globals: our console and, in the hermetic
// profile, the fixed Math.random stream. False if that was stopped midway (a
// termination) or failed.
bool install_globals(V8Engine& engine, v8::Local<v8::Context> context);

// Loads the snippets, then the request's code, and leaves its
// completion value in rc.result. Returns false when the run failed (the
// failure is recorded in rc.outcome, or an exception is in rc.try_catch, or
// a verdict stopped it).
bool run_guest(RunContext& rc, const RunRequest& request, const Registry& registry);

// Records the failure for the exception in rc.try_catch.
void classify_caught(RunContext& rc);
// Records the failure for a thrown or rejected `exception`.
void classify_exception(RunContext& rc, v8::Local<v8::Value> exception,
                        v8::Local<v8::Message> message);

}  // namespace corral::sandbox::v8engine
