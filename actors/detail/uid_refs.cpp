#include "podref/actors/detail/uid_refs.hpp"

#include <memory>
#include <new>
#include <utility>

namespace podref {

uid_refs& uid_refs::operator=(uid_refs&& other) noexcept {
  if (this != &other) {
    this->~uid_refs();
    new (this) uid_refs(std::move(other));
  }
  return *this;
}

bool uid_refs::add(object_id obj) {
  if (spilled_)
    return room_.big->add(obj);
  for (std::uint32_t i = 0; i < size_; ++i) {
    if (room_.small[i].obj == obj) {
      ++room_.small[i].count;
      return false;
    }
  }
  if (size_ < inline_capacity) {
    room_.small[size_++] = cell{obj, 1};
    return true;
  }
  // Spill: every inline entry moves to the table, with its count.
  auto big = std::make_unique<ref_counts>();
  for (std::uint32_t i = 0; i < size_; ++i)
    big->add(room_.small[i].obj, room_.small[i].count);
  size_ = 0;
  room_.big = big.release();
  spilled_ = true;
  return room_.big->add(obj);
}

ref_counts::removal uid_refs::remove(object_id obj) {
  if (spilled_)
    return room_.big->remove(obj);
  for (std::uint32_t i = 0; i < size_; ++i) {
    if (room_.small[i].obj != obj)
      continue;
    if (--room_.small[i].count > 0)
      return ref_counts::removal::decremented;
    room_.small[i] = room_.small[--size_];
    return ref_counts::removal::erased;
  }
  return ref_counts::removal::absent;
}

int uid_refs::count(object_id obj) const noexcept {
  if (spilled_)
    return room_.big->count(obj);
  for (std::uint32_t i = 0; i < size_; ++i)
    if (room_.small[i].obj == obj)
      return room_.small[i].count;
  return 0;
}

} // namespace podref
