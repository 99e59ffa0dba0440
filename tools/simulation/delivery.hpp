// What the run was asked for against what it delivered: arrivals, updates
// and reads per second. A rate is paced, and a thread that falls behind
// skips the ticks it missed, so a run asked for more than the harness can
// do delivers less; this says so instead of reporting the smaller run as if
// it were the one asked for.
#pragma once

#include <cstdint>

#include "simulation/simulation.hpp"

namespace podref::cli::sim {

/// What the threads counted, besides the summary's totals.
struct delivery_counts {
  /// Arrival ticks, refused ones included.
  std::uint64_t arrivals = 0;
  /// Update attempts, failed ones included, and ticks with nothing to
  /// update.
  std::uint64_t updates = 0;
  std::uint64_t idle_update_ticks = 0;
  std::uint64_t reads = 0;
  std::uint64_t idle_read_ticks = 0;
};

/// Fills the three rates of `sum` and its shortfalls.
void measure_delivery(const delivery_counts& counts, simulation_summary& sum);

} // namespace podref::cli::sim
