#include "podref/manifest/detail/yaml_syntax_hint.hpp"

namespace podref::detail {

namespace {

/// Line `line` (1-based) of `text`, without its line break; empty past the
/// end.
std::string_view line_text(std::string_view text, std::size_t line) {
  std::size_t start = 0;
  for (std::size_t n = 1; n < line; ++n) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos)
      return {};
    start = end + 1;
  }
  auto end = text.find('\n', start);
  return text.substr(start, end == std::string_view::npos ? end : end - start);
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

/// True when the ':' at `column` ends a key longer than yaml-cpp takes.
bool ends_long_key(std::string_view line, std::size_t column) {
  if (column >= line.size() || line[column] != ':')
    return false;
  auto start = key_start(line);
  if (start >= column || column - start <= max_implicit_key_bytes)
    return false;
  // A ": " before it would make this the value of an earlier key.
  return line.substr(start, column - start).find(": ")
         == std::string_view::npos;
}

} // namespace

std::optional<std::string> yaml_syntax_hint(std::string_view text,
                                            std::size_t line,
                                            std::size_t column,
                                            std::string_view message) {
  if (line == 0)
    return std::nullopt;
  auto at = line_text(text, line);
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  if (line == 1 && at.substr(0, bom.size()) == bom)
    at.remove_prefix(bom.size());
  if (tab_in_indentation(at)
      && message.find("flow") == std::string_view::npos)
    return "a tab indents this line; YAML indents with spaces";
  if (ends_long_key(at, column))
    return "a key longer than " + std::to_string(max_implicit_key_bytes)
           + " bytes must be written as an explicit key (\"? key\")";
  return std::nullopt;
}

} // namespace podref::detail
