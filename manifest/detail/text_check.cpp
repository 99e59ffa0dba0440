#include "podref/manifest/detail/text_check.hpp"

#include <fmt/format.h>

#include "podref/messages/utf8.hpp"

namespace podref::detail {

std::optional<invalid_character>
find_invalid_character(std::string_view text) {
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
