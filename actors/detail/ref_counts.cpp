#include "podref/actors/detail/ref_counts.hpp"

#include <utility>

namespace podref {

std::size_t ref_counts::find(uid_id id) const noexcept {
  if (capacity_ == 0)
    return capacity_;
  for (auto i = home(id);; i = (i + 1) & (capacity_ - 1)) {
    if (cells_[i].id == id)
      return i;
    if (cells_[i].id == 0)
      return capacity_; // at most half the cells are used: this terminates
  }
}

int ref_counts::count(uid_id id) const noexcept {
  auto i = find(id);
  return i == capacity_ ? 0 : cells_[i].count;
}

bool ref_counts::add(uid_id id, std::int32_t n) {
  if (auto i = find(id); i != capacity_) {
    cells_[i].count += n;
    return false;
  }
  if (2 * (size_ + 1) > capacity_)
    grow();
  auto i = home(id);
  while (cells_[i].id != 0)
    i = (i + 1) & (capacity_ - 1);
  cells_[i] = cell{id, n};
  ++size_;
  return true;
}

ref_counts::removal ref_counts::remove(uid_id id) {
  auto i = find(id);
  if (i == capacity_)
    return removal::absent;
  if (--cells_[i].count > 0)
    return removal::decremented;
  // Backward-shift deletion: pull later cells of the probe run into the hole
  // when their home lies at or before it, so no tombstones are needed.
  auto mask = capacity_ - 1;
  auto hole = i;
  for (auto j = (i + 1) & mask; cells_[j].id != 0; j = (j + 1) & mask) {
    auto h = home(cells_[j].id);
    // Cell j may move to the hole iff its home is not in (hole, j].
    bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (!stays) {
      cells_[hole] = cells_[j];
      hole = j;
    }
  }
  cells_[hole] = cell{0, 0};
  --size_;
  return removal::erased;
}

void ref_counts::grow() {
  auto old = std::move(cells_);
  auto old_capacity = capacity_;
  capacity_ = old_capacity == 0 ? 4 : 2 * old_capacity;
  cells_ = std::make_unique<cell[]>(capacity_);
  for (std::size_t k = 0; k < old_capacity; ++k) {
    if (old[k].id == 0)
      continue;
    auto i = home(old[k].id);
    while (cells_[i].id != 0)
      i = (i + 1) & (capacity_ - 1);
    cells_[i] = old[k];
  }
}

} // namespace podref
