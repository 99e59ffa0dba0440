// The router: an HTTP method and request target (path and query) in, a
// description of the API request out. No I/O; the HTTP server acts on the
// result, and tests check it alone.
//
// Served: /version, /healthz, /readyz, /livez, /api, /apis, /api/v1,
// /openapi/v3, /openapi/v3/api/v1, /openapi/v2; for the namespaced v1
// secrets, configmaps and pods /api/v1/namespaces/NS/RES (GET list or
// watch, POST create), /api/v1/namespaces/NS/RES/NAME (GET, PUT, DELETE)
// and /api/v1/RES (GET list or watch in all namespaces); for the
// cluster-scoped nodes and namespaces /api/v1/RES (GET list or watch, POST
// create) and /api/v1/RES/NAME (GET, PUT, DELETE). Query parameters taken:
// watch (true/1), resourceVersion, timeoutSeconds, fieldSelector
// (metadata.name, metadata.namespace; spec.nodeName for pods),
// labelSelector (=, ==, !=, exists, !exists, comma-separated),
// gracePeriodSeconds; others (limit, timeout, fieldManager, ...) are
// accepted and ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire {

/// What a request asks for.
enum class route_kind : std::uint8_t {
  version,
  healthz,
  readyz,
  livez,
  api_versions,
  api_groups,
  api_resources,
  openapi_index,
  openapi_v1,
  openapi_v2,
  get,
  list,
  watch,
  create,
  update,
  remove,
  /// Answer with `route::failure` (404, 405, 400).
  failure,
};

/// One requirement of a label selector.
struct label_requirement {
  enum class op : std::uint8_t { equals, not_equals, exists, not_exists };
  std::string key;
  op kind = op::equals;
  std::string value;
};

/// A routed request.
struct route {
  route_kind kind = route_kind::failure;
  resource res = resource::secrets;
  /// The path's namespace; empty for /api/v1/RES (all namespaces).
  std::string ns;
  /// The path's object name (get, update, remove).
  std::string name;
  /// fieldSelector metadata.name=X, when given.
  std::optional<std::string> field_name;
  /// fieldSelector metadata.namespace=X, when given.
  std::optional<std::string> field_namespace;
  /// fieldSelector spec.nodeName=X of pods, when given.
  std::optional<std::string> field_node_name;
  /// gracePeriodSeconds of a DELETE, when given.
  std::optional<std::int64_t> grace_period_seconds;
  std::vector<label_requirement> labels;
  std::string resource_version;
  /// timeoutSeconds of a watch, when given.
  std::optional<std::uint64_t> timeout_seconds;
  /// For kind == failure.
  api_status failure;
};

/// Routes one request; `target` is the raw, still URL-encoded target.
route route_request(std::string_view method, std::string_view target);

/// Whether `obj` has every label requirement of `labels`.
bool matches_labels(const std::vector<label_requirement>& labels,
                    const api_object& obj);

} // namespace podref::wire
