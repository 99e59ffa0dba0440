// A string-keyed hash index with one writer and lock-free readers.
//
// Problem: every "get synced object" call looks a key up in an index that an
// actor owns and changes. Any write a lookup makes to memory that all readers
// share (a lock word, a reference count) caps throughput as soon as two
// threads read, so lookups here write nothing at all.
//
// Design: open addressing with linear probing over an array of atomic slot
// pointers; erased cells become tombstones. The table never fills beyond half
// its cells (tombstones included); past that the writer builds a fresh table
// without tombstones, publishes it with one atomic store and retires the old
// one through the epoch domain. The index keeps one std::shared_ptr per
// entry; erase hands that reference to the domain, so a slot found by a
// pinned reader stays valid until the reader unpins.
//
// Guarantees: `find` is wait-free in practice (it stops at the first empty
// cell, and at least half the cells are empty), takes no lock and writes no
// shared memory. A find that starts after a write has completed (happens
// after it) sees it; one that races with a write sees either state.
//
// Cost: a find is one acquire load of the table, the probe, one hash compare
// and on a match one key compare. Inserts are amortised O(1) with an O(n)
// rebuild now and then; each erase allocates one small node for the deferred
// release. Slots may be destroyed on whichever thread runs the reclaim.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "podref/messages/text_hash.hpp"
#include "podref/read_side/epoch.hpp"

namespace podref::detail {

/// The hash of the index key `ns + '/' + name`, computed from the parts:
/// readers look objects up without building the joined key. Equal to
/// `hash_key(ns + "/" + name)` whenever `ns` holds no '/' (namespaces never
/// do). hash_text of the pair (messages/text_hash.hpp): not keyed, do not
/// expose it to adversarial collisions.
inline std::size_t hash_key(std::string_view ns,
                            std::string_view name) noexcept {
  return hash_text(ns, name);
}

/// The hash of a string key. A key "ns/name" hashes as its two parts around
/// the first '/' (see the two-argument form); a key without '/' as a whole.
inline std::size_t hash_key(std::string_view key) noexcept {
  auto sep = key.find('/');
  if (sep == std::string_view::npos)
    return hash_text(key);
  return hash_text(key.substr(0, sep), key.substr(sep + 1));
}

/// Maps string keys to slots. `Slot` provides `const std::string& key() const`
/// and `std::size_t hash() const`, both fixed for the slot's lifetime; by
/// convention `hash()` is `hash_key(key())`, and callers of `find`, `find_if`
/// and `erase` pass the same function's value.
///
/// One writer: `insert`, `erase`, `size`, `capacity`, `for_each` and the
/// destructor must not run concurrently with each other (an actor's
/// serialised calls qualify, whatever threads they run on). Any number of
/// readers call `find` concurrently with the writer.
template <class Slot>
class snapshot_index {
public:
  /// An index for `d`'s readers, sized to hold `initial_capacity` entries
  /// before its first rebuild. It never shrinks below that size.
  explicit snapshot_index(epoch_domain& d, std::size_t initial_capacity = 64)
    : domain_(d), min_cells_(cells_for(initial_capacity)) {
    table_.store(new table(min_cells_), std::memory_order_relaxed);
  }

  snapshot_index(const snapshot_index&) = delete;
  snapshot_index& operator=(const snapshot_index&) = delete;

  /// Drops the index's references to its slots. Precondition: no reader is
  /// in `find`. Tables and references retired earlier stay with the domain.
  ~snapshot_index() {
    delete table_.load(std::memory_order_relaxed);
  }

  /// The slot with `key`, or null. `hash` must be `hash_key(key)` (the value
  /// the slot's `hash()` returns). Reader side: call under a guard of this
  /// index's domain; the result stays valid until that guard is released.
  Slot* find(std::string_view key, std::size_t hash) const noexcept {
    return find_if(hash, [key](const Slot& s) { return s.key() == key; });
  }

  /// The slot whose `hash()` is `hash` and for which `match(slot)` holds, or
  /// null: a lookup by a key the caller holds in pieces (see
  /// object_slot::matches). `match` must not throw. Reader side, as `find`.
  template <class Match>
  Slot* find_if(std::size_t hash, Match&& match) const noexcept {
    // Acquire pairs with the release that published the table: its cells
    // as filled by the rebuild are visible.
    const table* t = table_.load(std::memory_order_acquire);
    const std::size_t mask = t->mask;
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
      // Acquire pairs with insert's release store: the slot's key and hash
      // are visible.
      Slot* s = t->cells[i].load(std::memory_order_acquire);
      if (s == nullptr)
        return nullptr;
      if (s != tombstone() && s->hash() == hash && match(*s))
        return s;
    }
  }

  /// Adds `s` (not null). Returns false, leaving the index unchanged, if its
  /// key is present. Writer side. Throws std::bad_alloc if a rebuild cannot
  /// allocate; the index is then unchanged.
  bool insert(std::shared_ptr<Slot> s) {
    assert(s != nullptr);
    const std::size_t h = s->hash();
    table* t = table_.load(std::memory_order_relaxed);
    std::size_t target = no_cell;
    std::size_t i = h & t->mask;
    for (;; i = (i + 1) & t->mask) {
      Slot* c = t->cells[i].load(std::memory_order_relaxed);
      if (c == nullptr)
        break;
      if (c == tombstone()) {
        if (target == no_cell)
          target = i;
      } else if (c->hash() == h && c->key() == s->key()) {
        return false;
      }
    }
    if (target == no_cell) {
      // Taking an empty cell: keep used cells (live and tombstones) at most
      // half of all cells, so that every probe meets an empty cell soon.
      if ((used_ + 1) * 2 > t->mask + 1) {
        t = rebuild(live_ + 1);
        target = empty_cell(*t, h);
      } else {
        target = i;
      }
      ++used_;
    }
    Slot* raw = s.get();
    t->owners[target] = std::move(s);
    // Release: a reader that loads `raw` sees the slot fully constructed.
    t->cells[target].store(raw, std::memory_order_release);
    ++live_;
    return true;
  }

  /// Removes the slot with `key` and returns it, or null if absent. `hash`
  /// as for `find`. The index's own reference is released through the domain
  /// after a grace period, so readers that found the slot keep a valid
  /// pointer until they unpin. Writer side. Throws std::bad_alloc (index
  /// unchanged) if the deferred release cannot be recorded.
  std::shared_ptr<Slot> erase(std::string_view key, std::size_t hash) {
    table* t = table_.load(std::memory_order_relaxed);
    for (std::size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
      Slot* c = t->cells[i].load(std::memory_order_relaxed);
      if (c == nullptr)
        return nullptr;
      if (c == tombstone() || c->hash() != hash || c->key() != key)
        continue;
      // Allocate the deferred reference before unlinking, so that a failure
      // leaves the index as it was.
      auto deferred = std::make_unique<std::shared_ptr<Slot>>(t->owners[i]);
      auto result = std::move(t->owners[i]);
      // Relaxed suffices: retire's fence orders this unlink before the
      // retire's epoch tag (see epoch.cpp).
      t->cells[i].store(tombstone(), std::memory_order_relaxed);
      --live_;
      domain_.retire(deferred.release());
      return result;
    }
  }

  /// Number of entries. Writer side.
  std::size_t size() const noexcept {
    return live_;
  }

  /// Number of cells of the current table. Writer side.
  std::size_t capacity() const noexcept {
    return table_.load(std::memory_order_relaxed)->mask + 1;
  }

  /// Calls `f(Slot&)` for every entry, in no particular order. Writer side;
  /// `f` must not change the index.
  template <class F>
  void for_each(F&& f) const {
    const table* t = table_.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i <= t->mask; ++i)
      if (t->owners[i] != nullptr)
        f(*t->owners[i]);
  }

private:
  static constexpr std::size_t no_cell = ~std::size_t{0};
  static constexpr std::size_t min_table_cells = 8;

  /// Cells, immutable after publication except for the cell values. The
  /// owners array parallels the cells and is touched by the writer only.
  struct table {
    explicit table(std::size_t n)
      : mask(n - 1),
        cells(new std::atomic<Slot*>[n]),
        owners(new std::shared_ptr<Slot>[n]) {
      for (std::size_t i = 0; i < n; ++i)
        cells[i].store(nullptr, std::memory_order_relaxed);
    }

    const std::size_t mask;
    const std::unique_ptr<std::atomic<Slot*>[]> cells;
    const std::unique_ptr<std::shared_ptr<Slot>[]> owners;
  };

  /// A distinct address that no slot has, marking erased cells.
  static Slot* tombstone() noexcept {
    alignas(Slot) static unsigned char marker[sizeof(Slot)];
    return reinterpret_cast<Slot*>(marker);
  }

  /// Smallest power of two >= 2 * entries (load factor 0.5) and >= 8.
  static std::size_t cells_for(std::size_t entries) noexcept {
    std::size_t n = min_table_cells;
    while (n / 2 < entries)
      n *= 2;
    return n;
  }

  static std::size_t empty_cell(const table& t, std::size_t hash) noexcept {
    std::size_t i = hash & t.mask;
    while (t.cells[i].load(std::memory_order_relaxed) != nullptr)
      i = (i + 1) & t.mask;
    return i;
  }

  /// Builds a table without tombstones that holds `entries` at a load factor
  /// of at most 1/4 (so the next rebuild is at least a quarter table away),
  /// publishes it and retires the old one. Returns the new table.
  table* rebuild(std::size_t entries) {
    std::size_t n = min_cells_;
    while (n / 4 < entries)
      n *= 2;
    auto fresh = std::make_unique<table>(n);
    table* old = table_.load(std::memory_order_relaxed);
    std::size_t moved = 0;
    for (std::size_t i = 0; i <= old->mask; ++i) {
      if (old->owners[i] == nullptr)
        continue;
      Slot* s = old->owners[i].get();
      auto j = empty_cell(*fresh, s->hash());
      fresh->cells[j].store(s, std::memory_order_relaxed);
      fresh->owners[j] = std::move(old->owners[i]);
      ++moved;
    }
    // Readers still probing `old` find the same slots there; the references
    // now live in `fresh`, so an erase after this retires them as usual.
    table* t = fresh.release();
    // Release: a reader that loads `t` sees the cells stored above.
    table_.store(t, std::memory_order_release);
    used_ = moved;
    domain_.retire(old);
    return t;
  }

  epoch_domain& domain_;
  const std::size_t min_cells_;

  // Loaded by every find; stored only by a rebuild. Kept apart from the
  // writer's counters so that inserts do not invalidate readers' copies.
  alignas(64) std::atomic<table*> table_{nullptr};

  // Writer only.
  alignas(64) std::size_t live_ = 0;
  std::size_t used_ = 0;
};

} // namespace podref::detail
