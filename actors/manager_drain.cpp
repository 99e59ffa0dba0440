// The manager's drain loop: applies the commands the facade pushed into the
// command inbox, in ticket order, loading ahead what the next ones touch,
// and lets small batches grow first (coalescing).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include "podref/actors/command_inbox.hpp"
#include "podref/actors/detail/manager_ops.hpp"
#include "podref/actors/manager.hpp"

namespace podref::detail {

namespace {

/// Commands one drain message applies before yielding to other messages.
constexpr std::size_t drain_batch = 4096;

/// How far ahead of the command it applies the manager starts loading what
/// the next ones touch: the registration `head_ahead` commands ahead, and
/// for the one `tail_ahead` ahead, whose registration has arrived by then,
/// its object table and text and the table cells its lookups start at.
/// The registrations come from the callers' cores; loading several at once
/// hides most of that latency.
constexpr std::size_t head_ahead = 8;
constexpr std::size_t tail_ahead = 4;

/// Fewer commands than this make a small batch, worth coalescing.
constexpr std::uint64_t coalesce_below = 128;

/// Starts loading the table cells the lookups of `reg`'s command start at.
/// An unregister carries the pod's uid too, whose cell releasing the uid
/// visits (when the caller passed another uid, a cell is loaded for
/// nothing). Always inlined: GCC deems a function that only prefetches
/// pure and drops an outlined call to it (measured: no prefetch of a cell
/// was ever issued).
[[gnu::always_inline]] inline void
prefetch_cells(const manager_state& st, const pod_registration& reg) {
  st.pods.prefetch(reg.pod_key().hash);
  st.uids.prefetch(reg.uid_key());
}

/// Applies, in ticket order, the commands drawn before ticket `end`, at
/// most `limit`. A command drawn and not stored yet is waited for if
/// `wait` (catching up with pushes that happened before), else the
/// manager stops there.
void apply_commands(manager_self self, std::uint64_t end, std::size_t limit,
                    bool wait) {
  auto& st = self->state;
  auto& box = *st.cfg.inbox;
  std::size_t applied = 0;
  std::int64_t pods = 0;
  detail::command cmd;
  st.defer_activations = true;
  while (applied < limit && box.popped() != end) {
    // Not past the batch: the callers are writing the slots there, and
    // reading their lines would take them away from the callers' cores.
    auto left = end - box.popped();
    if (left > head_ahead)
      if (auto* x = box.peek(head_ahead))
        x->prefetch_head();
    if (left > tail_ahead)
      if (auto* x = box.peek(tail_ahead)) {
        x->prefetch_tail();
        prefetch_cells(st, *x);
      }
    if (!box.try_pop(cmd)) {
      if (!wait)
        break;
      box.wait_for_next();
      continue;
    }
    ++applied;
    if (cmd.what == detail::command::kind::reg)
      pods += register_pod(self, std::move(cmd.reg)) ? 1 : 0;
    else
      pods -= unregister_pod(self, *cmd.reg) ? 1 : 0;
    cmd.reg.reset();
  }
  start_pending_actors(self);
  // One write per batch on the shared counters' line, not one per command.
  count_pods(self, pods);
  if (applied > 0)
    box.applied(applied);
}

} // namespace

void catch_up(manager_self self) {
  if (auto& box = self->state.cfg.inbox)
    apply_commands(self, box->drawn(), std::numeric_limits<std::size_t>::max(),
                   true);
}

/// At most drain_batch commands; true when commands are left and no push
/// is to wake the manager.
///
/// Coalescing: a manager that keeps up with its callers applies each
/// command right after its caller wrote it, in batches of a few, and the
/// caller slows down: their cores keep passing the lines both touch (the
/// registrations, the memory the manager frees and the caller reuses, the
/// inbox's). Measured at one caller thread: churn-warm ~25% slower than
/// with a manager that lags; freeing in bulk won part of it back, waiting
/// for bigger batches all of it. So a drain that finds a small batch lets
/// it grow for cfg.coalesce first (a delayed message: no thread spins);
/// no push wakes the manager meanwhile, since it is not parked. Where the
/// manager is the limit (two callers on two cores) the wait costs a few
/// percent when a small batch happens to come up.
bool drain(manager_self self) {
  auto& st = self->state;
  auto& box = st.cfg.inbox;
  if (!box)
    return false;
  auto end = box->drawn();
  auto waiting = end - box->popped();
  if (st.cfg.coalesce.count() > 0 && !st.drain_delayed && waiting > 0
      && waiting < coalesce_below) {
    st.drain_delayed = true;
    self->delayed_send(self, st.cfg.coalesce, drain_atom::value);
    return false;
  }
  st.drain_delayed = false;
  apply_commands(self, end, drain_batch, false);
  return !box->park();
}

} // namespace podref::detail
