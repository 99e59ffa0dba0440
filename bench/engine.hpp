// engine: podref's load benchmark. Runs each workload against podref's
// facade and against the kubelet-design baseline in the same process, over
// one in-memory API server, and returns one result row per (workload,
// implementation, thread count).
//
// Workloads (closed loop over the public operations; see
// /work/shared/reference/performance-anchors.md for the Go definitions):
// - register: unique pods with 3 references over the pool, after anchor pods
//   made every pool object known; the time includes sync() at the end;
// - churn-warm: register + unregister = one op, anchors keep every pool
//   object referenced; time includes sync();
// - churn-cold: the same without anchors and with disjoint objects per op,
//   so every op starts and stops the reflectors of its objects;
// - get: reads of registered, synced objects;
// - propagate: a writer updates objects at a set rate while the callers
//   read; the percentiles are write-to-first-read latencies;
// - scale: N pods referencing N distinct objects; time until all synced,
//   memory per reflector, teardown time, reflectors left.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "podref/messages/source_protocol.hpp"
#include "podref/runtime/object_manager.hpp"

namespace podref::bench {

/// Every workload name, in run order.
const std::vector<std::string>& workload_names();

/// One measured run.
struct bench_result {
  std::string workload;
  std::string impl;
  std::string strategy;
  std::size_t threads = 0;
  std::uint64_t ops = 0;
  double seconds = 0;
  double ops_per_sec = 0;
  /// What the percentiles measure: "call" latency or "propagation".
  std::string latency = "call";
  std::uint64_t p50_ns = 0;
  std::uint64_t p99_ns = 0;
  std::uint64_t p999_ns = 0;
  std::uint64_t max_ns = 0;
  std::uint64_t peak_rss_bytes = 0;
  std::int64_t live_reflectors_after = 0;
  /// Reads that failed (get and propagate); 0 elsewhere.
  std::uint64_t errors = 0;
  /// What the API server answered during the timed part (both
  /// implementations share one server, so the counts compare the work
  /// done): the work an op costs is api_actions / ops. Scale counts its
  /// registration and its teardown.
  source_action_counts api_actions;
  /// Workload-specific figures (scale: bytes_per_reflector, teardown_s...).
  std::map<std::string, double> extra;
};

struct bench_options {
  std::vector<std::string> workloads = workload_names();
  std::vector<std::size_t> threads = {1, 2, 4, 8};
  /// Implementations to run: "podref", "baseline".
  std::vector<std::string> impls = {"podref", "baseline"};
  /// "watch", or "cache" (the TTL strategy; baseline only for now).
  std::string strategy = "watch";
  /// Duration of the timed workloads.
  double seconds = 1.0;
  /// Pods registered by the register workload.
  std::uint64_t register_ops = 200000;
  /// Objects the pool workloads reference.
  std::size_t pool = 1000;
  /// Pods (= objects = reflectors) of the scale workload.
  std::size_t scale_pods = 100000;
  /// Object updates per second in the propagate workload.
  double write_rate = 1000;
  /// TTL of the cache strategy.
  double ttl_seconds = 60;
  /// podref's manager_options::coalesce (default: the facade's).
  std::chrono::nanoseconds coalesce = manager_options{}.coalesce;
  /// podref's manager_options::max_unapplied_releases.
  std::size_t max_unapplied_releases = manager_options{}.max_unapplied_releases;
  /// Receives a one-line status about every 100 ms; may be empty.
  std::function<void(const std::string&)> progress;
  /// Receives each result as soon as it is measured, before the subject
  /// shuts down (which can take long); may be empty.
  std::function<void(const bench_result&)> measured;
};

class engine {
public:
  /// Starts a runtime and an API server holding the objects that `opts`'
  /// workloads need.
  explicit engine(const bench_options& opts);

  ~engine();

  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  /// Runs every selected workload for every thread count and
  /// implementation.
  std::vector<bench_result> run_all();

  /// Runs one workload against one implementation.
  bench_result run(const std::string& workload, const std::string& impl,
                   std::size_t threads);

private:
  struct impl_state;
  std::unique_ptr<impl_state> impl_;
};

} // namespace podref::bench
