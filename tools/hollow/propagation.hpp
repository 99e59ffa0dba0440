// propagation: from the start of each write of an object to the moment
// every hollow node whose pods reference it has seen that version (or a
// later one), and to each such node seeing it.
//
// The writer announces a write before it sends it (begin_write) and gives
// its resourceVersion when the reply comes (end_write); nodes report every
// version their managers deliver (seen). A node may see the version before
// the writer has its reply: what nodes see of an object while its write is
// in flight is kept and matched when the version is known. One write per
// object is in flight at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/histogram.hpp"

namespace podref::cli::hollow {

using steady = std::chrono::steady_clock;

/// One write that reached every node: when it started (seconds since the
/// tracker's start) and how long until the last node saw it.
struct propagation_sample {
  double at_s = 0;
  double latency_ms = 0;
};

struct propagation_result {
  std::uint64_t writes = 0;
  std::uint64_t failed_writes = 0;
  /// Writes the server refused with 409 Conflict (another writer won the
  /// race past its retries: several processes update the same objects);
  /// not failures.
  std::uint64_t conflicts = 0;
  /// The first failures' messages.
  std::vector<std::string> errors;
  /// Writes every watching node saw (the every-node histogram's count).
  std::uint64_t complete = 0;
  /// Writes some node had not seen at the end (or dropped past the bound).
  std::uint64_t incomplete = 0;
  bench::histogram every_node; // ns
  bench::histogram per_node;   // ns
  std::vector<propagation_sample> samples;
};

class propagation_tracker {
public:
  explicit propagation_tracker(steady::time_point start);

  /// The nodes whose pods reference `key` (set before writes start).
  void set_watchers(const std::string& key, std::vector<std::uint32_t> nodes);

  /// A write of `key` starts now; false when one is in flight already.
  bool begin_write(const std::string& key, steady::time_point t0);

  /// Its reply: the version written, or nullopt when it failed (`why`;
  /// `conflict` for a 409).
  void end_write(const std::string& key, std::optional<std::uint64_t> rv,
                 bool conflict = false, const std::string& why = {});

  /// Node `node` received version `rv` of `key` at `at`.
  void seen(std::uint32_t node, const std::string& key, std::uint64_t rv,
            steady::time_point at);

  /// What was measured; pending writes count as incomplete.
  propagation_result result() const;

private:
  struct write {
    std::uint64_t rv = 0;
    steady::time_point t0;
    std::size_t remaining = 0;
  };
  struct sighting {
    std::uint32_t node;
    std::uint64_t rv;
    steady::time_point at;
  };
  struct object_state {
    std::vector<std::uint32_t> nodes;
    /// The newest version each watching node saw, and when.
    std::unordered_map<std::uint32_t, std::pair<std::uint64_t, steady::time_point>>
      last;
    std::deque<write> pending; // ascending rv
    std::optional<steady::time_point> in_flight;
    std::vector<sighting> early; // while in flight
  };

  /// Counts `w` seen by one node at `at`; true when no node is left.
  bool reach(write& w, steady::time_point at);

  /// Writes pending per object past this are given up (incomplete).
  static constexpr std::size_t max_pending = 4096;

  steady::time_point start_;
  mutable std::mutex mtx_;
  std::unordered_map<std::string, object_state> objects_;
  propagation_result out_;
};

} // namespace podref::cli::hollow
