// The pod source: the pods bound to one node, listed and watched as the
// kubelet's API pod source does (a client-go reflector over
// /api/v1/pods?fieldSelector=spec.nodeName%3DN), delivered as add / update /
// delete to a consumer.
//
// Requests (docs/node.md lists them):
// - list: GET /api/v1/pods?fieldSelector=spec.nodeName%3DN&limit=500
//   &resourceVersion=0 first; after a failure from the last version seen
//   (no limit); after an expired version ("" , a consistent read, paged by
//   limit=500 and `continue`);
// - watch: GET /api/v1/pods?allowWatchBookmarks=true&fieldSelector=
//   spec.nodeName%3DN&resourceVersion=RV&timeoutSeconds=T&watch=true, T in
//   [min_watch_timeout, 2 x min_watch_timeout); a normal end re-watches from
//   the last version seen, an ERROR 410 or HTTP 410 relists, anything else
//   (403, 5xx, a cut or malformed stream, no reply) relists after the
//   reflectors' jittered exponential backoff (reset by a successful list).
// The token bucket, 429 handling and error meanings are wire_source's
// (detail/request_rules.hpp).
//
// A relist is reconciled as an informer's Replace: pods of the new list are
// added or updated (by uid: a new resourceVersion is an update), known pods
// missing from it are deleted. A pod the decoder rejects (pod_decode.hpp)
// is reported and kept out; a known pod whose new version is rejected stays
// as it was.
//
// The consumer runs on the source's actor thread: it must not block (the
// node agent queues the event for its own thread).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "podref/manifest/manifest.hpp"
#include "podref/messages/engine_settings.hpp"
#include "podref/wire/pod_decode.hpp"
#include "podref/wire/wire_source.hpp"

namespace podref::wire {

class http_client;

struct pod_source_options {
  std::string node_name;
  /// Rate limit, event size, watch timeouts and 429 retries.
  wire_source_options requests;
  /// The retry backoff (backoff_initial, backoff_cap).
  reflector_timing timing;
  /// Per-pod bounds of the decoder.
  manifest_limits limits;
  /// Seed of the backoff jitter and the watch timeouts.
  std::uint64_t seed = 0;
};

enum class pod_event_kind : std::uint8_t {
  added,
  updated,
  deleted,
  /// A pod the decoder refused: `rejected` says which and why.
  rejected,
  /// A list was reconciled: every pod it held was delivered.
  synced,
  /// A list or watch failed; `message` says why (the source retries).
  failed,
};

struct pod_event {
  pod_event_kind kind = pod_event_kind::added;
  /// added, updated: the new state; deleted: the last state known.
  wire_pod pod;
  rejected_pod rejected;
  std::string message;
};

using pod_consumer = std::function<void(pod_event)>;

/// Counters, readable from any thread.
struct pod_source_counters {
  std::atomic<std::uint64_t> lists{0};
  std::atomic<std::uint64_t> watches{0};
  /// Lists that followed an expired version (410).
  std::atomic<std::uint64_t> relists_expired{0};
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::uint64_t> pods{0};
  std::atomic<std::uint64_t> rejected{0};
  /// True while a watch stream is open with a 200 reply or after a list
  /// succeeded and before the next failure.
  std::atomic<bool> synced{false};
  wire_source_counters requests;
};

/// The running source; destroying it stops the actor (no consumer call
/// after the destructor returns).
class pod_source {
public:
  /// Starts listing at once. `client` is shared with the caller.
  static std::unique_ptr<pod_source> start(caf::actor_system& sys,
                                           std::shared_ptr<http_client> client,
                                           const pod_source_options& options,
                                           pod_consumer consumer);

  ~pod_source();

  pod_source(const pod_source&) = delete;
  pod_source& operator=(const pod_source&) = delete;

  const pod_source_counters& counters() const noexcept;

  struct impl;

private:
  explicit pod_source(std::unique_ptr<impl> x);
  std::unique_ptr<impl> impl_;
};

} // namespace podref::wire
