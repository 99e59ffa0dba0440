// The JSON front end of the manifest decoder: one JSON value, or several
// written one after another (as `kubectl get -w -o json` prints them).
#pragma once

#include <string_view>

#include "podref/manifest/detail/text_input.hpp"
#include "podref/manifest/manifest.hpp"

namespace podref::detail {

/// Parses every top-level JSON value of `text` and hands each to
/// `on_document` in order, holding only what kept_shape.hpp keeps. A pre-scan rejects nesting deeper than
/// `limits.max_depth`, and documents larger than `limits.max_document_bytes`
/// (at the line where they start), before any value is built. Throws input_error with the
/// line of the problem; parser messages are nlohmann's, without its own
/// position (which would count from the value, not from the file).
void for_each_json_document(std::string_view text,
                            const manifest_limits& limits,
                            const document_handler& on_document);

} // namespace podref::detail
