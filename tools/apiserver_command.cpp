#include "apiserver_command.hpp"

#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <map>
#include <ostream>
#include <set>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "podref/manifest/manifest.hpp"
#include "podref/messages/resource_kinds.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/authn.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/server_kubeconfig.hpp"
#include "podref/wire/tls_material.hpp"

namespace podref::cli {

namespace {

using json = nlohmann::json;

/// Splits ADDRESS:PORT ([V6]:PORT); false if it is not that form.
bool split_listen(const std::string& text, std::string& address,
                  std::uint16_t& port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size())
    return false;
  address = text.substr(0, colon);
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']')
    address = address.substr(1, address.size() - 2);
  try {
    auto n = std::stoul(text.substr(colon + 1));
    if (n > 65535)
      return false;
    port = static_cast<std::uint16_t>(n);
  } catch (const std::exception&) {
    return false;
  }
  return !address.empty();
}

bool unspecified(const std::string& address) {
  return address == "0.0.0.0" || address == "::";
}

/// The names the serving certificate of a --tls-dir carries.
std::vector<std::string> serving_hosts(const std::string& address) {
  std::vector<std::string> hosts;
  if (!unspecified(address))
    hosts.push_back(address);
  for (const char* h : {"127.0.0.1", "::1", "localhost"})
    if (h != address)
      hosts.emplace_back(h);
  return hosts;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// The TLS and token settings the flags ask for; `ca_pem` gets what a
/// kubeconfig's certificate-authority-data should hold.
result<void> configure_tls(const apiserver_options& options,
                           wire::http_server_options& http,
                           std::string& ca_pem, std::ostream& out) {
  auto bad = [](std::string what) {
    return error_info{errc::invalid_argument, std::move(what)};
  };
  if (!options.tls_dir.empty()
      && (!options.tls_cert.empty() || !options.tls_key.empty()))
    return bad("--tls-dir excludes --tls-cert and --tls-key");
  if (options.tls_cert.empty() != options.tls_key.empty())
    return bad("--tls-cert and --tls-key go together");
  auto tls = !options.tls_dir.empty() || !options.tls_cert.empty();
  if (!tls) {
    if (!options.token_file.empty() || !options.client_ca.empty()
        || options.anonymous)
      return bad("--token-file, --client-ca and --anonymous need TLS "
                 "(--tls-dir, or --tls-cert and --tls-key): plain HTTP is "
                 "loopback only and not authenticated");
    return {};
  }
  wire::http_tls_options files;
  std::string token_file = options.token_file;
  if (!options.tls_dir.empty()) {
    auto made = wire::ensure_tls_dir(options.tls_dir,
                                     serving_hosts(http.address));
    if (!made)
      return made.error();
    if (made->made_ca)
      out << "made a CA in " << options.tls_dir << '\n';
    files.cert_file = made->cert;
    files.key_file = made->key;
    files.client_ca_file = made->ca_cert;
    auto ca = wire::read_small_file(made->ca_cert);
    if (!ca)
      return ca.error();
    ca_pem = *ca;
    if (token_file.empty()) {
      token_file = options.tls_dir + "/tokens.csv";
      if (!exists(token_file)) {
        auto token = wire::random_token();
        if (!token)
          return token.error();
        auto ok = wire::write_private_file(
          token_file, *token + ",admin,admin,\"system:masters\"\n", 0600);
        if (!ok)
          return ok;
        out << "made an admin token in " << token_file << '\n';
      }
    }
  } else {
    files.cert_file = options.tls_cert;
    files.key_file = options.tls_key;
    // A self-signed certificate is its own CA; for one a CA signed, give
    // the client that CA (kubectl's --certificate-authority).
    auto pem = wire::read_small_file(options.tls_cert);
    if (!pem)
      return pem.error();
    ca_pem = *pem;
  }
  if (!options.client_ca.empty())
    files.client_ca_file = options.client_ca;
  if (!token_file.empty()) {
    auto tokens = wire::token_table::load(token_file);
    if (!tokens)
      return tokens.error();
    http.tokens
      = std::make_shared<const wire::token_table>(std::move(tokens).value());
  }
  http.tls = std::move(files);
  http.anonymous = options.anonymous;
  return {};
}

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
    "ClusterRoleBindings) until SIGINT or SIGTERM: plain HTTP on loopback without authentication, or HTTPS\n"
    "(--tls-dir, or --tls-cert and --tls-key) where every request needs a\n"
    "bearer token or a client certificate.");
  cmd->add_option("--listen", options.listen,
                  "ADDRESS:PORT (a loopback address without TLS); port 0 "
                  "picks one")
    ->capture_default_str();
  cmd->add_option("--tls-dir", options.tls_dir,
                  "serve HTTPS with a CA and certificate kept in DIR (made "
                  "at first start, with an admin token in DIR/tokens.csv "
                  "unless --token-file)");
  cmd->add_option("--tls-cert", options.tls_cert,
                  "serve HTTPS with this PEM certificate (chain)");
  cmd->add_option("--tls-key", options.tls_key,
                  "the PEM key of --tls-cert");
  cmd->add_option("--client-ca", options.client_ca,
                  "client certificates this CA signed authenticate (user = "
                  "CN, groups = O); default with --tls-dir: its CA");
  cmd->add_option("--token-file", options.token_file,
                  "bearer tokens, one token,user,uid[,\"groups\"] a line "
                  "(kube-apiserver's --token-auth-file)");
  cmd->add_flag("--anonymous", options.anonymous,
                "let requests without a credential reach /version and the "
                "health paths (HTTPS only)");
  cmd->add_option("--load", options.load,
                  "manifest files whose objects of the kinds served to "
                  "store");
  cmd->add_option("--write-kubeconfig", options.kubeconfig,
                  "write a kubeconfig for the server to this path");
  cmd->add_option("--io-threads", options.io_threads, "HTTP I/O threads")
    ->capture_default_str()
    ->check(CLI::Range(1, 64));
  cmd->add_option("--max-streams", options.max_streams,
                  "HTTP/2 streams (requests and watches) open at once per "
                  "connection (SETTINGS_MAX_CONCURRENT_STREAMS)")
    ->capture_default_str()
    ->check(CLI::Range(1, 1 << 20));
  return cmd;
}

int run_apiserver_command(const apiserver_options& options, std::ostream& out,
                          std::ostream& err) {
  wire::http_server_options http;
  if (!split_listen(options.listen, http.address, http.port)) {
    err << "podref apiserver: --listen: expected ADDRESS:PORT, got \""
        << options.listen << "\"\n";
    return 1;
  }
  http.io_threads = options.io_threads;
  http.max_streams = options.max_streams;
  std::string ca_pem;
  if (auto ok = configure_tls(options, http, ca_pem, out); !ok) {
    err << "podref apiserver: " << ok.error().message << '\n';
    return 1;
  }
  http.namespace_lifecycle = true;
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
  auto front = wire::http_server::start(rt.system(), server.current_actor(),
                                        http);
  if (!front) {
    err << "podref apiserver: " << front.error().message << '\n';
    return 1;
  }
  auto url = front->get()->url();
  out << "serving on " << url << '\n';
  if (!options.kubeconfig.empty()) {
    wire::server_kubeconfig kc;
    kc.url = url;
    if (unspecified(http.address))
      kc.url = std::string{http.tls ? "https" : "http"} + "://127.0.0.1:"
               + std::to_string(front->get()->port());
    kc.ca_pem = ca_pem;
    if (http.tokens)
      kc.token = http.tokens->first_token();
    if (auto ok = wire::write_kubeconfig(options.kubeconfig, kc); !ok) {
      err << "podref apiserver: " << ok.error().message << '\n';
      return 1;
    }
    out << "kubeconfig: " << options.kubeconfig << '\n';
  }
  out.flush();
  auto sig = wait_for_signal(set);
  front->get()->stop();
  out << "stopped on signal " << sig << '\n';
  return 0;
}

} // namespace podref::cli
