// report: the summary of a `podref hollow` run, as text, as JSON, and as a
// gnuplot chart (propagation and open watches over time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hollow/convergence.hpp"
#include "hollow/fleet.hpp"
#include "hollow/propagation.hpp"
#include "hollow/workload.hpp"

namespace podref::cli::hollow {

/// One sample of the run, every half second.
struct time_point_sample {
  double at_s = 0;
  std::uint64_t open_watches = 0; // client side: streams with a 200 reply
  std::size_t synced_nodes = 0;
  std::uint64_t registered_pods = 0;
};

struct run_summary {
  std::size_t nodes = 0;
  std::string strategy;
  bool share_connections = false;
  double duration_s = 0;
  /// Seconds from the start until every node synced everything it needs;
  /// nullopt when some never did.
  std::optional<double> all_synced_s;
  /// Per node, seconds until it first synced (those that did).
  std::vector<double> node_synced_s;
  fleet_counts counts;
  client_totals clients;
  std::optional<write_counts> created;
  std::optional<write_counts> deleted;
  std::optional<propagation_result> propagation;
  double update_rate = 0;
  convergence_result convergence;
  /// Memory: RSS and heap in use before the nodes, and once all synced
  /// (or at the end) after the allocator returned what is free; RSS at the
  /// end. CPU seconds of the whole process while syncing and after.
  std::uint64_t rss_before = 0;
  std::uint64_t rss_synced = 0;
  std::uint64_t heap_before = 0;
  std::uint64_t heap_synced = 0;
  std::uint64_t rss_end = 0;
  double cpu_sync_s = 0;
  double cpu_steady_s = 0;
  double steady_s = 0;
  std::size_t threads = 0;
  std::vector<time_point_sample> series;

  /// Converged and nothing failed.
  bool ok() const;
};

nlohmann::ordered_json to_json(const run_summary& s);

void print_summary(const run_summary& s, std::ostream& out);

/// Draws propagation and open watches over time into `png` (gnuplot).
/// Returns an error message, empty on success.
std::string write_plot(const run_summary& s, const std::string& png);


} // namespace podref::cli::hollow
