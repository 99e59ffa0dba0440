// Formats bench_result rows and drives gnuplot.
#include "bench/report.hpp"

#include "bench/gnuplot.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace podref::bench {

namespace {

std::string human_ns(std::uint64_t ns) {
  if (ns < 10000)
    return fmt::format("{}ns", ns);
  if (ns < 10000000)
    return fmt::format("{:.1f}us", static_cast<double>(ns) / 1e3);
  return fmt::format("{:.1f}ms", static_cast<double>(ns) / 1e6);
}

std::string human_rate(double x) {
  if (x >= 1e6)
    return fmt::format("{:.2f}M", x / 1e6);
  if (x >= 1e3)
    return fmt::format("{:.1f}k", x / 1e3);
  return fmt::format("{:.0f}", x);
}

std::string ratio_text(const std::vector<bench_result>& all,
                       const bench_result& r) {
  auto x = ratio_to_baseline(all, r);
  return x ? fmt::format("{:.2f}x", *x) : std::string{"-"};
}

/// The API actions of `r` per op.
double per_op(const bench_result& r, std::uint64_t n) {
  return r.ops > 0 ? static_cast<double>(n) / static_cast<double>(r.ops) : 0;
}

/// "lists/watches/gets" per op, e.g. "1.00/1.00/0".
std::string api_text(const bench_result& r) {
  auto one = [&r](std::uint64_t n) {
    return n == 0 ? std::string{"0"} : fmt::format("{:.3g}", per_op(r, n));
  };
  const auto& a = r.api_actions;
  return one(a.lists) + "/" + one(a.watches) + "/" + one(a.gets);
}


} // namespace

std::optional<double> ratio_to_baseline(const std::vector<bench_result>& all,
                                        const bench_result& r) {
  const bench_result* mine = nullptr;
  const bench_result* base = nullptr;
  for (const auto& x : all) {
    if (x.workload != r.workload || x.strategy != r.strategy
        || x.threads != r.threads)
      continue;
    if (x.impl == "podref")
      mine = &x;
    else if (x.impl == "baseline")
      base = &x;
  }
  if (!mine || !base || base->ops_per_sec <= 0)
    return std::nullopt;
  return mine->ops_per_sec / base->ops_per_sec;
}

void print_table(const std::vector<bench_result>& all, std::ostream& out) {
  out << fmt::format("{:<11} {:<9} {:<6} {:>3} {:>9} {:>7} {:>9} {:>8} "
                     "{:>8} {:>8} {:>9} {:>6} {:>16} {:>8}\n",
                     "workload", "impl", "strat", "thr", "ops", "secs",
                     "ops/s", "p50", "p99", "p99.9", "peak_rss", "refl",
                     "api/op l/w/g", "vs_base");
  for (const auto& r : all) {
    out << fmt::format(
      "{:<11} {:<9} {:<6} {:>3} {:>9} {:>7.3f} {:>9} {:>8} {:>8} {:>8} "
      "{:>8.1f}M {:>6} {:>16} {:>8}\n",
      r.workload, r.impl, r.strategy, r.threads, r.ops, r.seconds,
      human_rate(r.ops_per_sec), human_ns(r.p50_ns), human_ns(r.p99_ns),
      human_ns(r.p999_ns), static_cast<double>(r.peak_rss_bytes) / 1048576.0,
      r.live_reflectors_after, api_text(r),
      r.impl == "podref" ? ratio_text(all, r) : "");
  }
  out << "(api/op: the API server's lists/watches/gets per op during the "
         "timed part)\n";
  bool notes = false;
  for (const auto& r : all) {
    if (r.extra.empty() && r.errors == 0)
      continue;
    if (!notes)
      out << "\n";
    notes = true;
    out << fmt::format("{} {} t={}:", r.workload, r.impl, r.threads);
    if (r.latency != "call")
      out << " (percentiles: " << r.latency << ")";
    if (r.errors > 0)
      out << " errors=" << r.errors;
    for (const auto& [k, v] : r.extra)
      out << fmt::format(" {}={:.6g}", k, v);
    out << "\n";
  }
}

void print_json(const std::vector<bench_result>& all, std::ostream& out,
                std::size_t first) {
  for (auto i = first; i < all.size(); ++i) {
    const auto& r = all[i];
    nlohmann::json j;
    j["workload"] = r.workload;
    j["impl"] = r.impl;
    j["strategy"] = r.strategy;
    j["threads"] = r.threads;
    j["ops"] = r.ops;
    j["seconds"] = r.seconds;
    j["ops_per_sec"] = r.ops_per_sec;
    j["latency"] = r.latency;
    j["p50_ns"] = r.p50_ns;
    j["p99_ns"] = r.p99_ns;
    j["p999_ns"] = r.p999_ns;
    j["max_ns"] = r.max_ns;
    j["peak_rss_bytes"] = r.peak_rss_bytes;
    j["live_reflectors_after"] = r.live_reflectors_after;
    j["errors"] = r.errors;
    j["api_lists"] = r.api_actions.lists;
    j["api_watches"] = r.api_actions.watches;
    j["api_gets"] = r.api_actions.gets;
    j["api_lists_per_op"] = per_op(r, r.api_actions.lists);
    j["api_watches_per_op"] = per_op(r, r.api_actions.watches);
    j["api_gets_per_op"] = per_op(r, r.api_actions.gets);
    if (auto x = ratio_to_baseline(all, r))
      j["ratio_to_baseline"] = *x;
    for (const auto& [k, v] : r.extra)
      j[k] = v;
    out << j.dump() << std::endl;
  }
}

void print_csv(const std::vector<bench_result>& all, std::ostream& out) {
  out << "workload,impl,strategy,threads,ops,seconds,ops_per_sec,latency,"
         "p50_ns,p99_ns,p999_ns,max_ns,peak_rss_bytes,live_reflectors_after,"
         "errors,api_lists,api_watches,api_gets,ratio_to_baseline\n";
  for (const auto& r : all) {
    auto x = ratio_to_baseline(all, r);
    out << fmt::format("{},{},{},{},{},{:.6f},{:.1f},{},{},{},{},{},{},{},{},"
                       "{},{},{},{}\n",
                       r.workload, r.impl, r.strategy, r.threads, r.ops,
                       r.seconds, r.ops_per_sec, r.latency, r.p50_ns,
                       r.p99_ns, r.p999_ns, r.max_ns, r.peak_rss_bytes,
                       r.live_reflectors_after, r.errors, r.api_actions.lists,
                       r.api_actions.watches, r.api_actions.gets,
                       x && r.impl == "podref" ? fmt::format("{:.4f}", *x)
                                               : std::string{});
  }
}

std::string write_plot(const std::vector<bench_result>& all,
                       const std::string& png) {
  // workload -> threads -> impl -> ops/s
  std::map<std::string, std::map<std::size_t, std::map<std::string, double>>>
    data;
  for (const auto& r : all)
    data[r.workload + "/" + r.strategy][r.threads][r.impl] = r.ops_per_sec;
  if (data.empty())
    return "nothing to plot";
  std::ostringstream out;
  bool first = true;
  for (const auto& [w, rows] : data) {
    if (!first)
      out << "\n\n";
    first = false;
    out << fmt::format("threads \"{} podref\" \"{} baseline\"\n", w, w);
    for (const auto& [t, impls] : rows) {
      auto get = [&](const char* impl) {
        auto i = impls.find(impl);
        return i == impls.end() ? std::string{"NaN"}
                                : fmt::format("{:.1f}", i->second);
      };
      out << t << " " << get("podref") << " " << get("baseline") << "\n";
    }
  }
  return run_gnuplot(plot_script(), out.str(), png,
                     fmt::format("blocks={}", data.size()));
}

} // namespace podref::bench
