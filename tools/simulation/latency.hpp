// Propagation latency: from the start of each write to the first read, by
// any reader, that returned the written version.
#pragma once

#include <memory>
#include <vector>

#include "simulation/reader.hpp"
#include "simulation/simulation.hpp"
#include "simulation/updater.hpp"

namespace podref::cli::sim {

/// Percentiles come from bench::histogram (nearest rank, within 1/128 of
/// the sample, never above the largest).
latency_summary
measure_latency(const std::vector<write_record>& writes,
                const std::vector<std::unique_ptr<reader>>& readers);

} // namespace podref::cli::sim
