// The namespace multiplexer: one per multiplexed (resource, namespace). To the
// reflectors of its namespace it is their object source (list, watch,
// cancel); it serves them from one namespace-wide list and watch at its
// upstream, filtered to the names the manager references. The design, its
// version rules and what it mirrors of a per-object source are in
// docs/multiplexing.md; the contract is namespace_mux_actor's
// (messages/actor_types.hpp).
//
// Few of these exist (one per busy namespace), so it is a plain CAF typed
// actor, not a lean one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/actor_system.hpp>
#include <caf/typed_response_promise.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/read_side/engine_counters.hpp"

namespace podref {

struct namespace_mux_config {
  resource res = resource::secrets;
  /// The namespace served; never empty.
  std::string ns;
  namespace_source_actor upstream;
  /// Told with mux_forbid when the upstream refuses the namespace-wide list
  /// or watch (a weak address: the manager owns the multiplexer).
  caf::actor_addr manager;
  /// The names referenced when the multiplexer starts.
  std::vector<std::string> names;
  /// Where it counts the reflector watches it serves and its namespace
  /// watch (mux_sub_watches, mux_ns_watches); may be null.
  std::shared_ptr<detail::engine_counters> counters;
};

struct namespace_mux_state {
  static constexpr const char* name = "podref.namespace_mux";

  /// One tracked name: its state as of `version`, once known. An
  /// invalidated cache keeps the last object (not known, version 0), so
  /// that the next namespace list tells the sub-watches real changes only.
  struct name_entry {
    bool known = false;
    api_object object;
    std::uint64_t version = 0;
    /// Whether the manager still references it (else it goes with its
    /// last sub-watch).
    bool referenced = true;
    /// Its reflector listed here and watches no more (stopped as idle or
    /// immutable), or not yet: a list from the cache ("0") while the cache
    /// is invalid is then an immutable recheck, not the start of a watch,
    /// and goes to the upstream per object.
    bool unwatched = false;
    std::vector<watch_id> subs;
  };

  /// A reflector's watch on one name.
  struct sub_watch {
    std::string name;
    watcher_actor watcher;
    /// Only events with a newer resourceVersion go to it.
    std::uint64_t after = 0;
  };

  struct waiting_list {
    caf::typed_response_promise<list_result> promise;
    std::string name;
    std::string rv;
  };

  struct waiting_watch {
    caf::typed_response_promise<watch_id> promise;
    std::string name;
    std::uint64_t from = 0;
    watcher_actor watcher;
  };

  enum class watch_phase { closed, opening, open };

  namespace_mux_config cfg;
  std::unordered_map<std::string, name_entry> names;
  std::unordered_map<watch_id, sub_watch> subs;
  watch_id next_sub = 1;
  /// The tracked states are consistent as of `version`: a namespace list
  /// was taken and the watch stream has not broken since.
  bool valid = false;
  std::uint64_t version = 0;
  watch_phase phase = watch_phase::closed;
  std::optional<watch_id> ns_watch;
  /// Moves on with every upstream replacement and invalidation: replies
  /// of an earlier generation are ignored.
  std::uint64_t gen = 0;
  bool listing = false;
  /// The next namespace list is a consistent read (resourceVersion ""):
  /// the stream's history expired, or a list asked for a version the
  /// upstream has not reached.
  bool relist_live = false;
  std::vector<waiting_list> lists;
  std::vector<waiting_watch> watches;
  /// The upstream refused the namespace-wide calls: the manager moves the
  /// reflectors away; what waits here waits for that.
  bool refused = false;
  mux_stats stats;
  /// What it added to cfg.counters so far (taken back when it ends).
  std::int64_t counted_subs = 0;
  std::int64_t counted_ns_watches = 0;

  namespace_mux_state() = default;
  namespace_mux_state(const namespace_mux_state&) = delete;
  namespace_mux_state& operator=(const namespace_mux_state&) = delete;
  ~namespace_mux_state();
};

namespace_mux_actor::behavior_type namespace_mux(
  namespace_mux_actor::stateful_pointer<namespace_mux_state> self,
  namespace_mux_config cfg);

} // namespace podref
