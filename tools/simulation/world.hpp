// What the simulation's threads share: the clock and pacing helpers, the
// object table, the published view of the live pods, and the engine.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "simulation/simulation.hpp"

namespace podref::cli::sim {

using sim_clock = std::chrono::steady_clock;

/// How many failure messages one thread keeps (the rest are only counted).
constexpr std::size_t max_messages = 3;

inline sim_clock::duration to_clock(std::chrono::duration<double> d) {
  return std::chrono::duration_cast<sim_clock::duration>(d);
}

/// The seed of harness thread `k`, derived from the run's seed.
inline std::uint64_t thread_seed(std::uint64_t seed, std::uint64_t k) {
  return seed ^ (0x9e3779b97f4a7c15ULL * (k + 1));
}

/// A Secret or ConfigMap some template references or the input holds.
struct object_info {
  resource res = resource::secrets;
  std::string ns;
  std::string name;
  /// False for a referenced object that the input lacks: reads must then
  /// answer "not found".
  bool exists = false;
  bool immutable = false;

  std::string display() const {
    return std::string{singular_name(res)} + " " + ns + "/" + name;
  }
};

/// The live pods as readers and the updater see them: replaced on every
/// arrival and departure, never changed once published.
struct node_view {
  /// (pod id, template index), ids ascending.
  std::vector<std::pair<std::uint64_t, std::size_t>> pods;
  /// Distinct object indices the pods reference, ascending.
  std::vector<std::size_t> referenced;
  /// The subset the updater may change.
  std::vector<std::size_t> mutable_referenced;

  bool has_pod(std::uint64_t id) const {
    auto i = std::lower_bound(pods.begin(), pods.end(),
                              std::make_pair(id, std::size_t{0}));
    return i != pods.end() && i->first == id;
  }
};

using view_ptr = std::shared_ptr<const node_view>;

/// Ends every harness thread's waits at once.
class stop_signal {
public:
  void stop();

  /// Waits until `t` or the stop; true iff stopped.
  bool wait_until(sim_clock::time_point t);

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

/// Evenly spaced ticks at `rate` per second; a thread that fell far behind
/// skips the missed ticks instead of bursting through them.
class pacer {
public:
  explicit pacer(double rate);

  /// Waits for the next tick; false once stopped.
  bool wait(stop_signal& stop);

private:
  sim_clock::duration interval_;
  sim_clock::time_point next_;
};

/// The published node_view, swapped under a mutex.
class view_board {
public:
  view_board();

  view_ptr current() const;

  void publish(view_ptr x);

private:
  mutable std::mutex mtx_;
  view_ptr view_;
};

/// Everything the threads share: the engine, the object table and the
/// template references (both constant during the busy phase), the view.
struct world {
  const simulation_config& config;
  api_server& api;
  secret_manager& secrets;
  configmap_manager& configmaps;
  std::vector<object_info> objects;
  std::vector<pod_ptr> templates;
  /// Object indices each template references.
  std::vector<std::vector<std::size_t>> template_refs;
  view_board board;
  stop_signal stop;

  /// Reads one object through its typed manager, as a kubelet would.
  result<api_object> read(std::size_t idx);
};

} // namespace podref::cli::sim
