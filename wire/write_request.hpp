// What a write request asks beyond its body, checked as the real server
// checks it: dryRun, fieldManager and force (the 422s of CreateOptions,
// UpdateOptions, PatchOptions and DeleteOptions), a DELETE's DeleteOptions
// body (gracePeriodSeconds, dryRun, preconditions), the name a
// generateName makes, and the Statuses of the write path (an apply's
// conflicts, a failed precondition). Pure functions, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/wire/field_manager.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire {

/// The longest fieldManager (and manager of any entry).
constexpr std::size_t max_field_manager_length = 128;

/// What a DELETE's body says (a DeleteOptions; a body that is not one says
/// nothing, as podref has always read it).
struct delete_options {
  std::optional<std::int64_t> grace_period_seconds;
  std::vector<std::string> dry_run;
  std::optional<std::string> uid;
  std::optional<std::string> resource_version;
};

delete_options parse_delete_options(std::string_view body);

/// Which options object a write's parameters form.
enum class options_kind { create, update, patch, remove };

/// The parameters of one write.
struct write_parameters {
  options_kind kind = options_kind::create;
  /// A PATCH in application/apply-patch+yaml.
  bool apply = false;
  std::vector<std::string> dry_run;
  std::string field_manager;
  /// force, when the query has it.
  std::optional<bool> force;
};

/// The real server's checks of those parameters: 422 `PatchOptions.meta.
/// k8s.io "" is invalid: fieldManager: Required value: is required for
/// apply patch` and the like (force on a patch that is not an apply, a
/// fieldManager over 128 bytes or with control characters, a dryRun other
/// than All); nullopt when they pass.
std::optional<api_status> check_write_parameters(const write_parameters& p);

/// How many names a generateName create tries before giving up on clashes.
constexpr int max_generated_name_attempts = 8;

/// `prefix` (cut to 58 bytes) and 5 characters of the real server's
/// alphabet ("bcdfghjklmnpqrstvwxz2456789"), from `random` (any 64 bits:
/// 5 draws from it).
std::string generated_name(const std::string& prefix, std::uint64_t random);

/// generated_name with fresh random bits.
std::string generated_name(const std::string& prefix);

/// The problem with `prefix` as a generateName of `res` (a DNS-1123
/// subdomain, a Namespace's a label, once a trailing '-' is masked):
/// `metadata.generateName: Invalid value: ...`; nullopt when valid.
std::optional<std::string> generate_name_problem(resource res,
                                                 const std::string& prefix);

/// 409 Conflict of an apply: `Apply failed with 1 conflict: conflict with
/// "x": .data.k`, a FieldManagerConflict cause per field.
api_status apply_conflict_status(const std::vector<field_conflict>& conflicts);

/// 409 of a DELETE whose precondition failed: `Operation cannot be
/// fulfilled on Secret "s1": the UID in the precondition (X) does not match
/// the UID in record (Y). The object might have been deleted and then
/// recreated` (or the ResourceVersion's), details naming the Kind.
api_status precondition_failed_status(resource res, const std::string& name,
                                      bool uid, const std::string& wanted,
                                      const std::string& actual);

} // namespace podref::wire
