// YAML to JSON: turns each document of a YAML stream into an nlohmann::json
// value, so that one set of typed decoders serves both formats.
//
// Scalars are typed by the YAML 1.2 core schema (yaml_scalar.hpp): quoted
// and block scalars are always strings, and the explicit tags !!str, !!bool,
// !!int, !!float and !!null force a type. Map keys must be strings. Aliases
// copy their anchor's value; the merge key `<<` merges a map (or a list of
// maps) under the keys already present. A repeated key keeps its last value,
// as in JSON.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "podref/manifest/detail/text_input.hpp"
#include "podref/manifest/manifest.hpp"

namespace podref::detail {

/// Parses every document of `text` (YAML, with libyaml: yaml_events.hpp)
/// and hands each to `on_document` as soon as it is complete, holding only
/// what kept_shape.hpp keeps (anchored values whole, since aliases may copy
/// them anywhere). Throws input_error for syntax errors, for nesting deeper
/// than `limits.max_depth` (checked at each map or list as it opens), for
/// anchors and aliases that copy more than `limits.max_alias_values` values
/// in total (each anchored value is copied once when defined and once per
/// alias), for aliases of unknown or unfinished anchors, for non-string
/// keys and for documents larger than `limits.max_document_bytes` (at the
/// line where they start; measured while parsing, to the end of each
/// value's text).
void for_each_yaml_document(std::string_view text,
                            const manifest_limits& limits,
                            const document_handler& on_document);

} // namespace podref::detail
