// The metadata the front keeps for its clients only (generateName,
// managedFields: messages/object_meta.hpp's server_metadata), read from
// request bodies (detail/json_object.hpp).
#include "podref/wire/detail/json_object.hpp"

#include <utility>

namespace podref::wire::detail {

namespace {

using json = nlohmann::ordered_json;

} // namespace

read_server_metadata server_metadata_of(const nlohmann::ordered_json& doc) {
  read_server_metadata out;
  auto meta = doc.is_object() ? doc.find("metadata") : doc.end();
  if (meta == doc.end() || !meta->is_object())
    return out;
  server_metadata x;
  if (auto g = meta->find("generateName"); g != meta->end() && g->is_string())
    x.generate_name = g->get<std::string>();
  if (auto m = meta->find("managedFields"); m != meta->end() && !m->is_null()) {
    if (!m->is_array()) {
      out.failure = bad_request_status(
        "metadata.managedFields: expected a list of ManagedFieldsEntry");
      return out;
    }
    if (!m->empty())
      x.managed_fields = m->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (!x.generate_name.empty() || !x.managed_fields.empty())
    out.metadata = std::make_shared<const server_metadata>(std::move(x));
  return out;
}

api_object with_server_metadata(const api_object& obj,
                                std::shared_ptr<const server_metadata> x) {
  auto meta = obj.meta();
  meta.server = std::move(x);
  return with_metadata(obj, std::move(meta));
}

bool named_by_server(const api_object& obj, const std::string& path_name) {
  return path_name.empty() && obj.meta().server
         && !obj.meta().server->generate_name.empty();
}

} // namespace podref::wire::detail
