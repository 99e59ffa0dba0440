// object_slot: where one object's actor publishes what readers may see.
//
// The object's actor (a reflector under Watch, a cache entry under Cache) is
// the only writer of the snapshot; any thread may read under a pin of the
// engine's epoch_domain. A read is one atomic load of the snapshot pointer
// (plus, at most once per second, a store of the access time), so serving a
// synced object costs no actor round trip and no lock. Replaced snapshots are
// freed through the epoch domain once no reader can still hold them.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "podref/messages/api_object.hpp"
#include "podref/runtime/detail/epoch.hpp"
#include "podref/runtime/detail/snapshot_index.hpp"

namespace podref::detail {

/// What a reader may see of one object. Immutable once published.
struct object_snapshot {
  /// True once a list has completed since the (re)start of the watch;
  /// readers may serve `object` only while synced.
  bool synced = false;
  /// True while the reflector lists or watches (false once stopped for
  /// idleness or immutability).
  bool running = false;
  /// The object; empty means "not found".
  api_object object;

  // -- Cache strategy (a cache entry publishes; `synced` stays false) ------

  /// True iff `object` is a successfully fetched object (NotFound and
  /// errors are never served from a snapshot: upstream re-reads them).
  bool cached_ok = false;
  /// When the object was fetched, on the actor clock (ns since its epoch).
  std::int64_t fetched_ns = 0;
  /// The slot's invalidation count the fetch belongs to; the snapshot is
  /// void once object_slot::invalidations() moved past it.
  std::uint64_t generation = 0;
};

class object_slot {
public:
  /// Access times are stored only when they move by at least this much, so
  /// that hot reads do not keep dirtying the slot's cache line.
  static constexpr std::int64_t access_granularity_ns = 1'000'000'000;

  object_slot(resource res, std::string ns, std::string name,
              epoch_domain& domain);

  ~object_slot();

  object_slot(const object_slot&) = delete;
  object_slot& operator=(const object_slot&) = delete;

  // -- identity (the index key is "ns/name") ---------------------------------

  const std::string& key() const noexcept {
    return key_;
  }

  std::size_t hash() const noexcept {
    return hash_;
  }

  resource res() const noexcept {
    return res_;
  }

  const std::string& ns() const noexcept {
    return ns_;
  }

  const std::string& name() const noexcept {
    return name_;
  }

  // -- readers (under a pin of the domain) -----------------------------------

  /// The current snapshot; never null.
  const object_snapshot* load() const noexcept {
    return snapshot_.load(std::memory_order_acquire);
  }

  /// Records a read at `now_ns` (clock time since its epoch).
  void touch(std::int64_t now_ns) noexcept {
    auto last = last_access_ns_.load(std::memory_order_relaxed);
    if (now_ns - last >= access_granularity_ns || now_ns < last)
      last_access_ns_.store(now_ns, std::memory_order_relaxed);
  }

  /// How often a new reference invalidated the cached object (Cache).
  std::uint64_t invalidations() const noexcept {
    return invalidations_.load(std::memory_order_acquire);
  }

  /// Returns true exactly once: for the first reader that served this slot's
  /// object as immutable (the reflector then stops watching).
  bool claim_immutable_report() noexcept {
    return !immutable_reported_.load(std::memory_order_relaxed)
           && !immutable_reported_.exchange(true, std::memory_order_relaxed);
  }

  // -- the manager (Cache strategy) ------------------------------------------

  /// Counts one invalidation and returns the new count. Only the manager
  /// calls this, before it tells the cache entry, so that a read ordered
  /// after the new reference (e.g. after sync()) never serves the old
  /// snapshot.
  std::uint64_t invalidate() noexcept {
    return invalidations_.fetch_add(1, std::memory_order_acq_rel) + 1;
  }

  // -- the owning actor ------------------------------------------------------

  /// Publishes `x`; the previous snapshot is retired through the domain.
  void publish(object_snapshot x);

  /// The last recorded read; 0 if never read.
  std::int64_t last_access_ns() const noexcept {
    return last_access_ns_.load(std::memory_order_relaxed);
  }

  /// Unconditionally records a read (used by the reflector's own reads).
  void set_last_access_ns(std::int64_t x) noexcept {
    last_access_ns_.store(x, std::memory_order_relaxed);
  }

private:
  std::string key_;
  std::size_t hash_;
  resource res_;
  std::string ns_;
  std::string name_;
  epoch_domain& domain_;
  std::atomic<const object_snapshot*> snapshot_;
  std::atomic<std::int64_t> last_access_ns_{0};
  std::atomic<bool> immutable_reported_{false};
  std::atomic<std::uint64_t> invalidations_{0};
};

} // namespace podref::detail
