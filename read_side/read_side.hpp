// read_side: everything one manager shares with the threads that read.
//
// The manager actor is the only writer of `index` and `stamp`; each
// reflector is the only writer of its slot's snapshot; readers pin `domain`
// and look up without locks.
// Reflectors hold the read_side through shared pointers (the counters alias
// it), so the domain outlives every slot publisher, whatever order actors
// terminate in.
#pragma once

#include <memory>
#include <string_view>

#include "podref/read_side/access_stamp.hpp"
#include "podref/read_side/engine_counters.hpp"
#include "podref/read_side/epoch.hpp"
#include "podref/read_side/object_slot.hpp"
#include "podref/read_side/snapshot_index.hpp"

namespace podref::detail {

struct read_side {
  // Declaration order is destruction order reversed: the index (and the slots
  // it releases) goes before the domain that frees what they retired.
  epoch_domain domain;
  snapshot_index<object_slot> index{domain};
  engine_counters counters;
  /// What snapshot reads record as their access time.
  access_stamp stamp;

  /// Records a read served from `s`'s snapshot: no clock read, and a write
  /// to the slot only once per recycling period (see access_stamp.hpp).
  void record_read(object_slot& s) const noexcept {
    s.touch(stamp.current());
  }

  /// The slot of `ns`/`name`, or null. Call under a pin of `domain`; the
  /// slot stays valid until the pin is released.
  object_slot* find(std::string_view ns, std::string_view name) const noexcept {
    return index.find_if(hash_key(ns, name), [ns, name](const object_slot& s) {
      return s.matches(ns, name);
    });
  }
};

using read_side_ptr = std::shared_ptr<read_side>;

/// The counters of `rs`, sharing ownership of the whole read side.
inline std::shared_ptr<engine_counters> counters_of(const read_side_ptr& rs) {
  return {rs, &rs->counters};
}

} // namespace podref::detail
