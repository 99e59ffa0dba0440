#include "podref/manifest/detail/text_check.hpp"

#include <fmt/format.h>

namespace podref::detail {

std::optional<invalid_character>
find_invalid_character(std::string_view text) {
  auto byte = [text](std::size_t i) {
    return static_cast<unsigned>(static_cast<unsigned char>(text[i]));
  };
  auto is_continuation = [&](std::size_t i) {
    return i < text.size() && (byte(i) & 0xC0u) == 0x80u;
  };
  auto invalid_utf8 = [](std::size_t i) {
    return invalid_character{i, "invalid UTF-8"};
  };
  std::size_t i = 0;
  while (i < text.size()) {
    auto lead = byte(i);
    if (lead < 0x80u) {
      if (lead < 0x20u && lead != '\t' && lead != '\n' && lead != '\r')
        return invalid_character{
          i, fmt::format("control character U+{:04X} is not allowed", lead)};
      ++i;
      continue;
    }
    // Sequence length and the allowed range of the second byte (Unicode
    // table 3-7), which excludes overlong forms, surrogates and > U+10FFFF.
    std::size_t len = 0;
    unsigned lo = 0x80u;
    unsigned hi = 0xBFu;
    if (lead >= 0xC2u && lead <= 0xDFu) {
      len = 2;
    } else if (lead >= 0xE0u && lead <= 0xEFu) {
      len = 3;
      if (lead == 0xE0u)
        lo = 0xA0u;
      else if (lead == 0xEDu)
        hi = 0x9Fu;
    } else if (lead >= 0xF0u && lead <= 0xF4u) {
      len = 4;
      if (lead == 0xF0u)
        lo = 0x90u;
      else if (lead == 0xF4u)
        hi = 0x8Fu;
    } else {
      return invalid_utf8(i);
    }
    if (i + 1 >= text.size() || byte(i + 1) < lo || byte(i + 1) > hi)
      return invalid_utf8(i);
    for (std::size_t k = 2; k < len; ++k)
      if (!is_continuation(i + k))
        return invalid_utf8(i);
    i += len;
  }
  return std::nullopt;
}

} // namespace podref::detail
