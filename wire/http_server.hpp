// podref's Kubernetes API front over HTTP/1.1: the REST paths of v1 Secrets
// and ConfigMaps (see router.hpp) in front of the in-memory API server
// actor, so that kubectl and client-go work against it.
//
// Threads: a fixed number of I/O threads (options::io_threads) serve every
// connection and watch; nothing blocks them. A request becomes messages to
// the server actor that `source` returns at that moment (the server may be
// restarted); the reply comes back through a CAF actor and is posted to the
// connection's strand. A watch is one CAF actor as the server's watcher.
//
// This slice serves plain HTTP, unauthenticated, and refuses any address
// but a loopback one.
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
#include <string>

#include "podref/messages/errors.hpp"

namespace caf {
class actor;
class actor_system;
} // namespace caf

namespace podref::wire {

/// Settings of one HTTP front.
struct http_server_options {
  /// A loopback address (IPv4 or IPv6) to listen on.
  std::string address = "127.0.0.1";
  /// 0 picks a free port (see http_server::port()).
  std::uint16_t port = 0;
  std::size_t io_threads = 2;
  std::size_t max_connections = 1024;
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

  /// Listens and starts serving. Fails for a non-loopback address ("TLS
  /// and credentials are required beyond loopback") or when the address
  /// cannot be bound.
  static result<std::unique_ptr<http_server>>
  start(caf::actor_system& sys, source_function source,
        const http_server_options& options);

  ~http_server();

  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// The port listened on (the chosen one when options.port was 0).
  std::uint16_t port() const noexcept;

  /// http://ADDRESS:PORT (IPv6 in brackets).
  std::string url() const;

  /// Idempotent; blocks until the I/O threads have stopped.
  void stop();

  struct impl;

private:
  explicit http_server(std::unique_ptr<impl> x);
  // Owns the I/O context, and with it every connection (see http_core.hpp).
  std::unique_ptr<impl> impl_;
};

} // namespace podref::wire
