// uid_table: pod uids interned as small integers for the manager's counts.
//
// Every reference count the manager keeps is per (object, pod uid). Storing
// the uid string in each object's counts costs an allocation and string
// compares per reference; interning it once per uid costs one lookup per
// registration. An id lives while anything holds it (acquire/retain ...
// release) and is then reused. Each id carries the counts of the objects
// its uid references (uid_refs), next to its text.
//
// The text of an id is not copied when a registration brings it: the entry
// views the uid inside the registration and holds a reference to it (one
// atomic increment instead of an allocation, a copy and a free per new pod),
// so the text lives exactly as long as the id, whatever happens to the pod
// that brought it. Uids from elsewhere (add_ref by name) are copied once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "podref/actors/detail/key_table.hpp"
#include "podref/actors/detail/ref_counts.hpp"
#include "podref/actors/detail/segmented_vector.hpp"
#include "podref/actors/detail/uid_refs.hpp"
#include "podref/messages/hashed_key.hpp"
#include "podref/messages/pod_registration.hpp"

namespace podref {

class uid_table {
public:
  uid_table() : index_(text_of{this}) {
    // nop
  }

  // The index views entries_ through this.
  uid_table(const uid_table&) = delete;
  uid_table& operator=(const uid_table&) = delete;

  /// The id of `reg`'s uid, interned if new (viewing `reg`'s text and
  /// holding `reg` meanwhile), with one more holder.
  uid_id acquire(const pod_registration_ptr& reg);

  /// The id of `uid`, interned if new (as a copy), with one more holder.
  uid_id acquire(hashed_key uid);

  /// One more holder of a live id.
  void retain(uid_id id) noexcept {
    ++entries_[id - 1].holders;
  }

  /// One holder less; the id is free once none is left.
  void release(uid_id id);

  /// The id of `uid`, or 0 if it is not interned.
  uid_id find(hashed_key uid) const {
    auto* id = index_.find(uid);
    return id == nullptr ? 0 : *id;
  }

  /// The uid of a live id.
  std::string_view text(uid_id id) const {
    return entries_[id - 1].text;
  }

  /// Counts one more reference of live `id` to `object`: refs(id).add,
  /// and retain(id) when the (object, id) count is new (each count holds
  /// its id). True iff it is new. One lookup of the entry for both.
  bool add_ref(uid_id id, object_id object) {
    auto& e = entries_[id - 1];
    if (!e.refs.add(object))
      return false;
    ++e.holders;
    return true;
  }

  /// Counts one reference of `id` to `object` less: refs(id).remove, and
  /// release(id) when that erased the count (the id may be freed).
  ref_counts::removal remove_ref(uid_id id, object_id object) {
    auto res = entries_[id - 1].refs.remove(object);
    if (res == ref_counts::removal::erased)
      release(id);
    return res;
  }

  /// The objects a live id references, with counts (changed only through
  /// add_ref and remove_ref, which keep each count's hold on its id).
  const uid_refs& refs(uid_id id) const noexcept {
    return entries_[id - 1].refs;
  }

  /// Calls f(id) for every live id, in no order.
  template <class F>
  void for_each(F&& f) const {
    for (auto id : index_)
      f(id);
  }

  /// Live ids.
  std::size_t size() const noexcept {
    return index_.size();
  }

  /// Asks the CPU to load where a lookup of `uid` starts.
  [[gnu::always_inline]] void prefetch(hashed_key uid) const noexcept {
    index_.prefetch(uid.hash);
  }

private:
  struct entry {
    std::string_view text;
    /// Owns the storage text views (a registration or a copy).
    std::shared_ptr<const void> owner;
    std::uint32_t holders = 0;
    uid_refs refs;
  };

  struct text_of {
    const uid_table* self;

    std::string_view operator()(uid_id id) const noexcept {
      return self->entries_[id - 1].text;
    }
  };

  /// A new id for `uid`, viewing storage `owner` keeps alive.
  uid_id intern(hashed_key uid, std::shared_ptr<const void> owner);

  /// Index id - 1 (entries never move: see segmented_vector).
  segmented_vector<entry> entries_;
  std::vector<uid_id> free_;
  key_table<uid_id, text_of> index_;
};

} // namespace podref
