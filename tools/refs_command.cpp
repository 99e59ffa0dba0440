#include "refs_command.hpp"

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cluster_pods.hpp"
#include "podref/messages/pod_references.hpp"
#include "podref/manifest/manifest.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/kubeconfig.hpp"

namespace podref::cli {

namespace {

/// One output row of the plain table, cells in column order.
using table_row = std::vector<std::string>;

std::string join_names(const std::vector<std::string>& names) {
  if (names.empty())
    return "<none>";
  std::string result;
  for (const auto& name : names) {
    if (!result.empty())
      result += ", ";
    result += name;
  }
  return result;
}

/// Prints `rows` as columns separated by two spaces. The last column is not
/// padded, so no line ends in blanks.
void print_table(const std::vector<table_row>& rows, std::ostream& out) {
  if (rows.empty())
    return;
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size())
        line.append(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << '\n';
  }
}

/// The name a file is shown under: standard input is "<stdin>", the label
/// load_manifest_file puts in its messages, so output and errors agree.
std::string display_name(const std::string& file) {
  return file == "-" ? "<stdin>" : file;
}

/// Compact one-line JSON. Names and messages come from arbitrary input, so
/// invalid UTF-8 is replaced rather than allowed to throw.
std::string to_line(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', false,
                    nlohmann::ordered_json::error_handler_t::replace);
}

/// Any cluster flag selects reading a cluster instead of files.
bool cluster_mode(const refs_options& options) {
  return !options.kubeconfig.empty() || !options.context.empty()
         || !options.ns.empty();
}

} // namespace

CLI::App* add_refs_command(CLI::App& app, refs_options& options) {
  auto* cmd = app.add_subcommand(
    "refs", "Show the Secrets and ConfigMaps that pods reference");
  cmd->footer(
    "Reads Pods and the pod templates of Deployments, StatefulSets,\n"
    "DaemonSets, ReplicaSets, ReplicationControllers, Jobs and CronJobs;\n"
    "other kinds print nothing. Names are sorted and distinct. --json lines\n"
    "hold file, doc (index from 0), kind, namespace, name, secrets and\n"
    "configmaps. Each error is reported after the file's objects (on\n"
    "stderr, or as {\"file\", \"error\"} with --json): a bad document or List\n"
    "item costs only itself, a syntax error the rest of its file; the other\n"
    "files are still read, and the exit status is 1.");
  cmd->add_option("FILE", options.files,
                  "Manifests, JSON or YAML; '-' reads standard input")
    ->type_name("");
  cmd->add_option("--kubeconfig", options.kubeconfig,
                  "read the pods of a cluster instead of files");
  cmd->add_option("--context", options.context, "the kubeconfig context");
  cmd->add_option("-n,--namespace", options.ns,
                  "the cluster's namespace (default: the context's)");
  // Usage errors (exit 2, with the usage): files or a cluster, one of them.
  cmd->callback([&options] {
    if (options.files.empty() && !cluster_mode(options))
      throw CLI::RequiredError("FILE (or --kubeconfig to read a cluster)");
    if (!options.files.empty() && cluster_mode(options))
      throw CLI::ValidationError("FILE",
                                 "files and --kubeconfig/--context/"
                                 "--namespace exclude each other");
  });
  cmd->add_flag("--json", options.json,
                "Print one JSON object per line instead of a table");
  return cmd;
}

namespace {

/// The rows and JSON lines of one pod.
void add_pod(const refs_options& options, const std::string& file, std::size_t doc,
             const std::string& kind, const pod& p, bool show_file,
             std::vector<table_row>& rows, std::ostream& out) {
  auto secrets = secret_names(p);
  auto config_maps = config_map_names(p);
  if (options.json) {
    nlohmann::ordered_json line;
    if (!file.empty()) {
      line["file"] = file;
      line["doc"] = doc;
    }
    line["kind"] = kind;
    line["namespace"] = p.metadata.ns;
    line["name"] = p.metadata.name;
    line["secrets"] = secrets;
    line["configmaps"] = config_maps;
    out << to_line(line) << '\n';
    return;
  }
  table_row row{kind, p.metadata.ns, p.metadata.name, join_names(secrets),
                join_names(config_maps)};
  if (show_file)
    row.insert(row.begin(), file);
  rows.push_back(std::move(row));
}

std::vector<table_row> header(const refs_options& options, bool show_file) {
  std::vector<table_row> rows;
  if (!options.json) {
    rows.push_back({"KIND", "NAMESPACE", "NAME", "SECRETS", "CONFIGMAPS"});
    if (show_file)
      rows.back().insert(rows.back().begin(), "FILE");
  }
  return rows;
}

int finish(std::vector<table_row>& rows, bool failed, std::ostream& out,
           std::ostream& err) {
  // A header alone would only be noise.
  if (rows.size() > 1)
    print_table(rows, out);
  out.flush();
  if (!out) {
    err << "podref: cannot write the output\n";
    return 1;
  }
  return failed ? 1 : 0;
}

/// The cluster mode: one list of the namespace's pods. A pod the decoder
/// rejects is reported (never its values) and makes the status 1.
int run_cluster_refs(const refs_options& options, std::ostream& out,
                     std::ostream& err) {
  auto config = wire::load_kubeconfig(
    wire::selection_from_environment(options.kubeconfig, options.context));
  if (!config) {
    err << "podref refs: " << config.error().message << '\n';
    return 1;
  }
  auto ns = options.ns.empty() ? config->namespace_name : options.ns;
  runtime rt;
  auto cl = cluster::connect(rt, *config);
  if (!cl) {
    err << "podref refs: " << cl.error().message << '\n';
    return 1;
  }
  auto pods = list_namespace_pods(*(*cl)->client(), ns,
                                  std::chrono::seconds(60));
  if (!pods) {
    err << "podref refs: " << pods.error().message << '\n';
    return 1;
  }
  auto rows = header(options, false);
  bool failed = false;
  for (const auto& item : *pods) {
    if (item.ok) {
      add_pod(options, {}, 0, "Pod", *item.pod.pod, false, rows, out);
      continue;
    }
    failed = true;
    const auto& r = item.rejected;
    auto text = "pod \"" + r.ns + "\"/\"" + r.name + "\": " + r.path + ": "
                + r.problem;
    if (options.json) {
      nlohmann::ordered_json line;
      line["error"] = text;
      out << to_line(line) << '\n';
    } else {
      err << "podref: " << text << '\n';
    }
  }
  return finish(rows, failed, out, err);
}

} // namespace

int run_refs_command(const refs_options& options, std::ostream& out,
                     std::ostream& err) {
  if (cluster_mode(options))
    return run_cluster_refs(options, out, err);
  const bool show_file = options.files.size() > 1;
  auto rows = header(options, show_file);
  bool failed = false;
  for (const auto& path : options.files) {
    const auto file = display_name(path);
    auto result = load_manifest_file(path);
    for (const auto& obj : result.objects) {
      const auto* ptr = std::get_if<pod_ptr>(&obj.object);
      if (ptr == nullptr || *ptr == nullptr)
        continue;
      add_pod(options, file, obj.doc, obj.kind, **ptr,
              show_file, rows, out);
    }
    for (const auto& error : result.errors) {
      if (options.json) {
        nlohmann::ordered_json line;
        line["file"] = file;
        line["error"] = error;
        out << to_line(line) << '\n';
      } else {
        err << "podref: " << error << '\n';
      }
    }
    failed = failed || !result.ok();
  }
  return finish(rows, failed, out, err);
}

} // namespace podref::cli
