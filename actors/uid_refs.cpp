#include "podref/actors/uid_refs.hpp"

namespace podref {

bool uid_refs::add(object_id obj) {
  if (!big_.empty())
    return big_.add(obj);
  for (std::uint32_t i = 0; i < size_; ++i) {
    if (small_[i].obj == obj) {
      ++small_[i].count;
      return false;
    }
  }
  if (size_ < inline_capacity) {
    small_[size_++] = cell{obj, 1};
    return true;
  }
  // Spill: every inline entry moves to the table, with its count.
  for (std::uint32_t i = 0; i < size_; ++i)
    big_.add(small_[i].obj, small_[i].count);
  size_ = 0;
  return big_.add(obj);
}

ref_counts::removal uid_refs::remove(object_id obj) {
  if (!big_.empty())
    return big_.remove(obj);
  for (std::uint32_t i = 0; i < size_; ++i) {
    if (small_[i].obj != obj)
      continue;
    if (--small_[i].count > 0)
      return ref_counts::removal::decremented;
    small_[i] = small_[--size_];
    return ref_counts::removal::erased;
  }
  return ref_counts::removal::absent;
}

int uid_refs::count(object_id obj) const noexcept {
  if (!big_.empty())
    return big_.count(obj);
  for (std::uint32_t i = 0; i < size_; ++i)
    if (small_[i].obj == obj)
      return small_[i].count;
  return 0;
}

} // namespace podref
