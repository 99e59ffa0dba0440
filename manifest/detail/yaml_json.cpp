#include "podref/manifest/detail/yaml_json.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "podref/manifest/detail/json_fields.hpp"
#include "podref/manifest/detail/kept_shape.hpp"
#include "podref/manifest/detail/yaml_scalar.hpp"
#include "podref/manifest/detail/yaml_syntax_hint.hpp"
#include "podref/messages/quoted_part.hpp"

namespace podref::detail {

namespace {

/// The 1-based line of `mark`, or 0 when yaml-cpp gives no position.
std::size_t line_of(const YAML::Mark& mark) noexcept {
  if (mark.is_null() || mark.line < 0)
    return 0;
  return static_cast<std::size_t>(mark.line) + 1;
}

std::string quoted(const std::string& text) {
  return json(std::string{quoted_part(text)})
           .dump(-1, ' ', false, json::error_handler_t::replace)
         + omitted_note(text);
}

/// The JSON value of a scalar with yaml-cpp's tag: "?" for plain scalars
/// without a tag, "!" for quoted and block scalars, else the explicit tag.
json resolve_scalar(std::size_t line, const std::string& tag,
                    const std::string& text) {
  if (tag == "?")
    return resolve_plain_scalar(text);
  if (auto value = resolve_tagged_scalar(tag, text))
    return std::move(*value);
  // Only the core tags reject text; show them in their short form.
  auto name = tag.substr(tag.rfind(':') + 1);
  throw input_error(line, quoted(text) + " is not a valid !!" + name);
}

/// The size of a built value, for the depth and alias limits.
struct value_size {
  /// Values in the tree, the root included.
  std::size_t values = 1;
  /// Levels of maps and lists, the root included (0 for a scalar).
  std::size_t height = 0;
};

/// Builds one JSON value per document from yaml-cpp's parse events. The
/// depth check in open() runs before yaml-cpp descends any further, which
/// keeps its recursion bounded by the depth limit.
class json_builder final : public YAML::EventHandler {
public:
  explicit json_builder(const manifest_limits& limits) : limits_(limits) {
    // nop
  }

  json take_document() {
    return std::move(document_);
  }

  /// Where the last document started (in the parser's own text).
  const YAML::Mark& document_start() const noexcept {
    return document_start_;
  }

  /// Prepares parsing again from where the last document started, with a
  /// parser whose text starts at line `line_base` (0-based) of the whole
  /// text: what that document charged against the alias limit is taken
  /// back. `skip_kinds`: whether a skipped kind drops the next documents
  /// (see repeated_kind_error).
  void restart(std::size_t line_base, bool skip_kinds) noexcept {
    line_base_ = line_base;
    copied_values_ = copied_at_start_;
    skip_kinds_ = skip_kinds;
  }

  void skip_kinds(bool on) noexcept {
    skip_kinds_ = on;
  }

  /// The 1-based line of `mark` in the whole text, or 0 when yaml-cpp
  /// gives no position.
  std::size_t line(const YAML::Mark& mark) const noexcept {
    auto n = line_of(mark);
    return n == 0 ? 0 : n + line_base_;
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    document_start_ = mark;
    copied_at_start_ = copied_values_;
    stack_.clear();
    anchors_.clear(); // anchors are local to their document
    document_ = nullptr;
  }

  void OnDocumentEnd() override {
    // nop: the parser returns after each document
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    check_size(mark, 0);
    add(mark, anchor, nullptr, value_size{}, false);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto i = anchors_.find(anchor);
    if (i == anchors_.end())
      throw input_error(
        line(mark),
        "alias of an anchor that is not complete yet (a recursive alias)");
    auto size = i->second.size;
    check_size(mark, 0);
    check_depth(mark, stack_.size() + size.height);
    charge_copy(mark, size.values);
    // A copy only where it is kept: elsewhere its type does for the checks.
    const auto& value = i->second.value;
    add(mark, YAML::NullAnchor, keeps_next_value() ? json(value) : like(value),
        size, false);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag,
                YAML::anchor_t anchor, const std::string& value) override {
    // The decoded text stands for its source: escapes and folding only
    // shorten it, bar a byte per \L or \P escape.
    check_size(mark, value.size());
    bool merge_key = tag == "?" && value == "<<" && expects_key();
    add(mark, anchor, resolve_scalar(line(mark), tag, value), value_size{},
        merge_key);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&,
                       YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, json::array());
  }

  void OnSequenceEnd() override {
    close();
  }

  void OnMapStart(const YAML::Mark& mark, const std::string&,
                  YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(mark, anchor, json::object());
  }

  void OnMapEnd() override {
    close();
  }

private:
  /// An open map or list.
  struct frame {
    json value;
    YAML::Mark mark;
    YAML::anchor_t anchor;
    value_size size;
    /// The key whose value comes next (maps only).
    std::optional<std::string> key;
    /// The pending key is the merge key `<<`.
    bool merging = false;
    /// Maps to merge in at the end, earlier ones first.
    std::vector<json> merges;
    /// What it keeps of its contents.
    keep kept;
  };

  struct anchored {
    json value;
    value_size size;
  };

  /// An empty map or list for a map or list, else a copy of `value`.
  static json like(const json& value) {
    if (value.is_object())
      return json::object();
    if (value.is_array())
      return json::array();
    return value;
  }

  /// Whether the next value is stored where the parser is (a key is).
  bool keeps_next_value() const noexcept {
    if (stack_.empty())
      return true;
    const auto& f = stack_.back();
    if (f.merging || expects_key())
      return true;
    bool list = f.value.is_array();
    return keeps_next(f.kept, list, list ? std::string_view{} : *f.key,
                      limits_);
  }

  /// What a map or list opened where the parser is keeps.
  keep keep_opened(YAML::anchor_t anchor, bool list) const noexcept {
    bool anchored = anchor != YAML::NullAnchor;
    if (stack_.empty())
      return keep_document(anchored || limits_.keep_documents, skip_kinds_);
    const auto& f = stack_.back();
    if (f.merging) {
      auto out = keep_merge(f.kept, list);
      out.all = out.all || anchored;
      return out;
    }
    if (expects_key())
      return keep{}; // a map or list as a key, which add() rejects
    bool in_list = f.value.is_array();
    return keep_child(f.kept, in_list,
                      in_list ? std::string_view{} : *f.key, anchored,
                      limits_);
  }

  bool expects_key() const noexcept {
    return !stack_.empty() && stack_.back().value.is_object()
           && !stack_.back().key;
  }

  void check_depth(const YAML::Mark& mark, std::size_t depth) const {
    if (depth > limits_.max_depth)
      throw input_error(line(mark),
                        "nesting deeper than the limit of "
                          + std::to_string(limits_.max_depth) + " levels");
  }

  /// Fails when a value at `mark` with `length` bytes of text ends past
  /// max_document_bytes from the start of the document.
  void check_size(const YAML::Mark& mark, std::size_t length) const {
    if (mark.pos < 0 || document_start_.pos < 0
        || mark.pos < document_start_.pos)
      return;
    auto end = static_cast<std::size_t>(mark.pos - document_start_.pos)
               + length;
    if (end > limits_.max_document_bytes)
      throw input_error(line(document_start_),
                        document_over_limit(limits_.max_document_bytes));
  }

  /// Counts `values` copied for an anchor or an alias against the limit.
  void charge_copy(const YAML::Mark& mark, std::size_t values) {
    copied_values_ += values;
    if (copied_values_ > limits_.max_alias_values)
      throw input_error(
        line(mark),
        "anchors and aliases copy more values than the limit of "
          + std::to_string(limits_.max_alias_values));
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, json value) {
    check_size(mark, 0);
    check_depth(mark, stack_.size() + 1);
    auto kept = keep_opened(anchor, value.is_array());
    stack_.push_back(frame{std::move(value), mark, anchor,
                           value_size{1, 1}, std::nullopt, false, {},
                           kept});
  }

  void close() {
    auto f = std::move(stack_.back());
    stack_.pop_back();
    // Merged keys never replace keys of the map itself or of an earlier
    // merged map.
    if (f.kept.all || f.kept.shape != nullptr)
      for (auto& source : f.merges)
        for (auto& [key, value] : source.items())
          f.value.emplace(key, std::move(value));
    add(f.mark, f.anchor, std::move(f.value), f.size, false);
  }

  void add(const YAML::Mark& mark, YAML::anchor_t anchor, json value,
           value_size size, bool merge_key) {
    if (anchor != YAML::NullAnchor) {
      charge_copy(mark, size.values);
      anchors_.insert_or_assign(anchor, anchored{value, size});
    }
    if (stack_.empty()) {
      document_ = std::move(value);
      return;
    }
    auto& f = stack_.back();
    f.size.values += size.values;
    f.size.height = std::max(f.size.height, size.height + 1);
    if (f.value.is_array()) {
      if (keeps_next(f.kept, true, {}, limits_))
        f.value.push_back(std::move(value));
      ++f.kept.elements;
      return;
    }
    if (!f.key) {
      if (!value.is_string())
        throw input_error(line(mark),
                          std::string{"map key must be a string, got "}
                            + type_name(value));
      f.key = std::move(value.get_ref<std::string&>());
      f.merging = merge_key;
      return;
    }
    if (f.merging) {
      add_merge(f, mark, std::move(value));
    } else if (keeps_next(f.kept, false, *f.key, limits_)) {
      on_member(f.kept, f.value, *f.key, value, line(mark));
      if (f.kept.skipped_kind)
        f.merges.clear();
      f.value[*f.key] = std::move(value); // a repeated key: the last wins
    }
    f.key.reset();
    f.merging = false;
  }

  void add_merge(frame& f, const YAML::Mark& mark, json value) const {
    if (value.is_object()) {
      f.merges.push_back(std::move(value));
      return;
    }
    auto bad = [&](const json& v) {
      return input_error(line(mark),
                         std::string{"the merge key << needs a map or a list "
                                     "of maps, got "}
                           + type_name(v));
    };
    if (!value.is_array())
      throw bad(value);
    for (auto& element : value) {
      if (!element.is_object())
        throw bad(element);
      f.merges.push_back(std::move(element));
    }
  }

  const manifest_limits& limits_;
  std::vector<frame> stack_;
  std::unordered_map<YAML::anchor_t, anchored> anchors_;
  json document_;
  YAML::Mark document_start_;
  /// Values copied for anchors and aliases so far, over all documents, and
  /// before the last document.
  std::size_t copied_values_ = 0;
  std::size_t copied_at_start_ = 0;
  /// Lines of the whole text before the parser's own text.
  std::size_t line_base_ = 0;
  bool skip_kinds_ = true;
};

/// The offset in `text` of what `mark` points at: marks count bytes after
/// a byte order mark.
std::size_t offset_of(std::string_view text, const YAML::Mark& mark) {
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  return static_cast<std::size_t>(std::max(mark.pos, 0))
         + (text.substr(0, bom.size()) == bom ? bom.size() : 0);
}

/// The error for a token that yaml-cpp neither parses nor consumes, in a
/// parser's `text` that starts at line `line_base` (0-based) of the whole.
input_error stray_token(std::string_view text, const YAML::Mark& mark,
                        std::size_t line_base) {
  auto offset = offset_of(text, mark);
  auto line = line_of(mark) == 0 ? 0 : line_of(mark) + line_base;
  if (offset < text.size() && text[offset] > ' ' && text[offset] < 0x7F)
    return input_error(line,
                       std::string{"unexpected '"} + text[offset] + "'");
  return input_error(line, "unexpected token");
}

/// `text` with every carriage return that does not start a CR LF pair
/// turned into a line feed. YAML 1.2 breaks lines at LF, CR LF and a lone
/// CR alike (and JSON treats CR as whitespace), but yaml-cpp 0.7 takes a
/// lone CR for an ordinary character: a key behind one was read as part
/// of a plain scalar and silently lost. One byte for one, so offsets keep.
std::string with_line_feeds(std::string_view text) {
  std::string res{text};
  for (std::size_t i = res.find('\r'); i != std::string::npos;
       i = res.find('\r', i + 1))
    if (i + 1 == res.size() || res[i + 1] != '\n')
      res[i] = '\n';
  return res;
}

} // namespace

void for_each_yaml_document(std::string_view original,
                            const manifest_limits& limits,
                            const document_handler& on_document) {
  auto normalized = with_line_feeds(original);
  const std::string_view whole = normalized;
  // The parser's own text: the whole text, or after a repeated_kind_error
  // the rest of it from the line where that document starts, parsed again
  // from there (each document is parsed at most twice).
  std::size_t base = 0;
  std::size_t line_base = 0;
  auto in = std::make_unique<std::istringstream>(normalized);
  auto parser = std::make_unique<YAML::Parser>(*in);
  json_builder builder{limits};
  int previous_start = -1;
  // After a restart: the documents starting before the one parsed again
  // were handed already (only when the restart line holds one too).
  std::size_t resume_at = 0;
  bool restarted = false;
  for (std::size_t index = 0;;) {
    auto text = whole.substr(base);
    bool more = false;
    try {
      more = parser->HandleNextDocument(builder);
    } catch (const repeated_kind_error& e) {
      // Parse this document again from the start of its line, keeping
      // what a skipped kind would drop; then go on from there as before.
      const auto& start = builder.document_start();
      auto at = base + offset_of(text, start);
      // Each restart must be for a later document than the last one, or
      // the parse would go round without end: then the error stands.
      if (restarted && at <= resume_at)
        throw input_error(e);
      restarted = true;
      auto cut = whole.rfind('\n', at == 0 ? 0 : at - 1);
      cut = cut == std::string_view::npos || cut < base ? base : cut + 1;
      line_base += static_cast<std::size_t>(std::max(start.line, 0));
      resume_at = at;
      base = cut;
      in = std::make_unique<std::istringstream>(std::string{whole.substr(cut)});
      parser = std::make_unique<YAML::Parser>(*in);
      builder.restart(line_base, false);
      previous_start = -1;
      continue;
    } catch (const YAML::DeepRecursion& e) {
      // Only reachable with a max_depth above yaml-cpp's own guard.
      throw input_error(builder.line(e.mark),
                        "nesting too deep for the YAML parser");
    } catch (const YAML::Exception& e) {
      auto line = builder.line(e.mark);
      auto column = static_cast<std::size_t>(std::max(e.mark.column, 0));
      if (auto hint = yaml_syntax_hint(whole, line, column, e.msg))
        throw input_error(line, *hint);
      throw input_error(line, e.msg);
    }
    if (!more)
      return;
    // yaml-cpp 0.7 answers a token it cannot place (a ',' at the start of a
    // document) with an empty document and leaves the token where it is, so
    // the next document starts there again, without end.
    const auto& start = builder.document_start();
    if (start.pos == previous_start)
      throw stray_token(text, start, line_base);
    previous_start = start.pos;
    auto at = base + offset_of(text, start);
    auto document = builder.take_document();
    if (at < resume_at)
      continue; // handed before the restart
    builder.skip_kinds(true); // only a document parsed again keeps all
    on_document(index++, std::move(document));
  }
}
} // namespace podref::detail
