// `podref get KIND NS/NAME`: reads one Secret or ConfigMap from a cluster
// the way a Watch manager does (a synthetic pod references it: list, watch,
// wait for the sync) and prints it: its keys and their sizes, never a
// value; with -o json|yaml the object as the manager holds it, encoded as
// the API server encodes it.
#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
} // namespace CLI

namespace podref::cli {

struct get_options {
  /// secret, secrets, configmap, configmaps or cm.
  std::string kind;
  /// NS/NAME, or NAME in the context's namespace.
  std::string target;
  std::string kubeconfig;
  std::string context;
  /// "" (keys and sizes), "json" or "yaml".
  std::string output;
  /// How long the read waits for the first sync.
  double timeout_seconds = 10;
};

CLI::App* add_get_command(CLI::App& app, get_options& options);

/// Returns 0 when the object was printed; 1 when it is missing (upstream's
/// `Error from server (NotFound): secrets "x" not found`), the read failed
/// or the configuration is bad.
int run_get_command(const get_options& options, std::ostream& out,
                    std::ostream& err);

} // namespace podref::cli
