// `podref bench`: argument parsing and output selection; the workloads live
// in bench/ (library podref_bench, linked when PODREF_BUILD_BENCH is on).
#include "bench_command.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <ostream>
#include <vector>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include "simulate_command.hpp"

#ifdef PODREF_HAVE_BENCH
#  include "bench/apiserver_bench.hpp"
#  include "bench/engine.hpp"
#  include "bench/report.hpp"
#endif
#ifdef PODREF_HAVE_WIRE_BENCH
#  include "bench/wire/workloads.hpp"
#endif

namespace podref::cli {

CLI::App* add_bench_command(CLI::App& app, bench_options& options) {
  auto* cmd = app.add_subcommand(
    "bench", "Load benchmark: podref against the kubelet-design baseline");
  cmd
    ->add_option("-w,--workload", options.workloads,
                 "Workloads: register, churn-warm, churn-cold, get, "
                 "propagate, scale (default: all); soak: the node "
                 "simulation with API server faults for --seconds; "
                 "wire-replay, wire-sync, wire-propagate: the wire client; "
                 "apiserver: the HTTP front over HTTP/2 (watches held, "
                 "memory per watch, fan-out, latency) (neither in the "
                 "default set)")
    ->delimiter(',');
  cmd->add_option("-t,--threads", options.threads, "Caller thread counts")
    ->delimiter(',')
    ->capture_default_str();
  cmd->add_option("--impl", options.impls, "podref, baseline")
    ->delimiter(',')
    ->capture_default_str();
  cmd
    ->add_option("--strategy", options.strategy,
                 "watch, or cache (TTL; baseline only)")
    ->capture_default_str();
  cmd
    ->add_option("--seconds", options.seconds,
                 "Duration of churn, get and propagate runs")
    ->capture_default_str();
  cmd->add_option("--ops", options.ops, "Pods registered by `register`")
    ->capture_default_str();
  cmd->add_option("--pool", options.pool, "Objects of the pool workloads")
    ->capture_default_str();
  cmd
    ->add_option("--scale", options.scale,
                 "Pods (= objects = reflectors) of `scale`")
    ->capture_default_str();
  cmd->add_option("--rate", options.rate, "Updates per second (propagate)")
    ->capture_default_str();
  cmd->add_option("--ttl", options.ttl, "TTL in seconds (cache strategy)")
    ->capture_default_str();
  cmd
    ->add_option("--coalesce-us", options.coalesce_us,
                 "podref: a drain finding fewer than 128 commands applies "
                 "them this many microseconds later (0: at once)")
    ->check(CLI::Range(0.0, 1000000.0))
    ->capture_default_str();
  cmd
    ->add_option("--max-unapplied-releases", options.max_unapplied_releases,
                 "podref: unregistrations wait while this many are "
                 "unapplied and make up most of the backlog (0: never)")
    ->capture_default_str();
  cmd->add_option("--manifests", options.manifests,
                  "Directory of manifests (soak)")
    ->type_name("DIR")
    ->capture_default_str();
  cmd->add_option("--objects", options.objects,
                  "Watched objects of the wire workloads")
    ->capture_default_str();
  cmd->add_option("--bytes", options.bytes, "Value bytes per object (wire)")
    ->capture_default_str();
  cmd->add_option("--events", options.events,
                  "Updates per object (wire-replay, wire-propagate)")
    ->capture_default_str();
  cmd->add_option("--samples", options.samples,
                  "Writes timed one at a time (wire-propagate)")
    ->capture_default_str();
  cmd->add_option("--qps", options.qps,
                  "Client-side rate limit of the wire workloads, burst 100 "
                  "(0: none; the kubelet's: 50)")
    ->capture_default_str();
  cmd->add_option("--transport", options.transport,
                  "h2-tls, h2c or http1 (wire workloads)")
    ->check(CLI::IsMember({"h2-tls", "h2c", "http1"}))
    ->capture_default_str();
  cmd->add_option("--watches", options.watches,
                  "Watches held open (apiserver)")
    ->capture_default_str();
  cmd->add_option("--watchers", options.watchers,
                  "Watchers every fanned-out event reaches (apiserver)")
    ->capture_default_str();
  cmd->add_option("--connections", options.connections,
                  "HTTP/2 connections of the client (apiserver)")
    ->capture_default_str()
    ->check(CLI::Range(std::size_t{1}, std::size_t{1024}));
  cmd->add_flag("--json", options.json, "One JSON object per result line");
  cmd->add_flag("--csv", options.csv, "CSV instead of a table");
  cmd->add_option("--plot", options.plot,
                  "Draw throughput vs threads into this PNG (gnuplot)");
  return cmd;
}

namespace {

/// `-w soak`: a time-bounded soak is `podref simulate` with one API server
/// fault every half second, ending with the simulation's invariant check
/// (exit status 1 if it fails). It is podref only: the baseline cannot
/// follow a restarted API server.
int run_soak(const bench_options& options, std::ostream& out,
             std::ostream& err) {
  simulate_options sim;
  sim.manifests = options.manifests;
  sim.duration = options.seconds;
  sim.fault_period = 0.5;
  sim.json = options.json;
  return run_simulate_command(sim, out, err);
}

/// Removes `name` from `workloads`; true if it was there.
bool take(std::vector<std::string>& workloads, const char* name) {
  auto i = std::remove(workloads.begin(), workloads.end(), name);
  bool found = i != workloads.end();
  workloads.erase(i, workloads.end());
  return found;
}

} // namespace

#ifdef PODREF_HAVE_BENCH

namespace {

/// Moves the wire workloads of `workloads` into the result.
std::vector<std::string> take_wire(std::vector<std::string>& workloads) {
  std::vector<std::string> wire;
  auto i = std::stable_partition(
    workloads.begin(), workloads.end(),
    [](const std::string& w) { return w.rfind("wire-", 0) != 0; });
  wire.assign(i, workloads.end());
  workloads.erase(i, workloads.end());
  return wire;
}

/// `-w wire-*`: the wire client's workloads (bench/wire/workloads.hpp).
int run_wire(const bench_options& options,
             const std::vector<std::string>& workloads, std::ostream& out,
             std::ostream& err) {
#  ifdef PODREF_HAVE_WIRE_BENCH
  bench::wire_bench_options o;
  for (const auto& w : workloads)
    if (!bench::is_wire_workload(w)) {
      err << "podref bench: unknown workload " << w << "\n";
      return 2;
    }
  o.workloads = workloads;
  o.objects = options.objects;
  o.bytes = options.bytes;
  o.events = options.events;
  o.samples = options.samples;
  o.qps = options.qps;
  o.transport = options.transport;
  // Each result is printed as soon as it is measured (JSON lines), or
  // with those before it when a later workload fails (the table).
  std::vector<bench::bench_result> done;
  o.measured = [&](const bench::bench_result& r) {
    done.push_back(r);
    if (options.json)
      bench::print_json(done, out, done.size() - 1);
  };
  int rc = 0;
  try {
    bench::run_wire_workloads(o);
  } catch (const std::exception& e) {
    err << "podref bench: " << e.what() << "\n";
    rc = 1;
  }
  if (!options.json && !done.empty())
    bench::print_table(done, out);
  return rc;
#  else
  (void) options;
  (void) workloads;
  (void) out;
  err << "podref bench: this podref was built without the wire room\n";
  return 1;
#  endif
}

} // namespace

int run_bench_command(const bench_options& options, std::ostream& out,
                      std::ostream& err) {
  auto workloads = options.workloads;
  if (take(workloads, "apiserver")) {
    bench::apiserver_bench_options a;
    a.watches = options.watches;
    a.watchers = options.watchers;
    a.connections = options.connections;
    a.seconds = options.seconds;
    a.json = options.json;
    if (auto rc = bench::run_apiserver_bench(a, out, err);
        rc != 0 || workloads.empty())
      return rc;
  }
  if (take(workloads, "soak")) {
    if (auto rc = run_soak(options, out, err); rc != 0 || workloads.empty())
      return rc;
  }
  auto wire = take_wire(workloads);
  if (!wire.empty()) {
    if (auto rc = run_wire(options, wire, out, err); rc != 0 || workloads.empty())
      return rc;
  }
  bench::bench_options opts;
  if (!workloads.empty())
    opts.workloads = workloads;
  opts.threads = options.threads;
  opts.impls = options.impls;
  opts.strategy = options.strategy;
  opts.seconds = options.seconds;
  opts.register_ops = options.ops;
  opts.pool = options.pool;
  opts.scale_pods = options.scale;
  opts.write_rate = options.rate;
  opts.ttl_seconds = options.ttl;
  opts.coalesce = std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::duration<double, std::micro>(options.coalesce_us));
  opts.max_unapplied_releases = options.max_unapplied_releases;
  bool tty = ::isatty(STDERR_FILENO) == 1;
  if (tty)
    opts.progress = [&err](const std::string& line) {
      err << "\r\033[K" << line << std::flush;
    };
  try {
    // JSON lines stream out as each result is measured.
    std::vector<bench::bench_result> streamed;
    if (options.json)
      opts.measured = [&](const bench::bench_result& r) {
        if (tty)
          err << "\r\033[K" << std::flush;
        streamed.push_back(r);
        bench::print_json(streamed, out, streamed.size() - 1);
      };
    bench::engine eng{opts};
    auto results = eng.run_all();
    if (tty)
      err << "\r\033[K" << std::flush;
    if (options.csv && !options.json)
      bench::print_csv(results, out);
    else if (!options.json)
      bench::print_table(results, out);
    if (!options.plot.empty()) {
      auto failure = bench::write_plot(results, options.plot);
      if (!failure.empty()) {
        err << "podref bench: --plot: " << failure << "\n";
        return 1;
      }
    }
  } catch (const std::exception& e) {
    if (tty)
      err << "\r\033[K";
    err << "podref bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

#else

int run_bench_command(const bench_options& options, std::ostream& out,
                      std::ostream& err) {
  auto workloads = options.workloads;
  if (take(workloads, "soak") && workloads.empty())
    return run_soak(options, out, err);
  err << "podref bench: this podref was built without benchmarks "
         "(PODREF_BUILD_BENCH=OFF)\n";
  return 1;
}

#endif

} // namespace podref::cli
