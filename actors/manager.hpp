// The manager actor: registered pods and their reference counts.
//
// One manager serves one resource (Secrets or ConfigMaps), as upstream has one
// cacheBasedManager per kind. It owns the registered-pod map and the counts
// per (object, pod uid), kept with the uids (uid_refs); it spawns one actor
// per object on the first reference and stops it by message when the last
// reference goes. It never blocks: registrations are bookkeeping, reads are
// delegated.
//
// The strategy decides the per-object actor:
// - Watch: a reflector (list + watch), recycled when idle;
// - Cache: a cache entry (TTL store). Every added reference, new object or
//   not, invalidates the cached value: the manager counts the invalidation
//   in the slot first, then tells the entry, so readers on any thread that
//   are ordered after the reference never serve the old value;
// - Get: nothing is kept; registrations are no-ops and reads are live gets.
//
// Where we differ from upstream, on purpose:
// - deleting a reference for a uid that never added one is ignored (upstream
//   stores a count of -1 and keeps the reflector alive forever);
// - reads reach a reflector only through the manager, in order with its stop
//   message, so no read can restart a reflector after its last reference
//   went (upstream's Get can, reference section 3.10).
//
// Source replacement: the manager monitors its source. When it goes down,
// the manager asks its resolver for the current one (retrying on the actor
// clock while the resolver still answers the dead one) and tells every
// object actor the new source with new_src. Without a resolver nothing is
// replaced: reflectors keep retrying the dead source with their backoff,
// synced objects keep serving their last state and other reads time out,
// until the embedder sends new_src to the manager.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "podref/actors/detail/key_table.hpp"
#include "podref/actors/reflector_pool.hpp"
#include "podref/actors/detail/ref_counts.hpp"
#include "podref/actors/detail/uid_table.hpp"
#include "podref/messages/actor_types.hpp"
#include "podref/messages/hashed_key.hpp"
#include "podref/actors/command_inbox.hpp"
#include "podref/read_side/read_side.hpp"
#include "podref/read_side/change_hub.hpp"
#include "podref/messages/engine_settings.hpp"
#include "podref/messages/node_ttl.hpp"
#include "podref/messages/strategy.hpp"

namespace podref {

struct reflector_settings;

/// The manager's settings; the timing, TTL, recycling period (zero
/// disables the timer: tests then send recycle themselves) and seed are
/// engine_settings'.
struct manager_config : engine_settings {
  resource res = resource::secrets;
  /// How objects are kept (default: Watch, as upstream).
  podref::strategy strategy = strategy::watch;
  object_source_actor source;
  /// Finds the current source after `source` went down (e.g. the handle of
  /// a restarted API server); may be empty. Called on the manager's thread,
  /// so it must not block. A null answer means "no source any more": the
  /// manager stops asking.
  std::function<object_source_actor()> resolve_source;
  /// Delay between two questions to resolve_source while it answers the
  /// dead source: starts here and doubles up to the cap.
  caf::timespan resolve_initial = std::chrono::milliseconds(10);
  caf::timespan resolve_cap = std::chrono::seconds(1);
  detail::read_side_ptr read_side;
  /// Registrations pushed by the facade (null: messages only).
  std::shared_ptr<detail::command_inbox> inbox;
  /// Coalescing: a drain that finds only a few commands waiting (see
  /// manager_drain.cpp) applies them this much later, with what came
  /// meanwhile; zero applies them at once.
  caf::timespan coalesce = caf::timespan{0};
  /// Watches not read for longer than this are stopped (upstream:
  /// 5 x syncFrequency, at least one minute: the facade applies that
  /// floor, runtime/object_manager.cpp; here it is taken as given, so
  /// that tests over real time can idle a watch in milliseconds).
  caf::timespan max_idle = idle_sync_periods * default_sync_frequency;
  /// Where change notifications are delivered (read_side/change_hub.hpp);
  /// null: a hub of the manager's own (podref's notification thread),
  /// made at the first subscription.
  std::shared_ptr<detail::change_hub> changes;
};

struct manager_state {
  static constexpr const char* name = "podref.manager";

  /// One referenced object. Exactly one of reflector (Watch) and cache
  /// (Cache) is set.
  ///
  /// The counts per (object, uid) live with the uids (uid_table::refs):
  /// an object keeps its id there and how many uids reference it.
  ///
  /// Under Cache, upstream's TTL store ignores the uid and keeps one count
  /// per object; we keep the per-uid counts of the Watch store for both:
  /// their sum is upstream's count, since the manager only deletes
  /// references it added.
  struct object_entry {
    object_id id = 0;
    /// Uids with at least one reference to this object.
    std::uint32_t uids = 0;
    reflector_actor reflector;
    cache_entry_actor cache;
    std::shared_ptr<detail::object_slot> slot;
  };

  /// Objects are keyed by "ns/name", the slot's key.
  struct object_key_of {
    std::string_view operator()(const object_entry& x) const noexcept {
      return x.slot->key();
    }
  };

  manager_state() = default;

  manager_state(const manager_state&) = delete;
  manager_state& operator=(const manager_state&) = delete;

  /// Stops every object actor: they are not linked to the manager.
  ~manager_state();

  manager_config cfg;
  /// A registered pod: its current registration and its interned uid.
  struct pod_entry {
    pod_registration_ptr reg;
    uid_id uid = 0;
  };

  /// Pods are keyed by their registration's key (ns, name, uid).
  struct pod_key_of {
    std::string_view operator()(const pod_entry& x) const noexcept {
      return x.reg->pod_key().text;
    }
  };

  key_table<pod_entry, pod_key_of> pods;
  key_table<object_entry, object_key_of> objects;
  /// Uids held by registered pods and by the (object, uid) counts.
  uid_table uids;
  /// Object ids: the next never used, and those freed for reuse.
  object_id next_object_id = 1;
  /// Recycling passes so far: whose turn an immutable object's recheck is.
  std::uint64_t recycle_passes = 0;
  std::vector<object_id> free_object_ids;
  /// A coalescing drain is on its way (see manager_config::coalesce).
  bool drain_delayed = false;
  /// While the drain applies a batch, objects it adds wait here for their
  /// actor until the batch ends: one referenced and released within the
  /// batch never gets one (no activation, no list), as a kubelet reflector
  /// stopped before its goroutine first ran lists nothing.
  bool defer_activations = false;
  std::vector<std::shared_ptr<detail::object_slot>> pending_activations;
  std::uint64_t spawned = 0;
  /// Idle reflectors kept for reuse (Watch); drained when idle.
  podref::reflector_pool reflector_pool;
  /// What every reflector of this manager shares (made at the first spawn).
  std::shared_ptr<const podref::reflector_settings> reflector_settings;

  /// Source recovery: the source that went down while no replacement is
  /// known (null otherwise), and the generation and count of the questions
  /// to the resolver since then.
  caf::actor_addr lost_source;
  std::uint64_t resolve_gen = 0;
  std::uint32_t resolve_attempts = 0;

  /// Referenced objects with a change feed (ever subscribed): while zero,
  /// reference counting never looks at feeds.
  std::size_t feeds = 0;

  /// Adaptive watch multiplexing (manager_mux.cpp, docs/multiplexing.md):
  /// per namespace with referenced objects, how many, and its multiplexer
  /// while it has one. Empty unless cfg.mux_threshold is set.
  struct namespace_entry {
    std::size_t objects = 0;
    namespace_mux_actor mux;
    /// The upstream refused a namespace-wide list or watch: per object for
    /// the manager's lifetime.
    bool refused = false;
  };
  std::unordered_map<std::string, namespace_entry> namespaces;
};

manager_actor::behavior_type
manager(manager_actor::stateful_pointer<manager_state> self, manager_config cfg);

} // namespace podref
