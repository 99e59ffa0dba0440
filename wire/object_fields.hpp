// The fields of an object's JSON as managedFields see them: which paths a
// document sets, what changed between two versions of an object, the merge
// of an applied configuration into an object, and the removal of fields.
// Pure functions over JSON (structured-merge-diff's typed values, with the
// little schema podref's kinds need), no I/O.
//
// The schema: maps and structs are granular (each key its own field);
// lists are atomic (one field) except those the kinds key, which
// merge and are owned item by item: metadata.finalizers (a set) and
// metadata.ownerReferences (by uid) everywhere; a Pod's containers, init
// and ephemeral containers, volumes, imagePullSecrets, schedulingGates and
// resourceClaims (by name), a container's env (name), ports (containerPort
// and protocol, TCP by default), volumeMounts (mountPath) and
// volumeDevices (devicePath), hostAliases (ip), topologySpreadConstraints
// (topologyKey and whenUnsatisfiable), status.conditions (type),
// podIPs and hostIPs (ip); a Node's spec.podCIDRs (a set),
// status.conditions and status.addresses (type); a Namespace's
// status.conditions (type). A keyed list whose items lack their keys or
// repeat them is atomic. A key whose value is an object is a struct field
// (never a member itself), as every such key of these kinds is.
#pragma once

#include <nlohmann/json.hpp>

#include "podref/messages/api_object.hpp"
#include "podref/wire/field_set.hpp"

namespace podref::wire {

using json_value = nlohmann::ordered_json;

/// What changed from one version of an object to the next: leaves and
/// items whose value changed (modified), paths only the next has (added)
/// and only the first has (removed). A struct, map or item that appears
/// (disappears) is added (removed) itself, with everything below it.
struct field_comparison {
  field_set added;
  field_set modified;
  field_set removed;
};

/// `object` without what managedFields never track: kind, apiVersion, the
/// server's metadata (name, namespace, uid, resourceVersion,
/// creationTimestamp, generation, selfLink, managedFields) and, for Pods,
/// Nodes and Namespaces, status (a subresource's).
json_value trackable(resource res, json_value object);

/// The trackable fields of an object of `res` before its create: what the
/// real server's empty object has (a Pod's `spec.containers: null`, a Node's
/// and Namespace's `spec: {}`; a Namespace's default finalizer, which the
/// server adds, not its creator).
json_value creation_base(resource res);

/// The paths `doc` (a trackable document) sets: its leaves, atomic lists
/// and the items of keyed lists.
field_set fields_of(resource res, const json_value& doc);

/// `live` to `next` (both trackable).
field_comparison compare_fields(resource res, const json_value& live,
                                const json_value& next);

/// `config` merged into `live`: config's values win, maps and structs
/// merge, keyed lists merge item by item (live's order, new items after),
/// sets unite, atomic lists are replaced.
json_value merge_fields(resource res, json_value live,
                        const json_value& config);

/// `object` without the members of `paths` (a map key, a struct field, a
/// list item), each with what it holds.
json_value remove_fields(resource res, json_value object,
                         const field_set& paths);

} // namespace podref::wire
