// `podref get` (get_command.hpp).
#include "get_command.hpp"

#include <chrono>
#include <map>
#include <ostream>
#include <string>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "podref/messages/validation.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/object_manager.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/kubeconfig.hpp"
#include "structured_print.hpp"

namespace podref::cli {

namespace {

const std::map<std::string, resource> kinds{
  {"secret", resource::secrets},        {"secrets", resource::secrets},
  {"configmap", resource::config_maps}, {"configmaps", resource::config_maps},
  {"cm", resource::config_maps},
};

/// A pod that references only ns/name, as the kubelet's managers see a pod:
/// a Secret through imagePullSecrets, a ConfigMap through a volume.
pod reader_pod(resource res, const std::string& ns, const std::string& name) {
  pod p;
  p.metadata.ns = ns;
  p.metadata.name = "podref-get";
  p.metadata.uid = "podref-get-" + std::to_string(::getpid());
  if (res == resource::secrets) {
    p.spec.image_pull_secrets.push_back(local_object_reference{name});
  } else {
    volume v;
    v.name = "object";
    v.config_map = config_map_volume_source{name, {}, std::nullopt};
    p.spec.volumes.push_back(std::move(v));
  }
  return p;
}

std::string or_none(const std::map<std::string, std::string>& xs) {
  if (xs.empty())
    return "<none>";
  std::string out;
  for (const auto& [k, v] : xs)
    out += (out.empty() ? "" : ", ") + k + "=" + v;
  return out;
}

void print_sizes(const char* title,
                 const std::map<std::string, std::string>& xs,
                 std::ostream& out) {
  out << '\n' << title << "\n====\n";
  for (const auto& [k, v] : xs)
    out << k << ":  " << v.size() << " bytes\n";
}

/// kubectl describe's layout: metadata, then every key with its size.
void print_summary(const api_object& obj, std::ostream& out) {
  const auto& m = obj.meta();
  out << "Name:             " << m.name << '\n'
      << "Namespace:        " << m.ns << '\n'
      << "Labels:           " << or_none(m.labels) << '\n'
      << "Annotations:      " << or_none(m.annotations) << '\n'
      << "ResourceVersion:  " << m.resource_version << '\n';
  if (obj.is_immutable())
    out << "Immutable:        true\n";
  if (auto s = obj.as_secret()) {
    out << "\nType:  " << s->type << '\n';
    print_sizes("Data", s->data, out);
  } else if (auto c = obj.as_config_map()) {
    print_sizes("Data", c->data, out);
    if (!c->binary_data.empty())
      print_sizes("BinaryData", c->binary_data, out);
  }
}

} // namespace

CLI::App* add_get_command(CLI::App& app, get_options& options) {
  auto* cmd = app.add_subcommand(
    "get",
    "Read one Secret or ConfigMap from a cluster as a Watch manager does\n"
    "(list, watch, wait for the sync) and print its keys and their sizes\n"
    "(never a value), or with -o the whole object.");
  cmd->add_option("KIND", options.kind, "secret(s), configmap(s) or cm")
    ->required()
    ->check(CLI::IsMember({"secret", "secrets", "configmap", "configmaps",
                           "cm"}));
  cmd->add_option("NAME", options.target,
                  "NAMESPACE/NAME, or NAME in the context's namespace")
    ->required();
  cmd->add_option("--kubeconfig", options.kubeconfig,
                  "the kubeconfig (default: $KUBECONFIG, ~/.kube/config)");
  cmd->add_option("--context", options.context, "the kubeconfig context");
  cmd->add_option("-o,--output", options.output, "json or yaml")
    ->check(CLI::IsMember({"json", "yaml"}));
  cmd->add_option("--timeout", options.timeout_seconds,
                  "seconds to wait for the first sync")
    ->capture_default_str()
    ->check(CLI::Range(0.01, 3600.0));
  return cmd;
}

int run_get_command(const get_options& options, std::ostream& out,
                    std::ostream& err) {
  auto res = kinds.at(options.kind);
  auto config = wire::load_kubeconfig(
    wire::selection_from_environment(options.kubeconfig, options.context));
  if (!config) {
    err << "podref get: " << config.error().message << '\n';
    return 1;
  }
  auto slash = options.target.find('/');
  auto ns = slash == std::string::npos ? config->namespace_name
                                       : options.target.substr(0, slash);
  auto name = slash == std::string::npos ? options.target
                                         : options.target.substr(slash + 1);
  if (auto bad = namespace_problem(ns)) {
    err << "podref get: namespace: " << *bad << '\n';
    return 1;
  }
  if (auto bad = object_name_problem(name)) {
    err << "podref get: name: " << *bad << '\n';
    return 1;
  }
  runtime rt;
  auto cl = cluster::connect(rt, *config);
  if (!cl) {
    err << "podref get: " << cl.error().message << '\n';
    return 1;
  }
  result<api_object> got = error_info{errc::unavailable, "not read"};
  std::string failure;
  {
    manager_options opts;
    opts.strategy = strategy::watch;
    opts.sync_timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(options.timeout_seconds));
    object_manager mgr{rt, (*cl)->actor(), res, opts};
    auto reader = reader_pod(res, ns, name);
    if (auto ok = mgr.register_pod_and_wait(reader); !ok) {
      err << "podref get: " << ok.error().message << '\n';
      return 1;
    }
    got = mgr.get(ns, name);
    // The server's own words when the read failed (403, 401, TLS, ...).
    if (auto st = mgr.status(ns, name); st && st->failure)
      failure = st->failure->message;
    mgr.unregister_pod(reader);
  }
  if (!got) {
    if (got.error().code == errc::not_found)
      err << "Error from server (NotFound): " << plural_name(res) << " \""
          << name << "\" not found\n";
    else
      err << "podref get: "
          << (failure.empty() ? got.error().message : failure) << '\n';
    return 1;
  }
  if (options.output.empty())
    print_summary(*got, out);
  else
    print_structured(wire::encode_object(*got), options.output == "yaml",
                     out);
  out.flush();
  return out ? 0 : 1;
}

} // namespace podref::cli
