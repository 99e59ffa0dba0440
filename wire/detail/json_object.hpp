// The JSON trees of objects and their metadata, shared by the codec and the
// Table form (private to wire/'s .cpp files).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "podref/messages/api_object.hpp"

namespace podref::wire::detail {

/// `x` as JSON text. Names, namespaces and selectors come from a client's
/// path and need not be UTF-8: such bytes are written as U+FFFD rather
/// than thrown at (found by the request fuzz target).
template <class Json>
std::string json_text(const Json& x) {
  return x.dump(-1, ' ', false, Json::error_handler_t::replace);
}

/// metadata as the API server writes it (creationTimestamp null if unset).
nlohmann::ordered_json metadata_json(const object_meta& meta);

/// An object; `with_type` adds kind and apiVersion (lists leave them out).
nlohmann::ordered_json object_json(const api_object& obj, bool with_type);

} // namespace podref::wire::detail
