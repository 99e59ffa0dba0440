// `podref bench -w wire-*`: the wire client measured (docs/benchmarks.md,
// "The wire client"). Each workload returns bench_result rows (printed by
// bench/report.hpp like the engine's), its figures in `extra`:
// - wire-replay: CPU per watch event applied, client only, from recorded
//   watch streams fed from memory (decode + apply; no server, no socket);
//   the decoder alone too;
// - wire-sync: N Secrets synced through a Watch manager over a cluster
//   against the API server in a child process: time until all read as
//   synced and until every watch is open, connections opened, requests,
//   and the client's RSS per watched object (its streams and buffers
//   included), with the client-side rate limit of --qps (0: none; the
//   kubelet's is 50, burst 100);
// - wire-propagate: with N watched, the client's CPU per event applied
//   end to end (the server updates every object `events` times), and
//   write-to-visible latency added over the server's own write (a write
//   at a time; p50/p99 of the time from the server's update returning to
//   the client reading the new version).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bench/engine.hpp"
#include "podref/messages/pod.hpp"

namespace podref::bench {

struct wire_bench_options {
  std::vector<std::string> workloads;
  /// Watched objects (one pod each).
  std::size_t objects = 10000;
  /// Value bytes per object.
  std::size_t bytes = 1024;
  /// Updates per object (replay, propagate's CPU part).
  std::size_t events = 10;
  /// Writes timed one at a time (propagate).
  std::size_t samples = 2000;
  /// Client-side rate limit (0: none).
  double qps = 0;
  std::size_t burst = 100;
  /// "h2-tls", "h2c" or "http1".
  std::string transport = "h2-tls";
  std::function<void(const std::string&)> progress;
  /// Receives each result as soon as it is measured; may be empty.
  std::function<void(const bench_result&)> measured;
};

/// Whether `name` is a wire workload.
bool is_wire_workload(const std::string& name);

/// Runs the selected wire workloads in order; throws std::runtime_error
/// when one cannot run (a server that does not start, an object that does
/// not sync), after `measured` got the results before it.
std::vector<bench_result> run_wire_workloads(const wire_bench_options& o);

/// The workloads themselves.
bench_result run_wire_replay(const wire_bench_options& o);
bench_result run_wire_sync(const wire_bench_options& o);
bench_result run_wire_propagate(const wire_bench_options& o);

/// Pod p<i> referencing Secret s<i> (an image pull secret).
pod bench_pod(std::size_t i);

} // namespace podref::bench
