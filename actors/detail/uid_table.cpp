#include "podref/actors/detail/uid_table.hpp"

#include <string>
#include <utility>

namespace podref {

uid_id uid_table::acquire(const pod_registration_ptr& reg) {
  auto uid = reg->uid_key();
  if (auto* id = index_.find(uid)) {
    ++entries_[*id - 1].holders;
    return *id;
  }
  return intern(uid, reg);
}

uid_id uid_table::acquire(hashed_key uid) {
  if (auto* id = index_.find(uid)) {
    ++entries_[*id - 1].holders;
    return *id;
  }
  auto copy = std::make_shared<const std::string>(uid.text);
  uid.text = *copy;
  return intern(uid, std::move(copy));
}

uid_id uid_table::intern(hashed_key uid, std::shared_ptr<const void> owner) {
  uid_id id;
  if (free_.empty()) {
    entries_.emplace_back();
    id = static_cast<uid_id>(entries_.size());
  } else {
    id = free_.back();
    free_.pop_back();
  }
  auto& e = entries_[id - 1];
  e.text = uid.text;
  e.owner = std::move(owner);
  e.holders = 1;
  index_.insert(uid.hash, id);
  return id;
}

void uid_table::release(uid_id id) {
  auto& e = entries_[id - 1];
  if (--e.holders > 0)
    return;
  // The hash is not kept (a uid's entry is per pod): every key of the index
  // was hashed with hash_text.
  index_.erase(
    index_.find_if(hash_text(e.text), [id](uid_id x) { return x == id; }));
  e.text = std::string_view{};
  e.owner.reset();
  e.refs = uid_refs{}; // empty (each count held the id); frees a spilled table
  free_.push_back(id);
}

} // namespace podref
