// The manager's part in change notifications: subscriptions on referenced
// objects, the pod uids each object's feed reports, and the end of a feed
// with the object's last pod (read_side/change_feed.hpp has the feed;
// docs/notifications.md the contract).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "podref/actors/detail/manager_ops.hpp"
#include "podref/actors/manager.hpp"
#include "podref/read_side/change_feed.hpp"

namespace podref::detail {

namespace {

/// The uids referencing `entry` now: a scan of every uid, once per object's
/// first subscription (later changes are applied one by one).
pod_uid_list scan_uids(const manager_state& st,
                       const manager_state::object_entry& entry) {
  auto res = std::make_shared<std::vector<std::string>>();
  res->reserve(entry.uids);
  st.uids.for_each([&](uid_id id) {
    if (st.uids.refs(id).count(entry.id) > 0)
      res->emplace_back(st.uids.text(id));
  });
  std::sort(res->begin(), res->end());
  return res;
}

const change_hub_ptr& hub_of(manager_self self) {
  auto& cfg = self->state.cfg;
  if (!cfg.changes)
    cfg.changes = std::make_shared<change_hub>(change_executor{},
                                               change_error_hook{});
  return cfg.changes;
}

} // namespace

caf::result<subscription_id> subscribe(manager_self self,
                                       const std::string& ns,
                                       const std::string& name,
                                       const change_callback& cb) {
  auto& st = self->state;
  if (st.cfg.strategy != strategy::watch)
    return make_caf_error(
      {errc::invalid_argument,
       std::string{"subscribe: change notifications need the Watch "
                   "strategy, not "}
         + to_string(st.cfg.strategy)});
  if (!cb)
    return make_caf_error(
      {errc::invalid_argument, "subscribe: the callback is empty"});
  auto key = object_key_of(ns, name);
  auto* entry = st.objects.find(hashed_key{key});
  if (entry == nullptr)
    return make_caf_error(not_registered_error(ns, name));
  auto sub = hub_of(self)->add(ns, name, cb);
  if (!sub)
    return make_caf_error(shut_down_error());
  bool fresh = entry->slot->feed() == nullptr;
  auto& feed = entry->slot->make_feed(st.cfg.changes);
  if (fresh) {
    ++st.feeds;
    feed.set_uids(scan_uids(st, *entry));
  }
  feed.add(sub);
  // The reflector offers the current state (its thread orders that with
  // its own publications); one not started yet gets this after r_reuse.
  if (entry->reflector)
    self->send(entry->reflector, notify_atom::value, sub->id());
  return sub->id();
}

void unsubscribe(manager_self self, subscription_id id) {
  auto& st = self->state;
  if (!st.cfg.changes)
    return;
  auto sub = st.cfg.changes->find(id);
  if (!sub)
    return;
  sub->close_now();
  st.cfg.changes->forget(id);
  auto key = object_key_of(sub->ns(), sub->name());
  if (auto* entry = st.objects.find(hashed_key{key}))
    if (auto* feed = entry->slot->feed())
      feed->remove(id);
}

void feed_uid_added(manager_state::object_entry& entry, std::string_view uid) {
  if (auto* feed = entry.slot->feed())
    feed->add_uid(uid);
}

void feed_uid_removed(manager_state::object_entry& entry,
                      std::string_view uid) {
  if (auto* feed = entry.slot->feed())
    feed->remove_uid(uid);
}

void end_feed(manager_self self, manager_state::object_entry& entry) {
  if (auto* feed = entry.slot->feed()) {
    feed->end_all();
    --self->state.feeds;
  }
}

} // namespace podref::detail
