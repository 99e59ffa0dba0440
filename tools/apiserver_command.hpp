// `podref apiserver`: the in-memory API server behind the Kubernetes REST
// API over plain HTTP on loopback, so that kubectl and client-go work
// against it without a cluster (issue 18, first slice: v1 Secrets and
// ConfigMaps; no TLS, no authentication).
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
  /// ADDRESS:PORT; a loopback address; port 0 picks a free one.
  std::string listen = "127.0.0.1:0";
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
