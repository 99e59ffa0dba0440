#include "podref/manifest/detail/text_check.hpp"

#include <fmt/format.h>

#include "podref/messages/utf8.hpp"

namespace podref::detail {

namespace {

/// UTF-16 is recognised by its byte order mark, or without one by a NUL
/// byte beside an ASCII one in the first two bytes (a manifest starts with
/// ASCII: a key, `{`, `-` or a comment).
std::optional<invalid_character> utf16_problem(std::string_view text) {
  if (text.size() < 2)
    return std::nullopt;
  auto b0 = static_cast<unsigned char>(text[0]);
  auto b1 = static_cast<unsigned char>(text[1]);
  const char* order = nullptr;
  if ((b0 == 0xFF && b1 == 0xFE) || (b1 == 0 && b0 != 0 && b0 < 0x80))
    order = "little-endian";
  else if ((b0 == 0xFE && b1 == 0xFF) || (b0 == 0 && b1 != 0 && b1 < 0x80))
    order = "big-endian";
  if (order == nullptr)
    return std::nullopt;
  return invalid_character{
    0, fmt::format("the input is UTF-16 ({}), which is not supported: "
                   "convert it to UTF-8",
                   order)};
}

} // namespace

std::optional<invalid_character>
find_invalid_character(std::string_view text) {
  if (auto utf16 = utf16_problem(text))
    return utf16;
  auto byte = [text](std::size_t i) {
    return static_cast<unsigned>(static_cast<unsigned char>(text[i]));
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
    auto len = utf8_sequence_length(text.substr(i));
    if (len == 0)
      return invalid_utf8(i);
    i += len;
  }
  return std::nullopt;
}

} // namespace podref::detail
