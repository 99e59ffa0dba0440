// runtime: the actor system podref's managers run on.
//
// Either podref creates and owns one (configured from measurements: the
// "sharing" scheduler policy with two workers cuts a blocking call from the
// default policy's ~100 µs to ~15 µs and idles at no CPU), or it borrows the
// embedder's. Destroy every manager and API server built on a runtime before
// the runtime itself, and destroy the runtime before main() returns: CAF
// 0.17.6 corrupts the heap when an actor system is destroyed by the exit
// handlers (a function-local static or global runtime aborts at exit).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace caf {
class actor_system;
} // namespace caf

namespace podref {

struct runtime_options {
  /// Scheduler worker threads.
  std::size_t workers = 2;
  /// Scheduler policy: "sharing" (podref's: CAF's work sharing, plus the
  /// count of pending jobs snapshot reads give way to, see
  /// detail/give_way.hpp), or
  /// CAF's "stealing" or "testing".
  std::string policy = "sharing";
  /// "sharing" only: how long a worker that is busy (its last wait for a
  /// job was under 250 us) polls for the next job before it sleeps, in
  /// microseconds; 0 (the default): it sleeps at once. A job queued within
  /// it starts without a thread wake-up (15-30 us on a VM). At 30, a
  /// change callback's p50 59-73 -> 21-40 us and p99 103-122 -> 73-100 us,
  /// for 1-2% of a core more at a write per millisecond and 7-11% more
  /// steady CPU for 500 hollow nodes in one process (docs/notifications.md).
  std::size_t idle_spin_us = 0;
};

class runtime {
public:
  /// Creates and owns an actor system.
  explicit runtime(const runtime_options& opts = {});

  /// Borrows `sys`; it must outlive this runtime.
  explicit runtime(caf::actor_system& sys) noexcept;

  ~runtime();

  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  caf::actor_system& system() noexcept {
    return *sys_;
  }

private:
  struct owned;
  std::unique_ptr<owned> owned_;
  caf::actor_system* sys_;
};

} // namespace podref
