// The JSON trees of objects and their metadata, shared by the codec and the
// Table form (private to wire/'s .cpp files).
#pragma once

#include <nlohmann/json.hpp>

#include "podref/messages/api_object.hpp"

namespace podref::wire::detail {

/// metadata as the API server writes it (creationTimestamp null if unset).
nlohmann::ordered_json metadata_json(const object_meta& meta);

/// An object; `with_type` adds kind and apiVersion (lists leave them out).
nlohmann::ordered_json object_json(const api_object& obj, bool with_type);

} // namespace podref::wire::detail
