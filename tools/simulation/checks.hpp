// The checks after the busy phase: what readers read is the API server's
// latest version (check_freshness), and the engine's invariants hold for the
// pods still live and again once all have left (engine_checks, on the
// invariant checker the engine's own tests use).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "podref/runtime/runtime.hpp"
#include "podref/testing/invariant_checker.hpp"
#include "simulation/arrivals.hpp"
#include "simulation/updater.hpp"
#include "simulation/world.hpp"

namespace podref::cli::sim {

/// Checks that every object the view references reads, through the facade,
/// as the API server's latest version, waiting a short while in all for
/// stragglers. Under Cache a version the API server replaced less than a
/// TTL ago passes too.
void check_freshness(world& w, const node_view& v,
                     const std::vector<write_record>& writes,
                     std::vector<std::string>& failures);

/// The invariants of both managers: references, counts, reflectors and
/// watches; after the drain also that no actor was left running.
class engine_checks {
public:
  /// Records the actors running now as the drain's baseline.
  engine_checks(runtime& rt, world& w);

  /// Waits until both managers are quiescent (after faults this includes
  /// the reflectors' retry backoff).
  void settle(std::vector<std::string>& failures);

  /// The invariants for the pods still live.
  void while_live(const std::vector<arrivals::live_pod>& pods,
                  std::vector<std::string>& failures);

  /// The invariants once every pod has left: nothing is left behind.
  void after_drain(std::vector<std::string>& failures);

private:
  world& w_;
  std::chrono::milliseconds settle_limit_;
  testing::invariant_checker secrets_;
  testing::invariant_checker configmaps_;
  /// Checks nothing but the actor count, which both managers share.
  testing::invariant_checker actors_;
};

} // namespace podref::cli::sim
