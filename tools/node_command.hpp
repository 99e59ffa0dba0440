// `podref node`: podref as one node's Secret/ConfigMap agent against a
// cluster (issue 20; node/node_agent.hpp, docs/node.md).
#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
} // namespace CLI

namespace podref::cli {

struct node_options {
  std::string kubeconfig;
  std::string context;
  std::string node_name;
  std::string strategy = "Watch";
  /// One JSON object a line per event on stdout instead of the status line.
  bool json = false;
  /// ADDRESS:PORT of /metrics, /healthz, /readyz (loopback); empty: none.
  std::string metrics;
  /// Seconds between rereads of the registered pods' objects.
  double recheck_seconds = 60;
  /// Grace-0 DELETE of pods with a deletionTimestamp (hollow nodes need it).
  bool confirm_deletes = false;
  /// Create the Node object at start.
  bool register_node = false;
  /// Stop after this many seconds (0: at SIGINT / SIGTERM only).
  double duration_seconds = 0;
};

CLI::App* add_node_command(CLI::App& app, node_options& options);

/// Runs until SIGINT or SIGTERM (or --duration); 0 on a clean stop, 1 when
/// the kubeconfig, the strategy or the endpoint cannot be used.
int run_node_command(const node_options& options, std::ostream& out,
                     std::ostream& err);

} // namespace podref::cli
