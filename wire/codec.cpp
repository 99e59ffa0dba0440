#include "podref/wire/codec.hpp"

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "podref/manifest/manifest.hpp"
#include "podref/messages/base64.hpp"
#include "podref/messages/resource_kinds.hpp"
#include "podref/wire/detail/json_object.hpp"
#include "podref/wire/detail/opaque_kinds.hpp"
#include "podref/wire/detail/protobuf_namespace.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

json string_map(const std::map<std::string, std::string>& xs, bool base64) {
  auto result = json::object();
  for (const auto& [k, v] : xs)
    result[k] = base64 ? encode_base64(v) : v;
  return result;
}

/// The decoder's messages start with "<file>: document N: "; a Status
/// names the field only.
/// A key as quoted in an error: keys are names, not values, but a client
/// chooses their length.
std::string quoted_key(const std::string& key) {
  constexpr std::size_t shown = 64;
  if (key.size() <= shown)
    return key;
  return key.substr(0, shown) + "...";
}

/// The real server's check of a data key (IsConfigMapKey): 253 characters
/// at most, of [-._a-zA-Z0-9], and neither "." nor "..". The first bad key
/// of `keys`, as "FIELD[KEY]: Invalid value: ...", or nullopt.
template <class Map>
std::optional<std::string> bad_data_key(const char* field, const Map& keys) {
  for (const auto& [key, value] : keys) {
    std::string why;
    if (key.size() > 253)
      why = "must be no more than 253 characters";
    else if (key.empty() || key.find_first_not_of(
                              "-._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
                              "QRSTUVWXYZ0123456789")
                              != std::string::npos)
      why = "a valid config key must consist of alphanumeric characters, "
            "'-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or "
            "'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
    else if (key == "." || key == "..")
      why = "must not be '" + key + "'";
    else
      continue;
    auto shown = quoted_key(key);
    return std::string{field} + "[" + shown + "]: Invalid value: \"" + shown
           + "\": " + why;
  }
  return std::nullopt;
}

/// The first bad data key of `obj`, checked as the real server does.
std::optional<std::string> bad_data_key(const api_object& obj) {
  if (auto s = obj.as_secret()) {
    if (auto bad = bad_data_key("data", s->data))
      return bad;
    return bad_data_key("stringData", s->string_data);
  }
  auto c = obj.as_config_map();
  if (auto bad = bad_data_key("data", c->data))
    return bad;
  return bad_data_key("binaryData", c->binary_data);
}

std::string field_message(const std::string& message) {
  constexpr std::string_view marker = ": document ";
  auto at = message.find(marker);
  if (at == std::string::npos)
    return message;
  auto colon = message.find(": ", at + marker.size());
  return colon == std::string::npos ? message : message.substr(colon + 2);
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

namespace {

bool media_type_is(std::string_view content_type, std::string_view type) {
  auto semi = content_type.find(';');
  auto base = content_type.substr(0, semi);
  while (!base.empty() && base.back() == ' ')
    base.remove_suffix(1);
  return base == type;
}

/// The checks a JSON body needs before decoding: syntax, kind, namespace
/// and name against the path.
std::optional<api_status> check_json(resource res, std::string_view body,
                                     const std::string& path_ns,
                                     const std::string& path_name,
                                     std::string& body_name) {
  const auto& row = kind_of(res);
  auto kind = std::string{row.kind};
  auto doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return bad_request_status("the object provided is unrecognized (must be "
                              "of type " + kind
                              + "): couldn't get version/kind; json parse "
                                "error: unexpected end of JSON input");
  auto k = doc.find("kind");
  if (k == doc.end() || !k->is_string() || k->get<std::string>().empty())
    return bad_request_status("Object 'Kind' is missing in '"
                              + std::string{body.substr(0, 64)} + "'");
  if (auto given = k->get<std::string>(); given != kind)
    return bad_request_status(
      given + " in version \"" + std::string{row.version}
      + "\" cannot be handled as a " + kind + ": converting ("
      + std::string{row.version} + "." + given + ") to ("
      + std::string{row.group.empty() ? "core" : row.group} + "." + kind
      + "): unknown conversion");
  auto meta = doc.find("metadata");
  if (meta == doc.end() || !meta->is_object())
    return std::nullopt;
  auto ns = meta->find("namespace");
  if (is_namespaced(res) && ns != meta->end() && ns->is_string()
      && !ns->get<std::string>().empty() && ns->get<std::string>() != path_ns)
    return bad_request_status("the namespace of the provided object does not "
                              "match the namespace sent on the request");
  auto name = meta->find("name");
  if (name != meta->end() && name->is_string())
    body_name = name->get<std::string>();
  if (!path_name.empty() && name != meta->end() && name->is_string()
      && name->get<std::string>() != path_name)
    return bad_request_status("the name of the object ("
                              + name->get<std::string>()
                              + ") does not match the name on the URL ("
                              + path_name + ")");
  return std::nullopt;
}

} // namespace

std::string_view kind_name(resource res) noexcept {
  return kind_of(res).kind;
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
  return detail::object_json(obj, true).dump();
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
  return x.dump();
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

decoded_body decode_request_body(resource res, std::string_view content_type,
                                 std::string_view body,
                                 const std::string& path_ns,
                                 const std::string& path_name) {
  bool is_json = media_type_is(content_type, "application/json");
  std::string from_protobuf;
  if (res == resource::namespaces
      && media_type_is(content_type, "application/vnd.kubernetes.protobuf")) {
    auto converted = detail::namespace_from_protobuf(body);
    if (!converted.error.empty())
      return {{}, bad_request_status(converted.error)};
    from_protobuf = std::move(converted.json);
    body = from_protobuf;
    is_json = true;
  }
  if (!is_json && !media_type_is(content_type, "application/yaml"))
    return {{}, unsupported_media_status()};
  auto body_name = path_name;
  if (is_json)
    if (auto failure = check_json(res, body, path_ns, path_name, body_name))
      return {{}, std::move(failure)};
  if (res != resource::secrets && res != resource::config_maps) {
    // The other kinds are kept as JSON (opaque_object.hpp).
    if (!is_json)
      return {{}, unsupported_media_status()};
    auto decoded = detail::decode_opaque_body(res, body, path_ns);
    // A Pod, a Node or a workload's pod template must also be one the
    // engine's decoder takes (its names, references and bounds), so that
    // what the front stores, the engine and `--load` read alike.
    if (!decoded.failure && detail::engine_decodes(res)) {
      auto checked = decode_manifest(body, "request body");
      if (!checked.ok())
        return {{}, invalid_status(res, decoded.object.meta().name,
                                   field_message(checked.errors.front()))};
    }
    return decoded;
  }
  auto decoded = decode_manifest(body, "request body");
  if (!decoded.ok())
    return {{}, invalid_status(res, body_name,
                               field_message(decoded.errors.front()))};
  if (decoded.objects.size() != 1)
    return {{}, bad_request_status("the request body must hold one "
                                   + std::string{kind_name(res)})};
  api_object obj;
  const auto& x = decoded.objects.front().object;
  if (res == resource::secrets && std::holds_alternative<secret_ptr>(x))
    obj = std::get<secret_ptr>(x);
  else if (res == resource::config_maps
           && std::holds_alternative<config_map_ptr>(x))
    obj = std::get<config_map_ptr>(x);
  else
    return {{}, bad_request_status(decoded.objects.front().kind
                                   + " in version \"v1\" cannot be handled as a "
                                   + std::string{kind_name(res)})};
  if (obj.meta().name.empty())
    return {{}, invalid_status(res, "", "metadata.name: Required value: name "
                                        "or generateName is required")};
  if (!path_name.empty() && obj.meta().name != path_name)
    return {{}, bad_request_status("the name of the object ("
                                   + obj.meta().name
                                   + ") does not match the name on the URL ("
                                   + path_name + ")")};
  if (auto bad = bad_data_key(obj))
    return {{}, invalid_status(res, obj.meta().name, *bad)};
  return {normalize_object(obj, path_ns), std::nullopt};
}

std::optional<std::int64_t> delete_grace_period(std::string_view body) {
  if (body.empty())
    return std::nullopt;
  auto doc = json::parse(body, nullptr, false);
  if (!doc.is_object())
    return std::nullopt;
  auto i = doc.find("gracePeriodSeconds");
  if (i == doc.end() || !i->is_number_integer())
    return std::nullopt;
  return i->get<std::int64_t>();
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
