// agent_requests: a node agent's own requests on its cluster's client
// (register the Node, confirm a deletion, read the Node), asynchronous:
// each reply is handed to `post` (the agent's strand), never waited for.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "podref/messages/node.hpp"
#include "podref/messages/pod.hpp"

namespace podref::wire {
class http_client;
} // namespace podref::wire

namespace podref::detail {

class agent_requests {
public:
  using post_fn = std::function<void(std::function<void()>)>;
  /// Why a request failed (empty: it did what it should).
  using problems_fn = std::function<void(std::vector<std::string>)>;

  agent_requests(std::shared_ptr<wire::http_client> client, post_fn post);

  /// POST /api/v1/nodes: the Node with its hostname label, as a kubelet
  /// registers it (201, or 409 when it exists already).
  void register_node(const std::string& name, problems_fn done);

  /// DELETE of `p` with grace period 0 and its uid as precondition, as the
  /// kubelet confirms a deletion (404: gone already, fine).
  void confirm_delete(const pod& p, problems_fn done);

  /// GET /api/v1/nodes/NAME: the Node, or null when it cannot be read.
  void read_node(const std::string& name, std::function<void(node_ptr)> done);

private:
  std::shared_ptr<wire::http_client> client_;
  post_fn post_;
};

} // namespace podref::detail
