// The embedded in-memory API server: an object source (get, list, watch) over
// Secrets and ConfigMaps held in memory, plus writes and test hooks. It plays
// the part of client-go's fake clientset and fake watch in podref's tests and
// serves manifests to embedders that run without a cluster.
//
// The contract is the comment on memory_api_server_actor in
// messages/actor_types.hpp. Details fixed here:
// - one cluster-wide resourceVersion, starting at 0; every write increments
//   it and stores a copy of its input with metadata.resourceVersion set to
//   the new version (decimal) and an empty namespace replaced by "default";
// - reads with an empty namespace look in "default" as well; the action log
//   keeps the namespace as the caller passed it;
// - get, list and watch are recorded in the action log before fault
//   injection is applied, so a failed call still counts; writes are not
//   recorded; gets and lists record the resourceVersion asked for (both
//   read the current state);
// - watch("" or "0") starts now, with an ADDED event for the object if it
//   exists; a watch from an older version replays the object's events after
//   it, or fails with errc::expired when that version was compacted away
//   (dropped from the bounded history, or older than the last expire());
// - the reply to watch (the watch_id) reaches the requester before any event
//   of that watch, so a requester that is its own watcher always knows the
//   id of the events it gets;
// - watchers are monitored: a dead watcher's watches are dropped;
// - a held list is answered with the state at release time; faults are
//   decided on arrival and delivered at release as well;
// - when the server exits, open watches end with errc::shut_down and held
//   lists fail with it;
// - objects and the cluster resourceVersion live in a store that outlives
//   the actor: a server spawned over the store of a dead one continues with
//   the same objects and versions, like an API server restarted over the
//   same etcd. Event history, watches, faults and the action log belong to
//   the actor and do not survive: the new history starts empty, so watches
//   from any version older than the store's current one answer expired and
//   their reflectors list again;
// - list_at with `exact` rebuilds the state at a version from the history
//   (the current objects with the later events undone), so it reaches back
//   as far as watches do: to the compaction point;
// - close_k(k) ends a watch after k events, and after its k-th event only:
//   what a catch-up replay had left is not sent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/actor_system.hpp>
#include <caf/error.hpp>
#include <caf/timespan.hpp>
#include <caf/typed_response_promise.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/messages/api_object.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/source_protocol.hpp"

namespace podref {

/// What an API server keeps across restarts (etcd's part): the objects and
/// the cluster-wide resourceVersion. At most one server actor may use a
/// store at a time; spawn a replacement only after the previous server has
/// terminated (runtime/api_server's restart() waits for that).
struct memory_api_server_store {
  /// Identifies an object: resource, namespace, name.
  using object_key = std::tuple<resource, std::string, std::string>;

  std::map<object_key, api_object> objects;
  /// The cluster-wide resourceVersion of the last write.
  std::uint64_t version = 0;
};

using memory_api_server_store_ptr = std::shared_ptr<memory_api_server_store>;

/// Settings of one in-memory API server.
struct memory_api_server_config {
  /// Most events kept for resuming watches; older ones are compacted away.
  std::size_t history_capacity = 1000;
  /// The objects and version to serve; null: a new, empty store.
  memory_api_server_store_ptr store;
  /// Most actions kept in the action log (and its times): when it is full,
  /// the older half is dropped, so a long run holds a bounded log. The
  /// engine's own counters count every action. 0: keep everything.
  std::size_t action_log_capacity = 16384;
};

/// The state of the in-memory API server actor.
///
/// Watch bookkeeping is hashed: opening and cancelling a watch cost a few
/// hash lookups, not log(n) string comparisons, with 100k watches open.
/// Each object and each watcher usually has one watch, so their id lists
/// are short vectors kept in ascending id order (the order of fan-out).
struct memory_api_server_state {
  using object_key = memory_api_server_store::object_key;

  /// Not noexcept on purpose: libstdc++ stores each node's hash only for
  /// hashers that may throw. Without it a lookup rehashes the strings of
  /// every node it passes in its bucket (a 100k-watch teardown spent ~13%
  /// of its CPU there).
  struct object_key_hash {
    std::size_t operator()(const object_key& x) const;
  };

  /// One event of the history, for replaying to resumed watches.
  struct history_entry {
    object_key key;
    watch_event event;
    /// The object before the event (empty for ADDED): undoing the events
    /// after a version gives the state at that version (list_at).
    api_object previous;
  };

  /// Fan-out index: the open watches of each object (or scope), in
  /// ascending id order. An entry whose last watch is dropped stays, empty,
  /// until a sweep (see empty_watch_keys): a cancel then costs no lookup.
  using watch_index
    = std::unordered_map<object_key, std::vector<watch_id>, object_key_hash>;

  /// One open watch.
  struct watch_entry {
    /// The watches_by_key entry listing this watch (it outlives the watch;
    /// its node does not move).
    watch_index::value_type* listed = nullptr;
    /// Only events with a newer resourceVersion go to this watch.
    std::uint64_t after = 0;
    watcher_actor watcher;
    /// Events sent so far (for close_k).
    std::uint64_t delivered = 0;
    /// Reached close_k's limit: sent nothing more, ended by end_closing.
    bool closing = false;
  };

  /// A list waiting for its hold to expire.
  struct held_list {
    caf::typed_response_promise<list_result> promise;
    resource res = resource::secrets;
    std::string ns;
    std::string name;
    /// Set when an injected fault decided the answer on arrival.
    caf::error failure;
  };

  /// An injected fault: the next `remaining` calls fail with `err`.
  struct fault {
    std::uint32_t remaining = 0;
    error_info err;
  };

  memory_api_server_state() = default;
  memory_api_server_state(const memory_api_server_state&) = delete;
  memory_api_server_state& operator=(const memory_api_server_state&) = delete;

  /// Ends open watches and held lists with errc::shut_down.
  ~memory_api_server_state();

  /// Objects and the cluster-wide resourceVersion; never null.
  memory_api_server_store_ptr store;
  /// The newest version no longer in `history`; watches from an older
  /// version fail with errc::expired. Starts at the store's version.
  std::uint64_t compacted = 0;
  std::deque<history_entry> history;
  std::size_t history_capacity = 1000;
  std::unordered_map<watch_id, watch_entry> watches;
  watch_index watches_by_key;
  /// Entries of watches_by_key without watches. Swept once they outnumber
  /// half the entries (and a floor), so they stay a bounded share.
  std::size_t empty_watch_keys = 0;
  /// The watches a monitored watcher opened. A cancel leaves its id here:
  /// the ids of dropped watches go when the list reaches `prune_at`, which
  /// is then set to twice what is left (at least 4), so the list holds at
  /// most about twice the watcher's open watches and pruning costs O(1)
  /// per watch opened, amortised.
  struct watcher_entry {
    std::vector<watch_id> ids;
    std::size_t prune_at = 4;
    /// Ids the prunes have examined so far (what the amortised bound is
    /// about; the tests check it).
    std::uint64_t pruned_over = 0;
  };

  /// Monitored watchers and the watches they opened (so that a dead
  /// watcher's watches are found without scanning every watch). A watcher
  /// stays monitored until it dies, since the down message that a watcher
  /// stopping right after its cancel sends anyway is cheaper than a
  /// demonitor.
  std::unordered_map<caf::actor_addr, watcher_entry> watchers;

  /// The open watches' ids in ascending order (for the rare operations
  /// that visit every watch, so that each watcher sees its watches in
  /// opening order).
  std::vector<watch_id> sorted_watch_ids() const;
  watch_id next_watch_id = 1;
  std::vector<source_action> actions;
  std::size_t action_log_capacity = 0;
  /// Every action since the actor started; unbounded counts, not a log.
  source_action_counts action_counts;
  /// When each action was recorded (actor clock, since its epoch).
  std::vector<caf::timespan> action_times;
  std::map<source_verb, fault> faults;
  /// close_k: events after which a watch ends normally; 0: never.
  std::uint32_t close_every = 0;
  /// Watches that reached close_every, to end once the current fan-out is
  /// done (ending one edits the maps the fan-out iterates).
  std::vector<watch_id> closing;
  /// forbid_ns: namespace-wide lists and watches fail with errc::forbidden.
  bool forbid_namespaces = false;
  caf::timespan hold{0};
  std::map<std::uint64_t, held_list> held;
  std::uint64_t next_hold_id = 1;

  static constexpr const char* name = "podref.memory_api_server";
};

/// The in-memory API server's behavior (see memory_api_server_actor).
memory_api_server_actor::behavior_type memory_api_server(
  memory_api_server_actor::stateful_pointer<memory_api_server_state> self,
  memory_api_server_config cfg);

/// Spawns an in-memory API server in `sys`.
memory_api_server_actor spawn_memory_api_server(caf::actor_system& sys,
                                                memory_api_server_config cfg
                                                = {});

/// Stores every object of `objects` in `server` with apply(), in order, and
/// returns how many were stored, or the first error (the objects before it
/// stay stored). Blocks the calling thread: call it from outside actors, and
/// never under the testing scheduler, where nothing runs while it waits.
result<std::size_t> load_objects(caf::actor_system& sys,
                                 const memory_api_server_actor& server,
                                 const std::vector<api_object>& objects);

} // namespace podref
