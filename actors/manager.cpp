// The manager actor's behavior, pod registration and reference counting
// (the overview is in manager.hpp; the other steps in detail/manager_ops.hpp).
#include "podref/actors/manager.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <caf/system_messages.hpp>

#include "podref/actors/detail/manager_ops.hpp"

namespace podref::detail {

namespace {

bool keeps_objects(manager_self self) {
  return self->state.cfg.strategy != strategy::get;
}

void count_ref(manager_self self, manager_state::object_entry& entry,
               uid_id uid);

/// Adds one reference of `uid` to the object `key` (ns/name), spawning its
/// actor on the first one.
void add_ref(manager_self self, hashed_key key, std::string_view ns,
             std::string_view name, uid_id uid) {
  auto& st = self->state;
  auto* i = st.objects.find(key);
  if (i == nullptr) {
    manager_state::object_entry fresh;
    // The table's key is the slot's copy of the text.
    fresh.slot = std::make_shared<detail::object_slot>(
      st.cfg.res, std::string{ns}, std::string{name}, st.cfg.read_side->domain);
    if (st.free_object_ids.empty()) {
      fresh.id = st.next_object_id++;
    } else {
      fresh.id = st.free_object_ids.back();
      st.free_object_ids.pop_back();
    }
    i = &st.objects.insert(key.hash, std::move(fresh));
    auto& entry = *i;
    st.cfg.read_side->index.insert(entry.slot);
    // Counted first: the object's reflector starts at its namespace's
    // multiplexer if this reference makes one.
    mux_object_added(self, entry);
    start_object_actor(self, entry);
    st.cfg.read_side->counters.referenced_objects.fetch_add(
      1, std::memory_order_relaxed);
  }
  count_ref(self, *i, uid);
}

/// Adds one reference of `uid` to an existing object.
void count_ref(manager_self self, manager_state::object_entry& entry,
               uid_id uid) {
  auto& st = self->state;
  if (st.uids.add_ref(uid, entry.id)) { // a new count, which holds uid
    ++entry.uids;
    if (st.feeds > 0)
      feed_uid_added(entry, st.uids.text(uid));
    // A new pod's reads must not get an immutable object's old content if
    // it was deleted or recreated meanwhile (not upstream's, #131589):
    // the invalidation sends later snapshot reads to the reflector, which
    // gets the recheck first.
    if (entry.reflector && entry.slot->load()->stopped_immutable()) {
      entry.slot->invalidate();
      self->send(entry.reflector, recheck_atom::value, true);
    }
  }
  // Upstream's AddReference drops the cached value: the next read fetches,
  // even when another pod had it cached. Slot first (see the header).
  if (entry.cache)
    self->send(entry.cache, invalidate_atom::value, entry.slot->invalidate());
}

void uncount_ref(manager_self self, manager_state::object_entry* i,
                 uid_id uid);

/// Drops one reference of `uid` from the object `key`, stopping its actor
/// with the last one.
void del_ref(manager_self self, hashed_key key, uid_id uid) {
  if (auto* i = self->state.objects.find(key))
    uncount_ref(self, i, uid);
}

/// Drops one reference of `uid` from the object `i` points to, stopping its
/// actor (and erasing the entry, which moves another one) with the last one.
void uncount_ref(manager_self self, manager_state::object_entry* i,
                 uid_id uid) {
  auto& st = self->state;
  // The uid's text, while the count still holds it, for the object's feed.
  std::string uid_text;
  if (st.feeds > 0 && i->slot->feed() != nullptr
      && st.uids.refs(uid).count(i->id) == 1)
    uid_text = std::string{st.uids.text(uid)};
  switch (st.uids.remove_ref(uid, i->id)) {
    case ref_counts::removal::absent:
      return; // a uid that never referenced the object: ignored (see header)
    case ref_counts::removal::decremented:
      return;
    case ref_counts::removal::erased: // and its hold on uid released
      --i->uids;
      if (!uid_text.empty() && i->uids != 0)
        feed_uid_removed(*i, uid_text);
      break;
  }
  if (i->uids != 0)
    return;
  // Last reference gone: unpublish first, so that readers fall back to the
  // manager (which answers "not registered"), then stop the object's actor.
  st.cfg.read_side->index.erase(i->slot->key(), i->slot->hash());
  if (st.feeds > 0)
    end_feed(self, *i);
  retire_object_actor(self, *i);
  st.free_object_ids.push_back(i->id);
  std::string ns;
  std::string name;
  if (st.cfg.mux_threshold > 0) {
    ns = i->slot->ns();
    name = i->slot->name();
  }
  st.objects.erase(i);
  if (st.cfg.mux_threshold > 0)
    mux_object_removed(self, ns, name);
  st.cfg.read_side->counters.referenced_objects.fetch_sub(
    1, std::memory_order_relaxed);
  drain_pool_if_idle(self);
}

/// The store-level operations by name (add_ref / del_ref messages).
void add_ref_by_name(manager_self self, const std::string& ns,
                     const std::string& name, const std::string& uid) {
  auto& st = self->state;
  if (!keeps_objects(self))
    return;
  auto key = object_key_of(ns, name);
  auto id = st.uids.acquire(hashed_key{uid}); // held for the call
  add_ref(self, hashed_key{key}, ns, name, id);
  st.uids.release(id);
}

void del_ref_by_name(manager_self self, const std::string& ns,
                     const std::string& name, const std::string& uid) {
  auto& st = self->state;
  if (auto id = st.uids.find(hashed_key{uid}); id != 0)
    del_ref(self, hashed_key{object_key_of(ns, name)}, id);
}

/// Objects one pass of add_refs / del_refs handles: a pass finds its objects
/// first, so that the lookups' misses overlap, then updates the counts.
constexpr std::size_t ref_chunk = 8;

void add_refs(manager_self self, const pod_registration& reg, uid_id uid) {
  auto& st = self->state;
  manager_state::object_entry* found[ref_chunk];
  for (std::size_t first = 0; first < reg.object_count(); first += ref_chunk) {
    auto n = std::min(ref_chunk, reg.object_count() - first);
    bool all = true;
    for (std::size_t k = 0; k < n; ++k) {
      found[k] = st.objects.find(reg.object_key(first + k));
      if (found[k] == nullptr)
        all = false;
    }
    // A new object's insert moves the entries found: look them up again.
    for (std::size_t k = 0; k < n; ++k) {
      if (all)
        count_ref(self, *found[k], uid);
      else
        add_ref(self, reg.object_key(first + k), reg.ns(),
                reg.object_name(first + k), uid);
    }
  }
}

/// Drops the references of a pod's objects (see ref_chunk).
void del_refs(manager_self self, const pod_registration& reg, uid_id uid) {
  auto& st = self->state;
  manager_state::object_entry* found[ref_chunk];
  for (std::size_t first = 0; first < reg.object_count(); first += ref_chunk) {
    auto n = std::min(ref_chunk, reg.object_count() - first);
    for (std::size_t k = 0; k < n; ++k)
      found[k] = st.objects.find(reg.object_key(first + k));
    // Erasing an object moves another entry: look the rest up again.
    bool moved = false;
    for (std::size_t k = 0; k < n; ++k) {
      if (moved) {
        del_ref(self, reg.object_key(first + k), uid);
      } else if (found[k] != nullptr) {
        auto objects = st.objects.size();
        uncount_ref(self, found[k], uid);
        moved = st.objects.size() != objects;
      }
    }
  }
}

} // namespace

/// Applies a registration; true if its pod was not registered before. The
/// caller counts registered pods.
bool register_pod(manager_self self, pod_registration_ptr reg) {
  auto& st = self->state;
  if (!keeps_objects(self))
    return false; // Get: upstream's simple managers keep no bookkeeping
  auto key = reg->pod_key();
  auto* i = st.pods.find(key);
  if (i == nullptr) {
    auto uid = st.uids.acquire(reg); // held while registered
    const auto& now = *reg;
    st.pods.insert(key.hash, manager_state::pod_entry{std::move(reg), uid});
    add_refs(self, now, uid);
    return true;
  }
  // Re-registration: apply only the difference (upstream since PR #120255),
  // so names in both versions keep their counts and their reflectors. The
  // new registration has the same key text.
  auto prev = std::exchange(i->reg, reg);
  auto uid = i->uid;
  // Both key lists are sorted and distinct: one merge finds the difference.
  const auto& now = *reg;
  const auto& old = *prev;
  std::size_t a = 0;
  std::size_t b = 0;
  while (a < now.object_count() || b < old.object_count()) {
    // <0: only in the new version; >0: only in the old one; 0: in both.
    int order = a == now.object_count()   ? 1
                : b == old.object_count() ? -1
                : now.object_key(a).text.compare(old.object_key(b).text);
    if (order < 0) {
      add_ref(self, now.object_key(a), now.ns(), now.object_name(a), uid);
      ++a;
    } else if (order > 0) {
      del_ref(self, old.object_key(b), uid);
      ++b;
    } else {
      ++a;
      ++b;
    }
  }
  return false;
}

/// Removes a pod; true if it was registered. The caller counts registered
/// pods.
bool unregister_pod(manager_self self, const pod_registration& key) {
  auto& st = self->state;
  auto* i = st.pods.find(key.pod_key());
  if (i == nullptr)
    return false;
  // The stored pod's names, not the argument's: callers may unregister with
  // an empty spec.
  auto entry = std::move(*i);
  st.pods.erase(i);
  del_refs(self, *entry.reg, entry.uid);
  st.uids.release(entry.uid);
  return true;
}

/// Publishes a change in the number of registered pods.
void count_pods(manager_self self, std::int64_t delta) {
  if (delta != 0)
    self->state.cfg.read_side->counters.registered_pods.fetch_add(
      delta, std::memory_order_relaxed);
}

namespace {

/// The entry of the object ns/name, or null.
manager_state::object_entry* find_object(manager_state& st,
                                         const std::string& ns,
                                         const std::string& name) {
  auto key = object_key_of(ns, name);
  return st.objects.find(hashed_key{key});
}

/// get_obj: Get reads live; the other strategies ask the object's actor.
caf::result<api_object> read_object(manager_self self, const std::string& ns,
                                    const std::string& name) {
  auto& st = self->state;
  if (!keeps_objects(self)) {
    // Get: a live read, registered or not; the API's errors as they are.
    st.cfg.read_side->counters.gets.fetch_add(1, std::memory_order_relaxed);
    return self->delegate(st.cfg.source, caf::get_atom::value, st.cfg.res, ns,
                          name, std::string{});
  }
  auto* i = find_object(st, ns, name);
  if (i == nullptr)
    return make_caf_error(not_registered_error(ns, name));
  if (i->cache)
    return self->delegate(i->cache, get_obj_atom::value);
  return self->delegate(i->reflector, get_obj_atom::value);
}

/// refs: the counts per uid of the object ns/name.
ref_map refs_of(manager_state& st, const std::string& ns,
                const std::string& name) {
  ref_map res;
  // Counts live per uid: a scan of every uid (introspection only).
  if (auto* i = find_object(st, ns, name); i != nullptr)
    st.uids.for_each([&](uid_id id) {
      if (auto n = st.uids.refs(id).count(i->id); n > 0)
        res.emplace(st.uids.text(id), n);
    });
  return res;
}

/// inspect: the object actor's status, with the references counted here.
caf::result<object_status> inspect_object(manager_self self,
                                          const std::string& ns,
                                          const std::string& name) {
  auto& st = self->state;
  auto* i = find_object(st, ns, name);
  if (i == nullptr)
    return object_status{};
  auto refs = refs_of(st, ns, name);
  if (i->cache)
    return self->delegate(i->cache, inspect_atom::value, std::move(refs));
  if (i->reflector)
    return self->delegate(i->reflector, inspect_atom::value, std::move(refs));
  object_status res;
  res.phase = object_phase::unsynced;
  res.references = std::move(refs);
  return res;
}

/// recycle: the timer re-arms itself; recycles sent by others (tests) do
/// not, and only timer passes (or any pass without a timer) move the access
/// stamp.
void on_recycle(manager_self self) {
  auto period = self->state.cfg.recycle_period;
  bool timer = period.count() > 0 && self->current_sender() == self->ctrl();
  if (timer || period.count() == 0)
    open_access_period(self);
  recycle(self);
  if (timer)
    self->delayed_send(self, period, recycle_atom::value);
}

/// obj_down: a failed object actor (e.g. a handler threw) is replaced at
/// once on the same slot, unless the entry has moved on since.
void on_object_down(manager_self self, const std::string& key,
                    const caf::actor_addr& who) {
  auto* i = self->state.objects.find(hashed_key{key});
  if (i == nullptr)
    return;
  auto& e = *i;
  if (e.cache && e.cache.address() == who)
    e.cache = spawn_cache_entry(self, e.slot);
  else if (e.reflector && e.reflector.address() == who)
    e.reflector = spawn_reflector(self, e.slot);
}

/// Takes over `cfg`, arms the recycling timer and watches the source.
void init(manager_self self, manager_config cfg) {
  mux_apply_environment(cfg);
  self->state.cfg = std::move(cfg);
  // Upstream's first pass runs at construction, before any reference
  // exists. A pass sent now would run after registrations already queued
  // and stop watches that synced meanwhile and were never read: the first
  // pass comes one period from now.
  open_access_period(self);
  if (self->state.cfg.strategy == strategy::watch
      && self->state.cfg.recycle_period.count() > 0)
    self->delayed_send(self, self->state.cfg.recycle_period,
                       recycle_atom::value);
  monitor_source(self);
  self->set_down_handler(
    [self](caf::down_msg& dm) { on_source_down(self, dm.source); });
}

/// The handlers.
manager_actor::behavior_type behavior(manager_self self) {
  return {
    [self](reg_pod_atom, const pod_registration_ptr& reg) {
      catch_up(self);
      count_pods(self, register_pod(self, reg) ? 1 : 0);
    },
    [self](unreg_pod_atom, const pod_registration_ptr& reg) {
      catch_up(self);
      count_pods(self, unregister_pod(self, *reg) ? -1 : 0);
    },
    [self](add_ref_atom, const std::string& ns, const std::string& name,
           const std::string& uid) {
      catch_up(self);
      add_ref_by_name(self, ns, name, uid);
    },
    [self](del_ref_atom, const std::string& ns, const std::string& name,
           const std::string& uid) {
      catch_up(self);
      del_ref_by_name(self, ns, name, uid);
    },
    [self](get_obj_atom, const std::string& ns,
           const std::string& name) -> caf::result<api_object> {
      catch_up(self);
      return read_object(self, ns, name);
    },
    [self](immut_atom, const std::string& ns, const std::string& name) {
      catch_up(self);
      auto* i = find_object(self->state, ns, name);
      if (i != nullptr && i->reflector)
        self->send(i->reflector, immut_atom::value);
    },
    [self](recycle_atom) { on_recycle(self); },
    [self](sync_atom) {
      catch_up(self);
      return caf::ok_atom::value;
    },
    [self](drain_atom) {
      // Yield to other messages between batches: re-arm while commands are
      // left. One batch per drain, what was pushed when it began: a manager
      // that keeps up with its callers and chases them command by command
      // moves each slot's line and each registration between the cores one
      // by one (measured with the list this inbox replaced: churn-warm at a
      // third of its rate). Re-arming through the mailbox lets the next
      // batch grow meanwhile.
      if (drain(self))
        self->send(self, drain_atom::value);
    },
    [self](obj_down_atom, const std::string& key, const caf::actor_addr& who) {
      on_object_down(self, key, who);
    },
    [self](refs_atom, const std::string& ns, const std::string& name) {
      catch_up(self);
      return refs_of(self->state, ns, name);
    },
    [self](inspect_atom, const std::string& ns,
           const std::string& name) -> caf::result<object_status> {
      catch_up(self);
      return inspect_object(self, ns, name);
    },
    [self](new_src_atom, object_source_actor& src) {
      if (src && src.address() != self->state.cfg.source.address())
        adopt_source(self, std::move(src));
    },
    [self](src_retry_atom, std::uint64_t gen) { retry_resolve(self, gen); },
    [self](subscribe_atom, const std::string& ns, const std::string& name,
           const change_callback& cb) -> caf::result<subscription_id> {
      catch_up(self);
      return subscribe(self, ns, name, cb);
    },
    [self](unsub_atom, subscription_id id) { unsubscribe(self, id); },
    [self](mux_forbid_atom, const std::string& ns,
           const caf::actor_addr& mux) { mux_refused(self, ns, mux); },
  };
}

} // namespace

} // namespace podref::detail

namespace podref {

manager_actor::behavior_type
manager(manager_actor::stateful_pointer<manager_state> self, manager_config cfg) {
  detail::init(self, std::move(cfg));
  return detail::behavior(self);
}

} // namespace podref
