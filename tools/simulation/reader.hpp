// A reader thread: kubelet-like, it picks a random live pod and reads each
// object the pod references, one read per tick, and records the first time
// it sees each resourceVersion. Answers an engine must never give (a pod in
// the view not registered, a version going back) are faults.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "simulation/world.hpp"

namespace podref::cli::sim {

/// A reader saw resourceVersion `rv` of `object` for the first time at `at`.
struct observation {
  std::size_t object;
  std::uint64_t rv;
  sim_clock::time_point at;
};

class reader {
public:
  reader(world& w, std::size_t index);

  /// Until the stop signal.
  void run();

  std::vector<observation> seen;
  std::vector<std::string> messages;
  std::atomic<std::uint64_t> reads{0};
  std::uint64_t errors = 0;
  /// Failed reads of an object whose pod left while the read ran.
  std::uint64_t benign_errors = 0;
  /// Failed reads that an injected fault explains.
  std::uint64_t fault_errors = 0;
  /// Answers the engine must never give.
  std::uint64_t faults = 0;
  /// Ticks without a read: no pod was live, or the one picked references
  /// nothing.
  std::uint64_t idle_ticks = 0;

private:
  void read_one(std::uint64_t pod_id, std::size_t idx);

  void fault(std::string what);

  world& w_;
  std::size_t index_;
  std::mt19937_64 rng_;
  /// Newest resourceVersion this reader saw, per object index.
  std::vector<std::uint64_t> last_rv_;
};

} // namespace podref::cli::sim
