// A PATCH request: its patch type (from the Content-Type), the object a
// merge, JSON or strategic patch makes of the stored one, and the
// configuration of a server-side apply (applied by managed_object.hpp). The
// patched object goes through the same decoding and checks as a PUT body
// (decode_request_body), so a patch can store nothing a PUT could not.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "podref/messages/api_object.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire {

/// The patch types podref applies, by Content-Type.
enum class patch_type { merge, json, strategic, apply };

/// application/merge-patch+json, application/json-patch+json,
/// application/strategic-merge-patch+json, application/apply-patch+yaml
/// (parameters ignored); nullopt for anything else.
std::optional<patch_type> patch_type_of(std::string_view content_type);

/// 415 for a PATCH in a type podref does not apply, listing the ones it does.
api_status unsupported_patch_status();

/// The object `patch` (of `type`) makes of `current` at
/// /api/v1/namespaces/`ns`/RES/`name`, or the Status refusing it: 400 for a
/// body that is not a patch of its type or nests deeper than
/// detail::max_json_depth, 413 for a JSON patch of more than
/// max_json_patch_operations, 422 for a JSON patch that does not apply (as
/// the real server: a generic message, empty details), and whatever
/// decode_request_body answers for the patched object. The result's
/// resourceVersion is the stored one unless the patch set it.
///
/// Fields the patched Secret or ConfigMap's type lacks, by the request's
/// `field_validation`: Strict refuses them with the real server's 422 (`
/// "" is invalid: patch: Invalid value: "...": strict decoding error:
/// unknown field "bogus"`, quoting the patched object, or a strategic
/// merge patch as Go prints a map; a Secret's values redacted); Warn (or
/// empty, the default) names them in the result's unknown_fields, for the
/// reply's Warning headers; Ignore drops them.
decoded_body apply_patch(const api_object& current, patch_type type,
                         std::string_view patch, const std::string& ns,
                         const std::string& name,
                         std::string_view field_validation = {});

/// A server-side apply's configuration: the body as a JSON object, its
/// nulls dropped; or the 400 refusing it (as the real server: `error
/// decoding YAML: ...` for a body that is not one YAML or JSON object,
/// `Incorrect version specified in apply patch. ...`, `Incorrect kind
/// specified in apply patch. ...`, `metadata.managedFields must be nil`),
/// or the 500 for fields a Secret's or ConfigMap's type lacks (`failed to
/// create typed patch object (ns1/x; /v1, Kind=Secret): .bogus: field not
/// declared in schema`, whatever fieldValidation says).
struct apply_config {
  nlohmann::ordered_json doc;
  std::optional<api_status> failure;
};

apply_config parse_apply_config(resource res, std::string_view body);

} // namespace podref::wire
