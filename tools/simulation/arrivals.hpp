// The arrival and departure thread: pods arrive at an even rate, live
// uniformly between 0.5x and 1.5x the mean lifetime, and leave; arrivals on
// a full node are refused. Every change publishes a new node_view.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "podref/messages/pod.hpp"
#include "simulation/world.hpp"

namespace podref::cli::sim {

/// Runs on its own thread during the busy phase; the main thread takes it
/// over after joining it.
class arrivals {
public:
  explicit arrivals(world& w);

  struct live_pod {
    std::uint64_t id;
    std::size_t tmpl;
    pod p;
    sim_clock::time_point leaves;
  };

  /// Until the stop signal.
  void run();

  /// Removes every pod: first from the readers' view, then from the
  /// managers.
  void depart_all();

  const std::vector<live_pod>& live() const {
    return live_;
  }

  std::atomic<std::uint64_t> arrived{0};
  std::atomic<std::uint64_t> left{0};
  std::atomic<std::size_t> live_count{0};

  /// Arrivals refused because max_pods were alive.
  std::uint64_t refused() const {
    return refused_;
  }

  std::size_t peak() const {
    return peak_;
  }

  /// Distinct objects any pod referenced so far.
  std::size_t ever_referenced() const;

private:
  void arrive(sim_clock::time_point now);

  void depart_due(sim_clock::time_point now);

  void unregister(const live_pod& lp);

  void publish();

  world& w_;
  std::mt19937_64 rng_;
  /// Arrival order, so ids ascend.
  std::vector<live_pod> live_;
  std::uint64_t serial_ = 0;
  std::uint64_t refused_ = 0;
  std::size_t peak_ = 0;
  std::vector<bool> ever_;
};

} // namespace podref::cli::sim
