// What the wire tests of watch multiplexing and notifications share: a
// wire_front (podref's API server behind its HTTP front in process) over
// h2c, or over HTTPS with a node's token and the node authorizer, a
// cluster connected to it, and writes through the front (PUT, POST and
// DELETE over HTTP, as a client writes). Header-only; the tests that
// include it link the wire room.
#pragma once

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "podref/wire/codec.hpp"
#include "podref/wire/wire_decode.hpp"
#include "support/eventually.hpp"
#include "support/wire_front.hpp"

namespace podref::test {

struct front_cluster_options {
  /// HTTPS, a node's token (user system:node:n1, group system:nodes) and
  /// the node authorizer: namespace-wide Secret lists and watches are 403.
  bool node_authorizer = false;
  /// The source's token bucket (0: none, so that timing is the server's).
  double qps = 0;
  std::size_t max_watches = 4096;
};

/// The API server, its front and a cluster over it.
struct front_cluster {
  wire_front served;
  runtime& rt = served.rt;
  api_server& api = served.api;
  /// Declared after the front: it goes first.
  std::unique_ptr<cluster> cl;

  explicit front_cluster(const front_cluster_options& o = {})
    : served(o.node_authorizer ? wire_transport::tls_token
                               : wire_transport::h2c,
             server_options(o)) {
    served.options.source.qps = o.qps;
    cl = served.connect();
  }

  static wire::http_server_options
  server_options(const front_cluster_options& o) {
    wire::http_server_options sopts;
    sopts.max_watches = o.max_watches;
    sopts.node_authorizer = o.node_authorizer;
    return sopts;
  }

  /// One request through the front over the cluster's connections; the
  /// status (0: no reply within 30 s) and body.
  std::pair<int, std::string> call(std::string method, std::string path,
                                   std::string body = {}) {
    auto done = std::make_shared<std::promise<wire::http_response>>();
    auto reply = done->get_future();
    wire::http_client::handlers h;
    h.on_done = [done](wire::http_response r) { done->set_value(std::move(r)); };
    cl->client()->send(std::move(method), std::move(path), std::move(body),
                       std::move(h));
    if (reply.wait_for(std::chrono::seconds(30)) != std::future_status::ready)
      return {0, "no reply"};
    auto r = reply.get();
    return {r.status, std::move(r.body)};
  }

  /// PUT of Secret `obj` (an update: the real server's 404 when it does
  /// not exist) or, with `create`, its POST, through the front; the stored
  /// object's resourceVersion, 0 when the write failed.
  std::uint64_t put(const api_object& obj, bool create = false) {
    const auto& m = obj.meta();
    auto path = "/api/v1/namespaces/" + m.ns + "/secrets";
    auto [status, body] = create ? call("POST", path, wire::encode_object(obj))
                                 : call("PUT", path + "/" + m.name,
                                        wire::encode_object(obj));
    if (status != 200 && status != 201)
      return 0;
    auto stored = wire::decode_object(resource::secrets, body);
    return stored ? stored->resource_version() : 0;
  }

  /// DELETE of a Secret through the front; whether it was deleted.
  bool remove(const std::string& ns, const std::string& name) {
    return call("DELETE", "/api/v1/namespaces/" + ns + "/secrets/" + name)
             .first
           == 200;
  }
};

} // namespace podref::test
