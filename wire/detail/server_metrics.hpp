// What the HTTP front counts for GET /metrics (Prometheus text format):
// requests by verb, group, version, resource, scope and code under
// kube-apiserver's
// apiserver_request_total, open watches under its
// apiserver_longrunning_requests, and podref's own operational figures
// (watch events, connections, HTTP/2 streams, refusals at each bound).
// Private to wire/; no Boost, no CAF. Every member may be called from any
// thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "podref/wire/router.hpp"

namespace podref::wire::detail {

/// The labels a request is counted under, as kube-apiserver's
/// RequestInfo gives them: verb GET, LIST, WATCH, POST, PUT, PATCH or
/// DELETE; the resource with its API group and version (none for a path
/// that is not one; the core group is ""); the scope (resource, namespace,
/// cluster; none for other paths).
struct request_class {
  enum class scope_kind : std::uint8_t { none, resource, ns, cluster };
  std::string verb;
  /// "apps", "" for the core group (messages/resource_kinds.hpp).
  std::string group;
  /// "v1"; empty for a path that is not a resource.
  std::string version;
  /// Empty for a path that is not a resource (discovery, health, ...).
  std::string resource_name;
  scope_kind scope = scope_kind::none;
  /// The dry_run label: the request's dryRun values sorted, deduplicated
  /// and joined with ",", or "invalid" when one is not a value the server
  /// takes (as kube-apiserver's cleanDryRun); empty without dryRun.
  std::string dry_run;

  auto key() const {
    return std::tie(verb, group, version, resource_name, scope);
  }
};

/// A request's labels but its code: verb, group, version, resource, scope.
using request_key = std::tuple<std::string, std::string, std::string,
                               std::string, request_class::scope_kind>;

/// The Content-Type of the exposition.
inline constexpr const char* metrics_content_type
  = "text/plain; version=0.0.4; charset=utf-8";

/// The class of a request routed to `r` with `method` and `content_type`.
request_class classify_request(std::string_view method, const route& r,
                               std::string_view content_type = {});

/// The class of a request refused before it was routed (413, 431).
request_class unrouted_request(std::string_view method);

/// The bounds a refusal is counted under
/// (podref_apiserver_refusals_total{limit=...}).
enum class refusal : std::uint8_t {
  connections,   // accept past max_connections (the socket is closed)
  watches,       // 429 past max_watches
  streams,       // HTTP/2 RST_STREAM REFUSED_STREAM past max_streams
  body_bytes,    // 413
  header_bytes,  // 431
  slow_watcher,  // a watch ended at max_queued_events
  slow_request,  // a request not sent within request_read_timeout
};
inline constexpr std::size_t refusal_kinds = 7;

enum class protocol : std::uint8_t { http1, http2 };

class server_metrics {
public:
  /// One answered request (a watch counts when its 200 goes out).
  void count_request(const request_class& c, int code);

  void watch_opened(const request_class& c);
  void watch_closed(const request_class& c);

  /// One event line queued on a watch's connection.
  void event_sent() noexcept {
    events_.fetch_add(1, std::memory_order_relaxed);
  }

  void connection_opened(protocol p) noexcept {
    connections_[index(p)].fetch_add(1, std::memory_order_relaxed);
  }
  void connection_closed(protocol p) noexcept {
    connections_[index(p)].fetch_sub(1, std::memory_order_relaxed);
  }

  /// HTTP/2 streams open (requests and watches); `delta` may be negative.
  void streams_changed(std::int64_t delta) noexcept {
    streams_.fetch_add(delta, std::memory_order_relaxed);
  }

  void refused(refusal r) noexcept {
    refusals_[static_cast<std::size_t>(r)].fetch_add(
      1, std::memory_order_relaxed);
  }

  /// The exposition, Prometheus text format 0.0.4.
  std::string text() const;

private:
  using key = request_key;

  static std::size_t index(protocol p) noexcept {
    return static_cast<std::size_t>(p);
  }

  mutable std::mutex mtx_;
  /// (request, dry_run label, code) -> count.
  std::map<std::tuple<key, std::string, int>, std::uint64_t>
    requests_;                             // guarded by mtx_
  std::map<key, std::int64_t> watches_;    // guarded by mtx_
  std::atomic<std::uint64_t> events_{0};
  std::array<std::atomic<std::int64_t>, 2> connections_{};
  std::atomic<std::int64_t> streams_{0};
  std::array<std::atomic<std::uint64_t>, refusal_kinds> refusals_{};
};

} // namespace podref::wire::detail
