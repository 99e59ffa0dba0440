// access_stamp: the time a snapshot read records, without reading a clock.
//
// Problem: idle recycling needs, per object, the time of its last read, but a
// clock read costs more than the whole lock-free read (about 60 ns on a KVM
// guest against about 40 ns), and storing the time on every read would
// dirty the object's cache line for every other reader.
//
// Design: the manager publishes a coarse stamp at its start and at every
// recycling pass: the last instant before the next pass is due,
// `now + period - 1ns` (with recycling left to explicit passes, period 0,
// the time of the latest pass). A snapshot read copies the stamp into its
// slot only when the slot holds an older value (object_slot::touch), so
// readers write once per object and period, not once per read.
//
// Contract: a read served from a snapshot counts as a read at the end of
// the recycling period it falls into, an upper bound of its real time (as
// long as the pass timer is on time). Compared with upstream, which stores
// the exact time of every read, a watch is therefore never stopped earlier,
// and it stops at the same pass whenever max idle is a multiple of the
// period (the default: 5 min and 1 min); otherwise up to one period later.
// Reads through the actors still record their exact time.
#pragma once

#include <atomic>
#include <cstdint>

namespace podref::detail {

class alignas(64) access_stamp {
public:
  /// The stamp of a read happening now; 0 before the first publication
  /// (a slot ignores it). Any thread.
  std::int64_t current() const noexcept {
    return value_.load(std::memory_order_relaxed);
  }

  /// Opens a recycling period at `now_ns` (clock time since its epoch) that
  /// lasts `period_ns`; 0: until the next explicit pass. The manager only.
  void open_period(std::int64_t now_ns, std::int64_t period_ns) noexcept {
    value_.store(period_ns > 0 ? now_ns + period_ns - 1 : now_ns,
                 std::memory_order_relaxed);
  }

private:
  // Alone on its line: every snapshot read loads it, one pass a period
  // stores it.
  std::atomic<std::int64_t> value_{0};
};

} // namespace podref::detail
