#include "apiserver_command.hpp"
#include "served_front.hpp"

#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <map>
#include <ostream>
#include <set>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "podref/manifest/manifest.hpp"
#include "podref/messages/resource_kinds.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/http_server.hpp"

namespace podref::cli {

namespace {

using json = nlohmann::json;

/// The resource of an opaque kind the server stores (a Pod, Node,
/// Namespace, ServiceAccount, Deployment, ...), or null.
const resource_kind* opaque_kind(const std::string& kind) {
  auto k = find_kind(kind);
  return k != nullptr && k->res != resource::secrets
             && k->res != resource::config_maps
           ? k
           : nullptr;
}

/// The objects of opaque kinds of one whole manifest document: the
/// document itself, or the items of a List (an item without a kind takes
/// that of a typed list such as PodList).
std::vector<json> served_documents(const std::string& text) {
  std::vector<json> out;
  auto doc = json::parse(text, nullptr, false);
  if (!doc.is_object())
    return out;
  auto served = [](const std::string& kind) {
    return opaque_kind(kind) != nullptr;
  };
  auto kind = doc.value("kind", std::string{});
  if (served(kind)) {
    out.push_back(std::move(doc));
    return out;
  }
  auto items = doc.find("items");
  if (items == doc.end() || !items->is_array() || kind.size() < 4
      || kind.compare(kind.size() - 4, 4, "List") != 0)
    return out;
  auto item_kind = kind.substr(0, kind.size() - 4);
  for (auto& item : *items) {
    if (!item.is_object())
      continue;
    if (!item.contains("kind") && served(item_kind))
      item["kind"] = item_kind;
    if (served(item.value("kind", std::string{})))
      out.push_back(std::move(item));
  }
  return out;
}

/// Decodes an object of an opaque kind as a create at the wire would (the
/// same defaults and checks); false with a message in `err`.
bool decode_served(const json& doc, const std::string& file,
                   api_object& out, std::ostream& err) {
  auto kind = doc["kind"].get<std::string>();
  auto res = opaque_kind(kind)->res;
  std::string ns;
  if (is_namespaced(res)) {
    ns = "default";
    auto meta = doc.find("metadata");
    if (meta != doc.end() && meta->is_object()) {
      auto given = meta->value("namespace", std::string{});
      if (!given.empty())
        ns = given;
    }
  }
  auto decoded = wire::decode_request_body(res, "application/json", doc.dump(),
                                           ns, std::string{});
  if (decoded.failure) {
    auto status = json::parse(decoded.failure->body, nullptr, false);
    err << "podref apiserver: " << file << ": " << kind << ": "
        << (status.is_object() ? status.value("message", std::string{})
                               : decoded.failure->body)
        << '\n';
    return false;
  }
  out = std::move(decoded.object);
  return true;
}

/// Loads every object of a kind the server stores of `files`, stamped as
/// created now: first the Secrets and ConfigMaps (so that they keep the
/// first resourceVersions, 1, 2, ..., as before the other kinds were
/// served), then the other kinds but Namespaces, in file order, then the
/// namespaces: the initial ones, those the objects are in, and those the
/// files define (as written).
bool load_files(api_server& server, const std::vector<std::string>& files,
                std::ostream& err) {
  auto now = std::chrono::system_clock::now();
  auto names = wire::initial_namespaces();
  std::set<std::string> namespaces{names.begin(), names.end()};
  std::vector<std::pair<std::string, api_object>> later;
  std::map<std::string, api_object> defined_namespaces;
  auto store = [&](const std::string& file, const api_object& obj) {
    auto stored = server.apply(wire::stamp_new(obj, now));
    if (!stored) {
      err << "podref apiserver: " << file << ": " << stored.error().message
          << '\n';
      return false;
    }
    if (is_namespaced(obj.kind()))
      namespaces.insert(stored->meta().ns);
    return true;
  };
  manifest_limits limits;
  limits.keep_documents = true;
  for (const auto& file : files) {
    auto decoded = load_manifest_file(file, limits);
    for (const auto& e : decoded.errors)
      err << "podref apiserver: " << e << '\n';
    if (!decoded.ok())
      return false;
    for (const auto& x : decoded.objects) {
      api_object obj;
      if (auto s = std::get_if<secret_ptr>(&x.object))
        obj = *s;
      else if (auto c = std::get_if<config_map_ptr>(&x.object))
        obj = *c;
      else
        continue;
      if (!store(file, wire::normalize_object(obj, obj.meta().ns)))
        return false;
    }
    for (const auto& text : decoded.documents) {
      for (const auto& doc : served_documents(text)) {
        api_object obj;
        if (!decode_served(doc, file, obj, err))
          return false;
        if (obj.kind() == resource::namespaces)
          defined_namespaces[obj.meta().name] = obj;
        else
          later.emplace_back(file, std::move(obj));
      }
    }
  }
  for (const auto& [file, obj] : later)
    if (!store(file, obj))
      return false;
  for (const auto& [name, obj] : defined_namespaces)
    namespaces.insert(name);
  for (const auto& ns : namespaces) {
    auto defined = defined_namespaces.find(ns);
    auto obj = defined != defined_namespaces.end() ? defined->second
                                                   : wire::namespace_object(ns);
    if (!store("namespace " + ns, obj))
      return false;
  }
  return true;
}

/// Waits for SIGINT or SIGTERM (blocked in every thread started after).
int wait_for_signal(sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

} // namespace

CLI::App* add_apiserver_command(CLI::App& app, apiserver_options& options) {
  auto* cmd = app.add_subcommand(
    "apiserver",
    "Serve the in-memory API server over the Kubernetes REST API (v1\n"
    "Secrets, ConfigMaps, Pods, Nodes, Namespaces and ServiceAccounts,\n"
    "apps/v1 Deployments, rbac.authorization.k8s.io/v1 ClusterRoles and\n"
    "ClusterRoleBindings) until SIGINT or SIGTERM: plain HTTP on loopback\n"
    "without authentication, or HTTPS (--tls-dir, or --tls-cert and\n"
    "--tls-key) where every request needs a bearer token or a client\n"
    "certificate.");
  cmd->add_option("--listen", options.listen,
                  "ADDRESS:PORT (a loopback address without TLS); port 0 "
                  "picks one")
    ->capture_default_str();
  cmd->add_option("--load", options.load,
                  "manifest files whose objects of the kinds served to "
                  "store");
  add_front_flags(*cmd, options);
  return cmd;
}

int run_apiserver_command(const apiserver_options& options, std::ostream& out,
                          std::ostream& err) {
  // Block the signals before any thread starts, so that sigwait gets them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  runtime rt;
  api_server server{rt};
  if (!load_files(server, options.load, err))
    return 1;
  auto front = start_front(rt.system(), server.current_actor(), options,
                           true, out);
  if (!front) {
    err << "podref apiserver: " << front.error().message << '\n';
    return 1;
  }
  out.flush();
  auto sig = wait_for_signal(set);
  front->get()->stop();
  out << "stopped on signal " << sig << '\n';
  return 0;
}

} // namespace podref::cli
