// `podref bench -w apiserver`: the HTTP front of `podref apiserver` under
// load over HTTP/2 (h2c on loopback). Measures open watches held and the
// server's memory per open watch (RSS delta and heap delta over the
// watches), events fanned out per second to N watchers, and get / list /
// create latency one request at a time. The client (h2_load_client.hpp)
// runs in a child process forked before the server starts, so that its
// memory and CPU are not the server's; its CPU time is reported, to show
// whether it was the limit.
#pragma once

#include <cstddef>
#include <iosfwd>

namespace podref::bench {

struct apiserver_bench_options {
  /// Per-object watches held open (the kubelet's kind: one object each).
  std::size_t watches = 100000;
  /// Watchers of one collection that every fanned-out event reaches.
  std::size_t watchers = 1000;
  /// HTTP/2 connections the client spreads its streams over.
  std::size_t connections = 8;
  /// Writes during the fan-out (each one event to every watcher).
  std::size_t events = 200;
  /// Seconds of each latency run (get, list, create).
  double seconds = 1.0;
  bool json = false;
};

/// Runs the workload and prints its figures to `out`; returns 0, or 1 when
/// a phase failed (what failed goes to `err`).
int run_apiserver_bench(const apiserver_bench_options& options,
                        std::ostream& out, std::ostream& err);

} // namespace podref::bench
