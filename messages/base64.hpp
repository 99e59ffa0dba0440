// Base64 as Kubernetes writes []byte fields (Secret data, ConfigMap
// binaryData, kubeconfig *-data): Go's encoding/base64 StdEncoding.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace podref {

/// What decoding base64 gave: the bytes, or the offset into the text where
/// Go's decoder stops (its CorruptInputError, which the API server prints
/// as `illegal base64 data at input byte N`).
struct base64_decoded {
  std::optional<std::string> bytes;
  std::size_t error_offset = 0;
};

/// Decodes standard base64 with '=' padding exactly as Go's
/// base64.StdEncoding does: line breaks (CR, LF) are skipped; anything
/// else outside the alphabet, a last quantum short of four characters or
/// misplaced padding is an error at the offset Go names.
base64_decoded decode_base64_checked(std::string_view text);

/// decode_base64_checked's bytes, nullopt on an error, without the offset:
/// the watch path's decoder, a table lookup per character.
std::optional<std::string> decode_base64(std::string_view text);

/// Encodes with '=' padding and no line breaks.
std::string encode_base64(std::string_view bytes);

} // namespace podref
