#include "podref/manifest/detail/json_documents.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "podref/manifest/detail/kept_shape.hpp"

namespace podref::detail {

namespace {

using json = nlohmann::json;

bool is_blank(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/// The end of the map or list that starts at `pos`: one past its closing
/// bracket, or the end of the text when it is not closed (the parser then
/// reports the error). Brackets inside strings do not count.
std::size_t container_end(std::string_view text, std::size_t pos,
                          const manifest_limits& limits) {
  std::size_t depth = 0;
  bool in_string = false;
  for (auto i = pos; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '{':
      case '[':
        if (++depth > limits.max_depth)
          throw input_error(line_at(text, i),
                            "nesting deeper than the limit of "
                              + std::to_string(limits.max_depth)
                              + " levels");
        break;
      case '}':
      case ']':
        if (--depth == 0)
          return i + 1;
        break;
      default:
        break;
    }
  }
  return text.size();
}

/// nlohmann's message without its "[json.exception...] parse error at line
/// 1, column 5: " prefix.
std::string parser_message(const json::exception& e) {
  std::string_view what = e.what();
  if (auto bracket = what.find("] "); bracket != std::string_view::npos)
    what.remove_prefix(bracket + 2);
  constexpr std::string_view parse_error = "parse error";
  if (what.substr(0, parse_error.size()) == parse_error)
    if (auto colon = what.find(": "); colon != std::string_view::npos)
      what.remove_prefix(colon + 2);
  return std::string{what};
}

/// A SAX handler that builds the parts of a document the decoders read
/// (kept_shape.hpp), and turns parse errors into input_errors that carry the
/// line in the whole text.
class dom_builder final : public nlohmann::json_sax<json> {
public:
  /// `skip_kinds`: whether a skipped kind drops the document (see
  /// repeated_kind_error).
  dom_builder(std::string_view text, std::size_t offset,
              const manifest_limits& limits, bool skip_kinds)
    : text_(text), offset_(offset), limits_(limits), skip_kinds_(skip_kinds) {
    // nop
  }

  json take() {
    return std::move(root_);
  }

  bool null() override {
    add(nullptr);
    return true;
  }

  bool boolean(bool value) override {
    add(value);
    return true;
  }

  bool number_integer(number_integer_t value) override {
    add(value);
    return true;
  }

  bool number_unsigned(number_unsigned_t value) override {
    add(value);
    return true;
  }

  bool number_float(number_float_t value, const string_t&) override {
    add(value);
    return true;
  }

  bool string(string_t& value) override {
    add(std::move(value));
    return true;
  }

  bool binary(binary_t& value) override {
    add(json::binary(std::move(value)));
    return true;
  }

  bool start_object(std::size_t) override {
    open(json::object());
    return true;
  }

  bool key(string_t& value) override {
    key_ = std::move(value);
    return true;
  }

  bool end_object() override {
    stack_.pop_back();
    return true;
  }

  bool start_array(std::size_t) override {
    open(json::array());
    return true;
  }

  bool end_array() override {
    stack_.pop_back();
    return true;
  }

  bool parse_error(std::size_t position, const std::string&,
                   const json::exception& e) override {
    // `position` counts from 1 within this value.
    auto at = offset_ + (position > 0 ? position - 1 : 0);
    throw input_error(line_at(text_, at), parser_message(e));
  }

private:
  /// An open map or list; `value` is null when nothing of it is kept.
  struct frame {
    json* value;
    keep kept;
  };

  void open(json empty) {
    if (stack_.empty()) {
      root_ = std::move(empty);
      stack_.push_back(
        frame{&root_, keep_document(limits_.keep_documents, skip_kinds_)});
      return;
    }
    auto& parent = stack_.back();
    if (parent.value == nullptr
        || !keeps_next(parent.kept, parent.value->is_array(), key_,
                       limits_)) {
      skip(parent);
      stack_.push_back(frame{nullptr, {}});
      return;
    }
    auto kept = keep_child(parent.kept, parent.value->is_array(), key_,
                           false, limits_);
    // Pointers on the stack stay valid: a container only grows while it is
    // the innermost open one.
    auto* slot = add(std::move(empty));
    stack_.push_back(frame{slot, kept});
  }

  /// Counts a list element that is not kept.
  static void skip(frame& parent) noexcept {
    if (parent.value != nullptr && parent.value->is_array())
      ++parent.kept.elements;
  }

  /// Stores `value` where the parser is, if it is kept, and returns its
  /// address (nullptr when it is not kept).
  json* add(json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    auto& f = stack_.back();
    if (f.value == nullptr)
      return nullptr;
    auto& parent = *f.value;
    if (!keeps_next(f.kept, parent.is_array(), key_, limits_)) {
      skip(f);
      return nullptr;
    }
    if (parent.is_array()) {
      ++f.kept.elements;
      parent.push_back(std::move(value));
      return &parent.back();
    }
    on_member(f.kept, parent, key_, value, line_at(text_, offset_));
    auto& slot = parent[key_]; // a repeated key: the last wins
    slot = std::move(value);
    return &slot;
  }

  std::string_view text_;
  std::size_t offset_;
  const manifest_limits& limits_;
  bool skip_kinds_;
  json root_;
  std::vector<frame> stack_;
  std::string key_;
};

} // namespace

void for_each_json_document(std::string_view text,
                            const manifest_limits& limits,
                            const document_handler& on_document) {
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  std::size_t pos = text.substr(0, bom.size()) == bom ? bom.size() : 0;
  for (std::size_t index = 0;; ++index) {
    while (pos < text.size() && is_blank(text[pos]))
      ++pos;
    if (pos == text.size())
      return;
    // A scalar or junk after the first value runs to the end of the text:
    // the parser accepts a lone scalar and reports anything else.
    auto end = text[pos] == '{' || text[pos] == '['
                 ? container_end(text, pos, limits)
                 : text.size();
    if (end - pos > limits.max_document_bytes)
      throw input_error(line_at(text, pos),
                        document_over_limit(limits.max_document_bytes));
    auto value = text.substr(pos, end - pos);
    auto parse = [&](bool skip_kinds) {
      dom_builder builder{text, pos, limits, skip_kinds};
      json::sax_parse(value.begin(), value.end(), &builder);
      return builder.take();
    };
    json document;
    try {
      document = parse(true);
    } catch (const repeated_kind_error&) {
      document = parse(false); // at most twice the parse time
    }
    on_document(index, std::move(document));
    pos = end;
  }
}

} // namespace podref::detail
