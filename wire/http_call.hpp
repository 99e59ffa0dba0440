// http_call: one request on an http_client, waited for. For callers off
// the I/O thread and off actors (tools, tests, set-up code): never from a
// handler or an actor.
#pragma once

#include <chrono>
#include <string>

#include "podref/wire/http_client.hpp"

namespace podref::wire {

/// Sends `method` `path` (GET without a body) and waits at most `limit` for
/// the reply; then the request is cancelled and the response has status 0
/// and error "no reply".
http_response call_and_wait(http_client& client, const std::string& method,
                            const std::string& path, std::string body = {},
                            const std::string& content_type
                            = "application/json",
                            std::chrono::seconds limit
                            = std::chrono::seconds(90));

} // namespace podref::wire
