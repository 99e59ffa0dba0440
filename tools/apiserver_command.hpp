// `podref apiserver`: the in-memory API server behind the Kubernetes REST
// API, so that kubectl and client-go work against it without a cluster
// (issue 18: v1 Secrets and ConfigMaps). Plain HTTP on loopback without
// authentication, or HTTPS on any address with bearer tokens and client
// certificates (docs/apiserver.md).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "served_front.hpp"

namespace podref::cli {

/// The arguments of `podref apiserver`: the front's (served_front.hpp)
/// and the manifests to load.
struct apiserver_options : front_options {
  /// Manifests whose Secrets, ConfigMaps, Pods, Nodes and Namespaces the
  /// server starts with.
  std::vector<std::string> load;
};

/// Registers the `apiserver` subcommand on `app`.
CLI::App* add_apiserver_command(CLI::App& app, apiserver_options& options);

/// Runs `podref apiserver`: prints `serving on URL` (and `kubeconfig:
/// PATH`) to `out` once it listens, then serves until SIGINT or SIGTERM and
/// stops cleanly. Returns 0, or 1 when it cannot load, write or listen.
int run_apiserver_command(const apiserver_options& options, std::ostream& out,
                          std::ostream& err);

} // namespace podref::cli
