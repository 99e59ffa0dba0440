// change_feed: the subscribers of one object and what they were last
// offered. Created by the manager on the object's first subscription and
// owned by the object's slot from then on (so the reflector, which holds
// the slot, never sees it go).
//
// The reflector calls observe() with every synced state it publishes; a
// state is a new version when its presence or resourceVersion differs from
// the last one offered, and is then offered to every subscriber with the
// next sequence number and the pod uids the manager last set. The manager
// adds and removes subscribers, sets the uids (set_uids) and ends them all
// with the object's last pod (end_all). One mutex guards it, held for
// O(subscribers) offers, each O(1); nothing under it waits on a callback.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/read_side/change_hub.hpp"

namespace podref::detail {

class change_feed {
public:
  change_feed(change_hub_ptr hub, std::string ns, std::string name);

  change_feed(const change_feed&) = delete;
  change_feed& operator=(const change_feed&) = delete;

  // -- the manager --------------------------------------------------------------

  void add(change_subscriber_ptr s);

  /// Removes `id` (already closed by its unsubscribe).
  void remove(subscription_id id);

  /// The uids of the registered pods that reference the object now.
  void set_uids(pod_uid_list uids);

  /// One more / one less referencing pod uid (copy on write: deliveries in
  /// flight keep the list they were given).
  void add_uid(std::string_view uid);

  void remove_uid(std::string_view uid);

  /// The object's last pod went: every subscriber gets its ended call.
  void end_all();

  /// Whether any subscriber is attached (a hint for the idle recycling).
  bool active() const noexcept {
    return active_.load(std::memory_order_relaxed) > 0;
  }

  // -- the reflector (its thread only) -----------------------------------------

  /// A synced state was published: `obj` (empty: none) after an event or a
  /// list that brought the reflector to version `rv`. A new version goes
  /// to every subscriber; the same state again only to subscribers that
  /// have had nothing yet (the reflector calls this for a new subscriber).
  void observe(const api_object& obj, std::uint64_t rv);

private:
  /// Under mtx_: a new version for every subscriber.
  void offer_all(const api_object& obj, std::uint64_t rv,
                 std::vector<change_subscriber_ptr>& wake);

  object_change make_change(const api_object& obj, std::uint64_t rv) const;

  void wake(std::vector<change_subscriber_ptr>& xs);

  const change_hub_ptr hub_;
  const std::string ns_;
  const std::string name_;

  std::atomic<std::int64_t> active_{0};
  std::mutex mtx_;
  std::vector<change_subscriber_ptr> subs_;
  pod_uid_list uids_;
  /// The last state offered: present or not, and its version.
  bool has_last_ = false;
  bool last_present_ = false;
  std::uint64_t last_rv_ = 0;
  std::uint64_t seq_ = 0;
};

} // namespace podref::detail
