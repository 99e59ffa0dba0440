// `podref refs`: which Secrets and ConfigMaps each pod-bearing object (a Pod
// or the pod template of a workload) in a set of manifests references.
//
// Every subcommand of the podref tool follows the same pattern: an options
// struct that CLI11 fills in, an add_* function that registers the subcommand
// and a run_* function that main calls when the user selected it.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace podref::cli {

/// The arguments of `podref refs`, filled in by CLI11 while parsing.
struct refs_options {
  /// Manifest files in command-line order; "-" is standard input, shown as
  /// "<stdin>" in output and messages.
  std::vector<std::string> files;
  /// Print one JSON object per line instead of a table.
  bool json = false;
  /// Instead of files: the pods of a namespace of a cluster (any of the
  /// three set selects it; the namespace defaults to the context's).
  std::string kubeconfig;
  std::string context;
  std::string ns;
};

/// Registers the `refs` subcommand on `app` and binds its arguments to
/// `options`, which must outlive parsing. Returns the subcommand; it converts
/// to true after parsing iff the user selected it.
CLI::App* add_refs_command(CLI::App& app, refs_options& options);

/// Runs `podref refs`: results go to `out`, diagnostics to `err`. Every file is
/// processed even when an earlier one fails. Returns the exit status: 1 if any
/// file failed to decode (or the cluster could not be read, or one of its
/// pods was rejected), 2 for files and cluster flags together, else 0.
int run_refs_command(const refs_options& options, std::ostream& out,
                     std::ostream& err);

} // namespace podref::cli
