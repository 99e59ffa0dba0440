// metadata.managedFields: who owns which fields of an object, one entry per
// manager and operation (Apply or Update) with its field set, as the API
// server keeps and prints them. Pure data and its JSON, no I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "podref/wire/field_set.hpp"

namespace podref::wire {

enum class managed_operation { apply, update };

/// One managedFields entry.
struct managed_entry {
  std::string manager;
  managed_operation operation = managed_operation::update;
  std::string api_version = "v1";
  /// When the manager last changed the object (RFC 3339); empty for none
  /// (an applier whose apply changed nothing yet).
  std::string time;
  std::string subresource;
  field_set fields;

  /// Same manager, operation, version and subresource (the server's
  /// identity of an entry; time and fields aside).
  bool same_identity(const managed_entry& other) const;

  /// As conflicts name it: `"x"` for an applier, `"x" using v1` for an
  /// updater (with ` with subresource "status"` when it has one).
  std::string printed() const;
};

bool operator==(const managed_entry& x, const managed_entry& y);
inline bool operator!=(const managed_entry& x, const managed_entry& y) {
  return !(x == y);
}

using managed_entries = std::vector<managed_entry>;

/// Most Update entries an object keeps: past it the oldest are merged into
/// one `ancient-changes` entry, as the real server does.
constexpr std::size_t max_update_managers = 10;

/// The entries of metadata.managedFields (the JSON text of its array;
/// empty text: none). nullopt, with `error` naming the entry and field, for
/// what the server could not decode: not an array of objects, an operation
/// other than Apply and Update, a fieldsType other than FieldsV1, a
/// fieldsV1 that is not a field set.
std::optional<managed_entries> parse_managed_fields(std::string_view text,
                                                    std::string& error);

/// The JSON text of the array, sorted as the server sorts (operation, then
/// time with none first, manager, version, subresource); entries whose set
/// is empty are left out; "" when none is left.
std::string encode_managed_fields(managed_entries entries);

/// The entry of `manager` with `op` (main resource, v1), or null.
managed_entry* find_entry(managed_entries& entries, const std::string& manager,
                          managed_operation op);

/// Drops entries whose set is empty, then merges the oldest Update entries
/// into `ancient-changes` while more than max_update_managers are left.
void tidy_entries(managed_entries& entries);

/// The manager of a write without fieldManager: the User-Agent's product
/// (up to its first '/'), without control characters, cut to 128 bytes.
std::string manager_of_user_agent(std::string_view user_agent);

} // namespace podref::wire
