#include "podref/wire/openapi_v2.hpp"

#include <nlohmann/json.hpp>

namespace podref::wire {

namespace {

constexpr const char* title = "Kubernetes";
constexpr const char* version = "v0.0.0"; // as the recorded server says

// One length-delimited protobuf field (wire type 2); every field here is
// short, so tag and length fit one byte each.
std::string field(unsigned number, const std::string& bytes) {
  std::string out;
  out += static_cast<char>((number << 3) | 2);
  out += static_cast<char>(bytes.size());
  out += bytes;
  return out;
}

} // namespace

std::string openapi_v2_json() {
  nlohmann::json x;
  x["swagger"] = "2.0";
  x["info"] = {{"title", title}, {"version", version}};
  x["paths"] = nlohmann::json::object();
  x["definitions"] = nlohmann::json::object();
  return x.dump();
}

std::string openapi_v2_protobuf() {
  // Document { swagger = 1; Info info = 2 }, Info { title = 1; version = 2 }.
  return field(1, "2.0") + field(2, field(1, title) + field(2, version));
}

} // namespace podref::wire
