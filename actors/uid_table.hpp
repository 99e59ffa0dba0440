// uid_table: pod uids interned as small integers for the manager's counts.
//
// Every reference count the manager keeps is per (object, pod uid). Storing
// the uid string in each object's counts costs an allocation and string
// compares per reference; interning it once per uid costs one lookup per
// registration. An id lives while anything holds it (acquire/retain ...
// release) and is then reused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "podref/actors/ref_counts.hpp"
#include "podref/messages/hashed_key.hpp"

namespace podref {

class uid_table {
public:
  /// The id of `uid`, interned if new, with one more holder.
  uid_id acquire(hashed_key uid);

  /// One more holder of a live id.
  void retain(uid_id id) noexcept;

  /// One holder less; the id is free once none is left.
  void release(uid_id id);

  /// The id of `uid`, or 0 if it is not interned.
  uid_id find(hashed_key uid) const;

  /// The uid of a live id.
  const std::string& text(uid_id id) const {
    return entries_[id - 1].text;
  }

  /// Live ids.
  std::size_t size() const noexcept {
    return index_.size();
  }

private:
  struct entry {
    std::string text;
    std::size_t hash = 0;
    std::uint32_t holders = 0;
  };

  /// Index id - 1; a deque keeps the strings the index views in place.
  std::deque<entry> entries_;
  std::vector<uid_id> free_;
  hashed_map<uid_id> index_;
};

} // namespace podref
