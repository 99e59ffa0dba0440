// `podref apiserver`: the in-memory API server behind the Kubernetes REST
// API, so that kubectl and client-go work against it without a cluster
// (issue 18: v1 Secrets and ConfigMaps). Plain HTTP on loopback without
// authentication, or HTTPS on any address with bearer tokens and client
// certificates (docs/apiserver.md).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace podref::cli {

/// The arguments of `podref apiserver`.
struct apiserver_options {
  /// ADDRESS:PORT; a loopback address without TLS; port 0 picks a free one.
  std::string listen = "127.0.0.1:0";
  /// Where the generated TLS material lives (made at first start).
  std::string tls_dir;
  /// A serving certificate and key of the user's (instead of tls_dir).
  std::string tls_cert;
  std::string tls_key;
  /// The CA whose client certificates authenticate (default with tls_dir:
  /// its CA).
  std::string client_ca;
  /// Bearer tokens (kube-apiserver's --token-auth-file format); default
  /// with tls_dir: DIR/tokens.csv, made with one admin token.
  std::string token_file;
  /// Let requests without a credential reach /version and the health
  /// paths.
  bool anonymous = false;
  bool node_authorizer = false;
  /// Manifests whose Secrets and ConfigMaps the server starts with.
  std::vector<std::string> load;
  /// Where to write a kubeconfig for the server; empty: none.
  std::string kubeconfig;
  std::size_t io_threads = 2;
  /// HTTP/2 streams open at once per connection.
  std::size_t max_streams = 250;
};

/// Registers the `apiserver` subcommand on `app`.
CLI::App* add_apiserver_command(CLI::App& app, apiserver_options& options);

/// Runs `podref apiserver`: prints `serving on URL` (and `kubeconfig:
/// PATH`) to `out` once it listens, then serves until SIGINT or SIGTERM and
/// stops cleanly. Returns 0, or 1 when it cannot load, write or listen.
int run_apiserver_command(const apiserver_options& options, std::ostream& out,
                          std::ostream& err);

} // namespace podref::cli
