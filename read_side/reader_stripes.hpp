// reader_stripes: copies of one snapshot's object whose reference counts
// different reader threads do not share.
//
// Problem: a read hands out an api_object, a std::shared_ptr copy, so every
// read increments (and its caller later decrements) the object's reference
// count. When two threads read the same objects, that count's cache line
// moves between their cores on nearly every read: at two threads it was
// about a quarter of a synced read's time, and one hot object read by every
// thread serialises them all on one line.
//
// Design: each thread picks a stripe once, the one the fewest live threads
// hold (a thread's exit gives its stripe back). Stripe 0 copies the object
// itself. Stripe i > 0 copies an alias made on the stripe's first read: an
// api_object pointing at the same object whose control block is a block of
// its own, starting a cache line, that also holds the alias (so a read
// loads one line for both) and a reference to the object. The alias refers
// to its own block; the stripes break that cycle when they are destroyed,
// and copies handed out keep the block, and so the object, alive. Up to
// `count` threads reading at once therefore write disjoint lines; beyond
// that, threads share stripes.
//
// Cost: a read on stripe i > 0 loads the block's first line instead of the
// object's control block; the first read on a stripe allocates one block
// (80 bytes), freed with the last copy after the snapshot. Unread stripes
// cost one null pointer each.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "podref/messages/api_object.hpp"

namespace podref::detail {

class reader_stripes {
public:
  /// Stripes per object, stripe 0 (the object itself) included.
  static constexpr std::size_t count = 8;

  reader_stripes() noexcept = default;

  /// A copy starts empty: the aliases are a cache, made again on demand.
  reader_stripes(const reader_stripes&) noexcept {
    // nop
  }

  /// Drops the aliases, which belong to the old object. Never on stripes
  /// that readers may see (a published snapshot is immutable).
  reader_stripes& operator=(const reader_stripes&) noexcept {
    clear();
    return *this;
  }

  ~reader_stripes() {
    clear();
  }

  /// The calling thread's stripe, in [0, count).
  static std::size_t this_thread_stripe() noexcept {
    if (stripe_plus_one_ == 0)
      stripe_plus_one_ = assign_stripe() + 1;
    return stripe_plus_one_ - 1;
  }

  /// A copy of `x`, the object these stripes belong to, that shares its
  /// reference count only with the calling thread's stripe. Any thread, at
  /// any time while the owner of the stripes lives (readers: under their
  /// pin). Falls back to copying `x` if an alias cannot be allocated.
  api_object copy(const api_object& x) const noexcept {
    auto s = this_thread_stripe();
    if (s == 0 || !x)
      return x;
    // Acquire pairs with install's release: the block is fully built.
    const block* b = blocks_[s - 1].load(std::memory_order_acquire);
    if (b == nullptr)
      b = install(s, x);
    return b != nullptr ? b->alias : x;
  }

private:
  /// One stripe's alias and the reference that keeps the object alive.
  struct block {
    /// Shares the control block this block lives in (a self-reference).
    api_object alias;
    api_object keep;
  };

  /// Makes stripe `s`'s block for `x`, or returns the one another thread of
  /// the stripe made first; null if allocation failed.
  const block* install(std::size_t s, const api_object& x) const noexcept;

  /// Drops a block's self-reference: it dies with the last copy out.
  static void release(const block* b) noexcept;

  static std::size_t assign_stripe() noexcept;

  void clear() noexcept;

  // Trivially constructible and destructible: no TLS guard on the read path.
  static inline thread_local std::uint32_t stripe_plus_one_ = 0;

  mutable std::atomic<const block*> blocks_[count - 1] = {};
};

} // namespace podref::detail
