#include "hollow/report.hpp"

#include "bench/gnuplot.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace podref::cli::hollow {

namespace {

using ojson = nlohmann::ordered_json;

double ms(std::uint64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

ojson latency_json(const bench::histogram& h) {
  ojson x;
  x["count"] = h.count();
  x["p50_ms"] = ms(h.value_at_percentile(50));
  x["p99_ms"] = ms(h.value_at_percentile(99));
  x["max_ms"] = ms(h.max());
  return x;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size()));
  return v[std::min(rank, v.size() - 1)];
}

ojson writes_json(const write_counts& w) {
  ojson x;
  x["done"] = w.created;
  x["existed"] = w.existed;
  x["failed"] = w.failed;
  x["errors"] = w.errors;
  return x;
}

/// Per hollow node: bytes of RSS and CPU microseconds per second.
double per_node(double total, std::size_t nodes) {
  return nodes == 0 ? 0 : total / static_cast<double>(nodes);
}


constexpr const char* plot_script = R"gp(
set terminal pngcairo size 1000,760 noenhanced
set output outfile
set multiplot layout 2,1 title title
set grid
set xrange [0:*]
set xlabel "seconds since the nodes started"
set ylabel "write to visible on every node (ms)"
set key top left
plot datafile index 1 using 1:2 with points pt 7 ps 0.5 title "propagation (each write)"
set ylabel "open watches (client side)"
set y2label "nodes synced"
set y2tics
set ytics nomirror
plot datafile index 0 using 1:2 with lines lw 2 title "open watches", \
     datafile index 0 using 1:3 axes x1y2 with lines dt 2 lw 2 title "nodes synced"
unset multiplot
)gp";

} // namespace

bool run_summary::ok() const {
  auto failed_writes = [](const std::optional<write_counts>& w) {
    return w && w->failed > 0;
  };
  return convergence.ok() && all_synced_s.has_value() && !failed_writes(created)
         && counts.rejected_pods == 0
         && (!propagation || propagation->failed_writes == 0);
}

ojson to_json(const run_summary& s) {
  ojson x;
  x["nodes"] = s.nodes;
  x["strategy"] = s.strategy;
  x["share_connections"] = s.share_connections;
  x["duration_s"] = s.duration_s;
  x["ok"] = s.ok();
  ojson sync;
  sync["all_synced_s"] = s.all_synced_s ? ojson(*s.all_synced_s) : ojson();
  sync["nodes_synced"] = s.node_synced_s.size();
  sync["node_p50_s"] = percentile(s.node_synced_s, 50);
  sync["node_p99_s"] = percentile(s.node_synced_s, 99);
  sync["node_max_s"] = percentile(s.node_synced_s, 100);
  x["sync"] = sync;
  ojson conv;
  conv["converged_nodes"] = s.convergence.converged;
  conv["attempts"] = s.convergence.attempts;
  conv["objects"] = s.convergence.objects;
  conv["seconds"] = s.convergence.seconds;
  conv["problems"] = s.convergence.problems;
  x["convergence"] = conv;
  ojson agents;
  agents["registered_pods"] = s.counts.registered_pods;
  agents["pods_with_problems"] = s.counts.pods_with_problems;
  agents["referenced_objects"] = s.counts.referenced_objects;
  agents["open_object_watches"] = s.counts.open_watches;
  agents["reads"] = s.counts.reads;
  agents["reads_failed"] = s.counts.reads_failed;
  agents["rejected_pods"] = s.counts.rejected_pods;
  agents["pod_source_failures"] = s.counts.source_failures;
  x["agents"] = agents;
  ojson api;
  api["requests_by_verb"] = s.clients.by_verb;
  api["requests_by_code"] = s.clients.by_code;
  api["open_watches"] = s.clients.open_streams;
  api["connections"] = s.clients.connects;
  api["bytes_received"] = s.clients.bytes_received;
  api["throttled"] = s.clients.throttled;
  api["retried_429"] = s.clients.retried_429;
  x["api"] = api;
  if (s.created)
    x["created"] = writes_json(*s.created);
  if (s.deleted)
    x["deleted"] = writes_json(*s.deleted);
  if (s.propagation) {
    ojson p;
    p["update_rate"] = s.update_rate;
    p["writes"] = s.propagation->writes;
    p["failed_writes"] = s.propagation->failed_writes;
    p["conflicts"] = s.propagation->conflicts;
    p["errors"] = s.propagation->errors;
    p["complete"] = s.propagation->complete;
    p["incomplete"] = s.propagation->incomplete;
    p["every_node"] = latency_json(s.propagation->every_node);
    p["per_node"] = latency_json(s.propagation->per_node);
    x["propagation"] = p;
  }
  ojson res;
  res["threads"] = s.threads;
  res["rss_before_bytes"] = s.rss_before;
  res["rss_synced_bytes"] = s.rss_synced;
  res["rss_end_bytes"] = s.rss_end;
  res["heap_before_bytes"] = s.heap_before;
  res["heap_synced_bytes"] = s.heap_synced;
  res["rss_per_node_bytes"] = per_node(
    static_cast<double>(s.rss_synced > s.rss_before ? s.rss_synced - s.rss_before : 0),
    s.nodes);
  res["heap_per_node_bytes"] = per_node(
    static_cast<double>(s.heap_synced > s.heap_before ? s.heap_synced - s.heap_before : 0),
    s.nodes);
  res["cpu_sync_s"] = s.cpu_sync_s;
  res["cpu_steady_s"] = s.cpu_steady_s;
  res["steady_s"] = s.steady_s;
  res["cpu_per_node_us_per_s"]
    = s.steady_s > 0 ? per_node(s.cpu_steady_s * 1e6 / s.steady_s, s.nodes) : 0;
  x["resources"] = res;
  return x;
}

void print_summary(const run_summary& s, std::ostream& out) {
  fmt::print(out, "{} hollow nodes ({}, {}), {:.1f} s\n", s.nodes, s.strategy,
             s.share_connections ? "shared connections"
                                 : "one client per node",
             s.duration_s);
  if (s.created)
    fmt::print(out, "created: {} objects and pods ({} existed, {} failed)\n",
               s.created->created, s.created->existed, s.created->failed);
  if (s.all_synced_s)
    fmt::print(out, "all synced: {:.2f} s (per node p50 {:.2f} s, p99 {:.2f} s)\n",
               *s.all_synced_s, percentile(s.node_synced_s, 50),
               percentile(s.node_synced_s, 99));
  else
    fmt::print(out, "all synced: never ({} of {} nodes)\n",
               s.node_synced_s.size(), s.nodes);
  fmt::print(out, "pods: {} registered, {} with problems, {} rejected; "
                  "objects: {} referenced, {} watched\n",
             s.counts.registered_pods, s.counts.pods_with_problems,
             s.counts.rejected_pods, s.counts.referenced_objects,
             s.counts.open_watches);
  if (s.propagation) {
    const auto& p = *s.propagation;
    fmt::print(out,
               "propagation at {} writes/s: {} writes ({} failed, {} conflicts, "
               "{} not seen everywhere); every node p50 {:.2f} ms, p99 {:.2f} "
               "ms, max {:.2f} ms; each node p50 {:.2f} ms, p99 {:.2f} ms\n",
               s.update_rate, p.writes, p.failed_writes, p.conflicts,
               p.incomplete,
               ms(p.every_node.value_at_percentile(50)),
               ms(p.every_node.value_at_percentile(99)), ms(p.every_node.max()),
               ms(p.per_node.value_at_percentile(50)),
               ms(p.per_node.value_at_percentile(99)));
  }
  std::string verbs;
  for (const auto& [verb, n] : s.clients.by_verb)
    verbs += fmt::format("{}{} {}", verbs.empty() ? "" : ", ", verb, n);
  fmt::print(out, "API requests: {}; open watches {}; connections {}\n",
             verbs.empty() ? "none" : verbs, s.clients.open_streams,
             s.clients.connects);
  auto rss = s.rss_synced > s.rss_before ? s.rss_synced - s.rss_before : 0;
  auto heap = s.heap_synced > s.heap_before ? s.heap_synced - s.heap_before : 0;
  fmt::print(out,
             "memory: {:.1f} MiB RSS for the nodes, {:.1f} KiB per node "
             "({:.1f} KiB heap); CPU: {:.2f} s syncing, {:.3f} cores after "
             "({:.0f} us/s per node), {} work threads\n",
             static_cast<double>(rss) / (1 << 20),
             per_node(static_cast<double>(rss), s.nodes) / 1024,
             per_node(static_cast<double>(heap), s.nodes) / 1024, s.cpu_sync_s,
             s.steady_s > 0 ? s.cpu_steady_s / s.steady_s : 0,
             s.steady_s > 0 ? per_node(s.cpu_steady_s * 1e6 / s.steady_s, s.nodes)
                            : 0,
             s.threads);
  fmt::print(out, "converged: {} of {} nodes ({} attempts, {:.1f} s)\n",
             s.convergence.converged, s.convergence.nodes,
             s.convergence.attempts, s.convergence.seconds);
  for (const auto& p : s.convergence.problems)
    fmt::print(out, "  {}\n", p);
  if (s.propagation)
    for (const auto& e : s.propagation->errors)
      fmt::print(out, "  update: {}\n", e);
  if (s.created && !s.created->errors.empty())
    for (const auto& e : s.created->errors)
      fmt::print(out, "  create: {}\n", e);
  fmt::print(out, "{}\n", s.ok() ? "ok" : "FAILED");
}

std::string write_plot(const run_summary& s, const std::string& png) {
  std::ostringstream data;
  data << "# seconds open_watches synced_nodes\n";
  for (const auto& x : s.series)
    data << fmt::format("{:.3f} {} {}\n", x.at_s, x.open_watches,
                        x.synced_nodes);
  data << "\n\n# seconds propagation_ms\n";
  if (s.propagation && !s.propagation->samples.empty())
    for (const auto& x : s.propagation->samples)
      data << fmt::format("{:.3f} {:.3f}\n", x.at_s, x.latency_ms);
  else
    data << "0 NaN\n";
  return bench::run_gnuplot(
    plot_script, data.str(), png,
    fmt::format("title='podref hollow: {} nodes, {}';", s.nodes, s.strategy));
}

} // namespace podref::cli::hollow
