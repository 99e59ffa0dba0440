// What the wire tests of watch multiplexing and notifications share:
// podref's API server behind its HTTP front in process (h2c on loopback, or
// HTTPS with a node's token and the node authorizer), a cluster connected
// to it, writes through the front (PUT and DELETE over HTTP, as a client
// writes), and a bounded wait. Header-only; the wire_* tests that include it
// link the wire library (tests/CMakeLists.txt).
#pragma once

#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include <unistd.h>

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/authn.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/tls_material.hpp"
#include "podref/wire/wire_decode.hpp"

namespace podref::test {

/// Polls `f` until it holds, at most `limit` (a real condition with a bound).
inline bool eventually(const std::function<bool()>& f,
                       std::chrono::seconds limit = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return f();
}

/// A fresh directory, removed with what is in it.
struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/podref-wire-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::string cmd = "rm -rf '" + path + "'";
    [[maybe_unused]] auto rc = std::system(cmd.c_str());
  }
};

struct wire_front_options {
  /// HTTPS, a node's token (user system:node:n1, group system:nodes) and
  /// the node authorizer: namespace-wide Secret lists and watches are 403.
  bool node_authorizer = false;
  /// The source's token bucket (0: none, so that timing is the server's).
  double qps = 0;
  std::size_t max_watches = 4096;
};

/// The API server, its front and a cluster over it (h2c, or HTTPS).
struct wire_front {
  static constexpr const char* node_token = "tok-node-n1-0123456789";

  temp_dir dir;
  runtime rt;
  api_server api{rt};
  std::unique_ptr<wire::http_server> front;
  std::unique_ptr<cluster> cl;

  explicit wire_front(const wire_front_options& o = {}) {
    wire::http_server_options sopts;
    sopts.max_watches = o.max_watches;
    wire::client_config cfg;
    cfg.origin = "test";
    cluster_options copts;
    copts.source.qps = o.qps;
    if (o.node_authorizer) {
      auto files = wire::ensure_tls_dir(dir.path + "/tls", {"127.0.0.1"});
      REQUIRE(files);
      auto tokens = wire::token_table::parse(
        std::string{node_token} + ",system:node:n1,u-1,\"system:nodes\"\n",
        "tokens.csv");
      REQUIRE(tokens);
      auto ca = wire::read_small_file(files->ca_cert);
      REQUIRE(ca);
      sopts.tls = wire::http_tls_options{files->cert, files->key, {}};
      sopts.tokens = std::make_shared<const wire::token_table>(*tokens);
      sopts.node_authorizer = true;
      cfg.ca_pem = *ca;
      cfg.token = node_token;
    } else {
      copts.http.plain_http = wire::plain_http_mode::h2_prior_knowledge;
    }
    auto started = wire::http_server::start(rt.system(), api.current_actor(),
                                            sopts);
    REQUIRE(started);
    front = std::move(started).value();
    cfg.server = front->url();
    auto connected = cluster::connect(rt, cfg, copts);
    REQUIRE(connected);
    cl = std::move(connected).value();
  }

  ~wire_front() {
    // Managers are gone (declared after this); the cluster goes first.
    cl.reset();
    front->stop();
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
