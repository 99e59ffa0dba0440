// deterministic_runtime: a podref runtime for tests, on CAF's deterministic
// scheduler with a virtual clock. No worker threads: actors run only when
// the test runs them, and time passes only when the test lets it.
//
// Managers and API servers built on it behave as on a threaded runtime; only
// time and interleaving are the test's:
// - run_until_idle() runs every message that can be handled now;
// - advance(d) lets d of virtual time pass, firing each timer (a TTL, the
//   sync timeout, a backoff, the idle-recycling pass) at its time, in order;
// - a blocking facade call (sync(), get(), status(), register_pod_and_wait(),
//   the API server's calls and hooks) runs the engine until it is answered,
//   letting virtual time pass only as far as it waits on a threaded runtime
//   (a read waiting for a held list returns "failed to sync" after exactly
//   the sync timeout of virtual time, in microseconds of real time);
// - register_pod() and unregister_pod() enqueue and never wait; they are
//   applied by the next call that runs the engine (run_until_idle()
//   included: the manager does not coalesce here).
//
// One thread drives it: call it and the facades on it from the test's
// thread only. Destroy the managers and API servers before the runtime.
// No CAF types here: tests include this header and the facades only.
#pragma once

#include <chrono>
#include <cstddef>

#include "podref/runtime/runtime.hpp"

namespace podref::testing {

class deterministic_runtime : public runtime {
public:
  using clock_type = std::chrono::steady_clock;

  deterministic_runtime();

  /// Runs what is left, firing pending timers, so that stopped actors
  /// finish before the actor system goes.
  ~deterministic_runtime();

  /// Runs every job that can run without time passing; returns how many.
  std::size_t run_until_idle();

  /// Lets `d` of virtual time pass: fires every timer due within it at its
  /// own time, in time order, running what each one starts before the next
  /// (a chain of backoffs within `d` runs whole); then the clock reads
  /// now() + d. Returns how many jobs ran.
  std::size_t advance(std::chrono::nanoseconds d);

  /// The virtual clock (what the engine stamps and compares TTLs with).
  clock_type::time_point now() const;

  /// How many timers are pending (delayed messages, request timeouts).
  std::size_t pending_timers() const;
};

} // namespace podref::testing
