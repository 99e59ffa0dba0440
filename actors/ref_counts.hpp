// ref_counts: one object's reference counts, pod uid id -> count.
//
// The manager keeps one per referenced object and touches it on every
// registration, so it is a flat open-addressing table (linear probing,
// backward-shift deletion) over interned uid ids: no allocation per
// reference, no string compare. Typical objects have a handful of pods; the
// table starts at four cells and doubles at half load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace podref {

/// An interned pod uid (see uid_table); 0 is never a valid id.
using uid_id = std::uint32_t;

class ref_counts {
public:
  ref_counts() = default;

  ref_counts(ref_counts&&) noexcept = default;
  ref_counts& operator=(ref_counts&&) noexcept = default;

  /// Adds one reference of `id`; returns true if `id` had none before.
  bool add(uid_id id);

  enum class removal {
    absent,      // `id` held no reference: nothing changed
    decremented, // `id` keeps at least one
    erased,      // that was the last reference of `id`
  };

  /// Drops one reference of `id`.
  removal remove(uid_id id);

  /// The count of `id` (0 if none).
  int count(uid_id id) const noexcept;

  /// Asks the CPU to load the cell where a lookup of `id` starts: an
  /// object referenced by many pods has a table too large to stay cached.
  void prefetch(uid_id id) const noexcept {
    if (capacity_ != 0)
      __builtin_prefetch(&cells_[home(id)]);
  }

  /// Distinct uids with at least one reference.
  std::size_t size() const noexcept {
    return size_;
  }

  bool empty() const noexcept {
    return size_ == 0;
  }

  /// Calls f(id, count) for every uid with references, in no order.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (cells_[i].id != 0)
        f(cells_[i].id, cells_[i].count);
  }

private:
  /// No initialisers: a value-initialised array is zeroed with memset.
  struct cell {
    uid_id id; // 0: empty
    std::int32_t count;
  };

  std::size_t home(uid_id id) const noexcept {
    // Fibonacci hashing: ids are small dense integers.
    return (static_cast<std::uint64_t>(id) * 0x9e3779b97f4a7c15u >> 32)
           & (capacity_ - 1);
  }

  /// The cell holding `id`, or capacity_ if none.
  std::size_t find(uid_id id) const noexcept;

  void grow();

  std::unique_ptr<cell[]> cells_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
};

} // namespace podref
