// object_slot: where one object's actor publishes what readers may see.
//
// The object's actor (a reflector under Watch, a cache entry under Cache) is
// the only writer of the snapshot; any thread may read under a pin of the
// engine's epoch_domain. A read is one atomic load of the snapshot pointer
// plus one of the access time (stored only when the coarse access stamp
// moved on, once per recycling period: see access_stamp.hpp), so serving a
// synced object costs no actor round trip, no lock and no clock read.
// Replaced snapshots are freed through the epoch domain once no reader can
// still hold them.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "podref/messages/api_object.hpp"
#include "podref/messages/text_hash.hpp"
#include "podref/read_side/epoch.hpp"
#include "podref/read_side/reader_stripes.hpp"
#include "podref/read_side/snapshot_index.hpp"

namespace podref::detail {

class change_feed;
class change_hub;

/// What a reader may see of one object. Immutable once published. Aligned
/// so that what every read loads (`synced`, `object` and the first stripes)
/// shares one cache line.
struct alignas(64) object_snapshot {
  /// True once a list has completed since the (re)start of the watch;
  /// readers may serve `object` only while synced.
  bool synced = false;
  /// True while the reflector lists or watches (false once stopped for
  /// idleness or immutability).
  bool running = false;
  /// The object; empty means "not found".
  api_object object;

  // -- readers ---------------------------------------------------------------

  /// Per-thread-stripe copies of `object`: readers hand out
  /// `stripes.copy(object)` so that threads do not share a reference count.
  /// Not part of the value: a copied snapshot starts without aliases.
  reader_stripes stripes{};

  // -- Cache strategy (a cache entry publishes; `synced` stays false) ------

  /// True iff `object` is a successfully fetched object (NotFound and
  /// errors are never served from a snapshot: upstream re-reads them).
  bool cached_ok = false;
  /// When the object was fetched, on the actor clock (ns since its epoch).
  std::int64_t fetched_ns = 0;
  /// The slot's invalidation count the fetch (Cache) or the publication
  /// (Watch) belongs to. Cache: the snapshot is void once
  /// object_slot::invalidations() moved past it; Watch: a stopped snapshot
  /// then is, until its reflector rechecked the object.
  std::uint64_t generation = 0;

  /// Whether its reflector stopped watching for good: a read found the
  /// object immutable (Watch).
  bool stopped_immutable() const noexcept {
    return !running && synced && object && object.is_immutable();
  }
};

/// `x == y`, without a call to memcmp for the short strings that object
/// names and namespaces usually are (at most 16 bytes: two overlapping
/// loads per side).
inline bool same_text(std::string_view x, std::string_view y) noexcept {
  const std::size_t n = x.size();
  if (n != y.size())
    return false;
  const char* p = x.data();
  const char* q = y.data();
  if (n > 16)
    return std::memcmp(p, q, n) == 0;
  if (n >= 8)
    return load64(p) == load64(q) && load64(p + n - 8) == load64(q + n - 8);
  if (n >= 4)
    return load32(p) == load32(q) && load32(p + n - 4) == load32(q + n - 4);
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != q[i])
      return false;
  return true;
}

/// Aligned so that what every read loads (hash, snapshot pointer, access
/// time, key) fills exactly one cache line.
class alignas(64) object_slot {
public:
  object_slot(resource res, std::string ns, std::string name,
              epoch_domain& domain);

  ~object_slot();

  object_slot(const object_slot&) = delete;
  object_slot& operator=(const object_slot&) = delete;

  // -- identity (the index key is "ns/name", hashed as hash_key(ns, name)) --

  const std::string& key() const noexcept {
    return key_;
  }

  std::size_t hash() const noexcept {
    return hash_;
  }

  resource res() const noexcept {
    return res_;
  }

  /// The parts of the key, as copies for the requests and errors that need
  /// them (the slot keeps only the joined key: 64 bytes less per object).
  std::string ns() const {
    return key_.substr(0, ns_size_);
  }

  std::string name() const {
    return key_.substr(ns_size_ + 1);
  }

  /// True iff this is the slot of `ns`/`name`; compares the parts with the
  /// joined key, so a reader never builds it.
  bool matches(std::string_view ns, std::string_view name) const noexcept {
    const std::size_t n = ns.size();
    return n == ns_size_ && key_.size() == n + 1 + name.size()
           && same_text(std::string_view{key_.data(), n}, ns)
           && same_text(std::string_view{key_.data() + n + 1, name.size()},
                        name);
  }

  // -- readers (under a pin of the domain) -----------------------------------

  /// The current snapshot; never null.
  const object_snapshot* load() const noexcept {
    return snapshot_.load(std::memory_order_acquire);
  }

  /// Records a read at `stamp` (clock time since its epoch; the snapshot
  /// path passes access_stamp::current()). Writes only when `stamp` is later
  /// than the recorded access, so repeated reads within one stamp leave the
  /// slot's cache line clean; never moves the recorded access back.
  void touch(std::int64_t stamp) noexcept {
    auto last = last_access_ns_.load(std::memory_order_relaxed);
    while (last < stamp
           && !last_access_ns_.compare_exchange_weak(
             last, stamp, std::memory_order_relaxed,
             std::memory_order_relaxed)) {
      // `last` was reloaded: retry while still older.
    }
  }

  /// How often a new reference invalidated the cached object (Cache) or
  /// the object stopped as immutable (Watch).
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
  /// calls this, before it tells the cache entry or the reflector, so that a read ordered
  /// after the new reference (e.g. after sync()) never serves the old
  /// snapshot.
  std::uint64_t invalidate() noexcept {
    return invalidations_.fetch_add(1, std::memory_order_acq_rel) + 1;
  }

  // -- the manager: which actor serves the object ----------------------------

  /// Opaque to the slot: the manager's record of the actor it assigned to
  /// this object (a reflector_binding under Watch). Manager thread only.
  const std::shared_ptr<void>& owner() const noexcept {
    return owner_;
  }

  void set_owner(std::shared_ptr<void> x) noexcept {
    owner_ = std::move(x);
  }

  // -- change notifications (read_side/change_feed.hpp) ----------------------

  /// The object's subscribers, or null if it never had any: the one load
  /// a reflector's publication costs when nobody subscribes. The feed
  /// lives as long as the slot.
  change_feed* feed() const noexcept {
    auto* f = feed_.load(std::memory_order_relaxed);
    if (f != nullptr)
      std::atomic_thread_fence(std::memory_order_acquire);
    return f;
  }

  /// The feed, made on the first call (with `hub`). Manager thread only.
  change_feed& make_feed(const std::shared_ptr<change_hub>& hub);

  // -- the owning actor ------------------------------------------------------

  /// Publishes `x`; the previous snapshot is retired through the domain.
  void publish(object_snapshot x);

  /// The last recorded read; 0 if never read.
  std::int64_t last_access_ns() const noexcept {
    return last_access_ns_.load(std::memory_order_relaxed);
  }

  /// Unconditionally records a read (used by the reflector's own reads,
  /// which know their exact time; this may move a snapshot read's upper
  /// bound back to the truth).
  void set_last_access_ns(std::int64_t x) noexcept {
    last_access_ns_.store(x, std::memory_order_relaxed);
  }

private:
  // What every read touches: the first cache line (60 bytes; a key of up to
  // 15 characters is stored inline).
  std::size_t hash_;
  std::atomic<const object_snapshot*> snapshot_;
  std::atomic<std::int64_t> last_access_ns_{0};
  std::string key_;
  /// Where the namespace ends in key_ (names may not contain '/', but an
  /// invalid one must not match another object).
  std::uint32_t ns_size_;
  // The rest.
  std::atomic<bool> immutable_reported_{false};
  resource res_;
  std::atomic<std::uint64_t> invalidations_{0};
  epoch_domain& domain_;
  std::shared_ptr<void> owner_;
  std::atomic<change_feed*> feed_{nullptr};
  std::unique_ptr<change_feed> feed_owner_;
};

} // namespace podref::detail
