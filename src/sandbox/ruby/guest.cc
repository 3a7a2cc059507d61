// One mruby interpreter (guest.hpp): the states a Guest opens, the counting
// allocator that holds each run to its memory limit, and the capped output.
// What a state is built from is guest_setup.cc, the methods guest code
// calls the host through guest_tools.cc, a run itself guest_run.cc.
#include "sandbox/ruby/guest.hpp"

#include <malloc.h>
#include <mruby.h>
#include <mruby/error.h>
#include <mruby/gc.h>

#include <atomic>
#include <cstdlib>

#include "core/utf8.hpp"
#include "sandbox/ruby/guest_internal.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace corral::sandbox::ruby {
namespace {

// mruby paces its GC by objects made, not bytes: a loop that keeps 100 KB
// live but makes a 100 KB garbage string or array per step reached the
// limit long before a GC ran. Once a run holds a quarter of its limit,
// each further eighth of the limit it allocates asks for a GC at mruby's
// next object allocation, which is where mruby collects by design (a GC
// from inside this allocator is not safe: mruby's own collect-and-retry on
// a failed allocation crashes in fiber_init, RubyHostile.FiberGamesEndCleanly).
// Each GC asked for runs whole, not in increments, and past half the limit
// it is a major one, which also frees garbage that had lived through a GC
// (a previous step's value still held in a VM register is marked once and
// then old). What is still held at the limit is live, or the guest turned
// the GC off.
// A GC step ratio no heap within a run's limit exhausts in one increment.
constexpr int kWholeCycleSteps = 1 << 24;

void pace_gc(mrb_state* mrb, Guest::Heap& heap, std::int64_t used, std::size_t size) {
  heap.since_gc += static_cast<std::int64_t>(size);
  const auto limit = static_cast<std::int64_t>(heap.limit);
  if (used < limit / 4 || heap.since_gc < limit / 8) return;
  heap.since_gc = 0;
  mrb_gc& gc = mrb->gc;
  gc.threshold = 0;                  // mrb_obj_alloc collects when live > threshold
  gc.step_ratio = kWholeCycleSteps;  // an increment that finishes the cycle
  if (used > limit / 2) gc.majorgc_old_threshold = 0;  // the next minor GC turns major
}

// Every byte mruby holds goes through here: a run may hold memory_limit
// bytes past what its state held at entry. The allocation that would cross
// the limit stops the run at once: the state is abandoned, not unwound, so
// no `rescue` in the guest can outlive the limit.
void* counting_alloc(mrb_state* mrb, void* p, size_t size, void* ud) {
  auto* heap = static_cast<Guest::Heap*>(ud);
  if (size == 0) {
    if (p) {
      heap->live -= static_cast<std::int64_t>(malloc_usable_size(p));
      std::free(p);
    }
    return nullptr;
  }
  const auto old = static_cast<std::int64_t>(p ? malloc_usable_size(p) : 0);
  if (heap->armed && heap->limit != kNone) {
    const std::int64_t after = heap->live - old + static_cast<std::int64_t>(size);
    if (after - heap->baseline > static_cast<std::int64_t>(heap->limit)) {
      heap->guest->stop(static_cast<std::uint8_t>(FailureCode::memory_limit), "");
    }
    pace_gc(mrb, *heap, after - heap->baseline, size);
  }
  void* q = std::realloc(p, size);
  if (!q) return nullptr;
  heap->live += static_cast<std::int64_t>(malloc_usable_size(q)) - old;
  if (heap->armed) {
#if defined(__SANITIZE_ADDRESS__)
    // A stopped run's state is abandoned on purpose (see Guest::run); only
    // mruby knew where some of its blocks were.
    __lsan_ignore_object(q);
#endif
    const std::int64_t delta = heap->live - heap->baseline;
    auto& peak = heap->guest->counters().memory_peak;
    if (delta > 0 && static_cast<std::uint64_t>(delta) > peak.load(std::memory_order_relaxed)) {
      peak.store(static_cast<std::uint64_t>(delta), std::memory_order_relaxed);
    }
  }
  return q;
}

}  // namespace

Guest::Guest(GuestSetup setup, GuestHost& host, Counters& counters)
    : setup_(std::move(setup)), host_(host), counters_(counters) {}

Guest::~Guest() = default;

bool Guest::open(std::unique_ptr<State>& out, std::string& error) {
  auto state = std::make_unique<State>();
  state->heap.guest = this;
  mrb_state* mrb = mrb_open_core(counting_alloc, &state->heap);
  if (!mrb) {
    error = "mruby could not open a state";
    return false;
  }
  state->mrb = mrb;
  mrb->ud = this;
  // Nearly everything setup allocates lives as long as the state: a GC
  // during setup would only walk it.
  mrb->gc.disabled = TRUE;
  SetupContext ctx{this, &error, {}};
  mrb_bool failed = FALSE;
  mrb_value exc = mrb_protect_error(mrb, setup_state, &ctx, &failed);
  if (failed || mrb->exc) {
    if (!failed) exc = mrb_obj_value(mrb->exc);
    mrb->exc = nullptr;
    GuestResult described;
    describe_exception(mrb, exc, described);
    error = "the Ruby state could not be set up: " + described.message;
    return false;
  }
  if (!error.empty()) return false;
  mrb->gc.disabled = FALSE;
  out = std::move(state);
  return true;
}

void Guest::prepare() {
  used_.reset();
  if (next_) return;
  std::string error;
  open(next_, error);
}

void Guest::write(int channel, const char* bytes, std::size_t size) {
  const std::uint64_t limit = channel == 1 ? setup_.stderr_limit : setup_.stdout_limit;
  (channel == 1 ? counters_.offered_stderr : counters_.offered_stdout).fetch_add(size);
  if (truncated_[channel]) return;
  std::size_t keep = size;
  if (limit != kNone && kept_[channel] + size > limit) {
    keep = static_cast<std::size_t>(limit - kept_[channel]);
    keep = core::utf8_cut(std::string_view(bytes, size), keep);
    truncated_[channel] = true;
    (channel == 1 ? counters_.stderr_truncated : counters_.stdout_truncated).store(1);
  }
  kept_[channel] += keep;
  if (keep > 0) host_.write(channel, std::string_view(bytes, keep));
}

}  // namespace corral::sandbox::ruby
