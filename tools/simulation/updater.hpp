// The updater thread: at the configured rate it rewrites one data value of a
// random mutable object that live pods reference, and records each write
// for the latency measurement and the freshness check.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "simulation/world.hpp"

namespace podref::cli::sim {

/// One write the updater made: `object` got resourceVersion `rv`; the call
/// started at `at` and returned at `done`.
struct write_record {
  std::size_t object;
  std::uint64_t rv;
  sim_clock::time_point at;
  sim_clock::time_point done;
};

class updater {
public:
  /// `latest` is what the API server holds, per object index.
  updater(world& w, std::vector<api_object> latest);

  /// Until the stop signal.
  void run();

  std::uint64_t errors() const {
    return errors_;
  }

  /// In the order the writes were made.
  std::vector<write_record> writes;
  std::vector<std::string> messages;
  std::atomic<std::uint64_t> updates{0};
  std::atomic<std::uint64_t> fault_errors{0};
  /// Ticks that found no mutable object a live pod references.
  std::uint64_t idle_ticks = 0;

private:
  /// A write the server refused while it restarted.
  bool faulty(const error_info& err) const;

  world& w_;
  std::vector<api_object> latest_;
  std::mt19937_64 rng_;
  std::uint64_t revision_ = 0;
  std::uint64_t errors_ = 0;
};

} // namespace podref::cli::sim
