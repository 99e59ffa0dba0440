// cluster: a real Kubernetes API server as the object source of managers.
//
// Built from a resolved client configuration (wire/kubeconfig.hpp), it owns
// the HTTP client (one I/O thread for all requests and watches) and the wire
// source actor that speaks the reflectors' source protocol over it
// (wire/wire_source.hpp). secret_manager and configmap_manager accept a
// cluster as they accept an api_server. Destroy the managers first, then
// the cluster.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "podref/messages/errors.hpp"
#include "podref/wire/http_client.hpp"
#include "podref/wire/kubeconfig.hpp"
#include "podref/wire/wire_source.hpp"

namespace caf {
class actor;
} // namespace caf

namespace podref {

class runtime;

struct cluster_options {
  wire::http_client_options http;
  wire::wire_source_options source;
};

/// What the client did so far.
struct cluster_stats {
  /// Finished HTTP requests by "VERB CODE", e.g. "GET 200" (code 0: the
  /// transfer failed: no reply, a timeout, a reset, a bad stream).
  std::map<std::string, std::uint64_t> requests;
  std::uint64_t bytes_received = 0;
  /// Watch streams with a 200 reply still running.
  std::uint64_t open_streams = 0;
  /// Connections opened, and replies that came over HTTP/2.
  std::uint64_t connects = 0;
  std::uint64_t http2_responses = 0;
  /// Requests that waited for the client-side rate limiter, and how long.
  std::uint64_t throttled = 0;
  std::uint64_t throttled_wait_ns = 0;
  /// 429 replies retried after their Retry-After.
  std::uint64_t retried_429 = 0;
  /// Watches ended by a malformed, oversized or cut line.
  std::uint64_t bad_streams = 0;
  /// Exec credential plugin runs, and those that failed.
  std::uint64_t exec_runs = 0;
  std::uint64_t exec_failures = 0;
  /// Streaming lists (wire_source_options::watch_list) that fell back to
  /// list+watch, and whose stream a watch took over.
  std::uint64_t watch_list_fallbacks = 0;
  std::uint64_t watch_list_adopted = 0;
};

class cluster {
public:
  /// Starts the client and the source on `rt`. Fails for a configuration
  /// the client cannot honour (see http_client::start).
  static result<std::unique_ptr<cluster>>
  connect(runtime& rt, const wire::client_config& config,
          const cluster_options& options = {});

  /// A source of its own (its rate limiter, its counters) over a client
  /// shared with other clusters: their requests share its connections,
  /// and stats() counts the client's requests of them all.
  /// `options.http` is unused (the client is made).
  static std::unique_ptr<cluster>
  connect(runtime& rt, std::shared_ptr<wire::http_client> client,
          const cluster_options& options = {});

  /// Stops the source actor, then the client's I/O thread.
  ~cluster();

  cluster(const cluster&) = delete;
  cluster& operator=(const cluster&) = delete;

  /// The source actor (protocol: object_source_actor).
  const caf::actor& actor() const noexcept;

  cluster_stats stats() const;

  /// The HTTP client, for more requests over the same connections (the
  /// node agent's pod source and Node reads).
  const std::shared_ptr<wire::http_client>& client() const noexcept;

  struct impl;

private:
  explicit cluster(std::unique_ptr<impl> x);
  std::unique_ptr<impl> impl_;
};

} // namespace podref
