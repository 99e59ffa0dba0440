// The one UTF-8 decoder podref uses: how long the well-formed sequence at
// the start of a text is. Manifest text checks and Go-style quoting in
// validation messages both ask it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace podref {

/// The length (1 to 4) of the well-formed UTF-8 sequence at the start of
/// `s`, or 0 when `s` is empty or starts with an ill-formed one. Well-formed
/// is Unicode's table 3-7: no overlong forms, no surrogates, nothing above
/// U+10FFFF.
inline std::size_t utf8_sequence_length(std::string_view s) noexcept {
  if (s.empty())
    return 0;
  auto b = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
  auto lead = b(0);
  if (lead < 0x80)
    return 1;
  // The length, and the allowed range of the second byte.
  std::size_t len = 0;
  std::uint8_t lo = 0x80;
  std::uint8_t hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0)
      lo = 0xA0;
    else if (lead == 0xED)
      hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0)
      lo = 0x90;
    else if (lead == 0xF4)
      hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < len || b(1) < lo || b(1) > hi)
    return 0;
  for (std::size_t k = 2; k < len; ++k)
    if ((b(k) & 0xC0) != 0x80)
      return 0;
  return len;
}

} // namespace podref
