// Epoch-based memory reclamation (EBR) for lock-free readers.
//
// Problem: a writer unlinks an object from a shared structure while readers
// that found it a moment earlier may still be looking at it. The writer hands
// the object to `retire` instead of freeing it; the domain frees it once no
// reader can still hold it.
//
// Guarantees: an object retired while some thread holds a guard obtained
// before the retire is not freed until that guard is gone. A reader's pin
// writes only to the calling thread's own cache-line-sized record (no shared
// line is written on the read path), takes no lock and, after the thread's
// first pin in a domain, allocates nothing.
//
// Cost: one thread-local lookup and one full fence (`mfence` on x86-64) per
// outermost pin; nested pins only bump a thread-private counter. Retire
// allocates one small node and issues one fence. Every 64th retire runs
// `reclaim`, which scans all reader records (at most one per thread alive and
// pinning at the same time; records of exited threads are reused). An object
// is freed by the second epoch advance after its retire, and a reader that
// stays pinned holds the epoch back, so memory stays bounded only while
// readers keep their pins short.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace podref::detail {

/// A thread's reader state in one domain, alone on its cache line. Only the
/// owning thread writes `epoch`, `nesting`, `orphan` and the counters; the
/// reclaimer and `sum_counters` only read them.
struct alignas(64) epoch_reader_record {
  /// Value of `epoch` while not pinned.
  static constexpr std::uint64_t quiescent = ~std::uint64_t{0};
  /// The global epoch seen by the outermost pin, or `quiescent`.
  std::atomic<std::uint64_t> epoch{quiescent};
  /// Reads served from a synced snapshot (owner-only increments).
  std::atomic<std::uint64_t> snapshot_reads{0};
  /// Reads that had to wait for a sync (owner-only increments).
  std::atomic<std::uint64_t> waited_reads{0};
  /// Pin depth of the owning thread.
  std::uint32_t nesting = 0;
  /// Set when the owning thread's registry is gone: the outermost unpin then
  /// hands the record back to the domain.
  bool orphan = false;
  /// Claimed by a thread; cleared when the thread lets go of it.
  std::atomic<bool> in_use{false};
  /// Next record of the domain; immutable once the record is published.
  epoch_reader_record* next = nullptr;
};

/// One-entry per-thread cache from domain id to record, trivially
/// destructible so that the read path reaches it without a TLS guard.
struct epoch_reader_cache {
  std::uint64_t domain_id = 0;
  epoch_reader_record* record = nullptr;
};

static_assert(std::is_trivially_destructible_v<epoch_reader_cache>,
              "the read path must reach the cache without a TLS guard");

/// The calling thread's cache entry (last domain pinned).
inline thread_local epoch_reader_cache epoch_tls_cache{};

/// An EBR domain: readers pin, writers retire, anyone reclaims.
class epoch_domain {
public:
  /// RAII pin. While any guard obtained before a retire is alive, the retired
  /// object is not freed. Move-only; must be destroyed on the thread that
  /// created it. A default-constructed guard pins nothing.
  class guard {
  public:
    guard() noexcept = default;

    guard(guard&& other) noexcept : record_(other.record_) {
      other.record_ = nullptr;
    }

    guard& operator=(guard&& other) noexcept {
      if (this != &other) {
        release();
        record_ = other.record_;
        other.record_ = nullptr;
      }
      return *this;
    }

    guard(const guard&) = delete;
    guard& operator=(const guard&) = delete;

    ~guard() {
      release();
    }

    /// True while this guard holds a pin.
    explicit operator bool() const noexcept {
      return record_ != nullptr;
    }

    /// Counts one read served from a snapshot, in this thread's record.
    /// Precondition: the guard holds a pin.
    void count_snapshot_read() noexcept {
      bump(record_->snapshot_reads);
    }

    /// Counts one read that waited, in this thread's record.
    /// Precondition: the guard holds a pin.
    void count_waited_read() noexcept {
      bump(record_->waited_reads);
    }

  private:
    friend class epoch_domain;

    explicit guard(epoch_reader_record* r) noexcept : record_(r) {
    }

    // Only the owner writes the counter, so a relaxed load and store is a
    // race-free increment without a locked instruction; the summing thread
    // reads whole values.
    static void bump(std::atomic<std::uint64_t>& c) noexcept {
      c.store(c.load(std::memory_order_relaxed) + 1,
              std::memory_order_relaxed);
    }

    void release() noexcept {
      if (record_ != nullptr) {
        unpin(record_);
        record_ = nullptr;
      }
    }

    epoch_reader_record* record_ = nullptr;
  };

  /// Per-thread read counters, summed over records.
  struct reader_counters {
    std::uint64_t snapshot_reads = 0;
    std::uint64_t waited_reads = 0;
  };

  /// Creates a domain with a fresh, never reused id.
  epoch_domain();

  /// Frees everything still retired (deleters may retire more; those are
  /// freed too). Precondition: no thread is pinned and no call on this
  /// domain runs concurrently. Threads that pinned here may outlive it.
  ~epoch_domain();

  epoch_domain(const epoch_domain&) = delete;
  epoch_domain& operator=(const epoch_domain&) = delete;

  /// Pins the calling thread; any thread. Lock-free, and allocation-free
  /// after the thread's first pin in this domain (that first pin terminates
  /// the process if it cannot allocate the thread's record). Nests.
  [[nodiscard]] guard pin() noexcept {
    epoch_reader_cache& c = epoch_tls_cache;
    epoch_reader_record* r = c.domain_id == id_ ? c.record : pin_slow();
    if (r->nesting++ == 0) {
      // Announce the epoch, then a full fence: a reclaimer whose scan misses
      // this store orders its fence before ours, so everything unlinked
      // before that reclaimer's advance is invisible to our later loads (see
      // epoch.cpp for the full argument).
      r->epoch.store(global_epoch_.load(std::memory_order_relaxed),
                     std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    return guard{r};
  }

  /// Hands `p` to the domain; `deleter(p)` runs once no reader pinned before
  /// now can hold it. Precondition: `p` is unreachable for readers that pin
  /// from now on. Any thread, concurrently. Every 64th call runs `reclaim`.
  /// `deleter` must not throw; it may call `retire` again. Allocates one
  /// node (terminates the process if that fails). A null `p` is ignored.
  void retire(void* p, void (*deleter)(void*)) noexcept;

  /// Retires `p`, to be destroyed with `delete`.
  template <class T>
  void retire(T* p) noexcept {
    retire(const_cast<void*>(static_cast<const void*>(p)), &delete_as<T>);
  }

  /// Advances the epoch if every pinned reader has seen the current one, then
  /// frees every item retired at least two epochs ago. Any thread; only one
  /// reclaims at a time, concurrent callers return 0 at once. Returns the
  /// number of items freed.
  std::size_t reclaim() noexcept;

  /// Items retired and not yet freed.
  std::size_t retired_count() const noexcept {
    return retired_count_.load(std::memory_order_relaxed);
  }

  /// Sum of the counters of all records, including records of threads that
  /// have exited.
  reader_counters sum_counters() const noexcept;

  /// Reader records allocated so far (one per thread pinned at the same
  /// time; records of exited threads are reused).
  std::size_t record_count() const noexcept;

  /// The current global epoch (diagnostics and tests).
  std::uint64_t current_epoch() const noexcept {
    return global_epoch_.load(std::memory_order_relaxed);
  }

  /// The id that keys this domain in per-thread caches; never reused.
  std::uint64_t id() const noexcept {
    return id_;
  }

  /// The records and their release outlive the domain while an exiting
  /// thread still references them (defined in epoch.cpp).
  struct control;

private:
  struct retired_node;

  template <class T>
  static void delete_as(void* p) noexcept {
    delete static_cast<T*>(p);
  }

  static void unpin(epoch_reader_record* r) noexcept {
    if (--r->nesting == 0) {
      // Release: our reads of retired objects happen before a reclaimer that
      // sees `quiescent` (acquire) frees them.
      r->epoch.store(epoch_reader_record::quiescent,
                     std::memory_order_release);
      if (r->orphan)
        release_orphan(r);
    }
  }

  static void release_orphan(epoch_reader_record* r) noexcept;

  epoch_reader_record* pin_slow() noexcept;

  std::size_t free_pending(std::uint64_t epoch) noexcept;

  // Read by every pin; written only by an advancing reclaimer.
  alignas(64) const std::uint64_t id_;
  std::atomic<std::uint64_t> global_epoch_{1};
  std::shared_ptr<control> control_;

  // Written by retiring threads.
  alignas(64) std::atomic<retired_node*> retired_head_{nullptr};
  std::atomic<std::size_t> retired_count_{0};
  std::atomic<std::uint64_t> retire_calls_{0};

  // Owned by the thread holding `reclaiming_`.
  alignas(64) std::atomic<bool> reclaiming_{false};
  retired_node* pending_ = nullptr;
};

} // namespace podref::detail
