#include "podref/messages/object_validation.hpp"

#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "podref/messages/pod_spec_update.hpp"
#include "podref/messages/quoted_part.hpp"
#include "podref/messages/resource_kinds.hpp"
#include "podref/messages/validation.hpp"

namespace podref {

namespace {

// -- upstream's texts -----------------------------------------------------------

constexpr std::string_view qualified_name_message
  = "must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyName',  or "
    "'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

constexpr std::string_view label_value_message
  = "a valid label must be an empty string or consist of alphanumeric "
    "characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
    "[A-Za-z0-9])?')";

constexpr std::string_view config_key_message
  = "a valid config key must consist of alphanumeric characters, '-', '_' "
    "or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used "
    "for validation is '[-._a-zA-Z0-9]+')";

constexpr std::string_view immutable_set
  = "Forbidden: field is immutable when `immutable` is set";

bool is_alnum(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9');
}

/// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool matches_qualified_name(std::string_view v) noexcept {
  if (v.empty() || !is_alnum(v.front()) || !is_alnum(v.back()))
    return false;
  for (char c : v)
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

std::string max_length(std::size_t n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

std::string too_long(std::size_t n) {
  return "Too long: must have at most " + std::to_string(n) + " bytes";
}

/// `base[key]`, as upstream's field.Path.Key writes it; a long key by its
/// quoted part.
std::string keyed(std::string_view base, std::string_view key) {
  auto shown = quoted_part(key);
  return std::string{base} + "[" + std::string{shown}
         + (shown.size() < key.size() ? "..." : "") + "]";
}

/// Every problem of `name` as the metadata.name of a `kind`, by the kind's
/// name rule.
std::vector<std::string> name_errors(resource kind, std::string_view name) {
  switch (kind_of(kind).names) {
    case name_rule::label:
      return dns1123_label_errors(name);
    case name_rule::path_segment:
      return path_segment_errors(name);
    case name_rule::subdomain:
      break;
  }
  return dns1123_subdomain_errors(name);
}

/// One problem per message of `errors` about `value` at `path`.
void add_invalid(std::vector<field_problem>& out, const std::string& path,
                 std::string_view value,
                 const std::vector<std::string>& errors) {
  for (const auto& e : errors)
    out.push_back({path, invalid_value(value, {e})});
}

template <class Map>
void add_key_problems(std::vector<field_problem>& out, std::string_view base,
                      const Map& map) {
  for (const auto& [key, value] : map)
    add_invalid(out, keyed(base, key), key, config_key_errors(key));
}

/// Why `bytes` is not what Go's json.Unmarshal takes into a
/// map[string]interface{}, or empty (null decodes to an empty map). A
/// syntax error names its offset, never the character (Go quotes it: a
/// byte of the secret).
std::string docker_config_error(std::string_view bytes) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(bytes);
  } catch (const nlohmann::json::parse_error& e) {
    if (e.byte > bytes.size())
      return "unexpected end of JSON input";
    return "invalid character at input byte " + std::to_string(e.byte - 1);
  }
  if (doc.is_object() || doc.is_null())
    return {};
  const char* type = doc.is_string()    ? "string"
                     : doc.is_boolean() ? "bool"
                     : doc.is_array()   ? "array"
                                        : "number";
  return std::string{"json: cannot unmarshal "} + type
         + " into Go value of type map[string]interface {}";
}

void add_required(std::vector<field_problem>& out, std::string path) {
  out.push_back({std::move(path), required_value()});
}

} // namespace

// -- names, labels and keys -----------------------------------------------------

std::vector<std::string> qualified_name_errors(std::string_view key) {
  std::vector<std::string> errs;
  auto slash = key.find('/');
  auto name = key;
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back("a qualified name " + std::string{qualified_name_message}
                     + " with an optional DNS subdomain prefix and '/' "
                       "(e.g. 'example.com/MyName')");
      return errs;
    }
    auto prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty())
      errs.emplace_back("prefix part must be non-empty");
    else
      for (const auto& e : dns1123_subdomain_errors(prefix))
        errs.push_back("prefix part " + e);
  }
  if (name.empty())
    errs.emplace_back("name part must be non-empty");
  else if (name.size() > 63)
    errs.push_back("name part " + max_length(63));
  if (!matches_qualified_name(name))
    errs.push_back("name part " + std::string{qualified_name_message});
  return errs;
}

std::vector<std::string> label_value_errors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63)
    errs.push_back(max_length(63));
  if (!value.empty() && !matches_qualified_name(value))
    errs.emplace_back(label_value_message);
  return errs;
}

std::vector<std::string> config_key_errors(std::string_view key) {
  std::vector<std::string> errs;
  if (key.size() > dns1123_subdomain_max_length)
    errs.push_back(max_length(dns1123_subdomain_max_length));
  bool ok = !key.empty();
  for (char c : key)
    ok = ok && (is_alnum(c) || c == '-' || c == '_' || c == '.');
  if (!ok)
    errs.emplace_back(config_key_message);
  if (key == ".")
    errs.emplace_back("must not be '.'");
  else if (key == "..")
    errs.emplace_back("must not be '..'");
  else if (key.substr(0, 2) == "..")
    errs.emplace_back("must not start with '..'");
  return errs;
}

// -- objects --------------------------------------------------------------------

std::vector<field_problem> find_meta_problems(const object_meta& meta,
                                              resource kind,
                                              bool name_required) {
  std::vector<field_problem> out;
  if (meta.name.empty()) {
    // With a generateName the server names a create before storing it
    // (the write checks the prefix then).
    bool generated = meta.server && !meta.server->generate_name.empty();
    if (name_required && !generated)
      out.push_back({"metadata.name",
                     required_value("name or generateName is required")});
  } else {
    add_invalid(out, "metadata.name", meta.name, name_errors(kind, meta.name));
  }
  if (is_namespaced(kind)) {
    if (meta.ns.empty())
      add_required(out, "metadata.namespace");
    else
      add_invalid(out, "metadata.namespace", meta.ns,
                  dns1123_label_errors(meta.ns));
  }
  for (const auto& [key, value] : meta.labels) {
    add_invalid(out, "metadata.labels", key, qualified_name_errors(key));
    add_invalid(out, "metadata.labels", value, label_value_errors(value));
  }
  std::size_t annotation_bytes = 0;
  for (const auto& [key, value] : meta.annotations) {
    // Upstream checks annotation keys lower-cased.
    std::string lower = key;
    for (auto& c : lower)
      if (c >= 'A' && c <= 'Z')
        c = static_cast<char>(c - 'A' + 'a');
    add_invalid(out, "metadata.annotations", key, qualified_name_errors(lower));
    annotation_bytes += key.size() + value.size();
  }
  if (annotation_bytes > max_annotation_bytes)
    out.push_back({"metadata.annotations", too_long(max_annotation_bytes)});
  return out;
}

std::vector<field_problem> find_secret_content_problems(const secret& s) {
  std::vector<field_problem> out;
  // The data the server validates: stringData folded in, winning.
  std::map<std::string_view, std::string_view> data;
  for (const auto& [k, v] : s.data)
    data[k] = v;
  for (const auto& [k, v] : s.string_data)
    data[k] = v;
  std::size_t total = 0;
  for (const auto& [key, value] : data) {
    add_invalid(out, keyed("data", key), key, config_key_errors(key));
    total += value.size();
  }
  if (total > max_object_data_bytes)
    out.push_back({"data", too_long(max_object_data_bytes)});
  auto has = [&data](std::string_view key) { return data.count(key) != 0; };
  const auto& type = s.type;
  if (type == "kubernetes.io/service-account-token") {
    auto i = s.metadata.annotations.find("kubernetes.io/service-account.name");
    if (i == s.metadata.annotations.end() || i->second.empty())
      add_required(out, "metadata.annotations[kubernetes.io/service-account."
                        "name]");
  } else if (type == "kubernetes.io/dockercfg"
             || type == "kubernetes.io/dockerconfigjson") {
    std::string_view key = type == "kubernetes.io/dockercfg"
                             ? ".dockercfg"
                             : ".dockerconfigjson";
    auto path = keyed("data", key);
    if (!has(key))
      add_required(out, path);
    else if (auto why = docker_config_error(data[key]); !why.empty())
      out.push_back({path, invalid_value("<secret contents redacted>", {why})});
  } else if (type == "kubernetes.io/basic-auth") {
    // Upstream's paths really read `data[%s][username]`.
    if (!has("username") && !has("password")) {
      add_required(out, "data[%s][username]");
      add_required(out, "data[%s][password]");
    }
  } else if (type == "kubernetes.io/ssh-auth") {
    auto i = data.find("ssh-privatekey");
    if (i == data.end() || i->second.empty())
      add_required(out, "data[%s][ssh-privatekey]");
  } else if (type == "kubernetes.io/tls") {
    if (!has("tls.crt"))
      add_required(out, "data[tls.crt]");
    if (!has("tls.key"))
      add_required(out, "data[tls.key]");
  }
  return out;
}

std::vector<field_problem>
find_config_map_content_problems(const config_map& c) {
  std::vector<field_problem> out;
  std::size_t total = 0;
  for (const auto& [key, value] : c.data) {
    auto path = keyed("data", key);
    add_invalid(out, path, key, config_key_errors(key));
    if (c.binary_data.count(key) != 0)
      out.push_back({path, invalid_value(key, {"duplicate of key present in "
                                               "binaryData"})});
    total += value.size();
  }
  add_key_problems(out, "binaryData", c.binary_data);
  for (const auto& [key, value] : c.binary_data)
    total += value.size();
  // Upstream names the whole object, which its path prints as "[]".
  if (total > max_object_data_bytes)
    out.push_back({"[]", too_long(max_object_data_bytes)});
  return out;
}

std::vector<field_problem> find_object_problems(const api_object& obj) {
  auto out = find_meta_problems(obj.meta(), obj.kind());
  std::vector<field_problem> content;
  if (auto s = obj.as_secret())
    content = find_secret_content_problems(*s);
  else if (auto c = obj.as_config_map())
    content = find_config_map_content_problems(*c);
  out.insert(out.end(), std::make_move_iterator(content.begin()),
             std::make_move_iterator(content.end()));
  return out;
}

std::vector<field_problem> find_update_problems(const api_object& old,
                                                const api_object& updated) {
  std::vector<field_problem> out;
  if (auto s = updated.as_secret(), was = old.as_secret(); s && was) {
    if (s->type != was->type)
      out.push_back({"type", invalid_value(s->type, {"field is immutable"})});
    if (was->is_immutable()) {
      if (!s->is_immutable())
        out.push_back({"immutable", std::string{immutable_set}});
      if (s->data != was->data)
        out.push_back({"data", std::string{immutable_set}});
    }
  } else if (auto c = updated.as_config_map(), was_c = old.as_config_map();
             c && was_c) {
    if (was_c->is_immutable()) {
      if (!c->is_immutable())
        out.push_back({"immutable", std::string{immutable_set}});
      if (c->data != was_c->data)
        out.push_back({"data", std::string{immutable_set}});
      if (c->binary_data != was_c->binary_data)
        out.push_back({"binaryData", std::string{immutable_set}});
    }
  } else if (updated.kind() == resource::pods && old.kind() == resource::pods
             && updated.as_opaque() && old.as_opaque()) {
    out = find_pod_spec_update_problems(old.as_opaque()->body,
                                        updated.as_opaque()->body);
  }
  return out;
}

std::string invalid_object_message(std::string_view kind,
                                   std::string_view name,
                                   const std::vector<field_problem>& problems) {
  std::vector<std::string> shown;
  std::set<std::string> seen;
  for (const auto& p : problems) {
    auto text = p.path.empty() ? p.problem : p.path + ": " + p.problem;
    if (seen.insert(text).second)
      shown.push_back(std::move(text));
  }
  auto out = std::string{kind} + " " + go_quoted(name) + " is invalid";
  if (shown.empty())
    return out;
  out += ": ";
  if (shown.size() == 1)
    return out + shown.front();
  out += "[";
  for (std::size_t i = 0; i < shown.size(); ++i)
    out += (i == 0 ? "" : ", ") + shown[i];
  return out + "]";
}

} // namespace podref
