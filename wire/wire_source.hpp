// The wire source: an actor speaking object_source_actor's protocol
// (messages/actor_types.hpp) over HTTP to a Kubernetes API server, with the
// requests the kubelet's reflectors send (docs/client.md lists them):
// - list(ns, name, rv): GET .../RES?fieldSelector=metadata.name%3DNAME
//   &limit=500&resourceVersion=0 for rv "0"; no resourceVersion (a
//   consistent read, following `continue` pages) for rv ""; a known rv
//   without limit;
// - watch(ns, name, rv): GET .../RES?allowWatchBookmarks=true&fieldSelector=
//   ...&resourceVersion=RV&timeoutSeconds=T&watch=true, T drawn from
//   [300, 600) s; events go to the watcher as the source's messages; the
//   stream's normal end is a w_end without error (the reflector watches
//   again from the last version it saw), an ERROR 410 event or an HTTP 410 a
//   w_end with errc::expired (it relists), a malformed or oversized line or
//   a stream cut mid-line a w_end with errc::unavailable (it backs off);
// - get(ns, name, rv): GET .../RES/NAME[?resourceVersion=RV];
// - with options.watch_list, a first list or a relist is a watch-list
//   whose stream then serves the watch (watch_list.cpp).
// Error replies: 404 errc::not_found with the server's message (`secrets
// "x" not found`); 410 and 504 "too large resource version" errc::expired;
// 429, on a request or before a watch's stream began, retried after its
// Retry-After (bounded); 403, 5xx and transport
// failures errc::unavailable with the server's message, which the
// reflectors retry with jittered exponential backoff.
//
// A client-side token bucket (the kubelet's QPS 50 / burst 100) paces
// every request, watches included; waits are counted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace caf {
class actor;
class actor_system;
} // namespace caf

namespace podref::wire {

class http_client;

struct wire_source_options {
  /// Requests per second of the token bucket; 0 turns the limit off.
  double qps = 50;
  /// The bucket's size.
  std::uint32_t burst = 100;
  /// A watch line (one event) longer than this ends the watch.
  std::size_t max_event_bytes = 4u << 20;
  /// timeoutSeconds is drawn from [min_watch_timeout, 2 x min_watch_timeout).
  std::chrono::seconds min_watch_timeout{300};
  /// A watch stream still open this long after its timeoutSeconds is
  /// ended by the client (an error: the reflector backs off, re-watches).
  std::chrono::seconds watch_grace{30};
  /// 429 replies retried per request before the request fails.
  std::uint32_t max_throttle_retries = 10;
  /// Retry-After values are capped at this.
  std::chrono::seconds max_retry_after{60};
  /// The streaming list (client-go's WatchList, KEP-3157; off by default,
  /// as in the kubelet): a list is one watch with sendInitialEvents=true&
  /// resourceVersionMatch=NotOlderThan whose initial events up to the
  /// bookmark annotated k8s.io/initial-events-end are the list, and whose
  /// stream then serves the reflector's watch from that bookmark's
  /// version. A refusal (422: then never again), an ERROR event, the
  /// stream's end, or no end bookmark within watch_list_timeout fall back
  /// to the plain list.
  bool watch_list = false;
  std::chrono::milliseconds watch_list_timeout{10000};
};

/// Counters of the source, readable from any thread.
struct wire_source_counters {
  /// Requests that waited for the token bucket, and their total wait.
  std::atomic<std::uint64_t> throttled{0};
  std::atomic<std::uint64_t> throttled_wait_ns{0};
  /// 429 replies retried.
  std::atomic<std::uint64_t> retried_429{0};
  /// Watches ended by a malformed, oversized or cut line.
  std::atomic<std::uint64_t> bad_streams{0};
  /// Streaming lists that fell back to a plain list, and streams a watch
  /// took over.
  std::atomic<std::uint64_t> watch_list_fallbacks{0};
  std::atomic<std::uint64_t> watch_list_adopted{0};
};

/// Spawns a wire source over `client` (shared with the caller, who keeps it
/// alive at least as long as the actor).
caf::actor spawn_wire_source(caf::actor_system& sys,
                             std::shared_ptr<http_client> client,
                             const wire_source_options& options,
                             std::shared_ptr<wire_source_counters> counters);

} // namespace podref::wire
