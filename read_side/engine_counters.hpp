// engine_counters: statistics the actors update and the facade reports.
//
// Plain relaxed atomics. Each group that a different actor kind writes sits
// on its own cache line; the per-read counters live in the readers' own epoch
// records instead (see epoch_domain::reader_counters), so reads never write
// a shared line.
#pragma once

#include <atomic>
#include <cstdint>

namespace podref::detail {

struct alignas(64) engine_counters {
  // -- written by the manager --------------------------------------------------
  std::atomic<std::int64_t> registered_pods{0};
  std::atomic<std::int64_t> referenced_objects{0};
  /// Reflectors spawned (first spawns and replacements). A reflector counts
  /// itself in reflectors_started only once it runs, later: until both are
  /// equal, some reflector exists that no other counter shows yet.
  std::atomic<std::uint64_t> reflectors_spawned{0};

  // -- written by reflectors ------------------------------------------------------
  alignas(64) std::atomic<std::int64_t> live_reflectors{0};
  std::atomic<std::uint64_t> reflectors_started{0};
  std::atomic<std::uint64_t> reflectors_stopped{0};
  std::atomic<std::int64_t> open_watches{0};
  /// Reflectors running but not yet synced, plus source calls in flight:
  /// zero (with no unapplied command in the inbox) means the engine is quiescent.
  std::atomic<std::int64_t> busy{0};
  std::atomic<std::uint64_t> gets{0};
  std::atomic<std::uint64_t> lists{0};
  std::atomic<std::uint64_t> watches{0};

  // -- written by namespace multiplexers (docs/multiplexing.md) ----------------
  /// Reflector watches served by a multiplexer (counted in open_watches
  /// too), and the namespace watches the multiplexers hold: the API server
  /// holds open_watches - mux_sub_watches + mux_ns_watches.
  alignas(64) std::atomic<std::int64_t> mux_sub_watches{0};
  std::atomic<std::int64_t> mux_ns_watches{0};
  /// Objects nobody references that came with a namespace list or watch
  /// (multiplexing's cost: dropped on arrival).
  std::atomic<std::uint64_t> mux_foreign_events{0};
};

} // namespace podref::detail
