#include "podref/wire/detail/opaque_kinds.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "podref/messages/object_validation.hpp"
#include "podref/messages/resource_kinds.hpp"
#include "podref/messages/validation.hpp"
#include "podref/wire/detail/json_object.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire::detail {

namespace {

using json = nlohmann::ordered_json;

/// A string map of metadata (labels, annotations); false if a value is not
/// a string.
bool read_string_map(const json& meta, const char* key,
                     std::map<std::string, std::string>& out) {
  auto i = meta.find(key);
  if (i == meta.end() || i->is_null())
    return true;
  if (!i->is_object())
    return false;
  for (const auto& [k, v] : i->items()) {
    if (!v.is_string())
      return false;
    out[k] = v.get<std::string>();
  }
  return true;
}

std::string read_string(const json& meta, const char* key) {
  auto i = meta.find(key);
  return i != meta.end() && i->is_string() ? i->get<std::string>()
                                           : std::string{};
}

/// A JSON value the server writes at a dotted path when it is absent.
struct default_field {
  const char* path;
  const char* value;
};

/// What the server checks and adds for one opaque kind, beyond the
/// metadata every kind gets (messages/object_validation.hpp's
/// find_meta_problems, the name by its row's name_rule in
/// messages/resource_kinds.hpp). A kind without a row takes the defaults of
/// opaque_rules{} (nothing required or added).
struct opaque_rules {
  resource res = resource::pods;
  /// Fields that must be present and not empty (null-terminated).
  std::array<const char*, 3> required{};
  /// Fields the server sets when absent (path null-terminated).
  std::array<default_field, 3> defaults{};
  /// The `kubernetes.io/metadata.name` label, set to the name.
  bool name_label = false;
  /// The manifest decoder must take the body (a Pod, a Node, a pod
  /// template), so that the front, the engine and `--load` read alike.
  bool engine_decodes = false;
  /// A DELETE answers the object (the registry's ReturnDeletedObject),
  /// else a Success Status.
  bool delete_answers_object = false;
};

/// The real server's validation and defaulting, reduced to what a client
/// of podref sees (docs/apiserver.md lists what is left out).
const opaque_rules rules[] = {
  {resource::pods, {"spec.containers"}, {{{"status.phase", "\"Pending\""}}},
   false, true, true},
  {resource::nodes, {}, {}, false, true, false},
  {resource::namespaces, {},
   {{{"spec.finalizers", "[\"kubernetes\"]"}, {"status.phase", "\"Active\""}}},
   true, false, true},
  {resource::service_accounts, {}, {}, false, false, true},
  {resource::deployments, {"spec.selector", "spec.template.spec.containers"},
   {{{"spec.replicas", "1"}, {"status", "{}"}}}, false, true, false},
  {resource::cluster_roles, {}, {}, false, false, false},
  {resource::cluster_role_bindings, {"roleRef.kind", "roleRef.name"}, {},
   false, false, false},
};

const opaque_rules& rules_of(resource res) {
  static const opaque_rules none;
  for (const auto& r : rules)
    if (r.res == res)
      return r;
  return none;
}

/// The member at dotted `path` of `x`, or null.
const json* find_path(const json& x, std::string_view path) {
  const json* at = &x;
  while (!path.empty()) {
    auto dot = path.find('.');
    auto key = path.substr(0, dot);
    if (!at->is_object())
      return nullptr;
    auto i = at->find(std::string{key});
    if (i == at->end())
      return nullptr;
    at = &*i;
    path = dot == std::string_view::npos ? std::string_view{}
                                         : path.substr(dot + 1);
  }
  return at;
}

/// Sets `value` at dotted `path` of `x` unless something is there; what is
/// on the way and not a map becomes one.
void set_default(json& x, std::string_view path, const json& value) {
  json* at = &x;
  for (;;) {
    auto dot = path.find('.');
    auto key = std::string{path.substr(0, dot)};
    if (!at->is_object())
      *at = json::object();
    if (dot == std::string_view::npos) {
      if (!at->contains(key))
        (*at)[key] = value;
      return;
    }
    at = &(*at)[key];
    path = path.substr(dot + 1);
  }
}

bool is_empty_value(const json* x) {
  return x == nullptr || x->is_null()
         || (x->is_string() && x->get_ref<const std::string&>().empty())
         || ((x->is_array() || x->is_object()) && x->empty());
}

} // namespace

bool too_deep(std::string_view body) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_json_depth)
        return true;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return false;
}

std::string string_at(const json& x, std::initializer_list<const char*> path) {
  const json* at = &x;
  for (auto key : path) {
    if (!at->is_object())
      return {};
    auto i = at->find(key);
    if (i == at->end())
      return {};
    at = &*i;
  }
  return at->is_string() ? at->get<std::string>() : std::string{};
}

std::string pod_node_name(const api_object& obj) {
  auto x = obj.as_opaque();
  if (!x || x->body.empty())
    return {};
  namespace od = simdjson::ondemand;
  thread_local od::parser parser;
  simdjson::padded_string text{x->body};
  od::document doc;
  if (parser.iterate(text).get(doc) != simdjson::SUCCESS)
    return {};
  od::object top;
  od::object spec;
  std::string_view name;
  if (doc.get_object().get(top) != simdjson::SUCCESS
      || top.find_field_unordered("spec").get_object().get(spec)
           != simdjson::SUCCESS
      || spec.find_field_unordered("nodeName").get_string().get(name)
           != simdjson::SUCCESS)
    return {};
  return std::string{name};
}

bool engine_decodes(resource res) {
  return rules_of(res).engine_decodes;
}

bool delete_answers_object(resource res) {
  return rules_of(res).delete_answers_object;
}

decoded_body decode_opaque_body(resource res, std::string_view body,
                                const std::string& path_ns) {
  if (too_deep(body))
    return {{}, bad_request_status("request body: nesting deeper than the "
                                   "limit of "
                                   + std::to_string(max_json_depth))};
  auto doc = json::parse(body, nullptr, false);
  if (!doc.is_object())
    return {{}, bad_request_status("request body: expected a JSON object")};
  auto server = server_metadata_of(doc);
  if (server.failure)
    return {{}, std::move(server.failure)};
  auto meta_json = doc.find("metadata");
  object_meta meta;
  meta.server = std::move(server.metadata);
  if (meta_json != doc.end() && meta_json->is_object()) {
    meta.name = read_string(*meta_json, "name");
    meta.uid = read_string(*meta_json, "uid");
    meta.resource_version = read_string(*meta_json, "resourceVersion");
    if (!read_string_map(*meta_json, "labels", meta.labels))
      return {{}, bad_request_status("metadata.labels: expected a map of "
                                     "strings")};
    if (!read_string_map(*meta_json, "annotations", meta.annotations))
      return {{}, bad_request_status("metadata.annotations: expected a map "
                                     "of strings")};
  }
  meta.ns = is_namespaced(res) ? path_ns : std::string{};
  auto rest = json::object();
  for (auto& [k, v] : doc.items())
    if (k != "kind" && k != "apiVersion" && k != "metadata")
      rest[k] = v;
  // Every problem of the metadata and of the kind's required fields, as
  // one 422.
  auto problems = find_meta_problems(meta, res);
  const auto& rule = rules_of(res);
  for (const char* field : rule.required) {
    if (field == nullptr)
      break;
    if (is_empty_value(find_path(rest, field)))
      problems.push_back({field, required_value()});
  }
  if (!problems.empty())
    return {{}, invalid_status(res, meta.name, problems)};
  for (const auto& d : rule.defaults) {
    if (d.path == nullptr)
      break;
    set_default(rest, d.path, json::parse(d.value));
  }
  if (rule.name_label)
    meta.labels["kubernetes.io/metadata.name"] = meta.name;
  auto obj = std::make_shared<opaque_object>();
  obj->metadata = std::move(meta);
  obj->body = json_text(rest);
  return {api_object{res, opaque_object_ptr{std::move(obj)}}, std::nullopt};
}

json opaque_fields(const api_object& obj) {
  auto o = obj ? obj.as_opaque() : nullptr;
  if (!o || o->body.empty())
    return json::object();
  auto x = json::parse(o->body, nullptr, false);
  return x.is_object() ? x : json::object();
}

json opaque_json(const api_object& obj, bool with_type) {
  json x;
  if (with_type) {
    x["kind"] = std::string{kind_name(obj.kind())};
    x["apiVersion"] = std::string{kind_of(obj.kind()).api_version};
  }
  auto o = obj.as_opaque();
  auto plain = metadata_json(obj.meta());
  if (o->deletion_timestamp.empty()) {
    x["metadata"] = std::move(plain);
  } else {
    // Go's ObjectMeta order: the deletion fields follow creationTimestamp.
    json meta;
    for (auto& [k, v] : plain.items()) {
      meta[k] = v;
      if (k == "creationTimestamp") {
        meta["deletionTimestamp"] = o->deletion_timestamp;
        if (o->deletion_grace_period_seconds)
          meta["deletionGracePeriodSeconds"]
            = *o->deletion_grace_period_seconds;
      }
    }
    x["metadata"] = std::move(meta);
  }
  auto fields = opaque_fields(obj);
  for (auto& [k, v] : fields.items())
    x[k] = std::move(v);
  return x;
}

} // namespace podref::wire::detail
