#include "podref/manifest/detail/yaml_json.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "podref/manifest/detail/json_fields.hpp"
#include "podref/manifest/detail/kept_shape.hpp"
#include "podref/manifest/detail/yaml_events.hpp"
#include "podref/manifest/detail/yaml_scalar.hpp"
#include "podref/messages/quoted_part.hpp"

namespace podref::detail {

namespace {

std::string quoted_text(std::string_view text) {
  return json(std::string{quoted_part(text)})
           .dump(-1, ' ', false, json::error_handler_t::replace)
         + omitted_note(text);
}

/// The JSON value of a scalar with the reader's tag: "?" for plain scalars
/// without a tag, "!" for quoted and block scalars, else the explicit tag.
json resolve_scalar(std::size_t line, std::string_view tag,
                    const std::string& text) {
  if (tag == "?")
    return resolve_plain_scalar(text);
  if (auto value = resolve_tagged_scalar(tag, text))
    return std::move(*value);
  // Only the core tags reject text; show them in their short form.
  auto name = tag.substr(tag.rfind(':') + 1);
  throw input_error(line, quoted_text(text) + " is not a valid !!"
                            + std::string{name});
}

/// The size of a built value, for the depth and alias limits.
struct value_size {
  /// Values in the tree, the root included.
  std::size_t values = 1;
  /// Levels of maps and lists, the root included (0 for a scalar).
  std::size_t height = 0;
};

/// Builds one JSON value per document from libyaml's parse events. libyaml
/// does not recurse; the depth check in open() bounds this builder's stack.
class json_builder {
public:
  explicit json_builder(const manifest_limits& limits) : limits_(limits) {
    // nop
  }

  /// Reads the next document's events into take_document(); false at the
  /// end of the stream.
  bool read_document(yaml_event_reader& reader) {
    for (;;) {
      const auto& e = reader.next();
      switch (e.type) {
        case yaml_event_type::stream_end:
          return false;
        case yaml_event_type::document_start:
          start_document(e);
          break;
        case yaml_event_type::document_end:
          return true;
        case yaml_event_type::scalar:
          on_scalar(e);
          break;
        case yaml_event_type::alias:
          on_alias(e);
          break;
        case yaml_event_type::sequence_start:
          open(e, true);
          break;
        case yaml_event_type::map_start:
          open(e, false);
          break;
        case yaml_event_type::sequence_end:
        case yaml_event_type::map_end:
          close();
          break;
      }
    }
  }

  json take_document() {
    return std::move(document_);
  }

  /// Where the last document started.
  const yaml_position& document_start() const noexcept {
    return document_start_;
  }

  /// The offset where the line of the last document's start begins.
  std::size_t document_line_begin() const noexcept {
    return document_line_begin_;
  }

  /// Prepares parsing again from where the last document started: what
  /// that document charged against the alias limit is taken back.
  /// `skip_kinds`: whether a skipped kind drops the next documents (see
  /// repeated_kind_error).
  void restart(bool skip_kinds) noexcept {
    copied_values_ = copied_at_start_;
    skip_kinds_ = skip_kinds;
  }

  void skip_kinds(bool on) noexcept {
    skip_kinds_ = on;
  }

private:
  /// An open map or list.
  struct frame {
    /// Null while it is neither kept nor typed (see open()).
    json value;
    bool list;
    yaml_position start;
    std::string anchor;
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

  void start_document(const yaml_event& e) {
    document_start_ = e.start;
    document_line_begin_ = e.line_begin;
    copied_at_start_ = copied_values_;
    stack_.clear();
    anchors_.clear(); // anchors are local to their document
    document_ = nullptr;
  }

  void on_alias(const yaml_event& e) {
    auto i = anchors_.find(std::string{e.anchor});
    if (i == anchors_.end()) {
      bool open = std::any_of(stack_.begin(), stack_.end(),
                              [&](const frame& f) {
                                return f.anchor == e.anchor;
                              });
      if (open)
        throw input_error(e.start.line, "alias of an anchor that is not "
                                        "complete yet (a recursive alias)");
      // kubectl's text, the name quoted in part.
      throw input_error(e.start.line,
                        "unknown anchor '" + std::string{quoted_part(e.anchor)}
                          + "'" + omitted_note(e.anchor) + " referenced");
    }
    auto size = i->second.size;
    check_size(e.end);
    check_depth(e.start, stack_.size() + size.height);
    charge_copy(e.start, size.values);
    // A copy only where it is kept: elsewhere its type does for the checks.
    const auto& value = i->second.value;
    add(e.start, {}, keeps_next_value() ? json(value) : like(value), size,
        false);
  }

  void on_scalar(const yaml_event& e) {
    check_size(e.end);
    bool plain = e.tag == "?";
    // A plain value stored nowhere needs no type: it cannot fail.
    if (plain && e.anchor.empty() && !keeps_next_value()) {
      add(e.start, {}, nullptr, value_size{}, false);
      return;
    }
    std::string text{e.value};
    bool merge_key = plain && text == "<<" && expects_key();
    add(e.start, e.anchor, resolve_scalar(e.start.line, e.tag, text),
        value_size{}, merge_key);
  }

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
    return keeps_next(f.kept, f.list, f.list ? std::string_view{} : *f.key,
                      limits_);
  }

  /// What a map or list opened where the parser is keeps.
  keep keep_opened(bool anchored, bool list) const noexcept {
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
    return keep_child(f.kept, f.list, f.list ? std::string_view{} : *f.key,
                      anchored, limits_);
  }

  bool expects_key() const noexcept {
    return !stack_.empty() && !stack_.back().list && !stack_.back().key;
  }

  void check_depth(const yaml_position& at, std::size_t depth) const {
    if (depth > limits_.max_depth)
      throw input_error(at.line,
                        "nesting deeper than the limit of "
                          + std::to_string(limits_.max_depth) + " levels");
  }

  /// Fails when text that ends at `end` ends past max_document_bytes from
  /// the start of the document.
  void check_size(const yaml_position& end) const {
    if (end.offset >= document_start_.offset
        && end.offset - document_start_.offset > limits_.max_document_bytes)
      throw input_error(document_start_.line,
                        document_over_limit(limits_.max_document_bytes));
  }

  /// Counts `values` copied for an anchor or an alias against the limit.
  void charge_copy(const yaml_position& at, std::size_t values) {
    copied_values_ += values;
    if (copied_values_ > limits_.max_alias_values)
      throw input_error(
        at.line, "anchors and aliases copy more values than the limit of "
                   + std::to_string(limits_.max_alias_values));
  }

  void open(const yaml_event& e, bool list) {
    check_size(e.end);
    check_depth(e.start, stack_.size() + 1);
    auto kept = keep_opened(!e.anchor.empty(), list);
    // Only a kept map or list, a key and a merged value need their type;
    // the others save building an empty one.
    bool typed = kept.all || kept.shape != nullptr || expects_key()
                 || (!stack_.empty() && stack_.back().merging);
    json value;
    if (typed)
      value = list ? json::array() : json::object();
    stack_.push_back(frame{std::move(value), list, e.start,
                           std::string{e.anchor}, value_size{1, 1},
                           std::nullopt, false, {}, kept});
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
    add(f.start, f.anchor, std::move(f.value), f.size, false);
  }

  void add(const yaml_position& at, std::string_view anchor, json value,
           value_size size, bool merge_key) {
    if (!anchor.empty()) {
      charge_copy(at, size.values);
      anchors_.insert_or_assign(std::string{anchor}, anchored{value, size});
    }
    if (stack_.empty()) {
      document_ = std::move(value);
      return;
    }
    auto& f = stack_.back();
    f.size.values += size.values;
    f.size.height = std::max(f.size.height, size.height + 1);
    if (f.list) {
      if (keeps_next(f.kept, true, {}, limits_))
        f.value.push_back(std::move(value));
      ++f.kept.elements;
      return;
    }
    if (!f.key) {
      if (!value.is_string())
        throw input_error(at.line,
                          std::string{"map key must be a string, got "}
                            + type_name(value));
      f.key = std::move(value.get_ref<std::string&>());
      f.merging = merge_key;
      return;
    }
    if (f.merging) {
      add_merge(f, at, std::move(value));
    } else if (keeps_next(f.kept, false, *f.key, limits_)) {
      on_member(f.kept, f.value, *f.key, value, at.line);
      if (f.kept.skipped_kind)
        f.merges.clear();
      f.value[*f.key] = std::move(value); // a repeated key: the last wins
    }
    f.key.reset();
    f.merging = false;
  }

  static void add_merge(frame& f, const yaml_position& at, json value) {
    if (value.is_object()) {
      f.merges.push_back(std::move(value));
      return;
    }
    auto bad = [&](const json& v) {
      return input_error(at.line,
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
  std::unordered_map<std::string, anchored> anchors_;
  json document_;
  yaml_position document_start_;
  std::size_t document_line_begin_ = 0;
  /// Values copied for anchors and aliases so far, over all documents, and
  /// before the last document.
  std::size_t copied_values_ = 0;
  std::size_t copied_at_start_ = 0;
  bool skip_kinds_ = true;
};

} // namespace

void for_each_yaml_document(std::string_view text,
                            const manifest_limits& limits,
                            const document_handler& on_document) {
  // The reader parses the whole text, or after a repeated_kind_error the
  // rest of it from the line where that document starts, parsed again from
  // there (each document is parsed at most twice).
  auto reader = std::make_unique<yaml_event_reader>(text, 0, 0);
  json_builder builder{limits};
  // After a restart: the documents starting before the one parsed again
  // were handed already (only when the restart line holds one too).
  std::size_t resume_at = 0;
  bool restarted = false;
  for (std::size_t index = 0;;) {
    bool more = false;
    try {
      more = builder.read_document(*reader);
    } catch (const repeated_kind_error& e) {
      // Parse this document again from the start of its line, keeping
      // what a skipped kind would drop; then go on from there as before.
      auto start = builder.document_start();
      // Each restart must be for a later document than the last one, or
      // the parse would go round without end: then the error stands.
      if (restarted && start.offset <= resume_at)
        throw input_error(e);
      restarted = true;
      resume_at = start.offset;
      reader = std::make_unique<yaml_event_reader>(
        text, builder.document_line_begin(), start.line - 1);
      builder.restart(false);
      continue;
    }
    if (!more)
      return;
    auto at = builder.document_start().offset;
    auto document = builder.take_document();
    if (at < resume_at)
      continue; // handed before the restart
    builder.skip_kinds(true); // only a document parsed again keeps all
    on_document(index++, std::move(document));
  }
}

} // namespace podref::detail
