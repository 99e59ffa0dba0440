#include "podref/wire/codec.hpp"

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "podref/messages/base64.hpp"
#include "podref/messages/resource_kinds.hpp"
#include "podref/wire/detail/json_object.hpp"
#include "podref/wire/detail/opaque_kinds.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

json string_map(const std::map<std::string, std::string>& xs, bool base64) {
  auto result = json::object();
  for (const auto& [k, v] : xs)
    result[k] = base64 ? encode_base64(v) : v;
  return result;
}

} // namespace

api_object normalize_object(const api_object& obj, const std::string& ns) {
  if (obj.as_opaque()) {
    auto meta = obj.meta();
    meta.ns = is_namespaced(obj.kind()) ? ns : std::string{};
    return with_metadata(obj, std::move(meta));
  }
  if (auto s = obj.as_secret()) {
    auto copy = std::make_shared<secret>(*s);
    for (const auto& [k, v] : copy->string_data)
      copy->data[k] = v; // stringData wins over data
    copy->string_data.clear();
    copy->metadata.ns = ns;
    if (copy->type.empty())
      copy->type = "Opaque";
    return api_object{secret_ptr{std::move(copy)}};
  }
  auto copy = std::make_shared<config_map>(*obj.as_config_map());
  copy->metadata.ns = ns;
  return api_object{config_map_ptr{std::move(copy)}};
}

std::vector<std::string> initial_namespaces() {
  return {"default", "kube-node-lease", "kube-public", "kube-system"};
}

api_object namespace_object(const std::string& name) {
  auto body = json{{"kind", "Namespace"},
                   {"apiVersion", "v1"},
                   {"metadata", {{"name", name}}}};
  return detail::decode_opaque_body(resource::namespaces, body.dump(), "")
    .object;
}

namespace detail {

nlohmann::ordered_json metadata_json(const object_meta& meta) {
  json m;
  m["name"] = meta.name;
  if (meta.server && !meta.server->generate_name.empty())
    m["generateName"] = meta.server->generate_name;
  if (!meta.ns.empty())
    m["namespace"] = meta.ns;
  if (!meta.uid.empty())
    m["uid"] = meta.uid;
  if (!meta.resource_version.empty())
    m["resourceVersion"] = meta.resource_version;
  if (meta.creation_timestamp.empty())
    m["creationTimestamp"] = nullptr;
  else
    m["creationTimestamp"] = meta.creation_timestamp;
  if (!meta.labels.empty())
    m["labels"] = string_map(meta.labels, false);
  if (!meta.annotations.empty())
    m["annotations"] = string_map(meta.annotations, false);
  if (meta.server && !meta.server->managed_fields.empty()) {
    auto fields = json::parse(meta.server->managed_fields, nullptr, false);
    if (fields.is_array() && !fields.empty())
      m["managedFields"] = std::move(fields);
  }
  return m;
}

nlohmann::ordered_json object_json(const api_object& obj, bool with_type) {
  if (obj.as_opaque())
    return opaque_json(obj, with_type);
  json x;
  if (with_type) {
    x["kind"] = std::string{kind_name(obj.kind())};
    x["apiVersion"] = std::string{kind_of(obj.kind()).api_version};
  }
  x["metadata"] = metadata_json(obj.meta());
  if (auto s = obj.as_secret()) {
    if (s->immutable)
      x["immutable"] = *s->immutable;
    if (!s->data.empty())
      x["data"] = string_map(s->data, true);
    if (!s->type.empty())
      x["type"] = s->type;
    return x;
  }
  auto c = obj.as_config_map();
  if (c->immutable)
    x["immutable"] = *c->immutable;
  if (!c->data.empty())
    x["data"] = string_map(c->data, false);
  if (!c->binary_data.empty())
    x["binaryData"] = string_map(c->binary_data, true);
  return x;
}

} // namespace detail

std::string encode_object(const api_object& obj) {
  return detail::json_text(detail::object_json(obj, true));
}

std::string encode_list(resource res, const std::vector<api_object>& items,
                        const std::string& rv) {
  json x;
  x["kind"] = std::string{kind_name(res)} + "List";
  x["apiVersion"] = std::string{kind_of(res).api_version};
  x["metadata"] = json{{"resourceVersion", rv}};
  auto xs = json::array();
  for (const auto& item : items)
    xs.push_back(detail::object_json(item, false));
  x["items"] = std::move(xs);
  return detail::json_text(x);
}

std::string encode_watch_line(std::string_view type,
                              std::string_view object_json) {
  std::string line;
  line.reserve(object_json.size() + type.size() + 24);
  line += "{\"type\":\"";
  line += type;
  line += "\",\"object\":";
  line += object_json;
  line += "}\n";
  return line;
}

std::string encode_bookmark(resource res, std::uint64_t rv,
                            bool initial_events_end) {
  json x;
  x["kind"] = std::string{kind_name(res)};
  x["apiVersion"] = std::string{kind_of(res).api_version};
  x["metadata"] = json{{"resourceVersion", std::to_string(rv)},
                       {"creationTimestamp", nullptr}};
  if (initial_events_end)
    x["metadata"]["annotations"]
      = json{{"k8s.io/initial-events-end", "true"}};
  return x.dump();
}

std::string format_timestamp(std::chrono::system_clock::time_point t) {
  auto secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string new_uid() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  auto a = gen();
  auto b = gen();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL; // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL; // RFC 4122
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff),
                static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

api_object stamp_new(const api_object& obj,
                     std::chrono::system_clock::time_point now) {
  auto meta = obj.meta();
  meta.uid = new_uid();
  meta.creation_timestamp = format_timestamp(now);
  meta.resource_version.clear();
  return with_metadata(obj, std::move(meta));
}

} // namespace podref::wire
