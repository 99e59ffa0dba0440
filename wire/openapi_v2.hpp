// /openapi/v2: the OpenAPI v2 document, which kubectl before 1.27 (Debian's
// kubernetes-client is 1.20) fetches for client-side validation of every
// create and apply, and newer kubectl only when /openapi/v3 is missing.
// It has no definitions: kubectl finds no schema for a kind and validates
// nothing client-side (the server validates). Its paths hold, per kind, the
// one operation older kubectl (1.20) reads them for: the object's PATCH with
// its dryRun query parameter and x-kubernetes-group-version-kind, without
// which `--dry-run=server` refuses with "doesn't support dry-run".
#pragma once

#include <string>
#include <string_view>

namespace podref::wire {

/// The media type kubectl asks for to get the protobuf form.
inline constexpr std::string_view openapi_v2_protobuf_type
  = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// The Content-Type the protobuf form is sent with: not the type asked for,
/// whose '@' Go's media type parser (and so kubectl) rejects.
inline constexpr std::string_view openapi_v2_protobuf_content_type
  = "application/octet-stream";

/// The document as JSON.
std::string openapi_v2_json();

/// The document as gnostic's openapi.v2.Document protobuf message.
std::string openapi_v2_protobuf();

} // namespace podref::wire
