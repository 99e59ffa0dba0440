// The PATCH of one object at the API server actor (private to wire/): read
// the stored object, apply the patch (patch_request.hpp), store the result
// as a replace with the resourceVersion precondition. A patch that set
// metadata.resourceVersion itself gets the 409 of a stale one; otherwise a
// write that raced the read is retried on the newer object, a bounded
// number of times, as the real server does.
#pragma once

#include <functional>

#include <caf/event_based_actor.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/wire/detail/api_bridge.hpp"

namespace podref::wire::detail {

/// How often a patch is re-applied after a write raced its read.
inline constexpr int patch_attempts = 5;

void send_patch(caf::event_based_actor* self,
                const memory_api_server_actor& server, api_call call,
                caf::timespan timeout, std::function<void(http_reply)> done,
                int attempts_left = patch_attempts);

} // namespace podref::wire::detail
