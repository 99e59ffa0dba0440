// The JSON trees of objects and their metadata, shared by the codec and the
// Table form (private to wire/'s .cpp files).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "podref/messages/api_object.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire::detail {

/// metadata.generateName and metadata.managedFields of a request body (null
/// when it has neither), or the 400 for a managedFields that is not a list.
struct read_server_metadata {
  std::shared_ptr<const server_metadata> metadata;
  std::optional<api_status> failure;
};

/// Reads them from a decoded body (any JSON; not an object: none).
read_server_metadata server_metadata_of(const nlohmann::ordered_json& doc);

/// `obj` with server metadata `x` (null: none).
api_object with_server_metadata(const api_object& obj,
                                std::shared_ptr<const server_metadata> x);

/// Whether an object without a name may be written to a path named
/// `path_name`: a create (no path name) of an object with a generateName,
/// which the server names.
bool named_by_server(const api_object& obj, const std::string& path_name);

/// `x` as JSON text. Names, namespaces and selectors come from a client's
/// path and need not be UTF-8: such bytes are written as U+FFFD rather
/// than thrown at (found by the request fuzz target).
template <class Json>
std::string json_text(const Json& x) {
  return x.dump(-1, ' ', false, Json::error_handler_t::replace);
}

/// The fields of a Secret or ConfigMap document that its type does not
/// have, as a strict decoder names them (`bogus`, `metadata.bogus`), in
/// document order, at most max_unknown_fields (codec.hpp). Other kinds:
/// none (podref keeps them as JSON and has no schema of them).
std::vector<std::string> unknown_fields(resource res,
                                        const nlohmann::ordered_json& doc);

/// metadata as the API server writes it (creationTimestamp null if unset).
nlohmann::ordered_json metadata_json(const object_meta& meta);

/// An object; `with_type` adds kind and apiVersion (lists leave them out).
nlohmann::ordered_json object_json(const api_object& obj, bool with_type);

} // namespace podref::wire::detail
