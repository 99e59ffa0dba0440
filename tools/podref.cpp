// podref: the command-line tool. main only assembles the subcommands; each one
// lives in its own <name>_command.{hpp,cpp} with an options struct, an add_*
// function and a run_* function (see refs_command.hpp).
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "podref/version.hpp"
#include "apiserver_command.hpp"
#include "bench_command.hpp"
#include "get_command.hpp"
#include "hollow_command.hpp"
#include "node_command.hpp"
#include "refs_command.hpp"
#include "simulate_command.hpp"

namespace {

// CLI11 prints descriptions as they are, so they are wrapped here.
constexpr const char* description =
  "podref works out which Kubernetes Secrets and ConfigMaps pods reference,\n"
  "field for field as the kubelet's secret and configmap managers do, and\n"
  "keeps those objects available to a node agent through CAF actors. This\n"
  "tool runs that logic offline on manifest files (JSON or YAML, multi-\n"
  "document, kind: List; '-' reads standard input), without a cluster.\n";

constexpr const char* footer =
  "Exit status: 0 on success, 1 if an input failed, 2 on a usage error.";

/// On a usage error: the message, then the help of the subcommand the user
/// was typing (or of podref itself), so a bare `podref` shows its usage.
std::string usage_failure(const CLI::App* app, const CLI::Error& e) {
  auto selected = app->get_subcommands();
  auto usage = selected.empty() ? app->help()
                                : selected.front()->help(app->get_name());
  return "podref: " + std::string(e.what()) + "\n\n" + usage;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{description, "podref"};
  app.footer(footer);
  app.set_version_flag("--version", "podref " PODREF_VERSION_STRING);
  app.require_subcommand(1);
  app.failure_message(usage_failure);

  podref::cli::refs_options refs;
  auto* refs_cmd = podref::cli::add_refs_command(app, refs);
  podref::cli::bench_options bench;
  auto* bench_cmd = podref::cli::add_bench_command(app, bench);
  podref::cli::simulate_options simulate;
  auto* simulate_cmd = podref::cli::add_simulate_command(app, simulate);
  podref::cli::apiserver_options apiserver;
  auto* apiserver_cmd = podref::cli::add_apiserver_command(app, apiserver);
  podref::cli::node_options node;
  auto* node_cmd = podref::cli::add_node_command(app, node);
  podref::cli::get_options get;
  auto* get_cmd = podref::cli::add_get_command(app, get);
  podref::cli::hollow_options hollow;
  auto* hollow_cmd = podref::cli::add_hollow_command(app, hollow);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // app.exit prints help, version or the usage error; errors map to 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*refs_cmd)
    return podref::cli::run_refs_command(refs, std::cout, std::cerr);
  if (*bench_cmd)
    return podref::cli::run_bench_command(bench, std::cout, std::cerr);
  if (*simulate_cmd)
    return podref::cli::run_simulate_command(simulate, std::cout, std::cerr);
  if (*apiserver_cmd)
    return podref::cli::run_apiserver_command(apiserver, std::cout, std::cerr);
  if (*node_cmd)
    return podref::cli::run_node_command(node, std::cout, std::cerr);
  if (*get_cmd)
    return podref::cli::run_get_command(get, std::cout, std::cerr);
  if (*hollow_cmd)
    return podref::cli::run_hollow_command(hollow, std::cout, std::cerr);
  return 0;
}
