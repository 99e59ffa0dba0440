// The reflector actor: keeps one object (namespace, name) of one resource
// fresh by listing it and then watching it, and publishes every state to the
// object's slot so that readers can serve it without an actor round trip.
//
// It reproduces client-go's reflector as the kubelet's watch-based store uses
// it (reference kubelet-manager.md, 3.2 to 3.8): the first list asks for
// resourceVersion "0", later lists resume from the last version seen (never
// back in time) or from "" after an expired version; a watch that ends
// normally is re-opened from the last version seen; failures back off
// exponentially with jitter. A read waits for the first sync, but never for
// longer than the sync timeout; the reflector itself keeps trying.
//
// Everything runs on the actor clock (delayed_send), so tests drive it in
// virtual time; nothing blocks and nothing throws.
//
// The actor is a lean_actor (lean_actor.hpp), not a CAF event-based actor:
// one per referenced object, so its ~1.3 KB of CAF machinery dominated the
// memory per object. Handles to it are actor_cast to reflector_actor: its
// dispatch implements exactly that interface, checked at compile time
// (lean_dispatch.hpp), plus what is not in it: the pool's r_park and
// r_reuse and its own timers (retry, sync_to).
//
// The source may be replaced (new_src, from the manager when its API server
// was restarted): the reflector then abandons what it had in flight at the
// old source and lists again at the new one, from the last version it saw,
// while a synced object keeps being served. Replies and watch events of a
// source it has left are ignored.
//
// Reuse: a reflector actor may serve one object after another (the manager
// keeps idle ones in a reflector_pool). r_park ends the current activation
// as r_stop does, but keeps the actor waiting for r_reuse, which starts the
// next one on another object: counters count activations. Replies, timers
// and watch events of an earlier activation are ignored, as those of a
// replaced source are.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/execution_unit.hpp>
#include <caf/make_message.hpp> // caf/result.hpp needs it first
#include <caf/result.hpp>

#include "podref/actors/lean_actor.hpp"
#include "podref/actors/detail/small_rng.hpp"
#include "podref/messages/actor_types.hpp"
#include "podref/messages/engine_settings.hpp"
#include "podref/read_side/engine_counters.hpp"
#include "podref/read_side/object_slot.hpp"

namespace podref {

/// What changes from one activation of a reflector actor to the next.
struct reflector_activation {
  /// The object's slot (never null).
  std::shared_ptr<detail::object_slot> slot;
  object_source_actor source;
  std::uint64_t seed = 0;
};

/// What the reflectors of one manager have in common: kept once per
/// manager (reflector_config::shared), not once per reflector. The timing
/// is reflector_timing's (messages/engine_settings.hpp).
struct reflector_settings : reflector_timing {
  resource res = resource::secrets;
  std::shared_ptr<detail::engine_counters> counters;
};

/// What a reflector watches, where it publishes, and its timing.
struct reflector_config : reflector_settings {
  object_source_actor source;
  /// Carries the namespace and name of the object; the reflector is its
  /// only publisher. Null: spawned parked, waiting for r_reuse.
  std::shared_ptr<detail::object_slot> slot;
  /// Seed of the jitter generator (fixed seeds make tests deterministic).
  std::uint64_t seed = 0;
  /// If set, used instead of the settings above: one copy for all the
  /// reflectors of a manager (else the reflector keeps its own copy).
  std::shared_ptr<const reflector_settings> shared;
};

/// The state of one reflector. Invariants between messages:
/// - reads are parked only while not synced;
/// - `busy` of the counters holds +1 from this reflector exactly while it
///   lists, awaits a watch reply or backs off;
/// - `open_watches` holds +1 exactly while a watch id is current.
struct reflector_state {
  static constexpr const char* name = "podref.reflector";

  using self_pointer = lean_actor*;

  reflector_state() = default;

  reflector_state(const reflector_state&) = delete;
  reflector_state& operator=(const reflector_state&) = delete;

  /// Calls teardown().
  ~reflector_state();

  /// Balances the counters and releases the watch and parked reads also
  /// when the actor is killed instead of stopped; then drops what the
  /// state holds (the actor's memory may outlive it). Idempotent.
  void teardown();

  // -- message handlers -------------------------------------------------------

  /// Takes over `cfg` (at construction; sends nothing).
  void init(self_pointer self, reflector_config cfg);

  /// At the first resume: with a slot, activates (counts the reflector and
  /// starts listing), without one waits parked for r_reuse.
  void launch();

  /// r_reuse: starts an activation on `x`'s object; ignored while active.
  /// `deferred`: the first list waits behind the messages already queued.
  void activate(reflector_activation x, bool deferred);

  /// r_park: ends the activation as r_stop does, keeping the actor.
  void park();

  void on_event(watch_id id, const watch_event& ev);

  void on_watch_end(watch_id id, const caf::error& err);

  caf::result<api_object> get_obj();

  void immut_read();

  void idle_chk(caf::timespan max_idle);

  void r_stop();

  /// notify: subscription `id` joined the object's change feed.
  void on_subscribed(subscription_id id);

  /// recheck: lists an object stopped as immutable once more.
  void recheck(bool live);

  void on_retry(std::uint64_t gen);

  void on_sync_timeout(std::uint64_t read_id);

  void on_new_source(const object_source_actor& src);

  /// inspect: what the reflector keeps, with `refs` as the references.
  object_status inspect(ref_map refs) const;

private:
  /// What the reflector is doing at the source.
  enum class phase {
    /// Not running, or between two steps of one handler.
    idle,
    listing,
    /// A watch request is in flight.
    opening_watch,
    watching,
    backing_off,
  };

  /// Which call a pending retry repeats.
  enum class step {
    list,
    watch,
  };

  // -- lifecycle --------------------------------------------------------------

  /// Ends the activation of an object the manager has unindexed: cancels
  /// the watch, fails waiting reads as not registered and uncounts the
  /// reflector.
  void deactivate();

  /// (Re)starts: running, not synced, then lists.
  void start();

  /// Cancels the watch and any call in flight; keeps the object. A mutable
  /// object is not served again before the next successful list.
  void stop_watching();

  /// Marks the object immutable and stops watching for good.
  void freeze();

  /// Starts an activation on `slot` at `source` (see activate()).
  void activate_impl(std::shared_ptr<detail::object_slot> slot,
                     object_source_actor source, bool deferred);

  // -- source calls -----------------------------------------------------------

  void start_list();

  void start_watch();

  void on_list(list_result& res);

  /// The answer to recheck's list: the new state, watched again unless it
  /// is immutable; a failure keeps serving the old one.
  void on_recheck(list_result& res);

  void on_recheck_failed();

  /// `src` is the source the watch was asked of.
  void on_watch_opened(std::uint64_t gen, const object_source_actor& src,
                       watch_id id);

  /// Handles a failed list or watch call, or a watch that ended with an
  /// error; `failed` is what to repeat after the backoff.
  void on_failure(const caf::error& err, step failed);

  void back_off(step failed);

  /// The next backoff wait; advances the base delay.
  caf::timespan next_backoff();

  /// Whether an event or end for `id` belongs to our watch (see the .cpp).
  bool accepts(watch_id id) const;

  /// Whether the current message comes from a source other than ours.
  bool from_other_source() const;

  /// Forgets the current watch id, cancelling it at the source if
  /// `cancel`.
  void close_watch(bool cancel);

  /// Moves to `next`, keeping the busy counter balanced; bumps the
  /// generation so that replies and timers of the previous step are
  /// ignored.
  std::uint64_t enter(phase next);

  // -- reads ------------------------------------------------------------------

  /// The answer to a read while synced.
  caf::expected<api_object> answer();

  void deliver_parked();

  /// The object last published (the slot's snapshot holds it; the state
  /// keeps no copy). Only while an activation has a slot.
  const api_object& object() const;

  /// Publishes the current flags with the current object, or with `obj`.
  void publish();

  void publish(api_object obj);

  std::int64_t now_ns() const;

  // -- data -------------------------------------------------------------------

  self_pointer self_ = nullptr;
  /// Shared with the other reflectors of the manager.
  std::shared_ptr<const reflector_settings> settings_;
  object_source_actor source_;
  /// The object's slot; null while parked.
  std::shared_ptr<detail::object_slot> slot_;
  /// Whether an activation runs (counted in live_reflectors).
  bool counted_ = false;
  /// Whether the actor was parked before (its next activation is a reuse).
  bool reused_ = false;

  bool running_ = false;
  bool synced_ = false;
  bool immutable_ = false;
  /// A recheck's list is in flight.
  bool rechecking_ = false;

  /// Whether a list has succeeded: later lists resume from last_rv_.
  bool has_rv_ = false;
  /// Set by an expired error, cleared by the next successful list: lists
  /// then ask for "" (the newest state).
  bool expired_ = false;
  std::string last_rv_;
  /// The last failed list or watch, until a list or a watch succeeds.
  std::optional<error_info> failure_;

  phase phase_ = phase::idle;
  bool busy_ = false;
  std::uint64_t gen_ = 0;
  step retry_step_ = step::list;
  caf::timespan backoff_base_{0};
  small_rng rng_;

  std::optional<watch_id> watch_;
  /// The highest watch id the current source told us of.
  std::optional<watch_id> max_seen_watch_;

  std::uint64_t next_read_id_ = 0;
  /// Reads waiting for the first sync, by read id (a few at most).
  std::vector<std::pair<std::uint64_t, lean_actor::promise>> parked_;
};

/// Spawns a reflector actor: from an actor, pass its context() as `host`
/// (null: the system's scheduler); `lazy` waits for its first message
/// before it starts (with a null slot: parked, waiting for r_reuse).
reflector_actor spawn_reflector_actor(caf::actor_system& sys,
                                      reflector_config cfg,
                                      caf::execution_unit* host = nullptr,
                                      bool lazy = false);

} // namespace podref

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::reflector_activation)
