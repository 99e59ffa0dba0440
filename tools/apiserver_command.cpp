#include "apiserver_command.hpp"

#include <chrono>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <ostream>
#include <set>

#include <CLI/CLI.hpp>

#include "podref/manifest/manifest.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/http_server.hpp"

namespace podref::cli {

namespace {

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

bool write_kubeconfig(const std::string& path, const std::string& url) {
  std::ofstream out{path};
  out << "apiVersion: v1\n"
         "kind: Config\n"
         "clusters:\n"
         "- name: podref\n"
         "  cluster:\n"
         "    server: " << url << "\n"
         "contexts:\n"
         "- name: podref\n"
         "  context:\n"
         "    cluster: podref\n"
         "    user: podref\n"
         "    namespace: default\n"
         "current-context: podref\n"
         "users:\n"
         "- name: podref\n"
         "  user: {}\n";
  return static_cast<bool>(out.flush());
}

/// Loads every Secret and ConfigMap of `files`, stamped as created now,
/// then creates the initial namespaces and those the objects are in. The
/// namespaces come after the objects so that the loaded objects keep the
/// first resourceVersions (1, 2, ...), as before namespaces were objects.
bool load_files(api_server& server, const std::vector<std::string>& files,
                std::ostream& err) {
  auto now = std::chrono::system_clock::now();
  auto names = wire::initial_namespaces();
  std::set<std::string> namespaces{names.begin(), names.end()};
  for (const auto& file : files) {
    auto decoded = load_manifest_file(file);
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
      auto stored = server.apply(
        wire::stamp_new(wire::normalize_object(obj, obj.meta().ns), now));
      if (!stored) {
        err << "podref apiserver: " << file << ": "
            << stored.error().message << '\n';
        return false;
      }
      namespaces.insert(stored->meta().ns);
    }
  }
  for (const auto& ns : namespaces) {
    auto stored = server.apply(wire::stamp_new(wire::namespace_object(ns), now));
    if (!stored) {
      err << "podref apiserver: namespace " << ns << ": "
          << stored.error().message << '\n';
      return false;
    }
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
    "Secrets, ConfigMaps, Pods, Nodes and Namespaces; plain HTTP on\n"
    "loopback, no authentication)\n"
    "until SIGINT or SIGTERM.");
  cmd->add_option("--listen", options.listen,
                  "ADDRESS:PORT on a loopback address; port 0 picks one")
    ->capture_default_str();
  cmd->add_option("--load", options.load,
                  "manifest files whose Secrets and ConfigMaps to serve");
  cmd->add_option("--write-kubeconfig", options.kubeconfig,
                  "write a kubeconfig for the server to this path");
  cmd->add_option("--io-threads", options.io_threads, "HTTP I/O threads")
    ->capture_default_str()
    ->check(CLI::Range(1, 64));
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
    if (!write_kubeconfig(options.kubeconfig, url)) {
      err << "podref apiserver: cannot write " << options.kubeconfig << '\n';
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
