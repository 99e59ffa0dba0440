// opaque_object: a Pod, Node, Namespace, ServiceAccount, Deployment,
// ClusterRole or ClusterRoleBinding as the in-memory API server stores it for
// the HTTP front (messages/resource_kinds.hpp lists them).
//
// The engine never watches these kinds (it gets pods through registrations
// and reads nodes through the manifest decoder), so the server needs of them
// only what its store, watch fan-out and history use (namespace, name,
// resourceVersion) and what the front selects and prints (labels, deletion
// state, a few spec and status fields). Keeping the parsed metadata next to
// the rest of the object's JSON text serves all of that without a typed
// model of every field of every kind: the JSON round-trips
// unchanged, and the typed messages/pod.hpp stays the engine's reduced pod.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "podref/messages/object_meta.hpp"

namespace podref {

struct opaque_object {
  object_meta metadata;
  /// metadata.deletionTimestamp (RFC 3339); empty while not being deleted.
  std::string deletion_timestamp;
  /// metadata.deletionGracePeriodSeconds, set with deletion_timestamp.
  std::optional<std::int64_t> deletion_grace_period_seconds;
  /// Every top-level field but kind, apiVersion and metadata, as the text
  /// of one JSON object (e.g. {"spec":{...},"status":{...}}); "{}" or empty
  /// for none.
  std::string body;
};

bool operator==(const opaque_object& x, const opaque_object& y);
inline bool operator!=(const opaque_object& x, const opaque_object& y) {
  return !(x == y);
}

using opaque_object_ptr = std::shared_ptr<const opaque_object>;

} // namespace podref
