// Base64 as Kubernetes writes []byte fields (Secret data, ConfigMap
// binaryData, kubeconfig *-data): Go's encoding/base64 StdEncoding.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace podref {

/// Decodes standard base64 with '=' padding. Line breaks (CR, LF) are
/// skipped, as Go's decoder does; anything else outside the alphabet, a
/// length that is not a multiple of four or misplaced padding yields nullopt.
std::optional<std::string> decode_base64(std::string_view text);

/// Encodes with '=' padding and no line breaks.
std::string encode_base64(std::string_view bytes);

} // namespace podref
