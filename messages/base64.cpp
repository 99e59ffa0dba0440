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

bool is_line_break(char c) noexcept {
  return c == '\n' || c == '\r';
}

} // namespace

base64_decoded decode_base64_checked(std::string_view src) {
  // Go's decodeQuantum, one quantum of four characters at a time, with its
  // error offsets (which count skipped line breaks).
  const std::size_t n = src.size();
  std::size_t si = 0;
  std::string out;
  out.reserve(n / 4 * 3);
  auto fail = [](std::size_t at) { return base64_decoded{std::nullopt, at}; };
  for (;;) {
    int buf[4] = {0, 0, 0, 0};
    int len = 4;
    for (int j = 0; j < 4; ++j) {
      if (si == n) {
        if (j == 0)
          return {std::move(out), 0};
        return fail(si - static_cast<std::size_t>(j));
      }
      char c = src[si++];
      if (int v = sextet(c); v >= 0) {
        buf[j] = v;
        continue;
      }
      if (is_line_break(c)) {
        --j;
        continue;
      }
      if (c != '=' || j < 2)
        return fail(si - 1);
      if (j == 2) {
        // "==" is expected: the first '=' is read.
        while (si < n && is_line_break(src[si]))
          ++si;
        if (si == n)
          return fail(n);
        if (src[si] != '=')
          return fail(si - 1);
        ++si;
      }
      while (si < n && is_line_break(src[si]))
        ++si;
      if (si < n)
        return fail(si); // trailing garbage after the padding
      len = j;
      break;
    }
    auto bits = (static_cast<std::uint32_t>(buf[0]) << 18)
                | (static_cast<std::uint32_t>(buf[1]) << 12)
                | (static_cast<std::uint32_t>(buf[2]) << 6)
                | static_cast<std::uint32_t>(buf[3]);
    for (int k = 0; k < len - 1; ++k)
      out += static_cast<char>((bits >> (16 - 8 * k)) & 0xFFu);
    if (len < 4)
      return {std::move(out), 0};
  }
}

std::optional<std::string> decode_base64(std::string_view text) {
  return decode_base64_checked(text).bytes;
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
