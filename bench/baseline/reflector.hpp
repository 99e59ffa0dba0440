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

/// Starts a reflector of Secret `ns`/`name` on `server` filling `store`.
caf::actor start_reflector(caf::actor_system& sys, const caf::actor& server,
                           const std::string& ns, const std::string& name,
                           std::shared_ptr<cache_store> store,
                           live_counter live);

/// Stops a reflector (its watch ends when the server sees it gone).
void stop_reflector(const caf::actor& reflector);

} // namespace podref::bench::baseline
