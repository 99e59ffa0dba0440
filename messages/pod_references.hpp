// Which Secrets and ConfigMaps a pod references: upstream's visitors
// (pkg/api/v1/pod/util.go) with exactly its order, short-circuit rules and
// empty-name skipping. The reference counting in the managers relies on these
// sets, so they must match the kubelet field for field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/pod.hpp"

namespace podref {

/// A visitor receives one referenced name and returns false to stop.
using name_visitor = std::function<bool(const std::string& name)>;

/// Bit flags selecting container kinds for visit_containers.
enum class container_type : std::uint8_t {
  containers = 1,
  init_containers = 2,
  ephemeral_containers = 4,
  all = 7,
};

constexpr container_type operator|(container_type x, container_type y) {
  return static_cast<container_type>(static_cast<std::uint8_t>(x)
                                     | static_cast<std::uint8_t>(y));
}

constexpr bool has(container_type mask, container_type bit) {
  return (static_cast<std::uint8_t>(mask) & static_cast<std::uint8_t>(bit))
         != 0;
}

/// Receives a mutable container and its kind; returns false to stop.
using container_visitor = std::function<bool(container&, container_type)>;

/// Visits init, then regular, then ephemeral containers (each in spec order,
/// filtered by `mask`). Returns false iff the visitor stopped the walk.
bool visit_containers(pod_spec& spec, container_type mask,
                      const container_visitor& visitor);

/// Visits every non-empty Secret name `p` references: imagePullSecrets, then
/// per container envFrom secretRef and env secretKeyRef, then volumes.
/// Returns false iff the visitor stopped the walk. As upstream, a stop during
/// the container pass does not prevent the volume pass.
bool visit_pod_secret_names(const pod& p, const name_visitor& visitor);

/// Visits every non-empty ConfigMap name `p` references: per container envFrom
/// configMapRef and env configMapKeyRef, then volumes (projected sources, else
/// configMap). Same return and short-circuit rules as the secret visitor.
bool visit_pod_config_map_names(const pod& p, const name_visitor& visitor);

/// The distinct Secret names `p` references, sorted.
std::vector<std::string> secret_names(const pod& p);

/// The distinct ConfigMap names `p` references, sorted.
std::vector<std::string> config_map_names(const pod& p);

/// The hot path's form of the visitors (one call per registration): views
/// of every non-empty Secret name `p` references, in visit order with
/// duplicates, stored into `out` up to `capacity`. Returns the number of
/// names; when that exceeds `capacity`, only the first `capacity` are
/// stored and the caller retries with room for all.
std::size_t secret_name_views(const pod& p, std::string_view* out,
                              std::size_t capacity);

/// As secret_name_views, for the ConfigMap names `p` references.
std::size_t config_map_name_views(const pod& p, std::string_view* out,
                                  std::size_t capacity);

} // namespace podref
