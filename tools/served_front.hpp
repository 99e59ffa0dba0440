// The HTTP front as `podref apiserver` and `podref simulate --serve` start
// it: the listen address, TLS (generated material in a directory, or files
// of the user's), bearer tokens, client certificates and anonymous access
// under the same rules (plain HTTP on loopback only, unauthenticated), and
// the kubeconfig written for it. See docs/apiserver.md.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "podref/messages/errors.hpp"

namespace CLI {
class App;
} // namespace CLI

namespace caf {
class actor;
class actor_system;
} // namespace caf

namespace podref::wire {
class http_server;
} // namespace podref::wire

namespace podref::cli {

/// How to serve the front.
struct front_options {
  /// ADDRESS:PORT; a loopback address without TLS; port 0 picks a free one.
  std::string listen = "127.0.0.1:0";
  /// The flag that set `listen`, for errors.
  std::string listen_flag = "--listen";
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
  /// Where to write a kubeconfig for the server; empty: none.
  std::string kubeconfig;
  std::size_t io_threads = 2;
  /// HTTP/2 streams open at once per connection.
  std::size_t max_streams = 250;
  /// Connections and watches open at once (`podref hollow` needs more than
  /// the defaults: a connection per node, a watch per node and object).
  std::size_t max_connections = 1024;
  std::size_t max_watches = 4096;
};

/// Registers the TLS, credential, kubeconfig and I/O flags (all but the
/// listen address, which each command names itself) on `cmd`.
void add_front_flags(CLI::App& cmd, front_options& options);

/// Starts the front for the API server `source` returns: checks the flags,
/// makes or reads the TLS material, listens, prints `serving on URL` (and
/// `kubeconfig: PATH` once written) to `out`. `namespace_lifecycle` as
/// http_server_options'. The error names the flag or file at fault.
result<std::unique_ptr<wire::http_server>>
start_front(caf::actor_system& sys, std::function<caf::actor()> source,
            const front_options& options, bool namespace_lifecycle,
            std::ostream& out);

} // namespace podref::cli
