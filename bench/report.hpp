// report: the benchmark's outputs: a table with podref/baseline ratios,
// JSON lines, CSV, and a gnuplot chart of throughput against threads.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "bench/engine.hpp"

namespace podref::bench {

/// podref's ops/s over the baseline's for the same workload, strategy and
/// thread count, when both ran.
std::optional<double> ratio_to_baseline(const std::vector<bench_result>& all,
                                        const bench_result& r);

/// A human-readable table, one row per result.
void print_table(const std::vector<bench_result>& all, std::ostream& out);

/// One JSON object per result and line, for results [first, end);
/// ratio_to_baseline appears once both rows of the pair are in `all`.
void print_json(const std::vector<bench_result>& all, std::ostream& out,
                std::size_t first = 0);

/// CSV with a header line.
void print_csv(const std::vector<bench_result>& all, std::ostream& out);

/// Renders throughput against threads per workload and implementation
/// into `png` with gnuplot. Returns an error message, empty on success.
std::string write_plot(const std::vector<bench_result>& all,
                       const std::string& png);

/// The gnuplot script (bench/plot.gp), compiled in.
const char* plot_script();

} // namespace podref::bench
