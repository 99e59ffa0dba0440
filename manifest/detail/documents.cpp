#include "podref/manifest/detail/documents.hpp"

#include "podref/manifest/detail/json_documents.hpp"
#include "podref/manifest/detail/text_check.hpp"
#include "podref/manifest/detail/yaml_json.hpp"

namespace podref::detail {

namespace {

/// JSON iff the first non-blank character (after a UTF-8 byte order mark)
/// opens a map or a list.
bool is_json(std::string_view text) {
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  if (text.substr(0, bom.size()) == bom)
    text.remove_prefix(bom.size());
  auto pos = text.find_first_not_of(" \t\r\n");
  return pos != std::string_view::npos
         && (text[pos] == '{' || text[pos] == '[');
}

} // namespace

void for_each_document(std::string_view text, const manifest_limits& limits,
                       const document_handler& on_document) {
  if (auto bad = find_invalid_character(text))
    throw input_error(line_at(text, bad->offset), bad->problem);
  if (is_json(text))
    for_each_json_document(text, limits, on_document);
  else
    for_each_yaml_document(text, limits, on_document);
}

} // namespace podref::detail
