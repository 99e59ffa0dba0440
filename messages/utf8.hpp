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
  // Continuation bytes never lead, nor do C0 and C1 (overlong forms) or
  // F5 to FF (above U+10FFFF).
  std::size_t len = lead < 0xC2   ? 0
                    : lead < 0xE0 ? 2
                    : lead < 0xF0 ? 3
                    : lead < 0xF5 ? 4
                                  : 0;
  if (len == 0)
    return 0;
  // The second byte's range narrows after E0 and F0 (overlong forms), ED
  // (surrogates) and F4 (above U+10FFFF).
  std::uint8_t lo = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  std::uint8_t hi = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  if (s.size() < len || b(1) < lo || b(1) > hi)
    return 0;
  for (std::size_t k = 2; k < len; ++k)
    if ((b(k) & 0xC0) != 0x80)
      return 0;
  return len;
}

} // namespace podref
