// What the in-memory API server's files share: its store, its watches
// (memory_api_watches.cpp), its writes, collections, and fault and test
// hooks. Private to those files.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "podref/actors/memory_api_server.hpp"

namespace podref::detail {

using memory_api_server_pointer
  = memory_api_server_actor::stateful_pointer<memory_api_server_state>;

/// An error of podref's own codes, as a CAF error.
inline caf::error podref_error(errc code, std::string message) {
  return make_caf_error(error_info{code, std::move(message)});
}

/// Reads and writes treat an empty namespace as "default"; the keys of
/// cluster-scoped resources (nodes, namespaces) have no namespace.
inline memory_api_server_state::object_key
key_of(resource res, const std::string& ns, const std::string& name) {
  if (!is_namespaced(res))
    return {res, std::string{}, name};
  return {res, ns.empty() ? std::string{"default"} : ns, name};
}

/// Whether object key `k` is in the scope of a watch on `scope`: a scope
/// with a name is that object; an empty name stands for every object of
/// its namespace, an empty namespace too for every object of the resource
/// (stored objects never have an empty name, nor an empty namespace unless
/// their resource is cluster-scoped).
inline bool in_scope(const memory_api_server_state::object_key& scope,
                     const memory_api_server_state::object_key& k) {
  if (std::get<0>(scope) != std::get<0>(k))
    return false;
  if (!std::get<1>(scope).empty() && std::get<1>(scope) != std::get<1>(k))
    return false;
  return std::get<2>(scope).empty() || std::get<2>(scope) == std::get<2>(k);
}

// -- store (memory_api_server.cpp) ---------------------------------------------

/// A list's answer (`name` empty: the namespace's), now or after the hold
/// (hold_atom); `failure`, the injected fault record() consumed, is the
/// answer then instead.
caf::result<list_result> list_or_hold(memory_api_server_pointer self,
                                      resource res, const std::string& ns,
                                      const std::string& name,
                                      caf::error failure);

/// Logs a read, then consumes one injected fault of its verb, if any. The
/// order matters: a failed call still counts, as with client-go's fake.
caf::error record(memory_api_server_pointer self, source_verb verb,
                  resource res, const std::string& ns,
                  const std::string& name, const std::string& rv = {});

// -- watches (memory_api_watches.cpp) -----------------------------------------

/// Checks a watch's start version ("" and "0": now; errc::expired when
/// compacted away), then opens it with open_watch.
caf::result<watch_id> start_watch(memory_api_server_pointer self,
                                  const memory_api_server_state::object_key& key,
                                  const std::string& from,
                                  const watcher_actor& watcher);

/// Opens a watch on `key` (an object or a scope, see in_scope) after its
/// checks passed. The reply goes out first, then the catch-up events, so a
/// requester that watches itself sees the id before the events.
caf::result<watch_id> open_watch(memory_api_server_pointer self,
                                 const memory_api_server_state::object_key& key,
                                 std::uint64_t from_rv,
                                 const watcher_actor& watcher);

/// Sends one event; a watch that reaches close_k's limit is marked and
/// gets nothing more until end_closing ends it.
void send_event(memory_api_server_pointer self, watch_id id,
                memory_api_server_state::watch_entry& w,
                const watch_event& ev);

/// Ends the watches marked by send_event normally: the watcher watches
/// again from the last version it saw.
void end_closing(memory_api_server_pointer self);

/// An open watch of the server's table.
using watch_iterator = std::unordered_map<
  watch_id, memory_api_server_state::watch_entry>::iterator;

/// Forgets a watch (its watcher's list keeps the id; see watchers).
void drop_watch(memory_api_server_pointer self, watch_iterator i);

/// Forgets the watches of `watcher` and the watcher (its down message).
void drop_watches_of(memory_api_server_pointer self,
                     const caf::actor_addr& watcher);

// -- writes (memory_api_writes.cpp) -------------------------------------------

/// create_atom: stores a new object (ADDED); AlreadyExists otherwise.
caf::result<api_object> create_object(memory_api_server_pointer self,
                                      const api_object& obj);

/// update_atom: replaces a stored object (MODIFIED); NotFound otherwise.
caf::result<api_object> update_object(memory_api_server_pointer self,
                                      const api_object& obj);

/// apply_atom: creates or replaces.
caf::result<api_object> apply_object(memory_api_server_pointer self,
                                     const api_object& obj);

/// replace_atom: update_atom with a resourceVersion precondition (409),
/// then the API server's update rules (find_update_problems: errc::invalid
/// with the problems as causes); keeps the stored uid and
/// creationTimestamp.
caf::result<api_object> replace_object(memory_api_server_pointer self,
                                       const api_object& obj);

/// delete_atom: removes a stored object (DELETED); NotFound otherwise.
caf::result<caf::ok_atom> delete_object(memory_api_server_pointer self,
                                        resource res, const std::string& ns,
                                        const std::string& name);

// -- collections (memory_api_collections.cpp) ---------------------------------

/// The objects of `res` in `ns` ("": all namespaces) now.
list_result namespace_now(const memory_api_server_state& st, resource res,
                          const std::string& ns);

/// list_ns_atom: every object of `res` in `ns` ("": all namespaces).
caf::result<list_result> list_namespace(memory_api_server_pointer self,
                                        resource res, const std::string& ns,
                                        const std::string& rv);

/// watch_ns_atom: a watch on every object of `res` in `ns` ("": all).
caf::result<watch_id> watch_namespace(memory_api_server_pointer self,
                                      resource res, const std::string& ns,
                                      const std::string& from,
                                      const watcher_actor& watcher);

/// list_at_atom: the objects of a scope now, or at version `rv` when
/// `exact` (rebuilt from the history; errc::expired past its start).
caf::result<list_result> list_at(memory_api_server_pointer self, resource res,
                                 const std::string& ns,
                                 const std::string& name,
                                 const std::string& rv, bool exact);

// -- fault and test hooks (memory_api_hooks.cpp) -------------------------------

/// fail_atom: the next `n` calls of `verb` fail with `err`; 0 clears it.
void set_fault(memory_api_server_pointer self, source_verb verb,
               std::uint32_t n, const error_info& err);

/// clear_atom: forgets the action log and its times.
void clear_actions(memory_api_server_pointer self);

/// close_atom: ends every open watch normally, in id order.
void close_all_watches(memory_api_server_pointer self);

/// expire_atom: drops the event history: a watch from an older version
/// gets the expired error.
void expire_history(memory_api_server_pointer self);

/// bookmark_atom: sends every open watch a bookmark of the current version.
void send_bookmarks(memory_api_server_pointer self);

/// w_mark_atom: a bookmark of the current version to watch `id` when
/// `always` or when the version moved past what the watch was sent.
void mark_watch(memory_api_server_pointer self, watch_id id, bool always);

/// peek_atom: the stored object, without an entry in the action log.
caf::result<api_object> peek(memory_api_server_pointer self, resource res,
                             const std::string& ns, const std::string& name);

} // namespace podref::detail
