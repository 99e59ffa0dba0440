// `podref simulate`: a node simulation on the embedded in-memory API server.
// Pods drawn from a directory of manifests arrive and leave, the API server
// updates their Secrets and ConfigMaps, readers read them at kubelet-like
// rates; the summary reports what happened and whether the engine's
// invariants held (see simulation/simulation.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "served_front.hpp"

namespace podref::cli {

/// The arguments of `podref simulate`, filled in by CLI11 while parsing.
struct simulate_options {
  /// Directory whose *.yaml, *.yml and *.json files supply the pod
  /// templates and the objects.
  std::string manifests = "examples/manifests";
  /// Busy phase in seconds.
  double duration = 20;
  /// Pod arrivals per second.
  double pod_rate = 10;
  /// Mean pod lifetime in seconds.
  double pod_lifetime = 2;
  /// Most pods alive at once.
  std::size_t max_pods = 110;
  /// Object updates per second.
  double update_rate = 50;
  /// Reader threads.
  std::size_t readers = 4;
  /// Reads per second per reader.
  double read_rate = 100;
  std::uint64_t seed = 1;
  /// The managers' strategy: "Watch", "Cache" or "Get".
  std::string strategy = "Watch";
  /// Seconds between two injected API server faults (0: none).
  double fault_period = 0;
  /// Print the summary as one JSON object instead of a table.
  bool json = false;
  /// --serve ADDRESS:PORT (front.listen; empty: not served) and the TLS,
  /// credential and kubeconfig flags of `podref apiserver`.
  front_options front = [] {
    front_options f;
    f.listen.clear();
    f.listen_flag = "--serve";
    return f;
  }();
};

/// Registers the `simulate` subcommand on `app` and binds its arguments to
/// `options`, which must outlive parsing. Returns the subcommand; it converts
/// to true after parsing iff the user selected it.
CLI::App* add_simulate_command(CLI::App& app, simulate_options& options);

/// Runs `podref simulate`: the summary goes to `out`, diagnostics to `err`,
/// and a progress line to `err` while the run lasts if standard error is a
/// terminal. Returns the exit status: 0 iff every invariant held, 1 if the
/// manifests cannot be loaded or an invariant failed.
int run_simulate_command(const simulate_options& options, std::ostream& out,
                         std::ostream& err);

} // namespace podref::cli
