// The resources podref stores, one row each: their names, API group and
// version, scope, and what discovery lists of them. One table, so that the
// engine's messages, the in-memory API server's errors and the HTTP front's
// routes, discovery and bodies read the same facts; a kind served as an
// opaque object (messages/opaque_object.hpp) needs a row here and nothing
// else to be routed, listed, watched and written.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "podref/messages/api_object.hpp"

namespace podref {

/// What the API server takes as an object's name (ValidateObjectMeta's
/// name function of the kind).
enum class name_rule : std::uint8_t {
  /// A DNS-1123 subdomain: most kinds.
  subdomain,
  /// A DNS-1123 label: Namespaces.
  label,
  /// ValidatePathSegmentName: RBAC's kinds, whose names may hold ':'.
  path_segment,
};

struct resource_kind {
  resource res;
  /// "deployments": the path segment, RBAC's resource.
  std::string_view plural;
  /// "deployment".
  std::string_view singular;
  /// "Deployment".
  std::string_view kind;
  /// "apps"; empty for the core group (/api/v1).
  std::string_view group;
  /// "v1".
  std::string_view version;
  /// "apps/v1", or "v1" for the core group: a body's apiVersion.
  std::string_view api_version;
  /// "deployments.apps", or "secrets" for the core group: the group-resource
  /// the real server names in its errors (`deployments.apps "x" not found`).
  std::string_view qualified_plural;
  /// "Deployment.apps", or "Secret": the group-kind of its 422s.
  std::string_view qualified_kind;
  /// Discovery's short name ("deploy"), empty for none.
  std::string_view short_name;
  bool namespaced;
  /// In discovery's category `all` (`kubectl get all`).
  bool in_category_all;
  /// What metadata.name must be.
  name_rule names = name_rule::subdomain;
};

/// How many resources there are.
inline constexpr std::size_t resource_count = 9;

/// Every resource's row, in the order of `resource`.
const std::array<resource_kind, resource_count>& resource_kinds() noexcept;

/// The row of `r`.
const resource_kind& kind_of(resource r) noexcept;

/// The resource at `plural` in API group `group` and version `version`
/// ("" and "v1" for the core group), or null.
const resource_kind* find_resource(std::string_view group,
                                   std::string_view version,
                                   std::string_view plural) noexcept;

/// The resource of kind `kind` (e.g. "Deployment"), or null.
const resource_kind* find_kind(std::string_view kind) noexcept;

} // namespace podref
