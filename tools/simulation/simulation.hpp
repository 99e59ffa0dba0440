// The node simulation behind `podref simulate`: pods arrive on a node and
// leave again, the embedded API server's Secrets and ConfigMaps change, and
// kubelet-like readers read them through podref's managers while the run
// measures how fast each change reaches a reader. At the end it checks the
// engine's invariants (see simulation_summary::failures).
//
// The harness (arrival, updater and reader threads, and the bookkeeping
// between them) uses ordinary mutexes; only the engine it drives is
// lock-free on its read path.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/pod.hpp"
#include "podref/runtime/object_manager.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/strategy.hpp"

namespace podref {
class api_server;
class runtime;
} // namespace podref

namespace podref::cli {

/// Sizes and rates of one simulation run.
struct simulation_config {
  /// Length of the busy phase; the drain and the checks come after it.
  std::chrono::duration<double> duration = std::chrono::seconds(20);
  /// Pod arrivals per second (evenly spaced).
  double pod_rate = 10;
  /// Mean pod lifetime; each pod lives uniformly between 0.5x and 1.5x.
  std::chrono::duration<double> pod_lifetime = std::chrono::seconds(2);
  /// Most pods alive at once; arrivals on a full node are refused.
  std::size_t max_pods = 110;
  /// Object updates per second, over the mutable objects live pods
  /// reference.
  double update_rate = 50;
  /// Reader threads.
  std::size_t readers = 4;
  /// Object reads per second per reader.
  double read_rate = 100;
  /// Seed of every random choice (timing still varies between runs).
  std::uint64_t seed = 1;
  /// How both managers keep their objects (default options otherwise).
  podref::strategy strategy = strategy::watch;
  /// Zero: no faults. Otherwise one API server fault per period, in turn:
  /// three lists fail, two watches fail, every watch is closed, the event
  /// history expires, the server actor dies and is replaced.
  std::chrono::duration<double> fault_period{0};
};

/// What the simulation runs on: pod templates and the objects to serve.
struct simulation_input {
  /// Each arriving pod is a copy of one of these with a unique name and uid.
  std::vector<pod_ptr> templates;
  /// The Secrets and ConfigMaps the embedded API server starts with.
  std::vector<api_object> objects;
};

/// A snapshot of the run for progress displays.
struct simulation_progress {
  std::chrono::duration<double> elapsed{0};
  std::chrono::duration<double> duration{0};
  std::size_t live_pods = 0;
  std::uint64_t pods_arrived = 0;
  std::uint64_t pods_left = 0;
  std::uint64_t reads = 0;
  std::uint64_t updates = 0;
};

/// Propagation latency: from the start of an object write to the first read
/// that returned the written version, in microseconds. Includes the wait
/// for that read, so it reflects the read rates as well as the engine.
struct latency_summary {
  /// Versions some reader saw (one sample each).
  std::size_t samples = 0;
  /// Versions no reader saw before the next write or the end.
  std::size_t unobserved = 0;
  /// Nearest-rank percentiles of the samples; zero without samples.
  std::int64_t p50_us = 0;
  std::int64_t p99_us = 0;
  std::int64_t p999_us = 0;
  std::int64_t max_us = 0;
};

/// One rate the run was asked for, against what it delivered, per second of
/// the busy phase.
struct rate_delivery {
  double asked = 0;
  double delivered = 0;

  /// delivered / asked; 1 when nothing was asked.
  double fraction() const noexcept {
    return asked > 0 ? delivered / asked : 1.0;
  }
};

/// Everything a run measured and whether the invariants held.
struct simulation_summary {
  simulation_config config;
  /// Wall time of the whole run, drain and checks included.
  std::chrono::duration<double> elapsed{0};
  std::size_t templates = 0;
  std::size_t objects_loaded = 0;
  /// Distinct objects some pod referenced during the run.
  std::size_t objects_referenced = 0;
  std::uint64_t pods_arrived = 0;
  std::uint64_t pods_left = 0;
  /// Arrivals dropped because max_pods were alive.
  std::uint64_t pods_refused = 0;
  std::size_t peak_live_pods = 0;
  /// Pods alive when the busy phase ended (they leave in the drain).
  std::size_t live_at_end = 0;
  std::uint64_t updates = 0;
  std::uint64_t update_errors = 0;
  /// Faults injected, and the failed updates and reads they explain (the
  /// API server unavailable while it restarts, reads that timed out while
  /// lists failed).
  std::uint64_t faults_injected = 0;
  std::uint64_t fault_errors = 0;
  /// Reads by the reader threads and how they ended.
  std::uint64_t reads = 0;
  std::uint64_t read_errors = 0;
  /// Failed reads of an object whose pod left while the read ran: expected.
  std::uint64_t benign_read_errors = 0;
  latency_summary latency;
  /// Pod arrivals (refused ones included), object updates (attempted) and
  /// reads of all readers together.
  rate_delivery arrival_rate;
  rate_delivery update_rate;
  rate_delivery read_rate;
  /// Each rate the run delivered less than 90% of, in a sentence saying
  /// why where the run knows; a warning, not a failure.
  std::vector<std::string> shortfalls;
  /// Manager counters when the readers stopped (reads) ...
  manager_stats secrets_at_stop;
  manager_stats configmaps_at_stop;
  /// ... and after the last pod left (reflectors, API actions, leftovers).
  manager_stats secrets_final;
  manager_stats configmaps_final;
  /// Invariant violations, one sentence each; empty iff the run passed.
  std::vector<std::string> failures;
  /// Why the run never started (the serve hook failed); empty otherwise.
  std::string aborted;

  bool passed() const noexcept {
    return failures.empty();
  }
};

/// Called a few times per second from the thread that runs the simulation.
using progress_callback = std::function<void(const simulation_progress&)>;

/// Called once the API server holds the input's objects, before the busy
/// phase: what it returns (an HTTP front, say) is kept until the run ends,
/// then destroyed before the API server. An error ends the run at once,
/// as a failure.
using serve_hook
  = std::function<result<std::shared_ptr<void>>(runtime&, api_server&)>;

/// Runs one simulation on a fresh runtime, API server and pair of managers
/// and returns its summary. `progress` and `serve` may be empty.
simulation_summary run_simulation(const simulation_config& config,
                                  const simulation_input& input,
                                  const progress_callback& progress = {},
                                  const serve_hook& serve = {});

} // namespace podref::cli
