// The managedFields of the front's objects across writes: the field
// manager (field_manager.hpp) on api_objects as the codec writes and reads
// them. Pure functions, no I/O; the caller gives the time.
#pragma once

#include <cstddef>
#include <string>

#include "podref/messages/api_object.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/field_manager.hpp"
#include "podref/wire/managed_fields.hpp"

namespace podref::wire {

/// The most bytes of managedFields an object keeps: a write past it is
/// refused (422), as etcd's request limit would refuse the real server's.
constexpr std::size_t max_managed_fields_bytes = 1u << 20;

/// The entries `obj` carries (none when it has none or they do not parse).
managed_entries entries_of(const api_object& obj);

/// `next` with the managedFields of `manager`'s write at `now` (RFC 3339):
/// a create when `live` is empty, else an update of `live`. Starts from
/// the entries the request sent when it sent valid ones, else from live's.
/// Fails (422) only past max_managed_fields_bytes.
decoded_body tracked_write(const api_object& live, const api_object& next,
                           const std::string& manager, const std::string& now);

/// The object `config` (parse_apply_config's) applied by `manager` makes of
/// `live`, or of nothing (a create of `name` in `ns`) when `live` is empty:
/// merged, pruned and tracked (track_apply), then decoded and checked as a
/// PUT body is. 409 for conflicts.
decoded_body applied_object(resource res, const api_object& live,
                            const json_value& config,
                            const std::string& manager, bool force,
                            const std::string& now, const std::string& ns,
                            const std::string& name);

} // namespace podref::wire
