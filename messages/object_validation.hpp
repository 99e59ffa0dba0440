// The API server's checks of a whole Secret or ConfigMap, of any object's
// metadata and of an update, with its texts: upstream's ValidateObjectMeta,
// ValidateSecret, ValidateConfigMap, ValidateSecretUpdate,
// ValidateConfigMapUpdate and the spec rule of ValidatePodUpdate.
//
// One place for both users: the manifest decoder drops a document at its
// first problem (`data[tls.crt]: Required value`), and the HTTP front answers
// every problem as one cause of its 422 (wire/status.hpp). Each upstream
// field error is one field_problem, in upstream's order; paths are written
// as upstream writes them (`data[tls.crt]`, `metadata.labels`, keys not
// quoted). Keys of labels, annotations and data are walked sorted, where
// upstream walks Go maps in random order. No problem quotes a data value: a
// docker config that is not JSON is `<secret contents redacted>`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/field_problem.hpp"

namespace podref {

/// The most bytes of a Secret's data, or of a ConfigMap's data and
/// binaryData together (upstream's MaxSecretSize: 1 MiB).
inline constexpr std::size_t max_object_data_bytes = 1u << 20;

/// The most bytes of an object's annotations, keys and values together.
inline constexpr std::size_t max_annotation_bytes = 256u << 10;

/// Upstream's IsQualifiedName (label and annotation keys): every problem
/// of `key`, empty when valid.
std::vector<std::string> qualified_name_errors(std::string_view key);

/// Upstream's IsValidLabelValue: every problem of `value`, empty when
/// valid (at most 63 characters; empty, or alphanumeric at both ends with
/// '-', '_' and '.' between).
std::vector<std::string> label_value_errors(std::string_view value);

/// Upstream's IsConfigMapKey (data, stringData and binaryData keys): at
/// most 253 characters of [-._a-zA-Z0-9], not "." or "..", not starting
/// with "..". Every problem of `key`, empty when valid.
std::vector<std::string> config_key_errors(std::string_view key);

/// ValidateObjectMeta's checks of the metadata of an object of `kind`: the
/// name (by the kind's name_rule, messages/resource_kinds.hpp: a DNS-1123
/// subdomain, a label for Namespaces, a path segment for RBAC's kinds; an
/// empty one is `Required value: name or generateName is required` when
/// `name_required` and there is no generateName: the manifest decoder
/// allows it, a manifest may rely on generateName), the namespace of a
/// namespaced kind, label keys and
/// values, annotation keys and their total size.
std::vector<field_problem> find_meta_problems(const object_meta& meta,
                                              resource kind,
                                              bool name_required = true);

/// ValidateSecret after the metadata: data keys and their 1 MiB total
/// (stringData folded into data, as the server converts it before
/// validating: its keys are reported as `data[KEY]`), then what the type
/// requires: kubernetes.io/service-account-token the annotation
/// kubernetes.io/service-account.name; kubernetes.io/dockercfg and
/// kubernetes.io/dockerconfigjson their key holding a JSON object;
/// kubernetes.io/basic-auth username or password; kubernetes.io/ssh-auth
/// ssh-privatekey; kubernetes.io/tls tls.crt and tls.key. Other types,
/// custom ones too, require nothing.
std::vector<field_problem> find_secret_content_problems(const secret& s);

/// ValidateConfigMap after the metadata: data and binaryData keys, a key
/// in both, their 1 MiB total.
std::vector<field_problem>
find_config_map_content_problems(const config_map& c);

/// find_meta_problems, then the content checks of a Secret or ConfigMap.
std::vector<field_problem> find_object_problems(const api_object& obj);

/// The checks of an update from `old` to `updated` (one kind and name)
/// that the new object alone cannot tell: a Secret's type cannot change;
/// once immutable, a Secret's data (a ConfigMap's data and binaryData) and
/// immutable itself cannot; a Pod's spec may change only where
/// find_pod_spec_update_problems allows. Empty when the update is allowed;
/// metadata (labels, annotations) stays mutable.
std::vector<field_problem> find_update_problems(const api_object& old,
                                                const api_object& updated);

/// The API server's 422 message: `Kind "name" is invalid: PATH: PROBLEM`,
/// several problems as `[P1, P2]` (identical ones once).
std::string invalid_object_message(std::string_view kind,
                                   std::string_view name,
                                   const std::vector<field_problem>& problems);

} // namespace podref
