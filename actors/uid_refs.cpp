#include "podref/actors/uid_refs.hpp"

#include <memory>
#include <new>
#include <utility>

namespace podref {

uid_refs::uid_refs(uid_refs&& other) noexcept
  : size_(other.size_), spilled_(other.spilled_) {
  if (spilled_)
    big_ = other.big_;
  else
    for (std::uint32_t i = 0; i < size_; ++i)
      small_[i] = other.small_[i];
  other.size_ = 0;
  other.spilled_ = false;
}

uid_refs& uid_refs::operator=(uid_refs&& other) noexcept {
  if (this != &other) {
    this->~uid_refs();
    new (this) uid_refs(std::move(other));
  }
  return *this;
}

uid_refs::~uid_refs() {
  if (spilled_)
    delete big_;
}

bool uid_refs::add(object_id obj) {
  if (spilled_)
    return big_->add(obj);
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
  auto big = std::make_unique<ref_counts>();
  for (std::uint32_t i = 0; i < size_; ++i)
    big->add(small_[i].obj, small_[i].count);
  size_ = 0;
  big_ = big.release();
  spilled_ = true;
  return big_->add(obj);
}

ref_counts::removal uid_refs::remove(object_id obj) {
  if (spilled_)
    return big_->remove(obj);
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
  if (spilled_)
    return big_->count(obj);
  for (std::uint32_t i = 0; i < size_; ++i)
    if (small_[i].obj == obj)
      return small_[i].count;
  return 0;
}

} // namespace podref
