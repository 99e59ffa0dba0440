// JSON merge patch (RFC 7386): an object in the patch merges into the
// target's object key by key, null removes a key, anything else replaces.
#pragma once

#include <nlohmann/json.hpp>

namespace podref::wire {

/// `target` with `patch` merged in (RFC 7386). Every JSON value is a valid
/// merge patch; a patch that is not an object replaces the whole target.
nlohmann::ordered_json merge_patch(nlohmann::ordered_json target,
                                   const nlohmann::ordered_json& patch);

} // namespace podref::wire
