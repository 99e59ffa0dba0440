#include "podref/wire/table.hpp"

#include <ctime>

#include <nlohmann/json.hpp>

#include "podref/wire/detail/json_object.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

// The column descriptions are the API's field documentation, as the real
// server sends them.
constexpr const char* name_doc
  = "Name must be unique within a namespace. Is required when creating "
    "resources, although some resources may allow a client to request the "
    "generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot "
    "be updated. More info: "
    "http://kubernetes.io/docs/user-guide/identifiers#names";
constexpr const char* type_doc
  = "Used to facilitate programmatic handling of secret data. More info: "
    "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";
constexpr const char* secret_data_doc
  = "Data contains the secret data. Each key must consist of alphanumeric "
    "characters, '-', '_' or '.'. The serialized form of the secret data is a "
    "base64 encoded string, representing the arbitrary (possibly non-string) "
    "data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
constexpr const char* config_data_doc
  = "Data contains the configuration data. Each key must consist of "
    "alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte "
    "sequences must use the BinaryData field. The keys stored in Data must "
    "not overlap with the keys in the BinaryData field, this is enforced "
    "during validation process.";
constexpr const char* age_doc
  = "CreationTimestamp is a timestamp representing the server time when this "
    "object was created. It is not guaranteed to be set in happens-before "
    "order across separate operations. Clients may not set this value. It is "
    "represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
    "Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata";

json column(const char* name, const char* format, const char* doc) {
  json x;
  x["name"] = name;
  x["type"] = "string";
  x["format"] = format;
  x["description"] = doc;
  x["priority"] = 0;
  return x;
}

json columns(resource res) {
  auto xs = json::array();
  xs.push_back(column("Name", "name", name_doc));
  if (res == resource::secrets) {
    xs.push_back(column("Type", "", type_doc));
    xs.push_back(column("Data", "", secret_data_doc));
  } else {
    xs.push_back(column("Data", "", config_data_doc));
  }
  xs.push_back(column("Age", "", age_doc));
  return xs;
}

/// Parses the codec's own RFC 3339 form; false if it is not that.
bool parse_timestamp(const std::string& text,
                     std::chrono::system_clock::time_point& out) {
  std::tm tm{};
  auto end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end == nullptr || *end != '\0')
    return false;
  out = std::chrono::system_clock::from_time_t(timegm(&tm));
  return true;
}

json row(const api_object& obj, std::chrono::system_clock::time_point now) {
  auto cells = json::array();
  cells.push_back(obj.meta().name);
  if (auto s = obj.as_secret()) {
    cells.push_back(s->type);
    cells.push_back(s->data.size());
  } else {
    auto c = obj.as_config_map();
    cells.push_back(c->data.size() + c->binary_data.size());
  }
  std::chrono::system_clock::time_point created;
  if (parse_timestamp(obj.meta().creation_timestamp, created))
    cells.push_back(short_age(now - created));
  else
    cells.push_back("<unknown>");
  json partial;
  partial["kind"] = "PartialObjectMetadata";
  partial["apiVersion"] = "meta.k8s.io/v1";
  partial["metadata"] = detail::metadata_json(obj.meta());
  json x;
  x["cells"] = std::move(cells);
  x["object"] = std::move(partial);
  return x;
}

} // namespace

bool wants_table(std::string_view accept) {
  return accept.find("as=Table") != std::string_view::npos;
}

std::string short_age(std::chrono::system_clock::duration age) {
  using namespace std::chrono;
  auto s = duration_cast<seconds>(age).count();
  if (s < 0)
    s = 0;
  auto str = [](long long x) { return std::to_string(x); };
  if (s < 120)
    return str(s) + "s";
  auto m = s / 60;
  if (m < 10)
    return s % 60 == 0 ? str(m) + "m" : str(m) + "m" + str(s % 60) + "s";
  auto h = s / 3600;
  if (h < 3)
    return str(m) + "m";
  if (h < 8)
    return m % 60 == 0 ? str(h) + "h" : str(h) + "h" + str(m % 60) + "m";
  if (h < 48)
    return str(h) + "h";
  auto d = h / 24;
  if (h < 192)
    return h % 24 == 0 ? str(d) + "d" : str(d) + "d" + str(h % 24) + "h";
  if (d < 365 * 2)
    return str(d) + "d";
  return str(d / 365) + "y";
}

std::string encode_table(resource res, const std::vector<api_object>& items,
                         const std::string& rv, bool with_columns,
                         std::chrono::system_clock::time_point now) {
  json x;
  x["kind"] = "Table";
  x["apiVersion"] = "meta.k8s.io/v1";
  x["metadata"] = json{{"resourceVersion", rv}};
  x["columnDefinitions"] = with_columns ? columns(res) : json(nullptr);
  auto rows = json::array();
  for (const auto& item : items)
    rows.push_back(row(item, now));
  x["rows"] = std::move(rows);
  return x.dump();
}

} // namespace podref::wire
