#include "podref/manifest/detail/json_fields.hpp"

#include <string>

#include "podref/manifest/detail/yaml_scalar.hpp"
#include "podref/messages/quoted_part.hpp"

namespace podref::detail {

namespace {

bool is_plain_key(std::string_view key) noexcept {
  if (key.empty())
    return false;
  for (char c : key) {
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!word)
      return false;
  }
  return true;
}

std::string message_of(const field_path& at, const std::string& problem) {
  auto path = at.str();
  if (path.empty())
    return problem;
  return path + ": " + problem;
}

} // namespace

std::string field_path::str() const {
  std::string out;
  render(out);
  return out;
}

void field_path::render(std::string& out) const {
  if (parent_ == nullptr) {
    out += key_;
    return;
  }
  parent_->render(out);
  if (index_plus_one_ != 0) {
    out += '[';
    out += std::to_string(index_plus_one_ - 1);
    out += ']';
  } else if (is_plain_key(key_) && key_.size() <= max_quoted_bytes) {
    if (!out.empty())
      out += '.';
    out += key_;
  } else {
    // Keys come from the input: escape them as JSON strings so that quotes
    // and control characters cannot garble the message.
    out += '[';
    out += json(std::string{quoted_part(key_)})
             .dump(-1, ' ', false, json::error_handler_t::replace);
    out += omitted_note(key_);
    out += ']';
  }
}

field_error::field_error(const field_path& at, const std::string& problem)
  : std::runtime_error(message_of(at, problem)) {
  // nop
}

void fail(const field_path& at, const std::string& problem) {
  throw field_error(at, problem);
}

const char* type_name(const json& value) noexcept {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    case json::value_t::array:
      return "a list";
    case json::value_t::object:
      return "a map";
    default:
      return "binary data";
  }
}

void fail_type(const json& value, const field_path& at, const char* what) {
  std::string problem = std::string{"expected "} + what + ", got "
                        + type_name(value);
  if (value.is_boolean() && std::string_view{what} == "a string")
    problem += " (quote it: YAML reads true and false as booleans)";
  fail(at, problem);
}

void expect_map(const json& value, const field_path& at) {
  if (!value.is_object() && !value.is_null())
    fail_type(value, at, "a map");
}

void expect_list(const json& value, const field_path& at) {
  if (!value.is_array() && !value.is_null())
    fail_type(value, at, "a list");
}

void check_length(const json& list, const field_path& at,
                  const list_limit& limit) {
  if (list.size() > limit.max)
    fail(at, "more " + std::string{limit.what} + " than the limit of "
               + std::to_string(limit.max) + " per "
               + std::string{limit.owner});
}

const json* member(const json& map, std::string_view key) {
  if (!map.is_object())
    return nullptr;
  auto i = map.find(key);
  if (i == map.end() || i->is_null())
    return nullptr;
  return &*i;
}

bool has_map(const json& map, std::string_view key, const field_path& at) {
  const auto* value = member(map, key);
  if (value == nullptr)
    return false;
  expect_map(*value, at.field(key));
  return true;
}

std::string to_string(const json& value, const field_path& at) {
  if (!value.is_string())
    fail_type(value, at, "a string");
  return value.get_ref<const std::string&>();
}

void read(const json& map, std::string_view key, const field_path& at,
          std::string& out) {
  if (const auto* value = member(map, key))
    out = to_string(*value, at.field(key));
}

void read(const json& map, std::string_view key, const field_path& at,
          std::optional<bool>& out) {
  const auto* value = member(map, key);
  if (value == nullptr)
    return;
  if (value->is_string())
    if (auto word = yaml11_boolean(value->get_ref<const std::string&>())) {
      out = *word;
      return;
    }
  if (!value->is_boolean())
    fail_type(*value, at.field(key), "a boolean");
  out = value->get<bool>();
}

void read(const json& map, std::string_view key, const field_path& at,
          std::map<std::string, std::string>& out) {
  const auto* value = member(map, key);
  if (value == nullptr)
    return;
  const auto path = at.field(key);
  expect_map(*value, path);
  for (const auto& [name, text] : value->items())
    out[name] = text.is_null() ? std::string{}
                               : to_string(text, path.field(name));
}

} // namespace podref::detail
