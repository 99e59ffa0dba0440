// convergence: the end-of-run check of `podref hollow`. A node has
// converged when
// - its registered pods are the server's pods bound to it (by uid; terminal
//   and deleting pods excluded), none missing, none extra;
// - every object its pods reference reads through its managers as the
//   server's latest version (a version at least the one the server had
//   when the attempt began; not found when the server has none).
// Retried until every node converged or the settle limit passed.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "hollow/fleet.hpp"

namespace podref::cli::hollow {

struct convergence_result {
  std::size_t nodes = 0;
  std::size_t converged = 0;
  std::size_t attempts = 0;
  /// Objects compared (distinct over the nodes) in the last attempt.
  std::size_t objects = 0;
  double seconds = 0;
  /// The last attempt's first mismatches (a few).
  std::vector<std::string> problems;

  bool ok() const noexcept {
    return converged == nodes;
  }
};

convergence_result check_convergence(fleet& f, wire::http_client& client,
                                     std::chrono::nanoseconds settle);

} // namespace podref::cli::hollow
