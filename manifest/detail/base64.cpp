#include "podref/manifest/detail/base64.hpp"

#include <cstdint>

namespace podref::detail {

namespace {

/// The 6-bit value of an alphabet character, or -1.
int sextet(char c) noexcept {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

} // namespace

std::optional<std::string> decode_base64(std::string_view text) {
  std::string chars;
  chars.reserve(text.size());
  for (char c : text)
    if (c != '\r' && c != '\n')
      chars += c;
  if (chars.size() % 4 != 0)
    return std::nullopt;
  std::string out;
  out.reserve(chars.size() / 4 * 3);
  for (std::size_t i = 0; i < chars.size(); i += 4) {
    bool last = i + 4 == chars.size();
    // Padding may only end the final quantum: "xx==" or "xxx=".
    std::size_t pad = 0;
    if (last && chars[i + 3] == '=')
      pad = chars[i + 2] == '=' ? 2 : 1;
    std::uint32_t bits = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      int value = k < 4 - pad ? sextet(chars[i + k]) : 0;
      if (value < 0)
        return std::nullopt;
      bits = (bits << 6) | static_cast<std::uint32_t>(value);
    }
    out += static_cast<char>((bits >> 16) & 0xFFu);
    if (pad < 2)
      out += static_cast<char>((bits >> 8) & 0xFFu);
    if (pad < 1)
      out += static_cast<char>(bits & 0xFFu);
  }
  return out;
}

} // namespace podref::detail
