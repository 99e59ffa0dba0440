#include "podref/wire/detail/opaque_kinds.hpp"

#include <cstdint>
#include <memory>
#include <utility>

#include <simdjson.h>

#include "podref/messages/object_validation.hpp"
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

/// The server's defaults of a new or replaced object.
void add_defaults(resource res, object_meta& meta, json& rest) {
  if (res == resource::pods) {
    auto& status = rest["status"];
    if (!status.is_object())
      status = json::object();
    if (!status.contains("phase"))
      status["phase"] = "Pending";
  } else if (res == resource::namespaces) {
    meta.labels["kubernetes.io/metadata.name"] = meta.name;
    auto& spec = rest["spec"];
    if (!spec.is_object())
      spec = json::object();
    if (!spec.contains("finalizers"))
      spec["finalizers"] = json::array({"kubernetes"});
    auto& status = rest["status"];
    if (!status.is_object())
      status = json::object();
    if (!status.contains("phase"))
      status["phase"] = "Active";
  }
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
  if (auto problems = find_meta_problems(meta, res); !problems.empty())
    return {{}, invalid_status(res, meta.name, problems)};
  auto rest = json::object();
  for (auto& [k, v] : doc.items())
    if (k != "kind" && k != "apiVersion" && k != "metadata")
      rest[k] = v;
  if (res == resource::pods) {
    auto spec = rest.find("spec");
    bool has_containers = false;
    if (spec != rest.end() && spec->is_object()) {
      auto containers = spec->find("containers");
      has_containers = containers != spec->end() && containers->is_array()
                       && !containers->empty();
    }
    if (!has_containers)
      return {{}, invalid_status(res, meta.name,
                                 "spec.containers: Required value")};
  }
  add_defaults(res, meta, rest);
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
    x["apiVersion"] = "v1";
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
