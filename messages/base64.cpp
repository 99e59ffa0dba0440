#include "podref/messages/base64.hpp"

#include <cstdint>

namespace podref {

namespace {

constexpr char alphabet[]
  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The 6-bit value of every byte, or -1 for one outside the alphabet.
struct sextet_table {
  std::int8_t value[256];

  constexpr sextet_table() : value() {
    for (auto& v : value)
      v = -1;
    for (int i = 0; i < 64; ++i)
      value[static_cast<unsigned char>(alphabet[i])]
        = static_cast<std::int8_t>(i);
  }
};

constexpr sextet_table sextets;

int sextet(char c) noexcept {
  return sextets.value[static_cast<unsigned char>(c)];
}

/// Decodes `chars` (no line breaks): whole quanta, padding only in the
/// last one. The hot path of every Secret a watch brings: a table lookup
/// per character, the output written in place.
std::optional<std::string> decode_quanta(std::string_view chars) {
  if (chars.size() % 4 != 0)
    return std::nullopt;
  if (chars.empty())
    return std::string{};
  // Padding may only end the final quantum: "xx==" or "xxx=".
  std::size_t pad = 0;
  if (chars.back() == '=')
    pad = chars[chars.size() - 2] == '=' ? 2 : 1;
  std::string out(chars.size() / 4 * 3 - pad, '\0');
  auto* o = out.data();
  const auto quanta = chars.size() / 4;
  const auto full = pad > 0 ? quanta - 1 : quanta;
  const char* p = chars.data();
  for (std::size_t q = 0; q < full; ++q, p += 4, o += 3) {
    int a = sextet(p[0]);
    int b = sextet(p[1]);
    int c = sextet(p[2]);
    int d = sextet(p[3]);
    if ((a | b | c | d) < 0)
      return std::nullopt;
    auto bits = (static_cast<std::uint32_t>(a) << 18)
                | (static_cast<std::uint32_t>(b) << 12)
                | (static_cast<std::uint32_t>(c) << 6)
                | static_cast<std::uint32_t>(d);
    o[0] = static_cast<char>((bits >> 16) & 0xFFu);
    o[1] = static_cast<char>((bits >> 8) & 0xFFu);
    o[2] = static_cast<char>(bits & 0xFFu);
  }
  if (pad > 0) {
    int a = sextet(p[0]);
    int b = sextet(p[1]);
    int c = pad == 1 ? sextet(p[2]) : 0;
    if ((a | b | c) < 0)
      return std::nullopt;
    auto bits = (static_cast<std::uint32_t>(a) << 18)
                | (static_cast<std::uint32_t>(b) << 12)
                | (static_cast<std::uint32_t>(c) << 6);
    o[0] = static_cast<char>((bits >> 16) & 0xFFu);
    if (pad == 1)
      o[1] = static_cast<char>((bits >> 8) & 0xFFu);
  }
  return out;
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
  // Line breaks are skipped, as Go's decoder skips them.
  // (Two memchr scans: find_first_of would search the set per character.)
  if (text.find('\n') == std::string_view::npos
      && text.find('\r') == std::string_view::npos)
    return decode_quanta(text);
  std::string chars;
  chars.reserve(text.size());
  for (char c : text)
    if (c != '\r' && c != '\n')
      chars += c;
  return decode_quanta(chars);
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
