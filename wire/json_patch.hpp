// JSON patch (RFC 6902): a list of operations (add, remove, replace, move,
// copy, test) on JSON pointers (RFC 6901, with ~0 for '~' and ~1 for '/'),
// applied in order; the first that fails refuses the whole patch.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "podref/wire/patch_result.hpp"

namespace podref::wire {

/// The API server's bound on the operations of one JSON patch.
inline constexpr std::size_t max_json_patch_operations = 10000;

/// `target` with the operations of `patch` applied. A `patch` that is not
/// an array is bad_request; more than `max_operations` operations is
/// too_large; an operation that is malformed, names a missing path or whose
/// test fails is invalid (its message names the operation's index and op).
patch_result json_patch(nlohmann::ordered_json target,
                        const nlohmann::ordered_json& patch,
                        std::size_t max_operations = max_json_patch_operations);

} // namespace podref::wire
