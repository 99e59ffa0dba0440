// kubectl-style -o json / -o yaml (structured_print.hpp).
#include "structured_print.hpp"

#include <ostream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>
#include <yaml.h>

#include "podref/manifest/detail/yaml_scalar.hpp"

namespace podref::cli {

namespace {

/// libyaml's emitter, writing into a string; throws on any emitter error
/// (only invalid UTF-8 could cause one, and the JSON parser refuses it).
class yaml_writer {
public:
  yaml_writer() {
    yaml_emitter_initialize(&emitter_);
    yaml_emitter_set_output(&emitter_, &yaml_writer::append, &text_);
    yaml_emitter_set_unicode(&emitter_, 1);
    yaml_emitter_set_indent(&emitter_, 2);
    yaml_emitter_set_width(&emitter_, -1); // kubectl folds no long line
  }
  yaml_writer(const yaml_writer&) = delete;
  yaml_writer& operator=(const yaml_writer&) = delete;
  ~yaml_writer() { yaml_emitter_delete(&emitter_); }

  void document(const nlohmann::json& doc) {
    yaml_event_t e;
    yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING);
    emit(e);
    yaml_document_start_event_initialize(&e, nullptr, nullptr, nullptr, 1);
    emit(e);
    value(doc);
    yaml_document_end_event_initialize(&e, 1);
    emit(e);
    yaml_stream_end_event_initialize(&e);
    emit(e);
    if (!yaml_emitter_flush(&emitter_))
      fail();
  }

  const std::string& text() const noexcept { return text_; }

private:
  static int append(void* out, unsigned char* buffer, size_t size) {
    static_cast<std::string*>(out)->append(reinterpret_cast<char*>(buffer),
                                           size);
    return 1;
  }

  void value(const nlohmann::json& x) {
    yaml_event_t e;
    if (x.is_object()) {
      yaml_mapping_start_event_initialize(&e, nullptr, nullptr, 1,
                                          YAML_BLOCK_MAPPING_STYLE);
      emit(e);
      for (const auto& [k, v] : x.items()) { // sorted, as kubectl prints
        string(k);
        value(v);
      }
      yaml_mapping_end_event_initialize(&e);
      emit(e);
    } else if (x.is_array()) {
      yaml_sequence_start_event_initialize(&e, nullptr, nullptr, 1,
                                           YAML_BLOCK_SEQUENCE_STYLE);
      emit(e);
      for (const auto& v : x)
        value(v);
      yaml_sequence_end_event_initialize(&e);
      emit(e);
    } else if (x.is_string()) {
      string(x.get_ref<const std::string&>());
    } else {
      // null, numbers and booleans as JSON writes them, plain
      scalar(x.dump(), YAML_PLAIN_SCALAR_STYLE);
    }
  }

  /// A string as go-yaml v2 writes one: double-quoted when, plain, it would
  /// read back as another type (YAML 1.2's or YAML 1.1's booleans), literal
  /// when it holds a line break, plain where libyaml allows it otherwise.
  void string(const std::string& s) {
    bool other_type = !detail::resolve_plain_scalar(s).is_string()
                      || detail::yaml11_boolean(s).has_value();
    auto style = other_type                      ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                 : s.find('\n') != s.npos        ? YAML_LITERAL_SCALAR_STYLE
                                                 : YAML_ANY_SCALAR_STYLE;
    scalar(s, style);
  }

  void scalar(const std::string& s, yaml_scalar_style_t style) {
    yaml_event_t e;
    auto* text = reinterpret_cast<yaml_char_t*>(const_cast<char*>(s.data()));
    if (!yaml_scalar_event_initialize(&e, nullptr, nullptr, text,
                                      static_cast<int>(s.size()), 1, 1, style))
      fail();
    emit(e);
  }

  void emit(yaml_event_t& e) {
    if (!yaml_emitter_emit(&emitter_, &e)) // takes e, even on failure
      fail();
  }

  [[noreturn]] void fail() const {
    throw std::runtime_error(std::string("YAML output: ")
                             + (emitter_.problem ? emitter_.problem : "error"));
  }

  yaml_emitter_t emitter_;
  std::string text_;
};

} // namespace

void print_structured(std::string_view json, bool yaml, std::ostream& out) {
  auto doc = nlohmann::json::parse(json.begin(), json.end());
  if (!yaml) {
    out << doc.dump(4) << '\n';
    return;
  }
  yaml_writer writer;
  writer.document(doc);
  out << writer.text();
}

} // namespace podref::cli
