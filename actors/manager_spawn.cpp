// The manager's per-object actors: spawning (a pooled reflector or a new
// one, a cache entry), their failure reports, parking or stopping them when
// their object's last reference goes, and the idle-recycling pass.
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/spawn_options.hpp>

#include "podref/actors/actor_clock.hpp"
#include "podref/actors/cache_entry.hpp"
#include "podref/actors/detail/manager_ops.hpp"
#include "podref/actors/manager.hpp"
#include "podref/actors/reflector.hpp"
#include "podref/actors/reflector_binding.hpp"
#include "podref/read_side/change_feed.hpp"

namespace podref::detail {

namespace {

/// Object actors are neither linked to nor monitored by the manager: both
/// keep an entry per actor in the manager's attachables, which CAF 0.17
/// searches linearly on every exit, so 100k objects made teardown
/// quadratic. A functor attached to the object actor reports failures
/// instead; the manager's state destructor stops the object actors.
void watch_for_failure(manager_self self, const cache_entry_actor& hdl,
                       std::string key) {
  hdl->attach_functor([mgr = caf::actor_cast<caf::actor_addr>(self),
                       addr = hdl.address(),
                       key = std::move(key)](const caf::error& reason) {
    if (!reason || reason == caf::exit_reason::user_shutdown)
      return; // stopped by us, or shut down with the manager
    if (auto dest = caf::actor_cast<manager_actor>(mgr))
      caf::anon_send(dest, obj_down_atom::value, key, addr);
  });
}

/// Reports the failure of reflector `hdl` for the object its binding names
/// at its death (see reflector_binding.hpp): one functor per actor, however
/// many objects it serves.
void watch_for_failure(manager_self self, const reflector_actor& hdl,
                       reflector_binding_ptr binding) {
  hdl->attach_functor([mgr = caf::actor_cast<caf::actor_addr>(self),
                       addr = hdl.address(),
                       binding = std::move(binding),
                       counters = detail::counters_of(
                         self->state.cfg.read_side)](const caf::error& reason) {
    auto [slot, lost] = binding->bury();
    // Activations it never took up count as started and stopped at once,
    // so that every spawned activation shows in the started counter.
    if (lost > 0) {
      counters->reflectors_started += lost;
      counters->reflectors_stopped += lost;
    }
    if (!slot || !reason || reason == caf::exit_reason::user_shutdown)
      return; // parked, stopped by us, or shut down with the manager
    if (auto dest = caf::actor_cast<manager_actor>(mgr))
      caf::anon_send(dest, obj_down_atom::value, slot->key(), addr);
  });
}

} // namespace

/// A parked reflector from the pool if any (one message), else a new actor,
/// spawned lazily so that the activation message is what initialises it.
reflector_actor spawn_reflector(manager_self self,
                                const std::shared_ptr<object_slot>& slot) {
  auto& st = self->state;
  auto& cfg = st.cfg;
  cfg.read_side->counters.reflectors_spawned.fetch_add(
    1, std::memory_order_relaxed);
  // Its namespace's multiplexer, if it has one (manager_mux.cpp).
  auto source = st.namespaces.empty() ? cfg.source
                                      : source_for(self, slot->ns());
  auto x = st.reflector_pool.take(slot);
  if (!x.hdl) {
    if (!st.reflector_settings) {
      reflector_settings rs;
      rs.res = cfg.res;
      rs.counters = detail::counters_of(cfg.read_side);
      static_cast<reflector_timing&>(rs) = cfg;
      st.reflector_settings = std::make_shared<const reflector_settings>(
        std::move(rs));
    }
    reflector_config rc;
    rc.source = source;
    rc.shared = st.reflector_settings;
    x.hdl = spawn_reflector_actor(self->system(), std::move(rc),
                                  self->context(), true);
    x.binding = std::make_shared<reflector_binding>();
    x.binding->assign(slot);
    watch_for_failure(self, x.hdl, x.binding);
  }
  slot->set_owner(x.binding);
  // Not part of the typed interface, hence anonymous; still in order with
  // everything else the manager sends this actor (one mailbox, one thread).
  caf::anon_send(caf::actor_cast<caf::actor>(x.hdl), r_reuse_atom::value,
                 reflector_activation{slot, source,
                                      cfg.seed + st.spawned++});
  return x.hdl;
}

void start_object_actor(manager_self self,
                        manager_state::object_entry& entry) {
  auto& st = self->state;
  if (st.defer_activations)
    st.pending_activations.push_back(entry.slot);
  else if (st.cfg.strategy == strategy::cache)
    entry.cache = spawn_cache_entry(self, entry.slot);
  else
    entry.reflector = spawn_reflector(self, entry.slot);
}

void start_pending_actors(manager_self self) {
  auto& st = self->state;
  st.defer_activations = false;
  for (auto& slot : st.pending_activations) {
    // Gone, or released and added again (with a slot of its own, pending
    // as well): nothing to start for this slot.
    auto* entry = st.objects.find(hashed_key{slot->key()});
    if (entry != nullptr && entry->slot == slot)
      start_object_actor(self, *entry);
  }
  st.pending_activations.clear();
}

cache_entry_actor spawn_cache_entry(manager_self self,
                                    const std::shared_ptr<object_slot>& slot) {
  auto& cfg = self->state.cfg;
  cache_entry_config cc;
  cc.res = cfg.res;
  cc.source = cfg.source;
  cc.slot = slot;
  cc.counters = detail::counters_of(cfg.read_side);
  static_cast<cache_ttl_settings&>(cc) = cfg;
  auto hdl = self->spawn(cache_entry, std::move(cc));
  watch_for_failure(self, hdl, slot->key());
  return hdl;
}

namespace {

/// Stops reflector `hdl`: r_stop without a sender, on the manager's
/// execution unit (scheduled as self->send schedules). The reflector never
/// answers it, and a sender would make the reflector's thread release a
/// reference to the manager, whose count the manager's thread writes for
/// every message it sends (~2% of a 100k teardown's CPU).
void stop_reflector(manager_self self, const reflector_actor& hdl) {
  caf::actor_cast<caf::strong_actor_ptr>(hdl)->enqueue(
    nullptr, caf::make_message_id(), caf::make_message(r_stop_atom::value),
    self->context());
}

} // namespace

void retire_object_actor(manager_self self,
                         const manager_state::object_entry& entry) {
  auto& st = self->state;
  if (entry.cache) {
    self->send(entry.cache, r_stop_atom::value);
    return;
  }
  if (!entry.reflector)
    return; // released in the batch that added it: never started
  // Park the reflector for the next new object if the pool has room.
  auto binding = std::static_pointer_cast<reflector_binding>(
    entry.slot->owner());
  if (binding && st.reflector_pool.put({entry.reflector, binding}))
    caf::anon_send(caf::actor_cast<caf::actor>(entry.reflector),
                   r_park_atom::value);
  else
    stop_reflector(self, entry.reflector);
}

void drain_pool_if_idle(manager_self self) {
  auto& st = self->state;
  if (st.objects.empty() && (!st.cfg.inbox || st.cfg.inbox->idle()))
    for (auto& hdl : st.reflector_pool.drain())
      stop_reflector(self, hdl);
}

void open_access_period(manager_self self) {
  auto period = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  self->state.cfg.recycle_period)
                  .count();
  self->state.cfg.read_side->stamp.open_period(clock_ns(self), period);
}

namespace {

/// In how many recycling passes every immutable object is listed once
/// again; 0: never.
std::uint64_t recheck_shares(const manager_config& cfg) {
  auto period = cfg.recycle_period.count();
  auto recheck = cfg.immutable_recheck.count();
  if (period <= 0 || recheck <= 0)
    return 0;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(recheck / period));
}

} // namespace

namespace {

/// Whether someone subscribes to the object: its watch then never idles.
bool subscribed(const object_slot& slot) {
  auto* feed = slot.feed();
  return feed != nullptr && feed->active();
}

} // namespace

void recycle(manager_self self) {
  auto& st = self->state;
  if (st.cfg.strategy != strategy::watch)
    return; // only watches idle; cached objects simply expire
  auto max_idle = st.cfg.max_idle;
  auto idle_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(max_idle)
                   .count();
  auto now = clock_ns(self);
  // Each pass lists a share of the immutable objects again, each once per
  // immutable_recheck: a steady trickle at the API server, not a burst.
  auto shares = recheck_shares(st.cfg);
  auto turn = shares == 0 ? 0 : st.recycle_passes++ % shares;
  for (auto& entry : st.objects) {
    // Only a hint: the reflector re-checks with its own, authoritative state.
    auto* snap = entry.slot->load();
    if (snap->running && snap->synced
        && now > entry.slot->last_access_ns() + idle_ns
        && !(st.feeds > 0 && subscribed(*entry.slot)))
      self->send(entry.reflector, idle_atom::value, max_idle);
    else if (shares != 0 && entry.id % shares == turn
             && snap->stopped_immutable())
      self->send(entry.reflector, recheck_atom::value, false);
  }
}

} // namespace podref::detail

namespace podref {

manager_state::~manager_state() {
  for (auto& [ns, n] : namespaces)
    if (n.mux)
      caf::anon_send_exit(n.mux, caf::exit_reason::user_shutdown);
  for (auto& entry : objects) {
    if (entry.reflector)
      caf::anon_send_exit(entry.reflector, caf::exit_reason::user_shutdown);
    if (entry.cache)
      caf::anon_send_exit(entry.cache, caf::exit_reason::user_shutdown);
  }
}

} // namespace podref
