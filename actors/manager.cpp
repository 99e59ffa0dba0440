#include "podref/actors/manager.hpp"

#include <algorithm>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/spawn_options.hpp>

#include "podref/actors/cache_entry.hpp"
#include "podref/actors/reflector.hpp"

namespace podref {

namespace {

using self_ptr = manager_actor::stateful_pointer<manager_state>;

std::string pod_key(const pod_registration& r) {
  std::string key;
  key.reserve(r.ns.size() + r.name.size() + r.uid.size() + 2);
  key += r.ns;
  key += '\0';
  key += r.name;
  key += '\0';
  key += r.uid;
  return key;
}

std::int64_t now_ns(self_ptr self) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           self->clock().now().time_since_epoch())
    .count();
}

/// Object actors are neither linked to nor monitored by the manager: both
/// keep an entry per actor in the manager's attachables, which CAF 0.17
/// searches linearly on every exit, so 100k objects made teardown
/// quadratic. A functor attached to the object actor reports failures
/// instead; the manager's state destructor stops the object actors.
template <class Handle>
void watch_for_failure(self_ptr self, const Handle& hdl, std::string key) {
  hdl->attach_functor([mgr = caf::actor_cast<caf::actor_addr>(self),
                       addr = hdl.address(),
                       key = std::move(key)](const caf::error& reason) {
    if (!reason || reason == caf::exit_reason::user_shutdown)
      return; // stopped by us, or shut down with the manager
    if (auto dest = caf::actor_cast<manager_actor>(mgr))
      caf::anon_send(dest, obj_down_atom::value, key, addr);
  });
}

reflector_actor spawn_reflector(self_ptr self,
                                const std::shared_ptr<detail::object_slot>& slot) {
  auto& cfg = self->state.cfg;
  reflector_config rc;
  rc.res = cfg.res;
  rc.source = cfg.source;
  rc.slot = slot;
  rc.counters = detail::counters_of(cfg.read_side);
  rc.sync_timeout = cfg.sync_timeout;
  rc.backoff_initial = cfg.backoff_initial;
  rc.backoff_cap = cfg.backoff_cap;
  rc.seed = cfg.seed + self->state.spawned++;
  cfg.read_side->counters.reflectors_spawned.fetch_add(
    1, std::memory_order_relaxed);
  auto hdl = self->spawn(reflector, std::move(rc));
  watch_for_failure(self, hdl, slot->key());
  return hdl;
}

cache_entry_actor
spawn_cache_entry(self_ptr self,
                  const std::shared_ptr<detail::object_slot>& slot) {
  auto& cfg = self->state.cfg;
  cache_entry_config cc;
  cc.res = cfg.res;
  cc.source = cfg.source;
  cc.slot = slot;
  cc.counters = detail::counters_of(cfg.read_side);
  cc.node_ttl = cfg.node_ttl;
  cc.default_ttl = cfg.default_ttl;
  auto hdl = self->spawn(cache_entry, std::move(cc));
  watch_for_failure(self, hdl, slot->key());
  return hdl;
}

bool keeps_objects(self_ptr self) {
  return self->state.cfg.strategy != strategy::get;
}

void add_ref(self_ptr self, const std::string& ns, const std::string& name,
             const std::string& uid) {
  auto& st = self->state;
  if (!keeps_objects(self))
    return;
  auto key = ns + '/' + name;
  auto [i, added] = st.objects.try_emplace(std::move(key));
  auto& entry = i->second;
  if (added) {
    entry.slot = std::make_shared<detail::object_slot>(
      st.cfg.res, ns, name, st.cfg.read_side->domain);
    st.cfg.read_side->index.insert(entry.slot);
    if (st.cfg.strategy == strategy::cache)
      entry.cache = spawn_cache_entry(self, entry.slot);
    else
      entry.reflector = spawn_reflector(self, entry.slot);
    st.cfg.read_side->counters.referenced_objects.fetch_add(
      1, std::memory_order_relaxed);
  }
  ++entry.refs[uid];
  // Upstream's AddReference drops the cached value: the next read fetches,
  // even when another pod had it cached. Slot first (see the header).
  if (entry.cache)
    self->send(entry.cache, invalidate_atom::value, entry.slot->invalidate());
}

void del_ref(self_ptr self, const std::string& ns, const std::string& name,
             const std::string& uid) {
  auto& st = self->state;
  auto i = st.objects.find(ns + '/' + name);
  if (i == st.objects.end())
    return;
  auto& refs = i->second.refs;
  auto j = refs.find(uid);
  if (j == refs.end())
    return; // a uid that never referenced the object: ignored (see header)
  if (--j->second > 0)
    return;
  refs.erase(j);
  if (!refs.empty())
    return;
  // Last reference gone: unpublish first, so that readers fall back to the
  // manager (which answers "not registered"), then stop the object's actor.
  st.cfg.read_side->index.erase(i->second.slot->key(), i->second.slot->hash());
  if (i->second.cache)
    self->send(i->second.cache, r_stop_atom::value);
  else
    self->send(i->second.reflector, r_stop_atom::value);
  st.objects.erase(i);
  st.cfg.read_side->counters.referenced_objects.fetch_sub(
    1, std::memory_order_relaxed);
}

void register_pod(self_ptr self, const pod_registration_ptr& reg) {
  auto& st = self->state;
  if (!keeps_objects(self))
    return; // Get: upstream's simple managers keep no bookkeeping
  auto [i, added] = st.pods.try_emplace(pod_key(*reg), reg);
  if (added) {
    st.cfg.read_side->counters.registered_pods.fetch_add(
      1, std::memory_order_relaxed);
    for (auto& name : reg->names)
      add_ref(self, reg->ns, name, reg->uid);
    return;
  }
  // Re-registration: apply only the difference (upstream since PR #120255),
  // so names in both versions keep their counts and their reflectors.
  auto prev = std::exchange(i->second, reg);
  const auto& now = reg->names;
  const auto& old = prev->names; // both sorted and distinct
  for (auto& name : now)
    if (!std::binary_search(old.begin(), old.end(), name))
      add_ref(self, reg->ns, name, reg->uid);
  for (auto& name : old)
    if (!std::binary_search(now.begin(), now.end(), name))
      del_ref(self, prev->ns, name, prev->uid);
}

void unregister_pod(self_ptr self, const pod_registration& key) {
  auto& st = self->state;
  auto i = st.pods.find(pod_key(key));
  if (i == st.pods.end())
    return;
  auto prev = std::move(i->second);
  st.pods.erase(i);
  st.cfg.read_side->counters.registered_pods.fetch_sub(
    1, std::memory_order_relaxed);
  // The stored pod's names, not the argument's: callers may unregister with
  // an empty spec.
  for (auto& name : prev->names)
    del_ref(self, prev->ns, name, prev->uid);
}

void recycle(self_ptr self) {
  auto& st = self->state;
  if (st.cfg.strategy != strategy::watch)
    return; // only watches idle; cached objects simply expire
  auto max_idle = st.cfg.max_idle;
  auto idle_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(max_idle)
                   .count();
  auto now = now_ns(self);
  for (auto& [key, entry] : st.objects) {
    // Only a hint: the reflector re-checks with its own, authoritative state.
    auto* snap = entry.slot->load();
    if (snap->running && snap->synced
        && now > entry.slot->last_access_ns() + idle_ns)
      self->send(entry.reflector, idle_atom::value, max_idle);
  }
}

void command_done(self_ptr self) {
  self->state.cfg.read_side->counters.pending_commands.fetch_sub(
    1, std::memory_order_relaxed);
}

} // namespace

manager_state::~manager_state() {
  for (auto& kvp : objects) {
    if (kvp.second.reflector)
      caf::anon_send_exit(kvp.second.reflector, caf::exit_reason::user_shutdown);
    if (kvp.second.cache)
      caf::anon_send_exit(kvp.second.cache, caf::exit_reason::user_shutdown);
  }
}

manager_actor::behavior_type
manager(manager_actor::stateful_pointer<manager_state> self, manager_config cfg) {
  // Upstream clamps maxIdleTime to at least one minute.
  cfg.max_idle = std::max(cfg.max_idle, caf::timespan{std::chrono::minutes(1)});
  self->state.cfg = std::move(cfg);
  // Upstream's first pass runs at construction, before any reference
  // exists. A pass sent now would run after registrations already queued
  // and stop watches that synced meanwhile and were never read: the first
  // pass comes one period from now.
  if (self->state.cfg.strategy == strategy::watch
      && self->state.cfg.recycle_period.count() > 0)
    self->delayed_send(self, self->state.cfg.recycle_period,
                       recycle_atom::value);
  return {
    [self](reg_pod_atom, const pod_registration_ptr& reg) {
      register_pod(self, reg);
      command_done(self);
    },
    [self](unreg_pod_atom, const pod_registration_ptr& reg) {
      unregister_pod(self, *reg);
      command_done(self);
    },
    [self](add_ref_atom, const std::string& ns, const std::string& name,
           const std::string& uid) { add_ref(self, ns, name, uid); },
    [self](del_ref_atom, const std::string& ns, const std::string& name,
           const std::string& uid) { del_ref(self, ns, name, uid); },
    [self](get_obj_atom, const std::string& ns,
           const std::string& name) -> caf::result<api_object> {
      auto& st = self->state;
      if (!keeps_objects(self)) {
        // Get: a live read, registered or not; the API's errors as they are.
        st.cfg.read_side->counters.gets.fetch_add(1,
                                                  std::memory_order_relaxed);
        return self->delegate(st.cfg.source, caf::get_atom::value, st.cfg.res,
                              ns, name, std::string{});
      }
      auto i = st.objects.find(ns + '/' + name);
      if (i == st.objects.end())
        return make_caf_error(not_registered_error(ns, name));
      if (i->second.cache)
        return self->delegate(i->second.cache, get_obj_atom::value);
      return self->delegate(i->second.reflector, get_obj_atom::value);
    },
    [self](immut_atom, const std::string& ns, const std::string& name) {
      auto i = self->state.objects.find(ns + '/' + name);
      if (i != self->state.objects.end() && i->second.reflector)
        self->send(i->second.reflector, immut_atom::value);
    },
    [self](recycle_atom) {
      recycle(self);
      // The timer re-arms itself; recycles sent by others (tests) do not.
      auto period = self->state.cfg.recycle_period;
      if (period.count() > 0 && self->current_sender() == self->ctrl())
        self->delayed_send(self, period, recycle_atom::value);
    },
    [](sync_atom) { return caf::ok_atom::value; },
    [self](obj_down_atom, const std::string& key, const caf::actor_addr& who) {
      // A failed object actor (e.g. a handler threw) is replaced at once on
      // the same slot, unless the entry has moved on since.
      auto i = self->state.objects.find(key);
      if (i == self->state.objects.end())
        return;
      auto& e = i->second;
      if (e.cache && e.cache.address() == who)
        e.cache = spawn_cache_entry(self, e.slot);
      else if (e.reflector && e.reflector.address() == who)
        e.reflector = spawn_reflector(self, e.slot);
    },
    [self](refs_atom, const std::string& ns, const std::string& name) {
      auto i = self->state.objects.find(ns + '/' + name);
      return i == self->state.objects.end() ? ref_map{} : i->second.refs;
    },
  };
}

} // namespace podref
