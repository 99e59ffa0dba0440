// Decoding the Pods and Nodes an API server sends the kubelet's pod source
// and node lookups: one Pod, a PodList, a pod watch line, one Node. JSON
// only, with simdjson's on-demand API field by field, into messages/pod.hpp's
// model (everything the reference walk reads) plus the pod's lifecycle
// fields (spec.nodeName, status.phase, metadata.deletionTimestamp).
//
// Every pod is bounded as the manifest decoder bounds one (manifest_limits'
// per-pod and per-container counts, checked as each list grows) and checked
// with find_pod_problem, the one check wherever a pod enters: a pod that
// fails is not an error of the list or stream, it comes back as a rejected
// pod (namespace, name, field path and problem) so the rest of the node
// keeps working. Malformed JSON, or a bad field outside a pod (the list's
// metadata, a watch line's type), fails the whole body. Errors name the
// field, never a value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "podref/manifest/manifest.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/node.hpp"
#include "podref/messages/pod.hpp"
#include "podref/messages/source_protocol.hpp"
#include "podref/wire/wire_decode.hpp"

namespace podref::wire {

/// A decoded, valid pod and the lifecycle fields the node agent acts on.
struct wire_pod {
  pod_ptr pod;
  std::string node_name;
  /// status.phase: Pending, Running, Succeeded, Failed, Unknown (or empty).
  std::string phase;
  /// metadata.deletionTimestamp as sent; empty when not being deleted.
  std::string deletion_timestamp;

  /// Succeeded or Failed: its containers will not run again.
  bool is_terminal() const noexcept {
    return phase == "Succeeded" || phase == "Failed";
  }
  bool is_deleting() const noexcept {
    return !deletion_timestamp.empty();
  }
};

/// A pod that could not be taken: where it is (as far as it was read) and
/// why, e.g. path `spec.volumes[2].secret.secretName`, problem
/// `Required value`.
struct rejected_pod {
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string path;
  std::string problem;
};

/// One pod of a list or event: decoded, or rejected.
struct pod_item {
  bool ok = false;
  wire_pod pod;
  rejected_pod rejected;

  /// metadata.resourceVersion, as sent (a rejected pod's too).
  const std::string& resource_version() const noexcept {
    return ok ? pod.pod->metadata.resource_version
              : rejected.resource_version;
  }
};

struct wire_pod_list {
  std::vector<pod_item> items;
  std::string resource_version;
  std::string continue_token;
};

/// One pod watch line: an event (its pod, or why it was rejected; nothing
/// for BOOKMARK), or (type ERROR) the Status it carries.
struct wire_pod_watch_line {
  bool is_error = false;
  watch_event_type type = watch_event_type::added;
  /// metadata.resourceVersion of the event's object, as a number.
  std::uint64_t resource_version = 0;
  pod_item item;
  wire_status status;
};

/// The per-pod limits (manifest_limits' max_containers, max_env,
/// max_env_from, max_volumes, max_image_pull_secrets, max_references).
result<pod_item> decode_pod(std::string_view json,
                            const manifest_limits& limits = {});

result<wire_pod_list> decode_pod_list(std::string_view json,
                                      const manifest_limits& limits = {});

result<wire_pod_watch_line>
decode_pod_watch_line(std::string_view line,
                      const manifest_limits& limits = {});

/// A Node: its metadata (the TTL annotation is what podref reads).
result<node_ptr> decode_node(std::string_view json);

} // namespace podref::wire
