// Starting the HTTP front for `podref apiserver` and `podref simulate
// --serve` (served_front.hpp).
#include "served_front.hpp"

#include <cstdint>
#include <ostream>
#include <utility>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>

#include <caf/actor.hpp>

#include "podref/wire/authn.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/server_kubeconfig.hpp"
#include "podref/wire/tls_material.hpp"

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
result<void> configure_tls(const front_options& options,
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

} // namespace

void add_front_flags(CLI::App& cmd, front_options& options) {
  cmd.add_option("--tls-dir", options.tls_dir,
                 "serve HTTPS with a CA and certificate kept in DIR (made "
                 "at first start, with an admin token in DIR/tokens.csv "
                 "unless --token-file)");
  cmd.add_option("--tls-cert", options.tls_cert,
                 "serve HTTPS with this PEM certificate (chain)");
  cmd.add_option("--tls-key", options.tls_key, "the PEM key of --tls-cert");
  cmd.add_option("--client-ca", options.client_ca,
                 "client certificates this CA signed authenticate (user = "
                 "CN, groups = O); default with --tls-dir: its CA");
  cmd.add_option("--token-file", options.token_file,
                 "bearer tokens, one token,user,uid[,\"groups\"] a line "
                 "(kube-apiserver's --token-auth-file)");
  cmd.add_flag("--anonymous", options.anonymous,
               "let requests without a credential reach /version and the "
               "health paths (HTTPS only)");
  cmd.add_option("--write-kubeconfig", options.kubeconfig,
                 "write a kubeconfig for the server to this path");
  cmd.add_option("--io-threads", options.io_threads, "HTTP I/O threads")
    ->capture_default_str()
    ->check(CLI::Range(1, 64));
  cmd.add_option("--max-streams", options.max_streams,
                 "HTTP/2 streams (requests and watches) open at once per "
                 "connection (SETTINGS_MAX_CONCURRENT_STREAMS)")
    ->capture_default_str()
    ->check(CLI::Range(1, 1 << 20));
  cmd.add_option("--max-connections", options.max_connections,
                 "client connections open at once")
    ->capture_default_str()
    ->check(CLI::Range(1, 1 << 20));
  cmd.add_option("--max-watches", options.max_watches,
                 "watches open at once, over every connection (429 past it)")
    ->capture_default_str()
    ->check(CLI::Range(1, 1 << 22));
}

result<std::unique_ptr<wire::http_server>>
start_front(caf::actor_system& sys, std::function<caf::actor()> source,
            const front_options& options, bool namespace_lifecycle,
            std::ostream& out) {
  wire::http_server_options http;
  if (!split_listen(options.listen, http.address, http.port))
    return error_info{errc::invalid_argument,
                      options.listen_flag + ": expected ADDRESS:PORT, got \""
                        + options.listen
                        + "\""};
  http.io_threads = options.io_threads;
  http.max_streams = options.max_streams;
  http.max_connections = options.max_connections;
  http.max_watches = options.max_watches;
  http.namespace_lifecycle = namespace_lifecycle;
  // Each connection is a socket: lift the soft limit of open files to the
  // hard one, as kube-apiserver (a Go program) does.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0
      && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  std::string ca_pem;
  if (auto ok = configure_tls(options, http, ca_pem, out); !ok)
    return ok.error();
  auto front = wire::http_server::start(sys, std::move(source), http);
  if (!front)
    return front.error();
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
    if (auto ok = wire::write_kubeconfig(options.kubeconfig, kc); !ok)
      return ok.error();
    out << "kubeconfig: " << options.kubeconfig << '\n';
  }
  out.flush();
  return front;
}

} // namespace podref::cli
