// What the bridge does for Pods, Nodes and Namespaces beyond the generic
// reads and writes (private to wire/'s .cpp files): the namespace check of a
// create, the graceful pod delete and the namespace delete.
#pragma once

#include <functional>

#include <caf/event_based_actor.hpp>
#include <caf/timespan.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/wire/detail/api_bridge.hpp"

namespace podref::wire::detail {

/// Runs `then` when the namespace of a create of a namespaced object exists
/// and is not Terminating, or when the call does not check namespaces;
/// otherwise answers 404 `namespaces "x" not found` or the 403 of
/// NamespaceLifecycle.
void check_namespace(caf::event_based_actor* self,
                     const memory_api_server_actor& server,
                     const api_call& call,
                     caf::timespan timeout, std::function<void()> then,
                     reply_function done);

/// DELETE of a pod: with a grace period (gracePeriodSeconds, else the pod's
/// terminationGracePeriodSeconds, else 30 s) a scheduled, non-terminal pod
/// gets deletionTimestamp and deletionGracePeriodSeconds (MODIFIED); with
/// 0, or unscheduled or terminal, it is removed (DELETED). A later delete
/// may only shorten the period. Answers the pod.
void send_pod_delete(caf::event_based_actor* self,
                     const memory_api_server_actor& server, const api_call& call,
                     caf::timespan timeout, reply_function done);

/// DELETE of a namespace: default, kube-system and kube-public are refused
/// (403); another goes Terminating (MODIFIED, the answer), then the objects
/// of every namespaced kind in it are removed and then the namespace
/// (DELETED), as the namespace controller would.
void send_namespace_delete(caf::event_based_actor* self,
                           const memory_api_server_actor& server,
                           const api_call& call, caf::timespan timeout,
                           reply_function done);

} // namespace podref::wire::detail
