// The message vocabulary of podref's actors: every atom and typed handle.
//
// This header pulls in CAF: include it only from actors/ and from runtime
// sources (.cpp), never from headers an embedder includes.
//
// Atom texts are at most 10 characters of letters, digits and '_' (CAF 0.17).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/replies_to.hpp>
#include <caf/timespan.hpp>
#include <caf/typed_actor.hpp>

#include "podref/messages/api_object.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/object_change.hpp"
#include "podref/messages/object_status.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/messages/source_protocol.hpp"

// Immutable values shared between actors of one process; never serialised.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::api_object)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::resource)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::watch_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::list_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::source_verb)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::source_action)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<podref::source_action>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::source_action_counts)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::error_info)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::pod_registration_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::object_status)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::change_callback)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::mux_stats)

namespace podref {

// -- errors -------------------------------------------------------------------

/// The category of podref's errors inside caf::error.
constexpr caf::atom_value error_category = caf::atom("podref");

/// Wraps an error_info into a caf::error (code + message as context).
caf::error make_caf_error(const error_info& x);

/// Unwraps a caf::error. podref errors come back as they were; CAF's own
/// (e.g. a dead receiver) map to `fallback`, whose message is CAF's
/// rendering of the error when `fallback` has none.
error_info from_caf_error(const caf::error& x, const error_info& fallback);

// -- object source: what a reflector needs from an API server ---------------

using list_atom = caf::atom_constant<caf::atom("list")>;
using watch_atom = caf::atom_constant<caf::atom("watch")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using w_event_atom = caf::atom_constant<caf::atom("w_event")>;
using w_end_atom = caf::atom_constant<caf::atom("w_end")>;

/// The receiving side of a watch. A source sends the events of watch `id`
/// in resourceVersion order, then at most one w_end: an empty error means
/// the watch closed normally (watch again from the last version seen), an
/// errc::expired error means the version fell out of the history (list
/// again).
using watcher_actor = caf::typed_actor<
  caf::reacts_to<w_event_atom, watch_id, watch_event>,
  caf::reacts_to<w_end_atom, watch_id, caf::error>>;

/// An API server, per resource:
/// - get(ns, name, rv): the object, or errc::not_found (`secrets "x" not
///   found`); rv "" asks for a live (quorum) read, "0" allows an answer
///   from the server's cache (upstream's TTL refreshes);
/// - list(ns, name, rv): the items matching field selector
///   metadata.name=NAME, with the list's resourceVersion;
/// - watch(ns, name, from_rv, watcher): events after from_rv, delivered to
///   `watcher`; fails with errc::expired when from_rv is too old;
/// - cancel(id): stop a watch; no w_end follows.
/// Any call may fail with errc::unavailable.
///
/// A source may be replaced while in use (a restarted API server): the
/// manager monitors its source and hands a replacement to its object actors
/// with new_src (below). Watch ids are per source.
using object_source_actor = caf::typed_actor<
  caf::replies_to<caf::get_atom, resource, std::string, std::string,
                  std::string>::with<api_object>,
  caf::replies_to<list_atom, resource, std::string, std::string,
                  std::string>::with<list_result>,
  caf::replies_to<watch_atom, resource, std::string, std::string,
                  std::string, watcher_actor>::with<watch_id>,
  caf::reacts_to<cancel_atom, watch_id>>;

// -- in-memory API server: writes and test hooks --------------------------------

using create_atom = caf::atom_constant<caf::atom("create")>;
using apply_atom = caf::atom_constant<caf::atom("apply")>;
using actions_atom = caf::atom_constant<caf::atom("actions")>;
using clear_atom = caf::atom_constant<caf::atom("clear")>;
using act_counts_atom = caf::atom_constant<caf::atom("act_counts")>;
using fail_atom = caf::atom_constant<caf::atom("fail")>;
using hold_atom = caf::atom_constant<caf::atom("hold")>;
using unhold_atom = caf::atom_constant<caf::atom("unhold")>;
using close_atom = caf::atom_constant<caf::atom("close_w")>;
using expire_atom = caf::atom_constant<caf::atom("expire")>;
using bookmark_atom = caf::atom_constant<caf::atom("bookmark")>;
using watches_atom = caf::atom_constant<caf::atom("watches")>;
using obj_watches_atom = caf::atom_constant<caf::atom("obj_w")>;
using close_k_atom = caf::atom_constant<caf::atom("close_k")>;
using times_atom = caf::atom_constant<caf::atom("act_times")>;
using peek_atom = caf::atom_constant<caf::atom("peek")>;
using list_ns_atom = caf::atom_constant<caf::atom("list_ns")>;
using watch_ns_atom = caf::atom_constant<caf::atom("watch_ns")>;
using replace_atom = caf::atom_constant<caf::atom("replace")>;
using list_at_atom = caf::atom_constant<caf::atom("list_at")>;
using w_mark_atom = caf::atom_constant<caf::atom("w_mark")>;
using forbid_ns_atom = caf::atom_constant<caf::atom("forbid_ns")>;

/// The embedded API server: an object source plus writes and test hooks.
/// - create(obj) / update(obj) / apply(obj): store a copy of `obj` with the
///   next cluster-wide resourceVersion and return the stored object; create
///   fails if it exists, update fails with errc::not_found if it does not,
///   apply does either;
/// - delete(res, ns, name): remove, or errc::not_found;
/// - actions(): the action log; clear(): empty it;
/// - fail(verb, n, err): the next n calls of verb fail with err;
/// - hold(d): answer every later list d after it arrives (0 = at once;
///   timespan::max(): when unhold comes);
/// - unhold(): answer the held lists now, in arrival order, and later ones
///   at once;
/// - close_w(): end every open watch normally;
/// - expire(): drop the event history, so older watches get errc::expired;
/// - bookmark(): send a BOOKMARK with the current version to every watch;
/// - act_counts(): the calls of each verb since the actor started (clear()
///   leaves them);
/// - watches(): the number of open watches;
/// - obj_w(res, ns, name): the open watches of one object;
/// - close_k(k): from now on every watch ends normally (w_end with an empty
///   error) once it has delivered k events; 0 turns this off;
/// - act_times(): when each action of the log was recorded, on the actor
///   clock (time since its epoch), parallel to actions();
/// - peek(res, ns, name): the stored object or errc::not_found, without
///   recording an action (for invariant checks);
/// - list_ns(res, ns, rv): every object of `res` in namespace `ns` ("":
///   all namespaces), by namespace and name, with the list's version;
/// - watch_ns(res, ns, from_rv, watcher): as watch, for every object of
///   `res` in `ns` ("": all namespaces); from "" or "0" it starts with an
///   ADDED event per object;
/// - replace(obj): update with upstream's precondition: a non-empty
///   metadata.resourceVersion must be the stored one (errc::conflict
///   otherwise), and the API server's update rules
///   (messages/object_validation.hpp: errc::invalid with the problems as
///   causes); uid and creationTimestamp stay those of the stored object;
/// - list_at(res, ns, name, rv, exact): the objects of `res` in `ns` ("":
///   all namespaces) named `name` ("": any), by namespace and name. With
///   `exact` and rv N: the state at version N (list version N), or
///   errc::expired when N is older than the history reaches back; else (and
///   for rv "" or "0") the current state. A version ahead of the server
///   gets the current state with its (lower) version: the caller decides;
/// - w_mark(id, always): a BOOKMARK of the current version to watch `id`,
///   if `always` or the version moved past the last one the watch was sent.
/// - forbid_ns(on): while on, list_ns and watch_ns fail with errc::forbidden
///   (recorded first, as every failed call), as a kubelet's node authorizer
///   answers a namespace-wide list or watch with 403.
using memory_api_server_actor = object_source_actor::extend<
  caf::replies_to<create_atom, api_object>::with<api_object>,
  caf::replies_to<caf::update_atom, api_object>::with<api_object>,
  caf::replies_to<apply_atom, api_object>::with<api_object>,
  caf::replies_to<caf::delete_atom, resource, std::string,
                  std::string>::with<caf::ok_atom>,
  caf::replies_to<actions_atom>::with<std::vector<source_action>>,
  caf::reacts_to<clear_atom>,
  caf::replies_to<act_counts_atom>::with<source_action_counts>,
  caf::reacts_to<fail_atom, source_verb, std::uint32_t, error_info>,
  caf::reacts_to<hold_atom, caf::timespan>,
  caf::reacts_to<unhold_atom>,
  caf::reacts_to<close_atom>,
  caf::reacts_to<expire_atom>,
  caf::reacts_to<bookmark_atom>,
  caf::replies_to<watches_atom>::with<std::size_t>,
  caf::replies_to<obj_watches_atom, resource, std::string,
                  std::string>::with<std::size_t>,
  caf::reacts_to<close_k_atom, std::uint32_t>,
  caf::replies_to<times_atom>::with<std::vector<caf::timespan>>,
  caf::replies_to<peek_atom, resource, std::string,
                  std::string>::with<api_object>,
  caf::replies_to<list_ns_atom, resource, std::string,
                  std::string>::with<list_result>,
  caf::replies_to<watch_ns_atom, resource, std::string, std::string,
                  watcher_actor>::with<watch_id>,
  caf::replies_to<replace_atom, api_object>::with<api_object>,
  caf::replies_to<list_at_atom, resource, std::string, std::string,
                  std::string, bool>::with<list_result>,
  caf::reacts_to<w_mark_atom, watch_id, bool>,
  caf::reacts_to<forbid_ns_atom, bool>>;

/// A source that also serves a namespace's collection (what the namespace
/// multiplexer needs of its upstream): list_ns(res, ns, rv) and
/// watch_ns(res, ns, from_rv, watcher) as memory_api_server_actor's. A
/// source without them answers them as unexpected messages, which the
/// multiplexer takes as a refusal (docs/multiplexing.md).
using namespace_source_actor = object_source_actor::extend<
  caf::replies_to<list_ns_atom, resource, std::string,
                  std::string>::with<list_result>,
  caf::replies_to<watch_ns_atom, resource, std::string, std::string,
                  watcher_actor>::with<watch_id>>;

// -- source replacement -------------------------------------------------------

using new_src_atom = caf::atom_constant<caf::atom("new_src")>;

// -- reflector: one per referenced object -------------------------------------

/// Reference counts of one object: pod uid -> count.
using ref_map = std::map<std::string, int>;

using get_obj_atom = caf::atom_constant<caf::atom("get_obj")>;
using inspect_atom = caf::atom_constant<caf::atom("inspect")>;
using immut_atom = caf::atom_constant<caf::atom("immut_read")>;
using idle_atom = caf::atom_constant<caf::atom("idle_chk")>;
using r_stop_atom = caf::atom_constant<caf::atom("r_stop")>;
using recheck_atom = caf::atom_constant<caf::atom("recheck")>;
using notify_atom = caf::atom_constant<caf::atom("notify")>;
// The reflector's own timers, not part of reflector_actor: only the
// reflector sends them, to itself. retry(gen): the backoff of generation
// `gen` is over; sync_to(read_id): read `read_id` waited the sync timeout.
using retry_atom = caf::atom_constant<caf::atom("retry")>;
using sync_to_atom = caf::atom_constant<caf::atom("sync_to")>;
// The pool's messages to a reflector (actors/reflector_pool.hpp), not part
// of reflector_actor: senders actor_cast to caf::actor. r_park(): end the
// current activation as r_stop does, but keep the actor for r_reuse;
// r_reuse(activation): start the next activation (reflector_activation,
// actors/reflector.hpp).
using r_park_atom = caf::atom_constant<caf::atom("r_park")>;
using r_reuse_atom = caf::atom_constant<caf::atom("r_reuse")>;

/// A reflector keeps one object (namespace, name) of one resource fresh:
/// list, then watch, publishing each state to its object_slot.
/// - get_obj(): the object once synced (waits up to the sync timeout, then
///   fails with errc::sync_timeout); errc::not_found with the watch-store
///   text when the object does not exist; restarts a stopped watch first;
///   an immutable object stops the watch and keeps being served;
/// - immut_read(): a snapshot read served an immutable object: stop
///   watching, keep serving;
/// - idle_chk(max_idle): stop the watch iff running, synced and not read
///   for longer than max_idle (strictly);
/// - r_stop(): the last reference is gone: cancel the watch, fail waiting
///   reads with errc::not_registered, quit;
/// - new_src(src): the source was replaced: abandon the list or watch in
///   flight at the old one (its late replies are ignored) and, if running,
///   list again at `src` from the last version seen (an expired version
///   relists as usual); a stopped reflector uses `src` when it restarts;
/// - recheck(live): stopped as immutable: list the object once more (live:
///   resourceVersion "", and reads wait for the answer; else "0", served
///   meanwhile) and take what it finds: another immutable object stays
///   stopped with the new content; a mutable one or none is watched again;
/// - notify(id): subscription `id` was added to the object's change feed:
///   offer it the current state if synced (restarting an idle-stopped
///   watch first; read_side/change_feed.hpp);
/// - inspect(refs): its object_status, with `refs` as its references.
using reflector_actor = watcher_actor::extend<
  caf::replies_to<get_obj_atom>::with<api_object>,
  caf::replies_to<inspect_atom, ref_map>::with<object_status>,
  caf::reacts_to<immut_atom>,
  caf::reacts_to<idle_atom, caf::timespan>,
  caf::reacts_to<r_stop_atom>,
  caf::reacts_to<recheck_atom, bool>,
  caf::reacts_to<notify_atom, subscription_id>,
  caf::reacts_to<new_src_atom, object_source_actor>>;

// -- cache entry: one per referenced object (Cache strategy) ------------------

using invalidate_atom = caf::atom_constant<caf::atom("invalidate")>;

/// A cache entry holds one object's cached state (upstream's objectData of
/// the TTL store) and fetches it with get() when needed.
/// - get_obj(): the cached object while fresh; otherwise one fetch, whose
///   answer serves every read that arrives while it is in flight;
///   errc::not_found (API text) when the object does not exist;
/// - invalidate(gen): a new reference: forget the cached state (the next
///   read fetches live); gen is the slot's invalidation count;
/// - r_stop(): the last reference is gone: quit once the fetches in flight
///   are answered;
/// - new_src(src): the source was replaced: later fetches go to `src`
///   (fetches in flight finish at the old one);
/// - inspect(refs): its object_status, with `refs` as its references.
using cache_entry_actor = caf::typed_actor<
  caf::replies_to<get_obj_atom>::with<api_object>,
  caf::replies_to<inspect_atom, ref_map>::with<object_status>,
  caf::reacts_to<invalidate_atom, std::uint64_t>,
  caf::reacts_to<r_stop_atom>,
  caf::reacts_to<new_src_atom, object_source_actor>>;

// -- namespace multiplexer: one per multiplexed (resource, namespace) --------

using mux_track_atom = caf::atom_constant<caf::atom("mux_track")>;
using mux_untrack_atom = caf::atom_constant<caf::atom("mux_untrk")>;
using mux_stats_atom = caf::atom_constant<caf::atom("mux_stats")>;
using mux_forbid_atom = caf::atom_constant<caf::atom("mux_forbid")>;

/// The namespace multiplexer (actors/namespace_mux.hpp): an object source
/// for the reflectors of one namespace, served from one namespace-wide list
/// and watch at its upstream.
/// - get / list / watch / cancel: object_source_actor's contract, for
///   objects of its namespace;
/// - mux_track(name) / mux_untrack(name): the manager's referenced names;
/// - new_src(src): its upstream was replaced: drop the cache, end every
///   reflector watch as expired;
/// - mux_stats(): its counters;
/// - w_event / w_end: its own namespace watch at the upstream.
using namespace_mux_actor = object_source_actor::extend_with<watcher_actor>::extend<
  caf::reacts_to<mux_track_atom, std::string>,
  caf::reacts_to<mux_untrack_atom, std::string>,
  caf::reacts_to<new_src_atom, object_source_actor>,
  caf::replies_to<mux_stats_atom>::with<mux_stats>>;

// -- manager: registered pods and per-object reference counts ------------------

using reg_pod_atom = caf::atom_constant<caf::atom("reg_pod")>;
using unreg_pod_atom = caf::atom_constant<caf::atom("unreg_pod")>;
using add_ref_atom = caf::atom_constant<caf::atom("add_ref")>;
using del_ref_atom = caf::atom_constant<caf::atom("del_ref")>;
using recycle_atom = caf::atom_constant<caf::atom("recycle")>;
using sync_atom = caf::atom_constant<caf::atom("sync")>;
using refs_atom = caf::atom_constant<caf::atom("refs")>;
using obj_down_atom = caf::atom_constant<caf::atom("obj_down")>;
using src_retry_atom = caf::atom_constant<caf::atom("src_retry")>;
using drain_atom = caf::atom_constant<caf::atom("drain")>;
using subscribe_atom = caf::atom_constant<caf::atom("subscribe")>;
using unsub_atom = caf::atom_constant<caf::atom("unsub")>;

/// The manager of one resource (upstream's cacheBasedManager plus the store
/// of its strategy: objectCache for Watch, objectStore for Cache; under Get
/// registrations are no-ops and reads are live gets).
/// - reg_pod(r) / unreg_pod(r): register a pod (first time: every name;
///   again: only the difference) / drop the stored pod's references; both
///   idempotent; unknown pods are a no-op. Only r's key is read on unreg;
/// - add_ref / del_ref(ns, name, uid): the store-level operations;
///   deleting an unknown uid is ignored (upstream leaves a -1 count);
/// - get_obj(ns, name): errc::not_registered, or the answer of the
///   object's reflector / cache entry (Get: of a live get);
/// - immut_read(ns, name): forwarded to the object's reflector (Watch);
/// - recycle(): one idle-recycling pass (also runs on its own timer);
/// - drain(): apply the commands waiting in the facade's command inbox
///   (see actors/command_inbox.hpp); every other message applies
///   them first, so a sync or a read is ordered after the registrations
///   its sender pushed before it;
/// - sync(): answers once every earlier message of the sender is applied;
/// - refs(ns, name): the object's reference counts (empty if none);
/// - inspect(ns, name): the object's object_status (its object actor's
///   answer; unreferenced when the manager keeps nothing of it);
/// - obj_down(key, addr): the object actor `addr` of "ns/name" failed; the
///   manager replaces it if it is still the current one;
/// - new_src(src): use `src` as the source from now on and tell every
///   object actor (for embedders that replace a source themselves; with a
///   resolver the manager finds a replacement on its own when its source
///   goes down);
/// - subscribe(ns, name, cb): a change subscription on the referenced
///   object ns/name (Watch only; docs/notifications.md): its id, or
///   errc::not_registered / errc::invalid_argument (another strategy) /
///   errc::shut_down. `cb` runs on the manager's change hub (its
///   executor or notification thread), never on an actor's thread;
/// - unsub(id): ends subscription `id`: no call of it starts once this is
///   handled (one running on another thread may still finish: the
///   facade's unsubscribe waits for it); unknown ids are a no-op;
/// - src_retry(gen) is the manager's own timer for asking the resolver
///   again;
/// - mux_forbid(ns, mux): the namespace multiplexer `mux` of `ns` was
///   refused its namespace-wide list or watch: `ns` stays per-object
///   (docs/multiplexing.md).
using manager_actor = caf::typed_actor<
  caf::reacts_to<reg_pod_atom, pod_registration_ptr>,
  caf::reacts_to<unreg_pod_atom, pod_registration_ptr>,
  caf::reacts_to<add_ref_atom, std::string, std::string, std::string>,
  caf::reacts_to<del_ref_atom, std::string, std::string, std::string>,
  caf::replies_to<get_obj_atom, std::string, std::string>::with<api_object>,
  caf::reacts_to<immut_atom, std::string, std::string>,
  caf::reacts_to<recycle_atom>,
  caf::replies_to<sync_atom>::with<caf::ok_atom>,
  caf::replies_to<refs_atom, std::string, std::string>::with<ref_map>,
  caf::replies_to<inspect_atom, std::string, std::string>::with<object_status>,
  caf::reacts_to<obj_down_atom, std::string, caf::actor_addr>,
  caf::reacts_to<new_src_atom, object_source_actor>,
  caf::reacts_to<src_retry_atom, std::uint64_t>,
  caf::reacts_to<drain_atom>,
  caf::replies_to<subscribe_atom, std::string, std::string,
                  change_callback>::with<subscription_id>,
  caf::reacts_to<unsub_atom, subscription_id>,
  caf::reacts_to<mux_forbid_atom, std::string, caf::actor_addr>>;

} // namespace podref
