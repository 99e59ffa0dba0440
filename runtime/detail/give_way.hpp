// give_way: snapshot reads that let waiting actors run.
//
// A snapshot read never waits for an actor, but the actors that keep the
// snapshots fresh need a CPU too. With a busy reader on every core (a load
// test, a node's hot loop), a woken worker waits until the kernel takes a
// reader off its CPU, which it does at the end of the reader's slice: a
// write then reached the readers in 1.0-1.1 ms at p99 and 3.5-4.5 ms at
// p99.9 (100k watched objects, two readers on two cores, Linux 6.18's
// EEVDF), in steps of the writer's and the timer's wake-ups.
//
// So every 16th read on a thread checks whether the scheduler has actor
// jobs queued or running (podref's sharing policy counts them); if it has,
// the reading thread yields its CPU once (sched_yield), which lets a worker
// waiting for that CPU run at once. Checks back off while jobs stay pending
// (work the yield may not speed up: its worker may be running elsewhere):
// the interval doubles up to 1024 reads, and returns to 16 once none is
// seen pending. Without podref's policy (another policy, or an embedder's
// actor system with its own scheduler) reads never yield.
#pragma once

#include <atomic>
#include <cstdint>

namespace caf {
class actor_system;
} // namespace caf

namespace podref::detail {

/// Jobs queued or running in a scheduler with podref's sharing policy.
using pending_jobs = std::atomic<std::uint32_t>;

/// The pending jobs of `sys`'s scheduler, or null when it does not run
/// podref's sharing policy.
const pending_jobs* pending_jobs_of(caf::actor_system& sys) noexcept;

/// One thread's read count and check interval.
class give_way_clock {
public:
  static constexpr std::uint32_t min_interval = 16;
  static constexpr std::uint32_t max_interval = 1024;

  /// Counts one read; true iff this read checks for pending jobs.
  bool tick() noexcept {
    return --countdown_ == 0;
  }

  /// After a check that saw `pending` jobs: true iff the thread yields
  /// now.
  bool checked(std::uint32_t pending) noexcept {
    if (pending == 0) {
      interval_ = min_interval;
    } else if (interval_ < max_interval) {
      interval_ *= 2;
    }
    countdown_ = interval_;
    return pending != 0;
  }

private:
  std::uint32_t countdown_ = min_interval;
  std::uint32_t interval_ = min_interval;
};

/// Yields the calling thread's CPU.
void yield_cpu() noexcept;

/// Called by every snapshot read: see above.
inline void give_way(const pending_jobs* pending) noexcept {
  if (pending == nullptr)
    return;
  thread_local give_way_clock clock;
  if (clock.tick() && clock.checked(pending->load(std::memory_order_relaxed)))
    yield_cpu();
}

} // namespace podref::detail
