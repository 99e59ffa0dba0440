// How much of a value from the input an error message quotes: a short
// prefix, so that a 15 MiB name cannot make a 15 MB error line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace podref {

/// Most bytes of one value that an error message quotes.
inline constexpr std::size_t max_quoted_bytes = 256;

/// The part of `value` an error quotes: all of it up to max_quoted_bytes,
/// else its first max_quoted_bytes, cut back to the start of a UTF-8
/// sequence so that the cut leaves no half character.
inline std::string_view quoted_part(std::string_view value) noexcept {
  if (value.size() <= max_quoted_bytes)
    return value;
  auto n = max_quoted_bytes;
  while (n > 0 && (static_cast<unsigned char>(value[n]) & 0xC0) == 0x80)
    --n;
  return value.substr(0, n);
}

/// What an error appends after the quoted part: nothing when all of
/// `value` was quoted, else "... (N bytes)".
inline std::string omitted_note(std::string_view value) {
  if (value.size() <= max_quoted_bytes)
    return {};
  return "... (" + std::to_string(value.size()) + " bytes)";
}

} // namespace podref
