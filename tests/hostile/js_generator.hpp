// tests/hostile/js_generator.hpp: random JavaScript snippets that call
// builtins with hostile arguments, for the guest fuzzer (guest_js_fuzz.cc).
//
// A snippet is an `async () => {...}` that makes one to three calls on
// builtins (Array, String, Object, Reflect, Proxy, JSON, RegExp, Intl.*,
// Date, Math, Map/Set/WeakMap, typed arrays, ArrayBuffer/SharedArrayBuffer,
// Atomics, Promise, Symbol, BigInt, Function, eval, generators, async
// iteration) with arguments drawn from a pool of hostile values (huge and
// negative lengths, NaN, huge strings, deep nesting, sparse arrays, proxies
// whose traps throw, throwing getters, cyclic objects, huge array-likes), and
// returns a short summary of what came back (so that the fuzzer measures
// the builtins, not the result path, unless a family says otherwise).
//
// Families whose snippets break the guest boundary on the current code are
// marked known_failure (fuzz/README.md lists them with what they do); the
// generator leaves them out unless asked.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace corral::hostile {

// Family: one shape of snippet.
struct Family {
  const char* name;
  bool known_failure;  // breaks the boundary today (fuzz/README.md)
  const char* why;     // for known failures: the class it belongs to
};

// Every family, in a fixed order (the order is part of a reproducer).
const std::vector<Family>& families();

// Snippet: one generated guest program.
struct Snippet {
  std::string family;
  std::string code;
};

// JsGenerator: deterministic for a (seed, index) pair, whatever was
// generated before, so `--seed S --index I` reproduces one snippet.
class JsGenerator {
 public:
  JsGenerator(std::uint64_t seed, bool include_known_failures, std::vector<std::string> only = {});
  Snippet generate(std::uint64_t index);

 private:
  std::string argument();
  std::string arguments(int max);
  std::string string_argument();
  std::string number_argument();
  std::string known_failure_call(const std::string& family);
  const std::string& pick(const std::vector<std::string>& from);
  int below(int n);

  std::uint64_t seed_;
  bool include_known_;
  std::vector<std::string> families_;
  std::mt19937_64 rng_;
};

}  // namespace corral::hostile
