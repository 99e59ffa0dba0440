#include "podref/manifest/detail/yaml_syntax_hint.hpp"

#include <algorithm>

namespace podref::detail {

namespace {

bool is_break(char c) noexcept {
  return c == '\n' || c == '\r';
}

bool tab_in_indentation(std::string_view line) {
  auto end = line.find_first_not_of(" \t");
  return line.substr(0, end).find('\t') != std::string_view::npos;
}

/// Where the key of a block map entry starts on `line`: after the
/// indentation and any `- ` of block sequence entries.
std::size_t key_start(std::string_view line) {
  std::size_t pos = line.find_first_not_of(' ');
  while (pos != std::string_view::npos && pos + 1 < line.size()
         && line[pos] == '-' && line[pos + 1] == ' ')
    pos = line.find_first_not_of(' ', pos + 1);
  return pos == std::string_view::npos ? line.size() : pos;
}

/// Characters of UTF-8 `text`.
std::size_t characters(std::string_view text) noexcept {
  return static_cast<std::size_t>(
    std::count_if(text.begin(), text.end(), [](char c) {
      return (static_cast<unsigned char>(c) & 0xC0u) != 0x80u;
    }));
}

/// True when the ':' at byte `column` ends a key longer than YAML takes.
bool ends_long_key(std::string_view line, std::size_t column) {
  if (column >= line.size() || line[column] != ':')
    return false;
  auto start = key_start(line);
  if (start >= column)
    return false;
  auto key = line.substr(start, column - start);
  // A ": " before it would make this the value of an earlier key.
  return characters(key) > max_implicit_key_characters
         && key.find(": ") == std::string_view::npos;
}

} // namespace

std::optional<std::string> yaml_syntax_hint(std::string_view text,
                                            std::size_t offset,
                                            std::string_view message) {
  offset = std::min(offset, text.size());
  std::size_t begin = offset;
  while (begin > 0 && !is_break(text[begin - 1]))
    --begin;
  std::size_t end = offset;
  while (end < text.size() && !is_break(text[end]))
    ++end;
  auto line = text.substr(begin, end - begin);
  auto column = offset - begin;
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  if (begin == 0 && line.substr(0, bom.size()) == bom) {
    line.remove_prefix(bom.size());
    column = column < bom.size() ? 0 : column - bom.size();
  }
  if (tab_in_indentation(line)
      && message.find("flow") == std::string_view::npos)
    return "a tab indents this line; YAML indents with spaces";
  if (ends_long_key(line, column))
    return "a key longer than " + std::to_string(max_implicit_key_characters)
           + " characters must be written as an explicit key (\"? key\")";
  return std::nullopt;
}

} // namespace podref::detail
