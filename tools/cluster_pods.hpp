// The pods of one namespace, listed from a cluster over the wire client
// (GET /api/v1/namespaces/NS/pods?limit=500, following `continue` pages, as
// kubectl lists them) and decoded by wire/pod_decode.hpp. For the tools: it
// blocks the calling thread.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "podref/messages/errors.hpp"
#include "podref/wire/pod_decode.hpp"

namespace podref::wire {
class http_client;
} // namespace podref::wire

namespace podref::cli {

/// Every pod of `ns` (decoded or rejected), or the error of the first
/// request that failed (the server's message, e.g. `namespaces "x" not
/// found` is not one: an empty namespace lists no pods).
result<std::vector<wire::pod_item>>
list_namespace_pods(wire::http_client& client, const std::string& ns,
                    std::chrono::milliseconds timeout);

} // namespace podref::cli
