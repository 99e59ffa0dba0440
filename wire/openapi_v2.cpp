#include "podref/wire/openapi_v2.hpp"

#include <string_view>

#include <nlohmann/json.hpp>

#include "podref/messages/resource_kinds.hpp"

namespace podref::wire {

namespace {

constexpr const char* title = "Kubernetes";
constexpr const char* version = "v0.0.0"; // as the recorded server says

constexpr const char* dry_run_description
  = "When present, the changes are checked and not stored: All runs every "
    "stage of the request without persisting it.";

/// The path of one object of `row`, as the real document names it
/// ("/api/v1/namespaces/{namespace}/secrets/{name}").
std::string object_path(const resource_kind& row) {
  std::string path = row.group.empty()
                       ? std::string{"/api/v1"}
                       : "/apis/" + std::string{row.api_version};
  if (row.namespaced)
    path += "/namespaces/{namespace}";
  return path + "/" + std::string{row.plural} + "/{name}";
}

/// x-kubernetes-group-version-kind as gnostic carries an extension: YAML.
std::string gvk_yaml(const resource_kind& row) {
  auto group = row.group.empty() ? std::string{"\"\""} : std::string{row.group};
  return "group: " + group + "\nkind: " + std::string{row.kind}
         + "\nversion: " + std::string{row.version} + "\n";
}

// -- protobuf ------------------------------------------------------------------

void varint(std::string& out, std::size_t n) {
  do {
    auto byte = static_cast<unsigned char>(n & 0x7f);
    n >>= 7;
    out += static_cast<char>(n ? byte | 0x80 : byte);
  } while (n);
}

/// One length-delimited field (wire type 2): a string or a nested message.
std::string field(unsigned number, std::string_view bytes) {
  std::string out;
  varint(out, (number << 3) | 2);
  varint(out, bytes.size());
  out += bytes;
  return out;
}

/// NamedAny { name = 1; Any value = 2 { yaml = 2 } }.
std::string extension(std::string_view name, std::string_view yaml) {
  return field(1, name) + field(2, field(2, yaml));
}

/// PathItem { patch = 8 } whose Operation carries the dryRun query
/// parameter (parameters = 8: ParametersItem { parameter = 1: Parameter
/// { non_body_parameter = 2: NonBodyParameter { query_parameter_sub_schema
/// = 3 } } }) and the extensions (vendor_extension = 13).
std::string patch_path_item(const resource_kind& row) {
  // QueryParameterSubSchema { in = 2, description = 3, name = 4, type = 6,
  // unique_items = 20 (varint true) }.
  auto query = field(2, "query") + field(3, dry_run_description)
               + field(4, "dryRun") + field(6, "string");
  varint(query, (20u << 3) | 0);
  query += '\x01';
  auto parameter = field(1, field(2, field(3, query)));
  auto operation = field(8, parameter)
                   + field(13, extension("x-kubernetes-action", "patch\n"))
                   + field(13, extension("x-kubernetes-group-version-kind",
                                         gvk_yaml(row)));
  return field(8, operation);
}

} // namespace

std::string openapi_v2_json() {
  nlohmann::ordered_json x;
  x["swagger"] = "2.0";
  x["info"] = {{"title", title}, {"version", version}};
  auto& paths = x["paths"] = nlohmann::ordered_json::object();
  for (const auto& row : resource_kinds()) {
    nlohmann::ordered_json dry_run
      = {{"uniqueItems", true},       {"type", "string"},
         {"description", dry_run_description},
         {"name", "dryRun"},          {"in", "query"}};
    paths[object_path(row)]["patch"]
      = {{"parameters", {dry_run}},
         {"x-kubernetes-action", "patch"},
         {"x-kubernetes-group-version-kind",
          {{"group", row.group}, {"kind", row.kind}, {"version", row.version}}}};
  }
  x["definitions"] = nlohmann::ordered_json::object();
  return x.dump();
}

std::string openapi_v2_protobuf() {
  // Document { swagger = 1; Info info = 2 { title = 1; version = 2 };
  // Paths paths = 8 { repeated NamedPathItem path = 2 { name = 1;
  // PathItem value = 2 } } }.
  std::string paths;
  for (const auto& row : resource_kinds())
    paths += field(2, field(1, object_path(row))
                        + field(2, patch_path_item(row)));
  return field(1, "2.0") + field(2, field(1, title) + field(2, version))
         + field(8, paths);
}

} // namespace podref::wire
