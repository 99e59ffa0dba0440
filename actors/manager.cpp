#include "podref/actors/manager.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/spawn_options.hpp>
#include <caf/system_messages.hpp>

#include "podref/actors/cache_entry.hpp"
#include "podref/actors/reflector.hpp"
#include "podref/actors/reflector_binding.hpp"

namespace podref {

namespace {

using self_ptr = manager_actor::stateful_pointer<manager_state>;

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
void watch_for_failure(self_ptr self, const cache_entry_actor& hdl,
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
void watch_for_failure(self_ptr self, const reflector_actor& hdl,
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

/// Activates a reflector for `slot`: a parked one from the pool if any (one
/// message), else a new actor, spawned lazily so that the activation message
/// is what initialises it.
reflector_actor spawn_reflector(self_ptr self,
                                const std::shared_ptr<detail::object_slot>& slot) {
  auto& st = self->state;
  auto& cfg = st.cfg;
  cfg.read_side->counters.reflectors_spawned.fetch_add(
    1, std::memory_order_relaxed);
  auto x = st.reflector_pool.take(slot);
  if (!x.hdl) {
    if (!st.reflector_settings) {
      reflector_settings rs;
      rs.res = cfg.res;
      rs.counters = detail::counters_of(cfg.read_side);
      rs.sync_timeout = cfg.sync_timeout;
      rs.backoff_initial = cfg.backoff_initial;
      rs.backoff_cap = cfg.backoff_cap;
      st.reflector_settings = std::make_shared<const reflector_settings>(
        std::move(rs));
    }
    reflector_config rc;
    rc.source = cfg.source;
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
                 reflector_activation{slot, cfg.source,
                                      cfg.seed + st.spawned++});
  return x.hdl;
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

void count_ref(self_ptr self, manager_state::object_entry& entry, uid_id uid);

/// Adds one reference of `uid` to the object `key` (ns/name), spawning its
/// actor on the first one.
void add_ref(self_ptr self, hashed_key key, std::string_view ns,
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
    if (st.cfg.strategy == strategy::cache)
      entry.cache = spawn_cache_entry(self, entry.slot);
    else
      entry.reflector = spawn_reflector(self, entry.slot);
    st.cfg.read_side->counters.referenced_objects.fetch_add(
      1, std::memory_order_relaxed);
  }
  count_ref(self, *i, uid);
}

/// Adds one reference of `uid` to an existing object.
void count_ref(self_ptr self, manager_state::object_entry& entry, uid_id uid) {
  auto& st = self->state;
  if (st.uids.add_ref(uid, entry.id)) // a new count, which holds uid
    ++entry.uids;
  // Upstream's AddReference drops the cached value: the next read fetches,
  // even when another pod had it cached. Slot first (see the header).
  if (entry.cache)
    self->send(entry.cache, invalidate_atom::value, entry.slot->invalidate());
}

void uncount_ref(self_ptr self, manager_state::object_entry* i, uid_id uid);

/// Drops one reference of `uid` from the object `key`, stopping its actor
/// with the last one.
void del_ref(self_ptr self, hashed_key key, uid_id uid) {
  if (auto* i = self->state.objects.find(key))
    uncount_ref(self, i, uid);
}

/// Drops one reference of `uid` from the object `i` points to, stopping its
/// actor (and erasing the entry, which moves another one) with the last one.
void uncount_ref(self_ptr self, manager_state::object_entry* i, uid_id uid) {
  auto& st = self->state;
  switch (st.uids.remove_ref(uid, i->id)) {
    case ref_counts::removal::absent:
      return; // a uid that never referenced the object: ignored (see header)
    case ref_counts::removal::decremented:
      return;
    case ref_counts::removal::erased: // and its hold on uid released
      --i->uids;
      break;
  }
  if (i->uids != 0)
    return;
  // Last reference gone: unpublish first, so that readers fall back to the
  // manager (which answers "not registered"), then stop the object's actor.
  st.cfg.read_side->index.erase(i->slot->key(), i->slot->hash());
  if (i->cache) {
    self->send(i->cache, r_stop_atom::value);
  } else {
    // Park the reflector for the next new object if the pool has room.
    auto binding = std::static_pointer_cast<reflector_binding>(i->slot->owner());
    if (binding && st.reflector_pool.put({i->reflector, binding}))
      caf::anon_send(caf::actor_cast<caf::actor>(i->reflector),
                     r_park_atom::value);
    else
      self->send(i->reflector, r_stop_atom::value);
  }
  st.free_object_ids.push_back(i->id);
  st.objects.erase(i);
  st.cfg.read_side->counters.referenced_objects.fetch_sub(
    1, std::memory_order_relaxed);
  // Nothing referenced and nothing waiting: keep no idle actor around.
  if (st.objects.empty() && (!st.cfg.inbox || st.cfg.inbox->idle()))
    for (auto& hdl : st.reflector_pool.drain())
      self->send(hdl, r_stop_atom::value);
}

/// The store-level operations by name (add_ref / del_ref messages).
void add_ref_by_name(self_ptr self, const std::string& ns,
                     const std::string& name, const std::string& uid) {
  auto& st = self->state;
  if (!keeps_objects(self))
    return;
  auto key = object_key_of(ns, name);
  auto id = st.uids.acquire(hashed_key{uid}); // held for the call
  add_ref(self, hashed_key{key}, ns, name, id);
  st.uids.release(id);
}

void del_ref_by_name(self_ptr self, const std::string& ns,
                     const std::string& name, const std::string& uid) {
  auto& st = self->state;
  if (auto id = st.uids.find(hashed_key{uid}); id != 0)
    del_ref(self, hashed_key{object_key_of(ns, name)}, id);
}

/// Objects one pass of add_refs / del_refs handles: a pass finds its objects
/// first, so that the lookups' misses overlap, then updates the counts.
constexpr std::size_t ref_chunk = 8;

void add_refs(self_ptr self, const pod_registration& reg, uid_id uid) {
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
void del_refs(self_ptr self, const pod_registration& reg, uid_id uid) {
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

/// Applies a registration; true if its pod was not registered before. The
/// caller counts registered pods.
bool register_pod(self_ptr self, pod_registration_ptr reg) {
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
bool unregister_pod(self_ptr self, const pod_registration& key) {
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
void count_pods(self_ptr self, std::int64_t delta) {
  if (delta != 0)
    self->state.cfg.read_side->counters.registered_pods.fetch_add(
      delta, std::memory_order_relaxed);
}

/// The entry of the object ns/name, or null.
manager_state::object_entry* find_object(manager_state& st,
                                         const std::string& ns,
                                         const std::string& name) {
  auto key = object_key_of(ns, name);
  return st.objects.find(hashed_key{key});
}

/// Publishes the access stamp that snapshot reads record until the next
/// timer pass (detail/access_stamp.hpp).
void open_access_period(self_ptr self) {
  auto period = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  self->state.cfg.recycle_period)
                  .count();
  self->state.cfg.read_side->stamp.open_period(now_ns(self), period);
}

void recycle(self_ptr self) {
  auto& st = self->state;
  if (st.cfg.strategy != strategy::watch)
    return; // only watches idle; cached objects simply expire
  auto max_idle = st.cfg.max_idle;
  auto idle_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(max_idle)
                   .count();
  auto now = now_ns(self);
  for (auto& entry : st.objects) {
    // Only a hint: the reflector re-checks with its own, authoritative state.
    auto* snap = entry.slot->load();
    if (snap->running && snap->synced
        && now > entry.slot->last_access_ns() + idle_ns)
      self->send(entry.reflector, idle_atom::value, max_idle);
  }
}

// -- source replacement ---------------------------------------------------------

/// Watches the source for its death. One monitor, held by the manager: a
/// monitor (or link) per reflector would put an attachable per reflector on
/// the source actor, and CAF 0.17 searches an actor's attachables linearly
/// on every demonitor and exit, which made teardown of 100k reflectors
/// quadratic before (see watch_for_failure).
void monitor_source(self_ptr self) {
  if (self->state.cfg.source)
    self->monitor(self->state.cfg.source);
}

/// Makes `src` the source of the manager and of every object actor.
void adopt_source(self_ptr self, object_source_actor src) {
  auto& st = self->state;
  if (st.cfg.source && st.cfg.source.address() != src.address())
    self->demonitor(st.cfg.source.address());
  st.cfg.source = std::move(src);
  st.lost_source = caf::actor_addr{};
  ++st.resolve_gen;
  monitor_source(self);
  for (auto& entry : st.objects) {
    if (entry.reflector)
      self->send(entry.reflector, new_src_atom::value, st.cfg.source);
    if (entry.cache)
      self->send(entry.cache, new_src_atom::value, st.cfg.source);
  }
}

/// Asks the resolver for a replacement of the lost source; asks again later
/// while it answers the dead one (e.g. a restart has not published the new
/// server yet).
void resolve_source(self_ptr self) {
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

void on_source_down(self_ptr self, const caf::actor_addr& who) {
  auto& st = self->state;
  if (!st.cfg.source || who != st.cfg.source.address())
    return;
  st.lost_source = who;
  st.resolve_attempts = 0;
  ++st.resolve_gen;
  resolve_source(self);
}

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
void apply_commands(self_ptr self, std::uint64_t end, std::size_t limit,
                    bool wait) {
  auto& st = self->state;
  auto& box = *st.cfg.inbox;
  std::size_t applied = 0;
  std::int64_t pods = 0;
  detail::command cmd;
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
  // One write per batch on the shared counters' line, not one per command.
  count_pods(self, pods);
  if (applied > 0)
    box.applied(applied);
}

/// Applies every command pushed before the current message was sent.
void catch_up(self_ptr self) {
  if (auto& box = self->state.cfg.inbox)
    apply_commands(self, box->drawn(), std::numeric_limits<std::size_t>::max(),
                   true);
}

/// Fewer commands than this make a small batch, worth coalescing.
constexpr std::uint64_t coalesce_below = 128;

/// Applies what was pushed when the drain message arrived (at most
/// drain_batch commands); true if the manager must send itself another:
/// commands are left, and no push is to wake it.
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
bool drain(self_ptr self) {
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

} // namespace

manager_state::~manager_state() {
  for (auto& entry : objects) {
    if (entry.reflector)
      caf::anon_send_exit(entry.reflector, caf::exit_reason::user_shutdown);
    if (entry.cache)
      caf::anon_send_exit(entry.cache, caf::exit_reason::user_shutdown);
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
  open_access_period(self);
  if (self->state.cfg.strategy == strategy::watch
      && self->state.cfg.recycle_period.count() > 0)
    self->delayed_send(self, self->state.cfg.recycle_period,
                       recycle_atom::value);
  monitor_source(self);
  self->set_down_handler(
    [self](caf::down_msg& dm) { on_source_down(self, dm.source); });
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
      auto& st = self->state;
      if (!keeps_objects(self)) {
        // Get: a live read, registered or not; the API's errors as they are.
        st.cfg.read_side->counters.gets.fetch_add(1,
                                                  std::memory_order_relaxed);
        return self->delegate(st.cfg.source, caf::get_atom::value, st.cfg.res,
                              ns, name, std::string{});
      }
      auto* i = find_object(st, ns, name);
      if (i == nullptr)
        return make_caf_error(not_registered_error(ns, name));
      if (i->cache)
        return self->delegate(i->cache, get_obj_atom::value);
      return self->delegate(i->reflector, get_obj_atom::value);
    },
    [self](immut_atom, const std::string& ns, const std::string& name) {
      catch_up(self);
      auto* i = find_object(self->state, ns, name);
      if (i != nullptr && i->reflector)
        self->send(i->reflector, immut_atom::value);
    },
    [self](recycle_atom) {
      // The timer re-arms itself; recycles sent by others (tests) do not,
      // and only timer passes (or any pass without a timer) move the
      // access stamp.
      auto period = self->state.cfg.recycle_period;
      bool timer = period.count() > 0 && self->current_sender() == self->ctrl();
      if (timer || period.count() == 0)
        open_access_period(self);
      recycle(self);
      if (timer)
        self->delayed_send(self, period, recycle_atom::value);
    },
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
      // A failed object actor (e.g. a handler threw) is replaced at once on
      // the same slot, unless the entry has moved on since.
      auto* i = self->state.objects.find(hashed_key{key});
      if (i == nullptr)
        return;
      auto& e = *i;
      if (e.cache && e.cache.address() == who)
        e.cache = spawn_cache_entry(self, e.slot);
      else if (e.reflector && e.reflector.address() == who)
        e.reflector = spawn_reflector(self, e.slot);
    },
    [self](refs_atom, const std::string& ns, const std::string& name) {
      catch_up(self);
      auto& st = self->state;
      ref_map res;
      // Counts live per uid: a scan of every uid (introspection only).
      if (auto* i = find_object(st, ns, name); i != nullptr)
        st.uids.for_each([&](uid_id id) {
          if (auto n = st.uids.refs(id).count(i->id); n > 0)
            res.emplace(st.uids.text(id), n);
        });
      return res;
    },
    [self](new_src_atom, object_source_actor& src) {
      if (src && src.address() != self->state.cfg.source.address())
        adopt_source(self, std::move(src));
    },
    [self](src_retry_atom, std::uint64_t gen) {
      if (gen == self->state.resolve_gen)
        resolve_source(self);
    },
  };
}

} // namespace podref
