// The API server's field manager as pure functions: how a write changes an
// object's managedFields (an update: create, PUT or a merge, JSON or
// strategic patch), and server-side apply (merge a configuration in,
// prune what its manager stopped applying, refuse or take over what others
// own). Objects are JSON (the codec's), entries as managed_fields.hpp has
// them; no I/O, no clock (the caller gives the time).
//
// As the real server's chain (apimachinery's managedfields): an update
// takes every field it adds or changes from its other owners and gives it
// to its manager (whose time then moves); a field it removes leaves every
// set; an object that has no managedFields is not tracked by updates (only
// creates start tracking). An apply sets its manager's set to the fields
// of its configuration; fields it applied before and no longer applies are
// removed from the object unless another applier owns them; a field it
// adds or changes that another manager owns is a conflict, unless `force`
// (then the field moves) or the manager is `kubectl` and the field is one
// of the object's unchanged last-applied-configuration (the client-side
// apply upgrade). The first apply to an untracked object records its
// fields as `before-first-apply`'s. An applier's time moves only when the
// object changes; `kubectl`'s apply rewrites an existing
// last-applied-configuration annotation to the configuration it applied.
#pragma once

#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/wire/managed_fields.hpp"
#include "podref/wire/object_fields.hpp"

namespace podref::wire {

/// The entries after an update by `manager` at `now` took `live` to `next`
/// (whole objects as the codec writes them; a create passes
/// creation_base(res) as `live`). `entries` are the live object's, or the
/// ones the request itself sent when it sent any; `create` tells a create,
/// which tracks even an object without entries.
managed_entries track_update(resource res, json_value live, json_value next,
                             managed_entries entries,
                             const std::string& manager,
                             const std::string& now, bool create);

/// A field another manager owns that an apply would change.
struct field_conflict {
  /// The owner as conflicts print it (managed_entry::printed).
  std::string manager;
  field_path path;
};

/// What an apply makes of an object.
struct apply_outcome {
  /// The object after the merge and pruning (unspecified with conflicts).
  json_value object;
  managed_entries entries;
  /// Non-empty: the apply is refused (sorted by manager, then path).
  std::vector<field_conflict> conflicts;
};

/// `config` (a whole or partial object, nulls already dropped) applied by
/// `manager` to `live` (the whole object; for a create, the new object's
/// kind, apiVersion and metadata over creation_base(res)) with `entries`
/// (live's; `existed` false for a create).
apply_outcome track_apply(resource res, const json_value& live,
                          const json_value& config, managed_entries entries,
                          const std::string& manager, bool force,
                          const std::string& now, bool existed);

/// The message of an apply refused for `conflicts` (the real server's:
/// `Apply failed with 1 conflict: conflict with "x": .data.k`).
std::string conflict_message(const std::vector<field_conflict>& conflicts);

} // namespace podref::wire
