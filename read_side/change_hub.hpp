// change_hub: delivers change notifications to subscribers, one manager's
// worth, on podref's notification thread or through the embedder's
// executor; never on an actor's thread.
//
// Each subscriber has one pending slot. Whoever offers a change (the
// object's reflector, or the manager for an end) replaces what is pending
// (counting it as skipped) and, if the subscriber was idle, queues it on
// the hub: O(1) and no wait on any callback, so a slow subscriber never
// slows the reflector, and memory per subscriber stays bounded. The hub's
// thread takes queued subscribers in turn and runs one delivery each (or
// hands it to the executor as one task); a subscriber with another change
// pending by then is queued again behind the others. At most one delivery
// of a subscriber runs at a time, so its calls come in the order offered.
//
// close() (unsubscribe) guarantees that no call of the subscriber starts
// after it returns: it waits for a call running on another thread, and
// returns at once when called from that call itself (no deadlock).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "podref/messages/object_change.hpp"

namespace podref::detail {

class change_hub;

/// One subscription: its callback and its pending slot.
class change_subscriber {
public:
  change_subscriber(subscription_id id, std::string ns, std::string name,
                    change_callback cb);

  change_subscriber(const change_subscriber&) = delete;
  change_subscriber& operator=(const change_subscriber&) = delete;

  subscription_id id() const noexcept {
    return id_;
  }

  const std::string& ns() const noexcept {
    return ns_;
  }

  const std::string& name() const noexcept {
    return name_;
  }

  /// Offers change number `seq` of the object (numbers grow with the
  /// resourceVersion); ignored when not newer than the last one offered or
  /// once ending. Replaces a pending change (c.skipped counts it). True:
  /// the subscriber was idle, the caller must hand it to the hub.
  bool offer(object_change c, std::uint64_t seq);

  /// The final call (ended): replaces a pending change. True: hand it to
  /// the hub.
  bool end();

  /// Ends the subscription without a final call; no call starts after
  /// this returns (see the header). Idempotent.
  void close();

  /// Ends it as close() does, without waiting for a call in flight (for
  /// actor threads, which must not wait on a callback).
  void close_now();

  /// True once closed, or once the ended call ran.
  bool closed() const;

  /// Runs the pending change, if any, on the calling thread; true if
  /// another one is pending (queue the subscriber again).
  bool deliver(change_hub& hub);

  /// The executor refused the delivery task: the change stays pending and
  /// the next offer queues the subscriber again.
  void deliver_refused();

private:
  enum class state : std::uint8_t { open, ending, closed };

  const subscription_id id_;
  const std::string ns_;
  const std::string name_;
  const change_callback cb_;

  mutable std::mutex mtx_;
  std::condition_variable idle_;
  state state_ = state::open;
  /// Queued on the hub or being delivered.
  bool scheduled_ = false;
  bool running_ = false;
  std::thread::id runner_;
  std::uint64_t last_seq_ = 0;
  bool has_seq_ = false;
  std::optional<object_change> pending_;
};

using change_subscriber_ptr = std::shared_ptr<change_subscriber>;

/// Counters of one hub.
struct change_hub_stats {
  std::int64_t subscriptions = 0;
  std::uint64_t delivered = 0;
  std::uint64_t skipped = 0;
  std::uint64_t callback_errors = 0;
};

/// Who takes queued subscribers off the hub: its own thread, or whoever
/// calls poll() (an embedder's loop, or a test on the deterministic
/// scheduler).
enum class change_pump : std::uint8_t { own_thread, polled };

class change_hub : public std::enable_shared_from_this<change_hub> {
public:
  /// `exec` empty: callbacks run on the pumping thread (the hub's own, or
  /// poll()'s caller); else each delivery is one task handed to `exec`:
  /// by a polled hub from poll(), by any other at once from the thread
  /// that offers the change (no thread of the hub's own). `hook` may be
  /// empty.
  change_hub(change_executor exec, change_error_hook hook,
             change_pump pump = change_pump::own_thread);

  /// Calls stop().
  ~change_hub();

  change_hub(const change_hub&) = delete;
  change_hub& operator=(const change_hub&) = delete;

  /// A new subscriber of ns/name, registered until closed; starts the
  /// hub's thread on the first one (without an executor). Null after
  /// stop().
  change_subscriber_ptr add(std::string ns, std::string name,
                            change_callback cb);

  /// The subscriber `id`, or null (unknown, or closed and forgotten).
  change_subscriber_ptr find(subscription_id id) const;

  /// Forgets `id` (closed or ended).
  void forget(subscription_id id);

  /// Queues `s` for a delivery; any thread, never waits on a callback.
  void schedule(change_subscriber_ptr s);

  /// Closes every subscriber (waiting for calls in flight on other
  /// threads) and ends the thread. Idempotent.
  void stop();

  /// A polled hub: runs (or hands to the executor) every delivery queued,
  /// including those queued meanwhile, on the calling thread; returns how
  /// many ran. Not for a hub with its own thread (returns 0).
  std::size_t poll();

  change_hub_stats stats() const;

  // -- for change_subscriber::deliver -----------------------------------------

  void count_delivery(std::uint64_t skipped) noexcept {
    delivered_.fetch_add(1, std::memory_order_relaxed);
    skipped_.fetch_add(skipped, std::memory_order_relaxed);
  }

  /// A callback threw: counted, then passed to the hook.
  void report(const object_change& c, std::exception_ptr e) noexcept;

private:
  void run();

  /// One delivery of `s`, queued again if more is pending.
  void deliver(const change_subscriber_ptr& s);

  /// Delivers (or hands to the executor) every subscriber of `batch`.
  void dispatch(std::vector<change_subscriber_ptr>& batch);

  const change_executor exec_;
  const change_error_hook hook_;
  const change_pump pump_;

  mutable std::mutex reg_mtx_;
  subscription_id next_id_ = 1;
  std::unordered_map<subscription_id, change_subscriber_ptr> subs_;
  bool stopped_ = false;

  std::mutex q_mtx_;
  std::condition_variable q_cv_;
  std::deque<change_subscriber_ptr> queue_;
  bool stopping_ = false;
  std::thread thread_;

  std::atomic<std::uint64_t> delivered_{0};
  std::atomic<std::uint64_t> skipped_{0};
  std::atomic<std::uint64_t> errors_{0};
};

using change_hub_ptr = std::shared_ptr<change_hub>;

} // namespace podref::detail
