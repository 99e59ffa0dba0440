// The bridge's writes at the API server actor (private to wire/'s .cpp
// files): create (generateName), update (PUT), patch (merge, JSON,
// strategic, apply), delete (preconditions) and deletecollection, each
// with dryRun and managedFields. A write that replaces an object reads it
// first, computes the new object (and its managedFields) from it, and
// stores it with the read version as precondition: a write that raced the
// read is retried on the newer object a bounded number of times (unless
// the client named the version), as the real server retries. A dry run
// answers what would be stored, storing nothing; a write that changes
// nothing (managedFields included) stores nothing either, as the real
// server's storage skips it (same resourceVersion, no watch event).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <caf/event_based_actor.hpp>
#include <caf/timespan.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/wire/detail/api_bridge.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire::detail {

/// How often a write is re-computed after a write raced its read.
inline constexpr int write_attempts = 5;

/// The time of a managedFields entry written now (RFC 3339).
std::string write_time();

/// Stores `next`, computed from `found`, over it: 409 when `client_version`
/// (a version the request itself named) is not found's; the stored (or,
/// dry run, the would-be stored) object as 200. `retry` runs instead when
/// another write raced this one and the request named no version.
void store_replacing(caf::event_based_actor* self,
                     const memory_api_server_actor& server,
                     const api_call& call, const api_object& found,
                     const api_object& next,
                     const std::optional<std::string>& client_version,
                     caf::timespan timeout, reply_function done,
                     std::function<void()> retry);

/// Stores `obj` as new (a uid and creationTimestamp stamped; dry run: not
/// stored, no resourceVersion): 201 with it. When it exists already,
/// `on_exists` runs if given (a generated name to try again), else 409.
void store_created(caf::event_based_actor* self,
                   const memory_api_server_actor& server, const api_call& call,
                   const api_object& obj, caf::timespan timeout,
                   reply_function done, std::function<void()> on_exists);

/// POST: the namespace check, generateName (a new name on a clash, at most
/// max_generated_name_attempts), managedFields, dryRun.
void send_create(caf::event_based_actor* self,
                 const memory_api_server_actor& server, api_call call,
                 caf::timespan timeout, reply_function done);

/// PUT.
void send_update(caf::event_based_actor* self,
                 const memory_api_server_actor& server, api_call call,
                 caf::timespan timeout, reply_function done,
                 int attempts_left = write_attempts);

/// PATCH: a merge, JSON or strategic patch of the stored object, or a
/// server-side apply (which creates a missing object).
void send_patch(caf::event_based_actor* self,
                const memory_api_server_actor& server, api_call call,
                caf::timespan timeout, reply_function done,
                int attempts_left = write_attempts);

/// The 409 of a DELETE whose preconditions (uid, resourceVersion) `found`
/// fails, if it does. Checked on the object read: a write between that
/// read and the delete goes unseen (the real server checks in its storage
/// transaction).
std::optional<api_status> failed_precondition(const api_call& call,
                                              const api_object& found);

/// DELETE of a Secret, ConfigMap or Node: preconditions, dryRun, the
/// Success Status with the uid.
void send_delete(caf::event_based_actor* self,
                 const memory_api_server_actor& server, const api_call& call,
                 caf::timespan timeout, reply_function done);

/// DELETE of one object of any kind (the pod's graceful delete, the
/// namespace's): what a DELETE on its path does.
void send_object_delete(caf::event_based_actor* self,
                        const memory_api_server_actor& server,
                        const api_call& call, caf::timespan timeout,
                        reply_function done);

/// DELETE of a collection: the objects its selectors select (as a list
/// at the version it was read), each deleted as its own DELETE would be
/// (a watch event each); a failure other than NotFound fails the request.
void send_delete_collection(caf::event_based_actor* self,
                            const memory_api_server_actor& server,
                            const api_call& call, caf::timespan timeout,
                            reply_function done);

} // namespace podref::wire::detail
