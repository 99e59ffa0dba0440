// Strategic merge patch as the API server applies it: maps merge as in a JSON merge patch (null removes a key);
// lists are replaced unless the kind's schema declares otherwise
// (metadata.finalizers: a set of strings merged by value;
// metadata.ownerReferences: objects merged by their uid). Directives:
// `$patch: replace | delete | merge` in a map (and `$patch: replace` or
// `$patch: delete` with a merge key in a list), `$retainKeys`,
// `$setElementOrder/FIELD` and `$deleteFromPrimitiveList/FIELD`. Directives
// never reach the result.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "podref/messages/api_object.hpp"
#include "podref/wire/patch_result.hpp"

namespace podref::wire {

/// How a strategic merge patch treats one list field.
struct list_strategy {
  enum class kind { replace, merge_values, merge_by_key };
  kind how = kind::replace;
  /// The merge key of merge_by_key (e.g. "uid").
  std::string key;
};

/// List strategies by dotted field path ("metadata.finalizers"); a list not
/// named is replaced.
using list_strategies = std::map<std::string, list_strategy>;

/// The list strategies of the metadata every kind shares (finalizers,
/// ownerReferences); all Secret and ConfigMap lists are there.
const list_strategies& object_meta_list_strategies();

/// The list strategies of a Pod: object_meta_list_strategies and the
/// patchMergeKeys of PodSpec and PodStatus (containers, init and ephemeral
/// containers, volumes, imagePullSecrets, schedulingGates and
/// resourceClaims by name; a container's env by name, ports by
/// containerPort, volumeMounts by mountPath, volumeDevices by devicePath;
/// hostAliases by ip, topologySpreadConstraints by topologyKey; status
/// conditions by type, podIPs by ip), so that `kubectl patch pod -p
/// '{"spec":{"containers":[{"name":"c","image":"x:2"}]}}'` changes one image
/// (pods/update-image.json).
const list_strategies& pod_list_strategies();

/// The list strategies of objects of `res`: pods', or the metadata's.
const list_strategies& list_strategies_of(resource res);

/// `target` with the strategic merge patch `patch` applied. A patch that is
/// not an object, an unknown `$patch` value, a directive of the wrong shape
/// or a list element without its merge key is bad_request.
patch_result strategic_merge_patch(
  nlohmann::ordered_json target, const nlohmann::ordered_json& patch,
  const list_strategies& lists = object_meta_list_strategies());

} // namespace podref::wire
