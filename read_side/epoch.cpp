#include "podref/read_side/epoch.hpp"

#include <algorithm>
#include <utility>
#include <vector>

// Why an object is never freed while a reader can reach it.
//
// Actors: writer W unlinks x (an atomic store), then retire() runs fence FW
// and loads the global epoch, reading r: x is tagged r. Reader R pins: loads
// the global epoch e, stores e into its record, runs fence FR, then loads
// the structure. The reclaimer that advances the epoch from g to g + 1 loads
// g, runs fence FC, then scans all records; x is freed only once the epoch
// reached r + 2, i.e. after a scan that saw the epoch r + 1 ("the scan").
//
// All fences are seq_cst and thus totally ordered (S). If R's loads missed
// the unlink, FR precedes FW in S (a load that reads an older value is
// coherence-ordered before the store; fences around coherence-ordered
// operations are ordered the same way in S). So it suffices to show FW
// precedes FR in S for every reader that could still hold x:
//  - W's epoch load read r, the scan's load read r + 1 (written later), so
//    FW precedes FC.
//  - If the scan missed R's announcement (it read an older value of the
//    record), FC precedes FR, hence FW precedes FR.
//  - If the scan saw R pinned, R's value must be r + 1 (anything else blocks
//    the advance); R's epoch load read r + 1, later than W's r, so again FW
//    precedes FR.
//  - If the scan saw R quiescent after R's reads (release store, acquire
//    load), R's reads happen before the free.
// The same argument needs no particular order on the epoch store itself, so
// the global epoch is loaded and stored relaxed; the fences do the work.

namespace podref::detail {

// -- domain internals ---------------------------------------------------------

struct epoch_domain::retired_node {
  void* object;
  void (*deleter)(void*);
  std::uint64_t epoch;
  retired_node* next;
};

/// The domain's reader records. Shared with the per-thread registries through
/// weak pointers, so a thread exiting while the domain dies can still let go
/// of its record safely, or see that it no longer exists.
struct epoch_domain::control {
  std::atomic<epoch_reader_record*> head{nullptr};
  std::atomic<std::size_t> count{0};

  control() = default;
  control(const control&) = delete;
  control& operator=(const control&) = delete;

  ~control() {
    auto* r = head.load(std::memory_order_acquire);
    while (r != nullptr) {
      auto* next = r->next;
      delete r;
      r = next;
    }
  }

  /// Claims a free record or publishes a new one. Lock-free; allocates only
  /// when every record is in use.
  epoch_reader_record* acquire() {
    for (auto* r = head.load(std::memory_order_acquire); r != nullptr;
         r = r->next) {
      if (r->in_use.load(std::memory_order_relaxed))
        continue;
      bool expected = false;
      // Acquire pairs with the release in `release`: the previous owner's
      // last writes (nesting back to 0, orphan cleared) are visible to us.
      if (r->in_use.compare_exchange_strong(expected, true,
                                            std::memory_order_acquire,
                                            std::memory_order_relaxed))
        return r;
    }
    auto* r = new epoch_reader_record;
    r->in_use.store(true, std::memory_order_relaxed);
    auto* h = head.load(std::memory_order_relaxed);
    do {
      r->next = h;
      // Release: a scanner that reaches r sees it fully constructed.
    } while (!head.compare_exchange_weak(h, r, std::memory_order_release,
                                         std::memory_order_relaxed));
    count.fetch_add(1, std::memory_order_relaxed);
    return r;
  }

  /// Hands an unpinned record back for reuse by any thread.
  static void release(epoch_reader_record* r) noexcept {
    r->orphan = false;
    r->in_use.store(false, std::memory_order_release);
  }
};

// -- per-thread registry ------------------------------------------------------

namespace {

std::atomic<std::uint64_t> next_domain_id{1};

struct registry_entry {
  std::uint64_t domain_id;
  std::weak_ptr<epoch_domain::control> control;
  epoch_reader_record* record;
};

// Set once this thread's registry has been destroyed (thread exit); later
// pins borrow a record per outermost pin instead. Trivially destructible, so
// it stays usable during the destruction of other thread_locals.
thread_local bool registry_gone = false;

/// The records this thread holds, one per domain, released at thread exit.
struct thread_registry {
  std::vector<registry_entry> entries;

  thread_registry() = default;
  thread_registry(const thread_registry&) = delete;
  thread_registry& operator=(const thread_registry&) = delete;

  ~thread_registry() {
    registry_gone = true;
    epoch_tls_cache = epoch_reader_cache{};
    for (auto& e : entries) {
      // The lock keeps the control block, and with it the record, alive
      // while we write to it; if it fails the domain and its records are
      // gone and there is nothing to release.
      if (auto c = e.control.lock()) {
        if (e.record->nesting == 0)
          epoch_domain::control::release(e.record);
        else
          e.record->orphan = true; // a guard outlives us: its unpin releases
      }
    }
  }
};

thread_registry& registry() {
  thread_local thread_registry r;
  return r;
}

} // namespace

// -- epoch_domain -------------------------------------------------------------

epoch_domain::epoch_domain()
  : id_(next_domain_id.fetch_add(1, std::memory_order_relaxed)),
    control_(std::make_shared<control>()) {
}

epoch_domain::~epoch_domain() {
  // No reader is pinned, so everything retired is unreachable. Deleters may
  // retire more, hence the loop.
  for (;;) {
    auto* fresh = retired_head_.exchange(nullptr, std::memory_order_acquire);
    while (fresh != nullptr) {
      auto* next = fresh->next;
      fresh->next = pending_;
      pending_ = fresh;
      fresh = next;
    }
    if (pending_ == nullptr)
      break;
    auto* n = std::exchange(pending_, nullptr);
    while (n != nullptr) {
      auto* next = n->next;
      n->deleter(n->object);
      delete n;
      n = next;
    }
  }
}

epoch_reader_record* epoch_domain::pin_slow() noexcept {
  if (registry_gone) {
    // Past this thread's registry: borrow a record for this outermost pin;
    // the matching unpin hands it back.
    auto* r = control_->acquire();
    r->orphan = true;
    return r;
  }
  auto& entries = registry().entries;
  epoch_reader_record* r = nullptr;
  for (auto& e : entries) {
    if (e.domain_id == id_) {
      r = e.record;
      break;
    }
  }
  if (r == nullptr) {
    // Forget domains that no longer exist, so that a thread creating many
    // short-lived domains keeps a short list.
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const registry_entry& e) {
                                   return e.control.expired();
                                 }),
                  entries.end());
    r = control_->acquire();
    entries.push_back(registry_entry{id_, control_, r});
  }
  epoch_tls_cache = epoch_reader_cache{id_, r};
  return r;
}

void epoch_domain::release_orphan(epoch_reader_record* r) noexcept {
  control::release(r);
}

void epoch_domain::retire(void* p, void (*deleter)(void*)) noexcept {
  if (p == nullptr)
    return;
  auto* n = new retired_node{p, deleter, 0, nullptr};
  // Fence FW: the caller's unlink precedes the epoch load in S (see top).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  n->epoch = global_epoch_.load(std::memory_order_relaxed);
  retired_count_.fetch_add(1, std::memory_order_relaxed);
  auto* h = retired_head_.load(std::memory_order_relaxed);
  do {
    n->next = h;
    // Release: the reclaimer that takes the list sees the node's fields.
  } while (!retired_head_.compare_exchange_weak(
    h, n, std::memory_order_release, std::memory_order_relaxed));
  if ((retire_calls_.fetch_add(1, std::memory_order_relaxed) & 63) == 63)
    reclaim();
}

std::size_t epoch_domain::reclaim() noexcept {
  // Test first so that callers racing for the flag do not bounce its line.
  if (reclaiming_.load(std::memory_order_relaxed)
      || reclaiming_.exchange(true, std::memory_order_acquire))
    return 0;
  // Adopt what was retired so far; acquire pairs with retire's release.
  auto* fresh = retired_head_.exchange(nullptr, std::memory_order_acquire);
  if (fresh != nullptr) {
    auto* tail = fresh;
    while (tail->next != nullptr)
      tail = tail->next;
    tail->next = pending_;
    pending_ = fresh;
  }
  // Only the flag holder writes the epoch; load it before fence FC.
  auto g = global_epoch_.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  bool lagging = false;
  for (auto* r = control_->head.load(std::memory_order_acquire); r != nullptr;
       r = r->next) {
    // Acquire pairs with the unpin's release store of `quiescent`.
    auto e = r->epoch.load(std::memory_order_acquire);
    if (e != epoch_reader_record::quiescent && e != g) {
      lagging = true;
      break;
    }
  }
  if (!lagging)
    global_epoch_.store(++g, std::memory_order_relaxed);
  auto freed = free_pending(g);
  reclaiming_.store(false, std::memory_order_release);
  return freed;
}

std::size_t epoch_domain::free_pending(std::uint64_t epoch) noexcept {
  // Unlink first, run deleters after: a deleter may retire, which only
  // touches the shared list, never `pending_`.
  retired_node* doomed = nullptr;
  retired_node** link = &pending_;
  while (*link != nullptr) {
    auto* n = *link;
    if (n->epoch + 2 <= epoch) {
      *link = n->next;
      n->next = doomed;
      doomed = n;
    } else {
      link = &n->next;
    }
  }
  std::size_t freed = 0;
  while (doomed != nullptr) {
    auto* next = doomed->next;
    doomed->deleter(doomed->object);
    delete doomed;
    doomed = next;
    ++freed;
  }
  retired_count_.fetch_sub(freed, std::memory_order_relaxed);
  return freed;
}

epoch_domain::reader_counters epoch_domain::sum_counters() const noexcept {
  reader_counters sum;
  for (auto* r = control_->head.load(std::memory_order_acquire); r != nullptr;
       r = r->next) {
    sum.snapshot_reads += r->snapshot_reads.load(std::memory_order_relaxed);
    sum.waited_reads += r->waited_reads.load(std::memory_order_relaxed);
  }
  return sum;
}

std::size_t epoch_domain::record_count() const noexcept {
  return control_->count.load(std::memory_order_relaxed);
}

} // namespace podref::detail
