// `podref hollow`: many node agents in one process, to load-test what
// thousands of nodes' watches do to an API server (kubemark's hollow
// nodes, at a fraction of their cost; docs/hollow.md).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

namespace CLI {
class App;
} // namespace CLI

namespace podref::cli {

struct hollow_options {
  std::string kubeconfig;
  std::string context;
  std::size_t nodes = 1;
  std::size_t pods_per_node = 10;
  std::string strategy = "Watch";
  std::string node_prefix = "hollow-";
  /// One HTTP client for every node instead of one per node.
  bool share_connections = false;
  /// Create the pods (and their objects) from the manifests, update the
  /// objects, delete the pods at the end.
  bool create_pods = false;
  /// Object updates per second (with create_pods).
  double update_rate = 0;
  /// Stop after this many seconds (0: at SIGINT / SIGTERM only).
  double duration_seconds = 0;
  bool json = false;
  std::string plot;
  // -- beyond the brief's command line ------------------------------------------
  /// Create the Nodes at start (always with create_pods).
  bool register_node = false;
  /// HTTP/2 with prior knowledge for an http:// server.
  bool h2c = false;
  /// Threads running the agents' work.
  std::size_t threads = 4;
  /// Seconds the end-of-run check may wait for convergence.
  double settle_seconds = 30;
  /// Seconds between rereads of the pods' objects.
  double recheck_seconds = 60;
  /// Manifests to draw from instead of the bundled examples.
  std::string manifests;
  /// Leave the created pods on the server.
  bool keep_pods = false;
};

CLI::App* add_hollow_command(CLI::App& app, hollow_options& options);

/// Runs until --duration or a signal, prints the summary; 0 when every
/// node converged and nothing failed, 1 otherwise (or when the kubeconfig,
/// the strategy or the manifests cannot be used).
int run_hollow_command(const hollow_options& options, std::ostream& out,
                       std::ostream& err);

} // namespace podref::cli
