// The router: an HTTP method and request target (path and query) in, a
// description of the API request out. No I/O; the HTTP server acts on the
// result, and tests check it alone.
//
// Served: /version, /healthz, /readyz, /livez, /metrics, /api, /apis,
// /api/v1, /apis/GROUP, /apis/GROUP/VERSION, /openapi/v3,
// /openapi/v3/api/v1, /openapi/v3/apis/GROUP/VERSION, /openapi/v2; for each
// resource of messages/resource_kinds.hpp under its prefix P (/api/v1 for
// the core group, /apis/GROUP/VERSION otherwise): a namespaced one at
// P/namespaces/NS/RES (GET list or watch, POST create, DELETE collection),
// P/namespaces/NS/RES/NAME (GET, PUT, PATCH, DELETE) and P/RES (GET list or
// watch in all namespaces); a cluster-scoped one at P/RES (GET list or
// watch, POST create, DELETE collection) and P/RES/NAME (GET, PUT, PATCH,
// DELETE). Query parameters taken: watch (true/1), resourceVersion,
// resourceVersionMatch (Exact, NotOlderThan), limit, continue,
// allowWatchBookmarks, sendInitialEvents, timeoutSeconds, fieldSelector
// (metadata.name, metadata.namespace; a Secret's type; a Pod's
// spec.nodeName; =, ==, !=), labelSelector (label_selector.hpp),
// gracePeriodSeconds, dryRun (repeatable), fieldManager, force,
// fieldValidation; others (timeout, ...) are accepted and ignored. The
// combinations the real server refuses get its 422 (invalid ListOptions,
// CreateOptions, ...) or 400; the write parameters other than
// fieldValidation are checked with the request's body (write_request.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/wire/label_selector.hpp"
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
  /// /apis/GROUP: one APIGroup.
  api_group,
  /// /api/v1 or /apis/GROUP/VERSION: an APIResourceList.
  api_resources,
  openapi_index,
  /// /openapi/v3/api/v1 or /openapi/v3/apis/GROUP/VERSION.
  openapi_group_version,
  openapi_v2,
  /// GET /metrics: the front's counters (Prometheus text format).
  metrics,
  get,
  list,
  watch,
  create,
  update,
  /// PATCH of one object (the body and its type travel with the call).
  patch,
  remove,
  /// DELETE of a collection (deletecollection), with its selectors.
  remove_collection,
  /// Answer with `route::failure` (404, 405, 400).
  failure,
};

/// One term of a field selector: `field=value` (equal) or `field!=value`.
struct field_requirement {
  std::string field;
  bool equal = true;
  std::string value;
};

/// The most terms a field selector may have.
constexpr std::size_t max_field_requirements = 20;

/// A watch's timeoutSeconds is cut to a year.
constexpr std::uint64_t max_timeout_seconds = 365ULL * 24 * 3600;

/// A routed request.
struct route {
  route_kind kind = route_kind::failure;
  resource res = resource::secrets;
  /// The path's namespace; empty for /api/v1/RES (all namespaces).
  std::string ns;
  /// The path's object name (get, update, patch, remove).
  std::string name;
  /// The discovery documents' group-version ("v1", "apps/v1"; "apps" for
  /// api_group).
  std::string group_version;
  /// Every term of the fieldSelector.
  std::vector<field_requirement> fields;
  /// fieldSelector metadata.name=X, when given.
  std::optional<std::string> field_name;
  /// fieldSelector metadata.namespace=X, when given.
  std::optional<std::string> field_namespace;
  /// gracePeriodSeconds of a DELETE, when given.
  std::optional<std::int64_t> grace_period_seconds;
  std::vector<label_requirement> labels;
  std::string resource_version;
  /// resourceVersionMatch: "", "Exact" or "NotOlderThan" (checked).
  std::string resource_version_match;
  /// limit of a list; 0: whole.
  std::uint64_t limit = 0;
  /// continue of a list (still encoded).
  std::string continue_token;
  /// allowWatchBookmarks of a watch.
  bool allow_bookmarks = false;
  /// sendInitialEvents of a watch, when given.
  std::optional<bool> send_initial_events;
  /// timeoutSeconds of a watch, when given (at most max_timeout_seconds;
  /// 0: none).
  std::optional<std::uint64_t> timeout_seconds;
  /// Every dryRun value of a write, in order.
  std::vector<std::string> dry_run;
  /// fieldManager of a write (empty: none).
  std::string field_manager;
  /// force of a patch, when given.
  std::optional<bool> force;
  /// fieldValidation of a create, update or patch: "", "Ignore", "Warn" or
  /// "Strict" (checked: another value is the real server's 422; "" means
  /// Warn).
  std::string field_validation;
  /// For kind == failure.
  api_status failure;
};

/// Routes one request; `target` is the raw, still URL-encoded target.
route route_request(std::string_view method, std::string_view target);

} // namespace podref::wire
