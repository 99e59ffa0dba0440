// The body of a create or update (codec.hpp's decode_request_body): its
// format to JSON (YAML through the manifest decoder, protobuf through
// protobuf_body.hpp), the checks against the path, the decoding, and the
// API server's validation (messages/object_validation.hpp) as its 422.
#include "podref/wire/codec.hpp"

#include <algorithm>
#include <iterator>
#include <memory>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "podref/manifest/manifest.hpp"
#include "podref/messages/object_validation.hpp"
#include "podref/messages/quoted_part.hpp"
#include "podref/messages/resource_kinds.hpp"
#include "podref/wire/detail/json_object.hpp"
#include "podref/wire/detail/opaque_kinds.hpp"
#include "podref/wire/detail/protobuf_body.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

bool media_type_is(std::string_view content_type, std::string_view type) {
  auto base = content_type.substr(0, content_type.find(';'));
  while (!base.empty() && base.back() == ' ')
    base.remove_suffix(1);
  return base == type;
}

/// The manifest decoder's messages start with "<file>: document N: "; a
/// Status names the field only.
std::string field_message(const std::string& message) {
  constexpr std::string_view marker = ": document ";
  auto at = message.find(marker);
  if (at == std::string::npos)
    return message;
  auto colon = message.find(": ", at + marker.size());
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

/// 400 `Secret in version "v1" cannot be handled as a Secret: <why>`.
api_status cannot_handle(resource res, const std::string& why) {
  const auto& row = kind_of(res);
  auto kind = std::string{row.kind};
  return bad_request_status(kind + " in version \"" + std::string{row.version}
                            + "\" cannot be handled as a " + kind + ": "
                            + why);
}

// -- unknown fields -------------------------------------------------------------

/// ObjectMeta's fields (what a strict decoder knows below metadata).
constexpr std::string_view meta_fields[]
  = {"name",          "generateName",
     "namespace",     "selfLink",
     "uid",           "resourceVersion",
     "generation",    "creationTimestamp",
     "deletionTimestamp", "deletionGracePeriodSeconds",
     "labels",        "annotations",
     "ownerReferences", "finalizers",
     "managedFields"};

constexpr std::string_view secret_fields[]
  = {"apiVersion", "kind", "metadata", "data", "stringData", "type",
     "immutable"};

constexpr std::string_view config_map_fields[]
  = {"apiVersion", "kind", "metadata", "data", "binaryData", "immutable"};

template <std::size_t N>
bool known(const std::string_view (&fields)[N], const std::string& key) {
  return std::find(std::begin(fields), std::end(fields), key)
         != std::end(fields);
}

// -- checks before decoding -------------------------------------------------------

/// The checks a JSON body gets before decoding: syntax, kind, namespace
/// and name against the path; collects its unknown fields and hands back
/// the parsed document (`doc`), which is parsed once.
std::optional<api_status> check_json(resource res, std::string_view body,
                                     const std::string& path_ns,
                                     const std::string& path_name,
                                     std::vector<std::string>& unknown,
                                     json& doc) {
  const auto& row = kind_of(res);
  auto kind = std::string{row.kind};
  doc = json::parse(body, nullptr, false);
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
  unknown = detail::unknown_fields(res, doc);
  auto meta = doc.find("metadata");
  if (meta == doc.end() || !meta->is_object())
    return std::nullopt;
  auto ns = meta->find("namespace");
  if (is_namespaced(res) && ns != meta->end() && ns->is_string()
      && !ns->get<std::string>().empty() && ns->get<std::string>() != path_ns)
    return bad_request_status("the namespace of the provided object does not "
                              "match the namespace sent on the request");
  auto name = meta->find("name");
  if (!path_name.empty() && name != meta->end() && name->is_string()
      && name->get<std::string>() != path_name)
    return bad_request_status("the name of the object ("
                              + name->get<std::string>()
                              + ") does not match the name on the URL ("
                              + path_name + ")");
  return std::nullopt;
}

/// A YAML body as the JSON of its one document (the manifest decoder reads
/// the YAML); a failure is the 400.
std::optional<api_status> yaml_to_json(resource res, std::string_view body,
                                       std::string& out) {
  manifest_limits limits;
  limits.keep_documents = true;
  limits.check_objects = false;
  auto decoded = decode_manifest(body, "request body", limits);
  if (decoded.documents.size() != 1) {
    if (!decoded.ok())
      return bad_request_status(field_message(decoded.errors.front()));
    return bad_request_status("the request body must hold one "
                              + std::string{kind_name(res)});
  }
  out = std::move(decoded.documents.front());
  return std::nullopt;
}

/// A Secret or ConfigMap from its checked JSON body, with its server
/// metadata (generateName, managedFields), validated.
decoded_body decode_data_object(resource res, std::string_view body,
                                const std::string& path_ns,
                                std::shared_ptr<const server_metadata> server) {
  // The API server's checks come after decoding, all at once (below).
  manifest_limits limits;
  limits.check_objects = false;
  auto decoded = decode_manifest(body, "request body", limits);
  if (!decoded.ok()) {
    auto why = field_message(decoded.errors.front());
    // Go's base64 error names no field.
    if (auto at = why.find(": illegal base64 data"); at != std::string::npos)
      why.erase(0, at + 2);
    return {{}, cannot_handle(res, why)};
  }
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
  obj = normalize_object(
    detail::with_server_metadata(obj, std::move(server)), path_ns);
  if (auto problems = find_object_problems(obj); !problems.empty())
    return {{}, invalid_status(res, obj.meta().name, problems)};
  return {std::move(obj), std::nullopt};
}

} // namespace

namespace detail {

std::vector<std::string> unknown_fields(resource res, const json& doc) {
  std::vector<std::string> out;
  if (res != resource::secrets && res != resource::config_maps)
    return out;
  auto add = [&out](std::string field) {
    if (out.size() < max_unknown_fields)
      out.push_back(std::move(field));
  };
  for (const auto& [key, value] : doc.items()) {
    bool ok = res == resource::secrets ? known(secret_fields, key)
                                       : known(config_map_fields, key);
    if (!ok)
      add(key);
    else if (key == "metadata" && value.is_object())
      for (const auto& [k, v] : value.items())
        if (!known(meta_fields, k))
          add("metadata." + k);
  }
  return out;
}

} // namespace detail

decoded_body decode_request_body(resource res, std::string_view content_type,
                                 std::string_view body,
                                 const std::string& path_ns,
                                 const std::string& path_name) {
  std::string converted;
  if (detail::takes_protobuf(res)
      && media_type_is(content_type, "application/vnd.kubernetes.protobuf")) {
    auto from = detail::json_from_protobuf(res, body);
    if (!from.error.empty())
      return {{}, bad_request_status(from.error)};
    converted = std::move(from.json);
    body = converted;
  } else if (media_type_is(content_type, "application/yaml")) {
    if (auto failure = yaml_to_json(res, body, converted))
      return {{}, std::move(failure)};
    body = converted;
  } else if (!media_type_is(content_type, "application/json")
             && !content_type.empty()) {
    // No Content-Type reads as the real server's first media type, JSON
    // (kubectl 1.20 sends its creates so).
    return {{}, unsupported_media_status(detail::takes_protobuf(res))};
  }
  std::vector<std::string> unknown;
  json doc;
  if (auto failure = check_json(res, body, path_ns, path_name, unknown, doc))
    return {{}, std::move(failure)};
  decoded_body decoded;
  if (res == resource::secrets || res == resource::config_maps) {
    auto server = detail::server_metadata_of(doc);
    if (server.failure)
      return {{}, std::move(server.failure)};
    decoded = decode_data_object(res, body, path_ns,
                                 std::move(server.metadata));
  } else {
    // The other kinds are kept as JSON (opaque_object.hpp).
    decoded = detail::decode_opaque_body(res, body, path_ns);
    // A Pod, a Node or a workload's pod template must also be one the
    // engine's decoder takes (its names, references and bounds), so that
    // what the front stores, the engine and `--load` read alike.
    if (!decoded.failure && detail::engine_decodes(res)) {
      auto checked = decode_manifest(body, "request body");
      if (!checked.ok())
        return {{}, invalid_status(res, decoded.object.meta().name,
                                   field_message(checked.errors.front()))};
    }
  }
  if (decoded.failure)
    return decoded;
  // Only a create is named by the server (from its generateName).
  if (decoded.object.meta().name.empty()
      && !detail::named_by_server(decoded.object, path_name))
    return {{}, invalid_status(res, "", "metadata.name: Required value: name "
                                        "or generateName is required")};
  decoded.unknown_fields = std::move(unknown);
  return decoded;
}

std::string strict_decoding_error(const std::vector<std::string>& unknown) {
  std::string why = "strict decoding error: ";
  for (std::size_t i = 0; i < unknown.size(); ++i)
    why += (i == 0 ? "" : ", ") + unknown_field_text(unknown[i]);
  return why;
}

api_status strict_decoding_status(resource res,
                                  const std::vector<std::string>& unknown) {
  return cannot_handle(res, strict_decoding_error(unknown));
}

std::string unknown_field_text(const std::string& field) {
  // Field names come from the client: escaped as a JSON string (Go's %q
  // for printable text), a long one by its quoted part.
  return "unknown field "
         + json(std::string{quoted_part(field)})
             .dump(-1, ' ', false, json::error_handler_t::replace)
         + omitted_note(field);
}

} // namespace podref::wire
