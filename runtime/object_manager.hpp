// object_manager: the thread-safe facade over one manager actor, generic over
// the resource and over the strategy (Get, Cache or Watch; see
// messages/strategy.hpp); secret_manager and configmap_manager wrap it with
// typed reads.
//
// Contracts:
// - any number of threads may call every member at once;
// - register_pod / unregister_pod enqueue and return (sync() waits until
//   everything enqueued before it is applied); they wait only while the
//   manager is more than manager_options::max_unapplied commands behind
//   (back-pressure). Under Get they keep nothing. register_pod checks the pod's names first and
//   rejects a bad one with an error, enqueueing nothing;
// - Watch: get() of a synced object is a lock-free lookup of the snapshot
//   its reflector published: no actor round trip, no lock, no clock read,
//   no shared write (the copy it returns counts references per reader
//   thread stripe; a thread's first read of an object allocates its
//   stripe's copy once). Unsynced, stopped or unregistered objects go
//   through the actors, waiting at most the sync timeout for a first list;
// - Cache: get() of a fresh cached object is the same lock-free lookup (the
//   TTL is checked on every read); stale, failed or invalidated objects go
//   through the object's cache entry, which fetches. A reference added
//   before a read (registration + sync(), on any thread) always makes that
//   read fetch, as upstream's AddReference does;
// - Get: every get() is one live GET to the source, registered or not;
// - Watch: subscribe() delivers every new version of a referenced object
//   to a callback, on podref's notification thread or the executor of
//   manager_options::notify_executor, never on an actor's thread (see
//   docs/notifications.md);
// - destruction (or shutdown()) stops the manager and its reflectors without
//   hanging; reads in flight complete with an error; later calls fail with
//   errc::shut_down.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "podref/messages/api_object.hpp"
#include "podref/messages/engine_settings.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/pod.hpp"
#include "podref/messages/node_ttl.hpp"
#include "podref/messages/object_change.hpp"
#include "podref/messages/object_status.hpp"
#include "podref/messages/strategy.hpp"

namespace caf {
class actor;
} // namespace caf

namespace podref {

class runtime;
class api_server;

/// The strategy and its timing; the defaults are upstream's (Watch). The
/// settings the manager takes as they are (sync_timeout, backoff_initial,
/// backoff_cap, recycle_period, seed; Cache: default_ttl, node_ttl) are
/// engine_settings' (messages/engine_settings.hpp).
struct manager_options : engine_settings {
  /// How objects are kept: Get, Cache or Watch (see parse_strategy()).
  podref::strategy strategy = strategy::watch;

  // -- Watch ------------------------------------------------------------------

  /// The kubelet's syncFrequency; watches idle for 5x this (at least a
  /// minute) are stopped until the next read.
  std::chrono::nanoseconds sync_frequency = default_sync_frequency;

  // -- every strategy that keeps objects ----------------------------------------

  /// Back-pressure: register_pod / unregister_pod called while more than
  /// this many commands are enqueued and not yet applied wait until the
  /// manager has applied half of them. Zero: never wait (unbounded).
  /// Threads of a runtime podref created never wait (they run the
  /// manager); with the embedder's actor system, do not call them from its
  /// actors unless this is zero.
  std::size_t max_unapplied = 65536;
  /// Release back-pressure: unregister_pod called while at least this many
  /// unregistrations are unapplied and they make up 7/8 of the backlog or
  /// more waits until the manager has applied half of them
  /// (actors/command_inbox.hpp). A node that releases pods in a row then
  /// keeps its reflectors stopping at the pace of its calls instead of
  /// leaving them running long after the last call; registrations and
  /// churn never wait for it. Zero: never.
  std::size_t max_unapplied_releases = 1024;
  /// Giving way: while more than this many commands are unapplied, calls
  /// of register_pod / unregister_pod running on the core the manager last
  /// ran on yield it now and then (sched_yield), so that with more busy
  /// threads than cores the manager gets more than an even share of its
  /// core (actors/command_inbox.hpp). Zero: never.
  std::size_t yield_above = 4096;
  /// Coalescing: when the manager finds only a few commands waiting, it
  /// applies them this much later, with those that came meanwhile (under
  /// load, bigger batches cost callers less; see actors/manager_drain.cpp).
  /// Zero applies every command at once. sync() and reads never wait for it.
  std::chrono::nanoseconds coalesce = std::chrono::microseconds(30);

  // -- change notifications (Watch; docs/notifications.md) ----------------------

  /// Runs each delivery task of subscribe()'s callbacks; must run every
  /// task it accepts (or throw to refuse it). Empty: callbacks run on
  /// podref's notification thread, one at a time.
  change_executor notify_executor;
  /// Receives what a callback threw (counted in callback_errors either way).
  change_error_hook notify_errors;
};

/// The options' former name, from when Watch was the only strategy.
using watch_options = manager_options;

/// Counters of one manager.
struct manager_stats {
  std::int64_t registered_pods = 0;
  std::int64_t referenced_objects = 0;
  std::int64_t live_reflectors = 0;
  /// Reflectors' watches, at the API server or at a namespace
  /// multiplexer.
  std::int64_t open_watches = 0;
  /// Watch multiplexing (docs/multiplexing.md): the reflector watches a
  /// namespace multiplexer serves, and the namespace-wide watches held at
  /// the API server in their place.
  std::int64_t multiplexed_watches = 0;
  std::int64_t namespace_watches = 0;
  /// Items and events of the namespace lists and watches for objects no
  /// pod references, dropped on arrival (the cost of multiplexing).
  std::uint64_t unreferenced_events = 0;
  std::uint64_t reflectors_started = 0;
  std::uint64_t reflectors_stopped = 0;
  /// Source actions by verb.
  std::uint64_t gets = 0;
  std::uint64_t lists = 0;
  std::uint64_t watches = 0;
  /// Reads answered from a published snapshot / through the actors.
  std::uint64_t snapshot_reads = 0;
  std::uint64_t waited_reads = 0;
  /// Registrations and unregistrations enqueued and not applied yet, and
  /// the calls that waited because too many were (max_unapplied).
  std::int64_t unapplied_commands = 0;
  std::uint64_t backlog_waits = 0;
  /// Calls that yielded their core to the manager (yield_above).
  std::uint64_t caller_yields = 0;
  /// Change notifications: open subscriptions, callbacks run, versions
  /// skipped by coalescing (summed over the calls), callbacks that threw.
  std::int64_t subscriptions = 0;
  std::uint64_t notifications = 0;
  std::uint64_t notifications_skipped = 0;
  std::uint64_t callback_errors = 0;
};

class object_manager {
public:
  /// A manager of `res` over `source` (an actor speaking
  /// object_source_actor's protocol), with the strategy of `opts`.
  object_manager(runtime& rt, const caf::actor& source, resource res,
                 const manager_options& opts = {});

  /// A manager of `res` over podref's in-memory API server.
  object_manager(runtime& rt, api_server& source, resource res,
                 const manager_options& opts = {});

  /// The same with strategy `s` (overrides opts.strategy). To select by
  /// name, parse_strategy() first: constructors cannot report its error.
  object_manager(runtime& rt, const caf::actor& source, resource res,
                 podref::strategy s, const manager_options& opts = {});

  object_manager(runtime& rt, api_server& source, resource res,
                 podref::strategy s, const manager_options& opts = {});

  ~object_manager();

  object_manager(const object_manager&) = delete;
  object_manager& operator=(const object_manager&) = delete;

  resource managed_resource() const noexcept;

  podref::strategy managed_strategy() const noexcept;

  /// Registers `p`, or applies the difference to the registered pod with
  /// the same namespace, name and uid (registering it again unchanged is a
  /// no-op). A pod is keyed by all three, as upstream: the same namespace
  /// and name with another uid is another pod, registered beside it.
  ///
  /// Checks `p` first, without waiting and without enqueueing anything on
  /// failure, so nothing registered changes: errc::invalid_argument when its
  /// namespace is not a DNS-1123 label, its name not a DNS-1123 subdomain,
  /// its uid empty or a reference one the API server would reject
  /// (find_pod_problem in messages/validation.hpp), with the text
  /// `pod "<ns>"/"<name>": <path>: <problem>`; errc::shut_down after
  /// shutdown. Under Get a valid pod is accepted and nothing is kept.
  result<void> register_pod(const pod& p);

  /// Drops the references of the registered pod with p's namespace, name
  /// and uid. Unknown pods are a no-op, as upstream (nothing is checked:
  /// a pod that failed to register is unknown). errc::shut_down after
  /// shutdown.
  result<void> unregister_pod(const pod& p);

  /// register_pod, then waits until the registration is applied, as
  /// upstream's synchronous RegisterPod: reads and status() made after it
  /// see it. Same errors as register_pod.
  result<void> register_pod_and_wait(const pod& p);

  /// unregister_pod, then waits until it is applied.
  result<void> unregister_pod_and_wait(const pod& p);

  /// Blocks until every registration enqueued before the call is applied.
  /// Returns false after shutdown.
  bool sync();

  /// What the engine keeps of ns/name now (see messages/object_status.hpp),
  /// after every registration enqueued before the call: its phase, its
  /// last failure, the resourceVersion last seen and the references by pod
  /// uid. errc::shut_down after shutdown.
  result<object_status> status(const std::string& ns,
                               const std::string& name) const;

  /// The object, or an error with upstream's text: not registered, failed
  /// to sync (timeout), not found (Watch: `secret "x" not found`; Cache and
  /// Get pass the API's `secrets "x" not found` on).
  result<api_object> get(const std::string& ns, const std::string& name);

  manager_stats stats() const;

  /// Watch: calls `cb` with the state of ns/name, a referenced object (a
  /// registration applied before the call counts), once synced, then with
  /// every new version in resourceVersion order, each with the uids of the
  /// registered pods referencing it then; a deletion as change_kind::deleted.
  /// A slow callback misses intermediate versions, never the latest
  /// (object_change::skipped counts them). Ends with a change_kind::ended
  /// call when the object's last pod is unregistered; unsubscribe() and
  /// shutdown() end it without one. Errors: errc::not_registered,
  /// errc::invalid_argument (another strategy, or an empty callback),
  /// errc::shut_down.
  result<subscription_id> subscribe(const std::string& ns,
                                    const std::string& name,
                                    change_callback cb);

  /// Ends subscription `id`: no call of it starts after this returns (one
  /// running on another thread is waited for; from its own callback it
  /// returns at once). Unknown or ended ids are a no-op.
  void unsubscribe(subscription_id id);

  /// Waits until every registration is applied and every reflector is
  /// synced or stopped, with no source call in flight, and every reflector
  /// the manager spawned runs and every one it stopped is gone (Cache:
  /// registrations applied and no fetch in flight; Get: at once). False on
  /// timeout and after shutdown.
  bool wait_quiescent(std::chrono::milliseconds timeout);

  /// Stops the engine now; idempotent. Reads in flight fail, later calls
  /// fail with errc::shut_down.
  void shutdown();

  /// The manager actor (for actor-level embedding and tests; under Get it
  /// keeps nothing and answers get_obj with a live get).
  caf::actor actor() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace podref
