// `podref apiserver`'s front in process on loopback, reached over one of the
// transports a real cluster is reached by: HTTP/1.1, h2c with prior
// knowledge, TLS (h2 by ALPN) with a bearer token, TLS with a client
// certificate of the server's CA. Tests that run one scenario over every
// transport GENERATE a wire_transport and build a wire_front of it.
// Header-only; the tests that include it link the wire room.
#pragma once

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/authn.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/kubeconfig.hpp"
#include "podref/wire/server_kubeconfig.hpp"
#include "podref/wire/tls_material.hpp"
#include "support/temp_dir.hpp"

namespace podref::test {

enum class wire_transport { http1, h2c, tls_token, tls_cert };

inline const char* name_of(wire_transport t) {
  switch (t) {
    case wire_transport::http1:
      return "HTTP/1.1";
    case wire_transport::h2c:
      return "h2c";
    case wire_transport::tls_token:
      return "h2 over TLS, token";
    case wire_transport::tls_cert:
      return "h2 over TLS, client certificate";
  }
  return "?";
}

struct wire_front {
  static constexpr const char* token = "tok-node-0123456789";

  wire_transport transport;
  temp_dir dir;
  runtime rt;
  api_server api;
  std::unique_ptr<wire::http_server> front;
  /// What a client of this transport connects with.
  wire::client_config config;
  cluster_options options;

  explicit wire_front(wire_transport t, wire::http_server_options opts = {},
                      std::size_t history = 1000)
    : transport(t), api(rt, history) {
    bool tls = t == wire_transport::tls_token || t == wire_transport::tls_cert;
    wire::tls_files files;
    if (tls) {
      auto made = wire::ensure_tls_dir(dir.path + "/tls",
                                       {"127.0.0.1", "::1", "localhost"});
      REQUIRE(made);
      files = *made;
      auto tokens = wire::token_table::parse(
        std::string{token} + ",system:node:n1,u-1,\"system:nodes\"\n",
        "tokens.csv");
      REQUIRE(tokens);
      opts.tls = wire::http_tls_options{files.cert, files.key, files.ca_cert};
      opts.tokens = std::make_shared<const wire::token_table>(*tokens);
    }
    auto s = wire::http_server::start(rt.system(), api.current_actor(), opts);
    REQUIRE(s);
    front = std::move(s).value();
    config.server = front->url();
    config.origin = "test";
    if (t == wire_transport::h2c)
      options.http.plain_http = wire::plain_http_mode::h2_prior_knowledge;
    if (!tls)
      return;
    // As `podref apiserver --write-kubeconfig` writes it, read back as
    // kubectl would; the certificate's user instead of the token.
    wire::server_kubeconfig kc;
    kc.url = front->url();
    auto ca = wire::read_small_file(files.ca_cert);
    REQUIRE(ca);
    kc.ca_pem = *ca;
    if (t == wire_transport::tls_token)
      kc.token = token;
    auto text = wire::kubeconfig_text(kc);
    if (t == wire_transport::tls_cert) {
      REQUIRE(wire::issue_client_certificate(
        files.ca_cert, files.ca_key, "system:node:n1", {"system:nodes"},
        dir.path + "/node.crt", dir.path + "/node.key"));
      auto at = text.find("  user: {}\n");
      REQUIRE(at != std::string::npos);
      text.replace(at, 11,
                   "  user:\n    client-certificate: node.crt\n"
                   "    client-key: node.key\n");
    }
    auto path = dir.path + "/kubeconfig";
    REQUIRE(wire::write_private_file(path, text, 0600));
    wire::kubeconfig_selection sel;
    sel.explicit_path = path;
    auto cfg = wire::load_kubeconfig(sel);
    REQUIRE(cfg);
    config = *cfg;
  }

  ~wire_front() {
    front->stop();
  }

  std::unique_ptr<cluster> connect() {
    auto c = cluster::connect(rt, config, options);
    REQUIRE(c);
    return std::move(c).value();
  }
};

} // namespace podref::test
