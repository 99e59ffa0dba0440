// Decoding a PodSpec (the part podref models) from a parsed manifest.
#pragma once

#include <nlohmann/json.hpp>

#include "podref/messages/pod.hpp"
#include "podref/manifest/detail/json_fields.hpp"
#include "podref/manifest/manifest.hpp"

namespace podref::detail {

/// Decodes imagePullSecrets, the three container lists and volumes of the
/// pod spec `value` (a map or null); other fields are ignored. Throws
/// field_error for a value of the wrong type, for more containers,
/// references or list entries than `limits` allow (each list is checked
/// before its entries are decoded), and for a Secret or ConfigMap reference
/// the API server would reject (find_reference_problem).
pod_spec decode_pod_spec(const nlohmann::json& value, const field_path& at,
                         const manifest_limits& limits);

} // namespace podref::detail
