// Source recovery: the manager monitors its source; when it goes down, the
// manager asks its resolver for the current one (retrying on the actor
// clock while the resolver still answers the dead one) and tells every
// object actor the new source (see manager.hpp).
#include <algorithm>
#include <cstdint>
#include <utility>

#include "podref/actors/detail/manager_ops.hpp"
#include "podref/actors/manager.hpp"

namespace podref::detail {

namespace {

/// Asks the resolver for a replacement of the lost source; asks again later
/// while it answers the dead one (e.g. a restart has not published the new
/// server yet).
void resolve_source(manager_self self) {
  auto& st = self->state;
  if (!st.lost_source || !st.cfg.resolve_source)
    return;
  auto next = st.cfg.resolve_source();
  if (!next) {
    st.lost_source = caf::actor_addr{}; // gone for good: stop asking
    return;
  }
  if (next.address() != st.lost_source) {
    adopt_source(self, std::move(next));
    return;
  }
  auto shift = std::min<std::uint32_t>(st.resolve_attempts++, 30);
  auto delay = std::min(st.cfg.resolve_initial * (std::int64_t{1} << shift),
                        st.cfg.resolve_cap);
  self->delayed_send(self, delay, src_retry_atom::value, st.resolve_gen);
}

} // namespace

/// One monitor, held by the manager: a monitor (or link) per reflector
/// would put an attachable per reflector on the source actor, and CAF 0.17
/// searches an actor's attachables linearly on every demonitor and exit,
/// which made teardown of 100k reflectors quadratic (as for the object
/// actors' failure reports, manager_spawn.cpp).
void monitor_source(manager_self self) {
  if (self->state.cfg.source)
    self->monitor(self->state.cfg.source);
}

void adopt_source(manager_self self, object_source_actor src) {
  auto& st = self->state;
  if (st.cfg.source && st.cfg.source.address() != src.address())
    self->demonitor(st.cfg.source.address());
  st.cfg.source = std::move(src);
  st.lost_source = caf::actor_addr{};
  ++st.resolve_gen;
  monitor_source(self);
  for (auto& entry : st.objects) {
    // A multiplexed namespace's reflectors keep their multiplexer, which
    // gets the new source itself.
    if (entry.reflector
        && (st.namespaces.empty() || !multiplexed(self, entry.slot->ns())))
      self->send(entry.reflector, new_src_atom::value, st.cfg.source);
    if (entry.cache)
      self->send(entry.cache, new_src_atom::value, st.cfg.source);
  }
  mux_adopt_source(self);
}

void retry_resolve(manager_self self, std::uint64_t gen) {
  if (gen == self->state.resolve_gen)
    resolve_source(self);
}

void on_source_down(manager_self self, const caf::actor_addr& who) {
  auto& st = self->state;
  if (!st.cfg.source || who != st.cfg.source.address())
    return;
  st.lost_source = who;
  st.resolve_attempts = 0;
  ++st.resolve_gen;
  resolve_source(self);
}

} // namespace podref::detail
