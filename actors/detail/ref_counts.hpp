// ref_counts: counts per small nonzero id, id -> count.
//
// A flat open-addressing table (linear probing, backward-shift deletion;
// linear_probing.hpp) over interned ids: no allocation per reference, no
// string compare. The manager keeps its counts per pod uid (see uid_refs)
// and moves them here, keyed by object id, when a uid references more than
// a few objects; the table starts at four cells and doubles at half load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace podref {

/// An interned pod uid (see uid_table); 0 is never a valid id. ref_counts
/// counts any such nonzero id.
using uid_id = std::uint32_t;

class ref_counts {
public:
  ref_counts() = default;

  ref_counts(ref_counts&&) noexcept = default;
  ref_counts& operator=(ref_counts&&) noexcept = default;

  /// Adds `n` (> 0) references of `id`; returns true if `id` had none
  /// before.
  bool add(uid_id id, std::int32_t n = 1);

  enum class removal {
    absent,      // `id` held no reference: nothing changed
    decremented, // `id` keeps at least one
    erased,      // that was the last reference of `id`
  };

  /// Drops one reference of `id`.
  removal remove(uid_id id);

  /// The count of `id` (0 if none).
  int count(uid_id id) const noexcept;

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

  static bool empty_cell(const cell& c) noexcept {
    return c.id == 0;
  }

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
