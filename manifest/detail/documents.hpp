// The documents of a JSON or YAML text, checked as a whole first: the one
// entry to both front ends, for the manifest decoder and for other YAML the
// library reads (the wire client's kubeconfig).
#pragma once

#include <string_view>

#include "podref/manifest/detail/text_input.hpp"
#include "podref/manifest/manifest.hpp"

namespace podref::detail {

/// Hands each document of `text` to `on_document`, as JSON when its first
/// non-blank character (after a UTF-8 byte order mark) opens a map or a
/// list, else as YAML, after checking every character of it
/// (text_check.hpp). Throws input_error, and what `on_document` throws.
/// `limits.max_bytes` is the caller's to check.
void for_each_document(std::string_view text, const manifest_limits& limits,
                       const document_handler& on_document);

} // namespace podref::detail
