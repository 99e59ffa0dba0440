// The cache entry actor: one per referenced object under the Cache (TTL)
// strategy, upstream's objectData of the TTL store (reference
// kubelet-manager.md 2.4 to 2.7).
//
// It holds the cached object, its error and the time of its last update,
// and fetches with get() when a read finds it stale. Being an actor, it
// serialises fetches by nature: reads that arrive while a fetch is in
// flight park in arrival order, and when the fetch is done each parked read
// in turn is served from the cache if it is fresh, or starts the next
// fetch. That is exactly upstream's per-object mutex: with a 1-minute TTL
// 100 concurrent reads of 10 stale objects make 10 GETs (one fetch answers
// all reads of its object), with a TTL of 0 they make 100.
//
// The rules are upstream's, exactly:
// - invalidate() (a new reference) drops the cached state: the next read
//   fetches; a fetch in flight still answers its own reads but no longer
//   updates the cache (upstream finishes against the orphaned data);
// - fresh iff now < last update + TTL; the TTL is read on every check;
// - the first fetch and fetches after an error read live (rv ""); refreshes
//   of a good object read with rv "0" (the API server's cache);
// - NotFound is cached with the empty object; another error with nothing
//   cached is answered without caching; another error with something
//   cached keeps serving it; a result older (by resourceVersion) than the
//   cached object is ignored.
//
// Each change of the current state is published to the object's slot
// (object, fetch time, invalidation generation) so that the facade serves
// fresh hits without an actor round trip.
//
// A replaced source (new_src) is used from the next fetch on; the cached
// state stays, as it would across an API server outage upstream.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <deque>
#include <optional>

#include <caf/make_message.hpp> // caf/result.hpp needs it first
#include <caf/result.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/read_side/engine_counters.hpp"
#include "podref/read_side/object_slot.hpp"
#include "podref/messages/engine_settings.hpp"
#include "podref/messages/node_ttl.hpp"

namespace podref {

/// What a cache entry fetches, where it publishes, and its TTL
/// (cache_ttl_settings, messages/engine_settings.hpp).
struct cache_entry_config : cache_ttl_settings {
  resource res = resource::secrets;
  object_source_actor source;
  /// Carries the namespace and name of the object; the entry is its only
  /// publisher.
  std::shared_ptr<detail::object_slot> slot;
  std::shared_ptr<detail::engine_counters> counters;
};

/// The state of one cache entry.
struct cache_entry_state {
  static constexpr const char* name = "podref.cache_entry";

  using self_pointer = cache_entry_actor::stateful_pointer<cache_entry_state>;

  /// Upstream's objectData: what one (re)registration generation cached.
  struct data {
    api_object object;
    /// Set when the last stored fetch failed (only NotFound is stored).
    std::optional<error_info> err;
    /// Actor-clock time of the last stored fetch; nullopt: never fetched.
    std::optional<std::int64_t> last_update_ns;
    /// The slot's invalidation count this data belongs to.
    std::uint64_t generation = 0;
    /// Whether a fetch is in flight for the first of `waiting`.
    bool fetching = false;
    /// Parked reads, in arrival order.
    std::deque<caf::typed_response_promise<api_object>> waiting;
  };

  using data_ptr = std::shared_ptr<data>;

  cache_entry_state() = default;

  cache_entry_state(const cache_entry_state&) = delete;
  cache_entry_state& operator=(const cache_entry_state&) = delete;

  /// Answers reads still waiting and balances the counters also when the
  /// actor is killed instead of stopped.
  ~cache_entry_state();

  // -- message handlers -------------------------------------------------------

  void init(self_pointer self, cache_entry_config cfg);

  caf::result<api_object> get_obj();

  void invalidate(std::uint64_t gen);

  void r_stop();

  void on_new_source(object_source_actor src);

  /// inspect: what the entry keeps, with `refs` as the references.
  object_status inspect(ref_map refs) const;

private:
  bool fresh(const data& d) const;

  void fetch(const data_ptr& d);

  void on_fetched(const data_ptr& d, api_object obj, const caf::error& err);

  /// The answer to a read from `d`'s state.
  caf::result<api_object> answer(const data& d) const;

  /// Delivers `d`'s state (or `err` when set) to `rp`.
  static void deliver(caf::typed_response_promise<api_object>& rp,
                      const data& d, const caf::error& err);

  void publish(const data& d);

  std::int64_t now_ns() const;

  self_pointer self_ = nullptr;
  cache_entry_config cfg_;
  /// Null after an invalidation until the next read (upstream: item.data).
  data_ptr current_;
  std::uint64_t generation_ = 0;
  /// The last failed fetch of the current data, until one succeeds.
  std::optional<error_info> failure_;
  /// Data with a fetch in flight (the current one, or orphaned ones).
  std::deque<data_ptr> in_flight_;
  bool stopping_ = false;
};

/// Spawn with `sys.spawn(cache_entry, cfg)` (or from the manager).
cache_entry_actor::behavior_type
cache_entry(cache_entry_actor::stateful_pointer<cache_entry_state> self,
            cache_entry_config cfg);

} // namespace podref
