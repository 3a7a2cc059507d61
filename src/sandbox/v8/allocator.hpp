// src/sandbox/v8/allocator.hpp: an ArrayBuffer allocator that counts.
//
// V8 keeps ArrayBuffer backing stores outside its heap, so the heap limit
// alone does not bound them. Every isolate gets one of these: it refuses an
// allocation that would take the live total past the run's ceiling, and
// tells the run (which then terminates the guest with memory_limit).
#pragma once

#include <v8.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>

namespace corral::sandbox::v8engine {

class CountingAllocator final : public v8::ArrayBuffer::Allocator {
 public:
  // Called on the allocating thread when an allocation is refused.
  std::function<void()> on_refused;

  void* Allocate(size_t length) override {
    if (!admit(length)) return nullptr;
    void* data = std::calloc(length ? length : 1, 1);
    if (!data) live_.fetch_sub(length);
    return data;
  }
  void* AllocateUninitialized(size_t length) override {
    if (!admit(length)) return nullptr;
    void* data = std::malloc(length ? length : 1);
    if (!data) live_.fetch_sub(length);
    return data;
  }
  void Free(void* data, size_t length) override {
    std::free(data);
    live_.fetch_sub(length);
  }

  // Bytes currently allocated (may include garbage not yet collected).
  std::int64_t live() const noexcept { return live_.load(); }
  // Highest live total seen since the last reset_peak().
  std::int64_t peak() const noexcept { return peak_.load(); }
  void reset_peak() noexcept { peak_.store(live_.load()); }
  // Absolute ceiling on live(); negative means none.
  void set_ceiling(std::int64_t ceiling) noexcept { ceiling_.store(ceiling); }

 private:
  bool admit(size_t length) {
    const auto size = static_cast<std::int64_t>(length);
    const std::int64_t now = live_.fetch_add(size) + size;
    const std::int64_t ceiling = ceiling_.load();
    if (size < 0 || (ceiling >= 0 && now > ceiling)) {
      live_.fetch_sub(size);
      if (on_refused) on_refused();
      return false;
    }
    std::int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    return true;
  }

  std::atomic<std::int64_t> live_{0};
  std::atomic<std::int64_t> peak_{0};
  std::atomic<std::int64_t> ceiling_{-1};
};

}  // namespace corral::sandbox::v8engine
