#include "podref/actors/detail/ref_counts.hpp"

#include <utility>

#include "podref/actors/detail/linear_probing.hpp"

namespace podref {

std::size_t ref_counts::find(uid_id id) const noexcept {
  if (capacity_ == 0)
    return capacity_;
  for (auto i = home(id);; i = detail::next_cell(i, capacity_ - 1)) {
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
  cells_[detail::first_empty(cells_.get(), capacity_ - 1, home(id),
                             empty_cell)] = cell{id, n};
  ++size_;
  return true;
}

ref_counts::removal ref_counts::remove(uid_id id) {
  auto i = find(id);
  if (i == capacity_)
    return removal::absent;
  if (--cells_[i].count > 0)
    return removal::decremented;
  detail::erase_cell(cells_.get(), capacity_ - 1, i, empty_cell,
                     [this](const cell& c) { return home(c.id); });
  --size_;
  return removal::erased;
}

void ref_counts::grow() {
  auto old = std::move(cells_);
  auto old_capacity = capacity_;
  capacity_ = old_capacity == 0 ? 4 : 2 * old_capacity;
  cells_ = std::make_unique<cell[]>(capacity_);
  for (std::size_t k = 0; k < old_capacity; ++k)
    if (!empty_cell(old[k]))
      cells_[detail::first_empty(cells_.get(), capacity_ - 1,
                                 home(old[k].id), empty_cell)] = old[k];
}

} // namespace podref
