// podref's Kubernetes API front over HTTP/1.1 and HTTP/2 (h2c with prior
// knowledge): the REST paths of v1 Secrets
// and ConfigMaps (see router.hpp) in front of the in-memory API server
// actor, so that kubectl and client-go work against it.
//
// Threads: a fixed number of I/O threads (options::io_threads) serve every
// connection and watch; nothing blocks them. A request becomes messages to
// the server actor that `source` returns at that moment (the server may be
// restarted); the reply comes back through a CAF actor and is posted to the
// connection's strand. A watch is one CAF actor as the server's watcher.
// An HTTP/2 connection multiplexes requests and watches as streams (at most
// max_streams at once), each dispatched as an HTTP/1.1 request is.
//
// Plain HTTP is served on loopback addresses only, unauthenticated. With
// TLS (options::tls) any address may be listened on, and every request
// needs a credential (see access.hpp): a bearer token of options::tokens or
// a client certificate signed by tls->client_ca_file; anonymous requests
// reach only /version and the health paths, and only with
// options::anonymous. The TLS handshake counts in the time to send the
// first request.
//
// Bounds on what clients control: request body (413 past it, as the real
// server's 3 MiB), header size, time to send a request (slowloris),
// connections in all, open watches in all (429 past it), and events queued
// per watch: a watch whose client does not read ends (the client resumes
// from the last event it read).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "podref/messages/errors.hpp"

namespace caf {
class actor;
class actor_system;
} // namespace caf

namespace podref::wire {

class token_table;

/// The PEM files of an HTTPS front.
struct http_tls_options {
  /// The serving certificate (and its chain).
  std::string cert_file;
  std::string key_file;
  /// Client certificates signed by this CA authenticate (user = CN, groups
  /// = O); empty: none do.
  std::string client_ca_file;
};

/// Settings of one HTTP front.
struct http_server_options {
  /// The address (IPv4 or IPv6) to listen on; a loopback one without TLS.
  std::string address = "127.0.0.1";
  /// 0 picks a free port (see http_server::port()).
  std::uint16_t port = 0;
  std::size_t io_threads = 2;
  std::size_t max_connections = 1024;
  /// HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS: streams (requests and watches)
  /// open at once on one connection; the real server's (Go's) 250.
  std::size_t max_streams = 250;
  std::size_t max_watches = 4096;
  /// Events written to a watch's socket buffer or waiting for it; past
  /// this the watch ends.
  std::size_t max_queued_events = 1024;
  /// The real API server's request body limit.
  std::size_t max_body_bytes = 3u << 20;
  std::size_t max_header_bytes = 64u << 10;
  /// Time a client has to send one whole request.
  std::chrono::milliseconds request_read_timeout{10000};
  /// Time the API server actor has to answer one request.
  std::chrono::milliseconds api_timeout{30000};
  /// Time one write to a client may take before the connection closes.
  std::chrono::milliseconds write_timeout{30000};
  /// Serve HTTPS with these files.
  std::optional<http_tls_options> tls;
  /// The bearer tokens that authenticate (with TLS only).
  std::shared_ptr<const token_table> tokens;
  /// Let requests without a credential reach /version, /healthz, /readyz
  /// and /livez (with TLS only; without TLS nothing is authenticated).
  bool anonymous = false;
  /// A watch with allowWatchBookmarks gets a BOOKMARK this often, and one
  /// bookmark_lead before its timeoutSeconds end, when the cluster version
  /// moved past what it was sent (the real server: 1 min and 2 s).
  std::chrono::milliseconds bookmark_interval{60000};
  std::chrono::milliseconds bookmark_lead{2000};
  /// The real server's NamespaceLifecycle admission: a create in a
  /// namespace that does not exist is refused (404 `namespaces "x" not
  /// found`), and in a Terminating one too (403). Off, objects may be
  /// created in any namespace (as the engine's tests use the server).
  bool namespace_lifecycle = false;
};

/// A running HTTP front. Stopping (stop() or the destructor) ends open
/// watches and connections and joins the I/O threads.
class http_server {
public:
  using source_function = std::function<caf::actor()>;

  /// Listens and starts serving. Fails for a non-loopback address without
  /// TLS ("TLS and credentials are required beyond loopback"), for tokens
  /// or anonymous access without TLS, for unusable TLS files, or when the
  /// address cannot be bound.
  static result<std::unique_ptr<http_server>>
  start(caf::actor_system& sys, source_function source,
        const http_server_options& options);

  ~http_server();

  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// The port listened on (the chosen one when options.port was 0).
  std::uint16_t port() const noexcept;

  /// http://ADDRESS:PORT or https://ADDRESS:PORT (IPv6 in brackets).
  std::string url() const;

  /// What GET /metrics answers (Prometheus text format): requests by
  /// verb, resource, scope and code, open watches, watch events,
  /// connections, HTTP/2 streams and refusals at each bound.
  std::string metrics_text() const;

  /// Idempotent; blocks until the I/O threads have stopped.
  void stop();

  struct impl;

private:
  explicit http_server(std::unique_ptr<impl> x);
  // Owns the I/O context, and with it every connection (see http_core.hpp).
  std::unique_ptr<impl> impl_;
};

} // namespace podref::wire
