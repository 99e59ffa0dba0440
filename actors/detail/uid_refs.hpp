// uid_refs: the objects one pod uid references, with a count per object.
//
// Upstream counts references per (object, pod uid). Kept per object (uid ->
// count), every registration would touch a random cell of each referenced
// object's table, a table that grows with the pods (measured: the largest
// manager cost per registration, cache misses and rehashes). Kept per uid,
// a registration's counts sit next to its uid, which
// the registration has just interned: a pod with a handful of references
// finds them in one cache line, with no allocation. An object only keeps how
// many uids reference it.
//
// Up to four objects live inline, searched linearly; past that, all of them
// move to a ref_counts table (object ids play the uids' part there), so a pod
// with thousands of references stays linear overall.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "podref/actors/detail/ref_counts.hpp"

namespace podref {

/// A referenced object's id in the manager: nonzero, stable while the
/// object is referenced, reused afterwards.
using object_id = std::uint32_t;

class uid_refs {
public:
  uid_refs() noexcept {
    // nop
  }

  /// Moves are a copy of 40 bytes: the uid table's vector moves every
  /// entry when it grows.
  uid_refs(uid_refs&& other) noexcept
    : size_(other.size_), spilled_(other.spilled_) {
    std::memcpy(&room_, &other.room_, sizeof(room_));
    other.size_ = 0;
    other.spilled_ = false;
  }

  uid_refs& operator=(uid_refs&& other) noexcept;

  uid_refs(const uid_refs&) = delete;
  uid_refs& operator=(const uid_refs&) = delete;

  ~uid_refs() {
    if (spilled_)
      delete room_.big;
  }

  /// Adds one reference to `obj`; true if `obj` had none before.
  bool add(object_id obj);

  /// Drops one reference to `obj`.
  ref_counts::removal remove(object_id obj);

  /// The count of `obj` (0 if none).
  int count(object_id obj) const noexcept;

  /// Distinct objects with at least one reference.
  std::size_t size() const noexcept {
    return spilled_ ? room_.big->size() : size_;
  }

  bool empty() const noexcept {
    return size() == 0;
  }

  /// Calls f(obj, count) for every object with references, in no order.
  template <class F>
  void for_each(F&& f) const {
    if (spilled_) {
      room_.big->for_each(f);
      return;
    }
    for (std::uint32_t i = 0; i < size_; ++i)
      f(room_.small[i].obj, room_.small[i].count);
  }

private:
  static constexpr std::uint32_t inline_capacity = 4;

  struct cell {
    object_id obj;
    std::int32_t count;
  };

  /// The uid table keeps one of these per uid: 40 bytes, the spilled table
  /// sharing the inline cells' room. Once spilled, it stays so.
  union room {
    cell small[inline_capacity]; // [0, size_) used while !spilled_
    ref_counts* big;             // owned while spilled_
  } room_;
  std::uint32_t size_ = 0;
  bool spilled_ = false;
};

} // namespace podref
