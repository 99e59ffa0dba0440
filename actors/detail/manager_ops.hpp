// The manager actor's steps, one concept per file (private to actors/):
// - manager.cpp: the behavior, pod registration and reference counting;
// - manager_drain.cpp: applying the command inbox (prefetch, coalescing);
// - manager_spawn.cpp: the per-object actors: spawning, failure reports,
//   parking or stopping, idle recycling;
// - manager_recovery.cpp: replacing a source that went down.
//
// Every step runs on the manager's thread and takes the manager itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <caf/actor_addr.hpp>

#include "podref/actors/manager.hpp"
#include "podref/messages/actor_types.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/read_side/object_slot.hpp"

namespace podref::detail {

using manager_self = manager_actor::stateful_pointer<manager_state>;

// -- registration (manager.cpp) -----------------------------------------------

/// Applies a registration; true if its pod was not registered before. The
/// caller counts registered pods (count_pods).
bool register_pod(manager_self self, pod_registration_ptr reg);

/// Removes a pod; true if it was registered. The caller counts registered
/// pods (count_pods).
bool unregister_pod(manager_self self, const pod_registration& key);

/// Publishes a change in the number of registered pods.
void count_pods(manager_self self, std::int64_t delta);

// -- the command inbox (manager_drain.cpp) ------------------------------------

/// Applies every command pushed before the current message was sent.
void catch_up(manager_self self);

/// Applies what was pushed when the drain message arrived; true if the
/// manager must send itself another drain.
bool drain(manager_self self);

// -- per-object actors (manager_spawn.cpp) ------------------------------------

/// Activates a reflector for `slot`, parked or new.
reflector_actor spawn_reflector(manager_self self,
                                const std::shared_ptr<object_slot>& slot);

/// Gives the object of `entry` its actor: a cache entry under Cache, a
/// reflector otherwise; with defer_activations, at the batch's end.
void start_object_actor(manager_self self,
                        manager_state::object_entry& entry);

/// Starts the actors of the objects the batch added and still references.
void start_pending_actors(manager_self self);

cache_entry_actor spawn_cache_entry(manager_self self,
                                    const std::shared_ptr<object_slot>& slot);

/// Ends the actor of `entry`, whose last reference went (it is unpublished
/// already): a reflector is parked if the pool has room, else stopped.
void retire_object_actor(manager_self self,
                         const manager_state::object_entry& entry);

/// Stops the parked reflectors when nothing is referenced and no command
/// waits: an idle engine keeps no actor beyond its referenced objects'.
void drain_pool_if_idle(manager_self self);

/// Publishes the access stamp that snapshot reads record until the next
/// timer pass (read_side/access_stamp.hpp).
void open_access_period(manager_self self);

/// Tells the synced watches not read for longer than max_idle to stop.
void recycle(manager_self self);

// -- watch multiplexing (manager_mux.cpp) -------------------------------------

/// The source for the reflectors of namespace `ns`: its multiplexer while
/// it has one, else the API server.
object_source_actor source_for(manager_self self, std::string_view ns);

/// A new referenced object (before its actor starts): counts it in its
/// namespace, switching the namespace up past the threshold.
void mux_object_added(manager_self self,
                      const manager_state::object_entry& entry);

/// The last reference of ns/name went (its entry is erased): uncounts it,
/// switching the namespace down below half the threshold.
void mux_object_removed(manager_self self, const std::string& ns,
                        const std::string& name);

/// mux_forbid: namespace `ns` stays per object; its reflectors go back.
void mux_refused(manager_self self, const std::string& ns,
                 const caf::actor_addr& mux);

/// A monitored actor went down: if it was a namespace's multiplexer, that
/// namespace's reflectors go back to the API server (true); else false.
bool mux_down(manager_self self, const caf::actor_addr& who);

/// mux_stats(ns): the answer of `ns`'s multiplexer, or errc::not_found.
caf::result<mux_stats> mux_stats_of(manager_self self, const std::string& ns);

/// Whether `ns` is multiplexed now.
bool multiplexed(manager_self self, std::string_view ns);

/// Sends `src` to every multiplexer (a replaced API server).
void mux_adopt_source(manager_self self);

/// The threshold from the environment (PODREF_MUX_THRESHOLD) when `cfg`
/// has none.
void mux_apply_environment(manager_config& cfg);

// -- change subscriptions (manager_notify.cpp) -------------------------------

/// subscribe: a subscription on the referenced object ns/name.
caf::result<subscription_id> subscribe(manager_self self,
                                       const std::string& ns,
                                       const std::string& name,
                                       const change_callback& cb);

/// unsub: ends subscription `id` (no wait for a call in flight).
void unsubscribe(manager_self self, subscription_id id);

/// `uid` now references the object of `entry` (a new count); call only
/// while st.feeds > 0.
void feed_uid_added(manager_state::object_entry& entry, std::string_view uid);

/// `uid` no longer references it.
void feed_uid_removed(manager_state::object_entry& entry,
                      std::string_view uid);

/// The object's last pod went: its subscribers get their ended call.
void end_feed(manager_self self, manager_state::object_entry& entry);

// -- source recovery (manager_recovery.cpp) ----------------------------------

/// Watches the current source for its death (one monitor, held by the
/// manager).
void monitor_source(manager_self self);

/// Makes `src` the source of the manager and of every object actor.
void adopt_source(manager_self self, object_source_actor src);

/// Asks the resolver again, if generation `gen` is still the current one.
void retry_resolve(manager_self self, std::uint64_t gen);

/// The down handler: starts resolving when `who` is the current source.
void on_source_down(manager_self self, const caf::actor_addr& who);

} // namespace podref::detail
