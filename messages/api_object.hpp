// api_object: a type-erased, immutable, shared Secret or ConfigMap (or an
// object of another kind that the in-memory API server stores for its HTTP
// front, see messages/opaque_object.hpp).
//
// The engine is generic over the resource it manages (the kubelet's manager
// package is too); api_object lets the in-memory API server, the reflectors and
// the read path hold any of them behind one shared pointer, while the typed
// managers hand out secret_ptr / config_map_ptr again. Copying costs one
// reference-count increment.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "podref/messages/config_map.hpp"
#include "podref/messages/opaque_object.hpp"
#include "podref/messages/secret.hpp"

namespace podref {

/// The resources podref manages (secrets, config_maps) and the ones its
/// in-memory API server also serves as opaque objects (the rest).
/// messages/resource_kinds.hpp has a row of names and API group for each.
enum class resource : std::uint8_t {
  secrets,
  config_maps,
  pods,
  nodes,
  namespaces,
  service_accounts,
  deployments,
  cluster_roles,
  cluster_role_bindings,
};

/// "secret" / "configmap" / "pod" / ...: the singular group-resource name of
/// upstream's watch errors (`failed to sync secret cache: ...`).
std::string_view singular_name(resource r) noexcept;

/// "secrets" / "configmaps" / "pods" / ...: the plural name of API paths and
/// action logs.
std::string_view plural_name(resource r) noexcept;

/// "Secret" / "ConfigMap" / "Deployment" / ...: the Kind of manifests,
/// bodies and the API server's 422 messages (messages/resource_kinds.hpp).
std::string_view kind_name(resource r) noexcept;

/// "deployments.apps" / "secrets": the group-qualified plural of the real
/// server's errors (the plural alone for the core group).
std::string_view qualified_name(resource r) noexcept;

/// False for the cluster-scoped resources (nodes, namespaces, cluster roles
/// and their bindings).
bool is_namespaced(resource r) noexcept;

/// A Secret or a ConfigMap, or nothing (a default-constructed api_object).
class api_object {
public:
  api_object() noexcept = default;

  /// Wraps a secret; a null pointer gives an empty api_object.
  api_object(secret_ptr x) noexcept; // NOLINT(implicit)

  /// Wraps a config map; a null pointer gives an empty api_object.
  api_object(config_map_ptr x) noexcept; // NOLINT(implicit)

  /// Wraps an opaque object of resource `r` (not secrets or config_maps);
  /// a null pointer gives an empty api_object.
  api_object(resource r, opaque_object_ptr x) noexcept;

  explicit operator bool() const noexcept {
    return meta_ != nullptr;
  }

  /// Requires a non-empty object.
  resource kind() const noexcept {
    return kind_;
  }

  /// Requires a non-empty object.
  const object_meta& meta() const noexcept {
    return *meta_;
  }

  /// metadata.resourceVersion as a number (0 when empty or unparsable).
  std::uint64_t resource_version() const noexcept;

  /// True iff `immutable` is set and true.
  bool is_immutable() const noexcept {
    return immutable_;
  }

  /// The secret, or null when this holds something else.
  secret_ptr as_secret() const noexcept;

  /// The config map, or null when this holds something else.
  config_map_ptr as_config_map() const noexcept;

  /// The opaque object (a Pod, Node, Namespace, ...), or null when this
  /// holds a Secret or a ConfigMap (or nothing).
  opaque_object_ptr as_opaque() const noexcept;

  /// Deep equality of the held objects (both empty compares equal).
  friend bool operator==(const api_object& x, const api_object& y);
  friend bool operator!=(const api_object& x, const api_object& y) {
    return !(x == y);
  }

private:
  std::shared_ptr<const void> ptr_;
  const object_meta* meta_ = nullptr;
  resource kind_ = resource::secrets;
  bool immutable_ = false;
};

/// A copy of non-empty `x` with metadata `meta` (same kind and contents).
api_object with_metadata(const api_object& x, object_meta meta);

/// Upstream's isObjectOlder: true iff both are non-empty and `x`'s
/// resourceVersion is numerically lower than `y`'s.
bool is_older(const api_object& x, const api_object& y) noexcept;

} // namespace podref
