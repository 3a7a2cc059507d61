// src/sandbox/typescript/position_map.hpp: a map from source positions to
// positions, for the stripper's memos (where a `(` closes, where type
// arguments end, which statements follow a separator).
//
// Open addressing in one flat array: the stripper fills a few dozen entries
// per kilobyte of source on every TypeScript run, and a node-based
// std::unordered_map spent more on malloc and free than on the lookups.
// Keys are byte offsets below 0xFFFFFFFF (strip_types refuses larger
// sources), so key + 1 marks a slot as used and 0 as empty.
//
// Example:
//   PositionMap ends;
//   ends.set(4, 10);
//   if (const std::uint32_t* end = ends.find(4)) use(*end);
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace corral::sandbox::typescript {

class PositionMap {
 public:
  // The value at `key`, or null. Valid until the next set().
  const std::uint32_t* find(std::uint32_t key) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      const Slot& slot = slots_[i];
      if (slot.key_plus_one == 0) return nullptr;
      if (slot.key_plus_one == key + 1) return &slot.value;
    }
  }
  bool contains(std::uint32_t key) const { return find(key) != nullptr; }

  // `key` maps to `value` (replacing what it mapped to).
  void set(std::uint32_t key, std::uint32_t value) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(key);
    while (slots_[i].key_plus_one != 0 && slots_[i].key_plus_one != key + 1) i = (i + 1) & mask();
    if (slots_[i].key_plus_one == 0) ++used_;
    slots_[i] = {key + 1, value};
  }
  // `key` maps to `value` unless it maps to something already.
  void add(std::uint32_t key, std::uint32_t value) {
    if (!contains(key)) set(key, value);
  }

 private:
  struct Slot {
    std::uint32_t key_plus_one = 0;
    std::uint32_t value = 0;
  };

  std::size_t mask() const { return slots_.size() - 1; }
  // Fibonacci hashing: the product's top bits, as many as the table needs.
  std::size_t home(std::uint32_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B1u) >> shift_);
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? kFirstSize : old.size() * 2, Slot{});
    shift_ = 32 - std::countr_zero(slots_.size());
    used_ = 0;
    for (const Slot& slot : old) {
      if (slot.key_plus_one != 0) set(slot.key_plus_one - 1, slot.value);
    }
  }

  static constexpr std::size_t kFirstSize = 64;
  std::vector<Slot> slots_;  // a power of two in size, at most half used
  std::size_t used_ = 0;
  int shift_ = 32;
};

}  // namespace corral::sandbox::typescript
