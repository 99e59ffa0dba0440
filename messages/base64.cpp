#include "podref/messages/base64.hpp"

#include <cstdint>

namespace podref {

namespace {

constexpr char alphabet[]
  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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

std::string encode_base64(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    auto n = (static_cast<unsigned char>(in[i]) << 16)
             | (static_cast<unsigned char>(in[i + 1]) << 8)
             | static_cast<unsigned char>(in[i + 2]);
    out.push_back(alphabet[(n >> 18) & 63]);
    out.push_back(alphabet[(n >> 12) & 63]);
    out.push_back(alphabet[(n >> 6) & 63]);
    out.push_back(alphabet[n & 63]);
  }
  if (auto rest = in.size() - i; rest > 0) {
    auto n = static_cast<unsigned char>(in[i]) << 16;
    if (rest == 2)
      n |= static_cast<unsigned char>(in[i + 1]) << 8;
    out.push_back(alphabet[(n >> 18) & 63]);
    out.push_back(alphabet[(n >> 12) & 63]);
    out.push_back(rest == 2 ? alphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

} // namespace podref
