// tests/sandbox_ruby/fuzz/ruby_generator.hpp: random hostile Ruby method calls.
//
// A batch is a prelude (kRubyFuzzPrelude: the class list, a method picker)
// and statements, each `begin ... rescue Exception; end`, so that one
// raising call does not end the batch. A statement calls a method on a
// receiver drawn from core values, core classes and their allocate()d
// instances, with hostile arguments (nil, 2**64, -2**63, NaN, huge strings,
// deep and self-referential containers, procs, classes) and sometimes a
// block; the method is either named from a list of risky ones or picked by
// index from the receiver's own (public and private) methods, so that every
// method a core class has is reachable. The same seed makes the same
// statements; a picked-by-index method depends on the build's method set.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace corral::sandbox::fuzz {

// Defines __fz_mods, __fz_alloc, __fz_m, __fz_deep_a/h, __fz_self_a/h.
extern const char kRubyFuzzPrelude[];

class RubyGenerator {
 public:
  explicit RubyGenerator(std::uint64_t seed) : rng_(seed) {}

  // One statement, on one line, that raises nothing out of itself.
  std::string statement();
  // `count` statements.
  std::vector<std::string> batch(std::size_t count);

 private:
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }
  std::string value(int depth = 0);
  std::string receiver();
  std::string args();
  std::string block();
  std::string call(const std::string& recv_var);

  std::mt19937_64 rng_;
};

}  // namespace corral::sandbox::fuzz
