#include "podref/actors/uid_table.hpp"

namespace podref {

uid_id uid_table::acquire(hashed_key uid) {
  if (auto i = index_.find(uid); i != index_.end()) {
    ++entries_[i->second - 1].holders;
    return i->second;
  }
  uid_id id;
  if (free_.empty()) {
    entries_.emplace_back();
    id = static_cast<uid_id>(entries_.size());
  } else {
    id = free_.back();
    free_.pop_back();
  }
  auto& e = entries_[id - 1];
  e.text.assign(uid.text);
  e.hash = uid.hash;
  e.holders = 1;
  index_.emplace(hashed_key{e.text, e.hash}, id);
  return id;
}

void uid_table::retain(uid_id id) noexcept {
  ++entries_[id - 1].holders;
}

void uid_table::release(uid_id id) {
  auto& e = entries_[id - 1];
  if (--e.holders > 0)
    return;
  index_.erase(hashed_key{e.text, e.hash});
  // Keep the buffer for the next uid; only the view is gone.
  e.text.clear();
  free_.push_back(id);
}

uid_id uid_table::find(hashed_key uid) const {
  auto i = index_.find(uid);
  return i == index_.end() ? 0 : i->second;
}

} // namespace podref
