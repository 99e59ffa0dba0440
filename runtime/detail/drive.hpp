// drive: how a blocking facade call waits on CAF's deterministic scheduler.
//
// On a threaded scheduler a facade call blocks and the workers answer it. On
// the deterministic one ("testing" policy: no workers, a virtual clock)
// nothing runs unless someone runs it, so the calling thread does: it runs
// every job that can run and, only when none is left, lets virtual time pass
// up to the next timer, as real time would pass while the call waits. A
// call therefore returns exactly what it returns on a threaded runtime, in
// the same order of events, but in microseconds, and it moves the virtual
// clock only as far as the call itself had to wait (a read waiting for a
// first list moves it by the sync timeout at most).
#pragma once

#include <chrono>
#include <functional>

namespace caf {
class actor_system;
} // namespace caf

namespace podref::detail {

/// True iff `sys` runs CAF's deterministic scheduler.
bool is_deterministic(caf::actor_system& sys) noexcept;

/// On the deterministic scheduler: runs jobs, and fires timers due within
/// `budget` of virtual time from now in time order, until `ready()` holds or
/// nothing is left to run; returns ready(). On a threaded scheduler returns
/// true at once (the caller's own blocking wait does the waiting).
bool drive_until(caf::actor_system& sys, const std::function<bool()>& ready,
                 std::chrono::nanoseconds budget);

} // namespace podref::detail
