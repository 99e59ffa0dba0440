// The settings that travel from the facade down to the object actors, each
// default written once, here. The defaults are upstream's (the kubelet's
// watch-based and TTL-based managers, reference kubelet-manager.md).
//
// The layers' own structs derive from these and pass them on by assigning
// the base: manager_options (runtime/object_manager.hpp) and manager_config
// (actors/manager.hpp) are engine_settings, reflector_settings
// (actors/reflector.hpp) is reflector_timing, cache_entry_config
// (actors/cache_entry.hpp) is cache_ttl_settings.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "podref/messages/node_ttl.hpp"

namespace podref {

/// How a reflector waits and retries (Watch).
struct reflector_timing {
  /// How long a read waits for the first sync (upstream: 1 s).
  std::chrono::nanoseconds sync_timeout = std::chrono::seconds(1);
  /// Retry backoff after a failed list or watch: the base delay starts at
  /// backoff_initial and doubles up to backoff_cap; each wait is the base
  /// plus uniform jitter in [0, base) (client-go's jitter factor 1.0),
  /// capped at backoff_cap.
  std::chrono::nanoseconds backoff_initial = std::chrono::milliseconds(800);
  std::chrono::nanoseconds backoff_cap = std::chrono::seconds(30);
};

/// How long a cached object stays fresh (Cache).
struct cache_ttl_settings {
  /// The node's TTL annotation, fed by the embedder; null: default_ttl
  /// always.
  std::shared_ptr<const node_ttl_source> node_ttl;
  /// The TTL when the node has none (upstream's kubelet: one minute).
  std::chrono::nanoseconds default_ttl = std::chrono::minutes(1);
};

/// What the facade hands its manager as it is.
struct engine_settings : reflector_timing, cache_ttl_settings {
  /// The kubelet's syncFrequency, and how many of them a watch may go
  /// unread before it is stopped (upstream: 5 x syncFrequency, at least
  /// one minute; the manager's max_idle).
  static constexpr std::chrono::nanoseconds default_sync_frequency =
    std::chrono::minutes(1);
  static constexpr int idle_sync_periods = 5;

  /// Period of the idle-recycling pass (Watch); zero disables it.
  std::chrono::nanoseconds recycle_period = std::chrono::minutes(1);
  /// Watch: how often an object stopped as immutable is listed again (from
  /// the watch cache, resourceVersion "0") to find it deleted or recreated
  /// under its name; spread over the recycling passes. Zero: never (only a
  /// new pod's reference re-checks it). Not upstream's, which serves a
  /// recreated immutable object's old content until its last pod is gone
  /// (kubernetes #131589).
  std::chrono::nanoseconds immutable_recheck = std::chrono::minutes(10);
  /// Seed of the reflectors' backoff jitter.
  std::uint64_t seed = 0;
  /// Watch: adaptive watch multiplexing (docs/multiplexing.md). When more
  /// than this many referenced objects share a namespace, their reflectors
  /// are served by one namespace-wide list and watch; below half of it,
  /// per object again. Zero: never, the default, because a namespace list
  /// reads Secrets no pod on the node references, which is the embedder's
  /// call (docs/multiplexing.md, "Default", measured; 16 is a good value to
  /// enable it). The environment variable PODREF_MUX_THRESHOLD, if set,
  /// replaces a zero here (the test catalogue runs a second time with it
  /// at 1).
  std::size_t mux_threshold = 0;
};

} // namespace podref
