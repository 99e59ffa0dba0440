// `podref bench`: the load benchmark. Runs closed-loop workloads against
// podref's facade and the in-repo kubelet-design baseline in the same run
// and reports throughput, latency percentiles, memory and reflector counts,
// with podref/baseline ratios (engine in bench/).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "podref/runtime/object_manager.hpp"

namespace CLI {
class App;
} // namespace CLI

namespace podref::cli {

/// The arguments of `podref bench`, filled in by CLI11 while parsing.
struct bench_options {
  /// Workloads in run order; empty: all.
  std::vector<std::string> workloads;
  std::vector<std::size_t> threads = {1, 2, 4, 8};
  std::vector<std::string> impls = {"podref", "baseline"};
  std::string strategy = "watch";
  double seconds = 1.0;
  std::uint64_t ops = 200000;
  std::size_t pool = 1000;
  std::size_t scale = 100000;
  double rate = 1000;
  double ttl = 60;
  /// podref's manager_options::coalesce, in microseconds (default: the
  /// facade's).
  double coalesce_us
    = std::chrono::duration<double, std::micro>(manager_options{}.coalesce)
        .count();
  /// podref's manager_options::max_unapplied_releases.
  std::size_t max_unapplied_releases
    = manager_options{}.max_unapplied_releases;
  bool json = false;
  bool csv = false;
  /// PNG to draw throughput against threads into; empty: no plot.
  std::string plot;
  /// Manifests of the soak's node simulation.
  std::string manifests = "examples/manifests";
  // -- the wire workloads (bench/wire/workloads.hpp) --------------------------
  std::size_t objects = 10000;
  std::size_t bytes = 1024;
  std::size_t events = 10;
  std::size_t samples = 2000;
  double qps = 0;
  std::string transport = "h2-tls";
  /// `-w apiserver`: watches held open, watchers of the fan-out, and the
  /// client's HTTP/2 connections.
  std::size_t watches = 100000;
  std::size_t watchers = 1000;
  std::size_t connections = 8;
};

/// Registers the `bench` subcommand on `app`, bound to `options`.
CLI::App* add_bench_command(CLI::App& app, bench_options& options);

/// Runs `podref bench`: the report goes to `out`, progress (on a terminal
/// only) and diagnostics to `err`. Returns 0, or 1 on a failure.
int run_bench_command(const bench_options& options, std::ostream& out,
                      std::ostream& err);

} // namespace podref::cli
