// workload: what `podref hollow --create-pods` writes to the cluster: the
// Secrets and ConfigMaps of the bundled example manifests (or --manifests),
// and pods drawn from their pods and pod templates, spread round-robin over
// the nodes (spec.nodeName set, as the scheduler would bind them); then the
// updates of the objects those pods reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "podref/messages/errors.hpp"
#include "podref/messages/source_protocol.hpp"

namespace podref::wire {
class http_client;
} // namespace podref::wire

namespace podref::cli::hollow {

/// A Secret or ConfigMap to create.
struct planned_object {
  resource res = resource::secrets;
  std::string ns;
  std::string name;
  bool immutable = false;
  /// The POST body (JSON).
  std::string body;

  /// "s/NS/NAME" or "c/NS/NAME", as the observer keys objects.
  std::string key() const;
};

struct planned_pod {
  std::string ns;
  std::string name;
  std::uint32_t node = 0;
  std::string body;
  /// The keys of the objects it references.
  std::vector<std::string> keys;
};

struct workload {
  std::vector<std::string> namespaces;
  std::vector<planned_object> objects;
  std::vector<planned_pod> pods;
  /// Per object key: the nodes whose pods reference it (ascending).
  std::map<std::string, std::vector<std::uint32_t>> watchers;
  /// Referenced objects that exist and are not immutable: what updates
  /// change (an immutable object's watch is stopped by design).
  std::vector<std::string> updatable;
  /// Pods per node.
  std::vector<std::size_t> pods_of_node;
};

/// The key of an object, as planned_object::key.
std::string object_key(resource res, const std::string& ns,
                       const std::string& name);

/// Plans `pods_per_node` pods on each of `nodes` from `manifests` (name,
/// text). Fails naming the manifest when one does not decode, or when
/// there is no pod or pod template.
result<workload>
plan_workload(const std::vector<std::pair<std::string, std::string>>& manifests,
              const std::vector<std::string>& nodes, std::size_t pods_per_node);

/// What creating and deleting did.
struct write_counts {
  std::uint64_t created = 0;
  std::uint64_t existed = 0;
  std::uint64_t failed = 0;
  /// The first failures' messages (a few).
  std::vector<std::string> errors;
};

/// Creates the namespaces, objects and pods (an existing one is fine).
write_counts create_workload(wire::http_client& client, const workload& w);

/// Deletes the pods with grace period 0 (a missing one is fine).
write_counts delete_pods(wire::http_client& client, const workload& w);

/// The merge patch that updates object `key` with `serial`, as (path,
/// body): a data key `podref-hollow-update` the pods do not read.
std::pair<std::string, std::string> update_request(const planned_object& o,
                                                   std::uint64_t serial);

/// The resourceVersion of an object's JSON (a write's reply), or 0.
std::uint64_t resource_version_of(const std::string& json);

} // namespace podref::cli::hollow
