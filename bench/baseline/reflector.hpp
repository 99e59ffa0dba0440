// reflector: the baseline's per-object reflector. A CAF actor lists and
// watches one Secret on podref's in-memory API server (the same server the
// podref engine uses) and hands every result to its cache_store through
// callbacks that take the store's locks, as client-go's reflector does.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "bench/baseline/cache_store.hpp"

namespace podref::bench::baseline {

/// Counts reflector actors from start until the actor is gone.
using live_counter = std::shared_ptr<std::atomic<std::int64_t>>;

/// A running reflector and its stop channel. As with client-go's
/// `go r.Run(stopCh)`, closing the channel is visible at once: a reflector
/// whose channel closed before it first ran exits without listing
/// (wait.BackoffUntil checks stopCh before it calls ListAndWatch).
struct reflector_handle {
  caf::actor actor;
  std::shared_ptr<std::atomic<bool>> stop_ch;
};

/// Starts a reflector of Secret `ns`/`name` on `server` filling `store`.
reflector_handle start_reflector(caf::actor_system& sys,
                                 const caf::actor& server,
                                 const std::string& ns,
                                 const std::string& name,
                                 std::shared_ptr<cache_store> store,
                                 live_counter live);

/// Closes the stop channel and stops the actor (its watch ends when the
/// server sees it gone).
void stop_reflector(const reflector_handle& reflector);

} // namespace podref::bench::baseline
