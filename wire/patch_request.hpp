// A PATCH request on a Secret or ConfigMap: its patch type (from the
// Content-Type) and the object the patch makes of the stored one. The
// patched object goes through the same decoding and checks as a PUT body
// (decode_request_body), so a patch can store nothing a PUT could not.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "podref/messages/api_object.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire {

/// The patch types podref applies, by Content-Type.
enum class patch_type { merge, json, strategic };

/// application/merge-patch+json, application/json-patch+json,
/// application/strategic-merge-patch+json (parameters ignored); nullopt
/// for anything else.
std::optional<patch_type> patch_type_of(std::string_view content_type);

/// 415 for a PATCH in a type podref does not apply, listing the ones it does.
api_status unsupported_patch_status();

/// The object `patch` (of `type`) makes of `current` at
/// /api/v1/namespaces/`ns`/RES/`name`, or the Status refusing it: 400 for a
/// body that is not a patch of its type, 413 for a JSON patch of more than
/// max_json_patch_operations, 422 for a JSON patch that does not apply (as
/// the real server: a generic message, empty details), and whatever
/// decode_request_body answers for the patched object. The result's
/// resourceVersion is the stored one unless the patch set it.
decoded_body apply_patch(const api_object& current, patch_type type,
                         std::string_view patch, const std::string& ns,
                         const std::string& name);

} // namespace podref::wire
