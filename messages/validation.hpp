// Names as the Kubernetes API server validates them, with its messages.
//
// Object names (Pods, Secrets, ConfigMaps, Nodes, workloads) must be
// DNS-1123 subdomains: at most 253 characters of lower case alphanumerics,
// '-' and '.', each dot-separated part starting and ending with an
// alphanumeric. Namespaces must be DNS-1123 labels: at most 63 characters of
// lower case alphanumerics and '-', starting and ending with an alphanumeric.
// Lengths count bytes, as Go's len() does; anything outside ASCII fails the
// pattern.
//
// The texts are upstream apimachinery's, so an error reads as `kubectl apply`
// would print it: `metadata.name: Invalid value: "Web_1": a lowercase RFC 1123
// subdomain must consist of ...`.
//
// Which pod fields name a Secret or ConfigMap, and what the API server
// accepts in each, is decided field by field (see find_reference_problem):
// podref rejects exactly what the API server would reject, so that every pod
// a cluster accepted registers.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/field_problem.hpp"
#include "podref/messages/pod.hpp"

namespace podref {

// -- DNS-1123 names -------------------------------------------------------------

/// Longest DNS-1123 label (namespaces).
constexpr std::size_t dns1123_label_max_length = 63;

/// Longest DNS-1123 subdomain (object names).
constexpr std::size_t dns1123_subdomain_max_length = 253;

/// True iff `value` is a DNS-1123 label.
bool is_dns1123_label(std::string_view value) noexcept;

/// True iff `value` is a DNS-1123 subdomain.
bool is_dns1123_subdomain(std::string_view value) noexcept;

/// Upstream's IsDNS1123Label: every problem of `value`, empty when valid
/// (`must be no more than 63 characters`, `must not contain dots`, or the
/// pattern message with its example and regex).
std::vector<std::string> dns1123_label_errors(std::string_view value);

/// Upstream's IsDNS1123Subdomain: every problem of `value`, empty when valid
/// (`must be no more than 253 characters` and / or the pattern message).
std::vector<std::string> dns1123_subdomain_errors(std::string_view value);

/// Upstream's ValidatePathSegmentName (the names of RBAC's objects, which
/// may hold ':'): every problem of `value`, empty when valid (`may not be
/// '.'`, `may not contain '/'`, ...).
std::vector<std::string> path_segment_errors(std::string_view value);

// -- field errors ---------------------------------------------------------------

/// `Required value`, or `Required value: <detail>`.
std::string required_value(std::string_view detail = {});

/// `Invalid value: "<value>": <detail>`, the value quoted as Go's %q does
/// (a value over max_quoted_bytes by its prefix and `... (N bytes)`);
/// several details are joined with "; ".
std::string invalid_value(std::string_view value,
                          const std::vector<std::string>& details);

/// `value` in double quotes as Go's %q writes it (a value over
/// max_quoted_bytes by its prefix and `... (N bytes)`).
std::string go_quoted(std::string_view value);

/// The problem with `name` as an object's metadata.name: empty is
/// `Required value: name or generateName is required`, otherwise it must be
/// a DNS-1123 subdomain. nullopt when valid.
std::optional<std::string> object_name_problem(std::string_view name);

/// The problem with `ns` as a metadata.namespace: empty is `Required value`,
/// otherwise it must be a DNS-1123 label. nullopt when valid.
std::optional<std::string> namespace_problem(std::string_view ns);

// -- pods -----------------------------------------------------------------------

/// Most Secret and ConfigMap reference fields one pod may carry
/// (imagePullSecrets entries, env and envFrom refs, volume refs, empty names
/// included). One limit wherever a pod enters: the facade's registrations
/// (find_pod_problem) and the manifest decoder's default
/// (manifest_limits::max_references).
inline constexpr std::size_t max_references_per_pod = 10000;

/// The first Secret or ConfigMap reference in `spec` that the API server
/// would reject, with its path from the spec (volumes first, then the
/// regular, init and ephemeral containers, as upstream validates them); or,
/// once more than `max_references` reference fields were seen, the first one
/// past that limit. nullopt when every reference is acceptable.
///
/// Per field, as upstream's pod validation decides (the fields and their
/// rules are reference_walk.hpp's):
/// - imagePullSecrets[].name: anything (an empty name only draws a warning);
/// - envFrom[].secretRef.name, envFrom[].configMapRef.name: required, a
///   DNS-1123 subdomain once a trailing '-' is masked (upstream validates
///   them as name prefixes);
/// - env[].valueFrom.secretKeyRef.name, .configMapKeyRef.name: a DNS-1123
///   subdomain (so empty is invalid, not just missing);
/// - volumes: secret.secretName, configMap.name, projected secret and
///   configMap names, azureFile.secretName: required, any text;
///   cinder.secretRef.name and storageos.secretRef.name: required when the
///   secretRef is set; csi.nodePublishSecretRef.name: required when set, a
///   DNS-1123 subdomain; the secretRef of cephfs, flexVolume, rbd, scaleIO
///   and iscsi: anything.
/// The reference visitors (pod_references.hpp) still skip empty names: a pod
/// built in code may carry them, and the accepted empty imagePullSecrets
/// name must not become a reference.
std::optional<field_problem>
find_reference_problem(const pod_spec& spec,
                       std::size_t max_references
                       = std::numeric_limits<std::size_t>::max());

/// The first reason `p` cannot be registered: its namespace must be a
/// DNS-1123 label, its name a DNS-1123 subdomain, its uid set, and its
/// references acceptable and at most max_references_per_pod
/// (find_reference_problem). Paths start at the pod
/// (`metadata.uid`, `spec.volumes[2].secret.secretName`). nullopt when `p`
/// may be registered.
std::optional<field_problem> find_pod_problem(const pod& p);

/// Where the one-walk find_pod_problem puts the names it collects: views of
/// the pod's strings, stored into `out` up to `capacity`; `count` counts
/// them all, past `capacity` too (the caller then collects again with room
/// for all).
struct reference_views {
  resource of;
  std::string_view* out;
  std::size_t capacity;
  std::size_t count = 0;
};

/// find_pod_problem(p), walking p's references once for validation and for
/// `names`: it collects the names secret_name_views (or
/// config_map_name_views, as `names.of` says) yields, each as often, in
/// another order. They are complete only when no problem is found.
std::optional<field_problem> find_pod_problem(const pod& p,
                                              reference_views& names);

} // namespace podref
