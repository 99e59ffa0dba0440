// closed_loop: runs an operation back to back on N caller threads, for a
// fixed duration or a fixed number of operations, recording call latencies
// in a per-thread histogram. By default every call is timed with one clock
// read per operation (the latency of operation k is the time since
// operation k-1 ended). For operations that cost about as much as a clock
// read (a steady_clock read is 20-60 ns on the VMs this runs on, a synced
// get about as much), `sample_every` N > 1 times only every N-th call per
// thread, alone between two clock reads, so the timing neither dominates
// the throughput nor inflates the latencies.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "bench/histogram.hpp"

namespace podref::bench {

/// What the main thread reports while the callers run.
using progress_fn
  = std::function<void(double elapsed_seconds, std::uint64_t ops_done)>;

struct loop_spec {
  std::size_t threads = 1;
  /// Stop after this many operations in total; 0: run for `seconds`.
  std::uint64_t ops = 0;
  double seconds = 1.0;
  /// Time every call (1) or only every N-th call of each thread (see top).
  std::uint32_t sample_every = 1;
  /// Called about every 100 ms on the main thread; may be empty.
  progress_fn progress;
};

struct loop_result {
  /// Operations completed.
  std::uint64_t ops = 0;
  /// Wall time from the start signal until every caller finished.
  double seconds = 0;
  histogram latency;
};

/// The operation: op(thread, index). With an op count, indices 0..ops-1 are
/// handed out once each across threads (claimed in chunks); with a
/// duration, thread t gets t, t+threads, t+2*threads, ... (unique too).
using loop_op = std::function<void(std::size_t thread, std::uint64_t index)>;

loop_result run_closed_loop(const loop_spec& spec, const loop_op& op);

} // namespace podref::bench
