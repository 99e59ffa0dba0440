// Decoding Kubernetes manifests (JSON or YAML) into podref's object model.
//
// Accepted: JSON (one value or several in a row), YAML with any number of
// documents, `kind: List` (or a typed list such as PodList) with items, YAML
// anchors, aliases and merge keys. Decoded kinds: Pod; the pod template of
// Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job
// and CronJob; Secret, ConfigMap and Node. Other kinds are skipped. Unknown
// fields are ignored; a namespaced object without a namespace gets "default".
//
// YAML scalars are typed by the YAML 1.2 core schema (`yes` is a string,
// `"true"` is not a boolean) and every field must have its API type: labels,
// annotations and data values are strings, so `app: 1` is an error (quote
// it); resourceVersion alone also takes an integer. Fields that take a
// boolean also take YAML 1.1's yes/no, on/off and y/n (any of their three
// spellings), as kubectl reads them: `optional: no` is false. Elsewhere those
// words stay text (kubectl would make `name: n` a boolean and fail), and a
// quoted "no" is accepted where a boolean belongs (kubectl rejects it). Null stands for an absent
// field, as in Go. A repeated key keeps its last value.
//
// Objects are checked as the API server checks them
// (messages/object_validation.hpp, messages/validation.hpp), with its texts:
// object names must be DNS-1123 subdomains and namespaces DNS-1123 labels,
// label and annotation keys qualified names and label values valid; a
// Secret's and a ConfigMap's data keys must be valid, their data at most
// 1 MiB, a Secret have what its type requires (`data[tls.crt]: Required
// value`); and each Secret or ConfigMap reference of a pod or pod template
// must be what the API server accepts in that field (a secret volume needs a
// secretName, a secretKeyRef a valid name, ...). Base64 that Go would not
// decode is `illegal base64 data at input byte N`. An empty object name is
// accepted: manifests may rely on generateName, and register_pod rejects a
// pod without one.
//
// Errors name the file, the document index (from 0) and the field path, e.g.
// `deploy.yaml: document 2: spec.template.spec.containers[0].env: expected a
// list, got a string` or `pod.yaml: document 0: spec.volumes[1].secret.
// secretName: Required value`; the path of a List item starts with its
// index (`document 0: items[3].spec...`). Syntax errors and limits on the
// text name the line.
//
// One bad document does not hide the good ones. A field error (a wrong type,
// an invalid name or reference, a per-pod or per-container limit) drops only
// its own document, or only its own List item, and decoding goes on with the
// next. A syntax error, invalid UTF-8 or UTF-16, and the limits on the text
// (max_bytes, max_document_bytes, max_objects, max_depth, max_alias_values)
// end the input: the objects of the documents before it are kept, as kubectl
// keeps the documents it parsed before the one it cannot. Size and encoding
// are checked before parsing, so their errors come with no objects at all.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "podref/messages/config_map.hpp"
#include "podref/messages/node.hpp"
#include "podref/messages/pod.hpp"
#include "podref/messages/secret.hpp"
#include "podref/messages/validation.hpp"

namespace podref {

/// Limits that keep hostile input from exhausting memory or time.
struct manifest_limits {
  /// Largest accepted input, in bytes.
  std::size_t max_bytes = 16u << 20;
  /// Most objects one input may hold: documents (empty and null ones too)
  /// plus List items.
  std::size_t max_objects = 100000;
  /// Deepest nesting of maps and lists.
  std::size_t max_depth = 64;
  /// Most values (maps, lists and scalars) that YAML anchors and aliases may
  /// copy in one input: an anchored value counts once where it is defined
  /// and again at every use of an alias. A few bytes of nested aliases can
  /// otherwise expand to billions of values.
  std::size_t max_alias_values = 1u << 20;
  /// Largest accepted document, in bytes (a List is one document). The
  /// default is the input limit; lower it to bound single objects, e.g. to
  /// the API server's 3 MiB request limit. YAML documents are measured to
  /// the end of each value's text, so what follows their last value
  /// (comments, blank lines) does not count.
  std::size_t max_document_bytes = 16u << 20;
  /// Most containers (init, regular and ephemeral together) in one pod or
  /// pod template.
  std::size_t max_containers = 1000;
  /// Most Secret and ConfigMap reference fields in one pod or pod template
  /// (imagePullSecrets entries, env and envFrom refs, volume refs), empty
  /// names included.
  std::size_t max_references = max_references_per_pod;
  // The API server sets no count on the next four lists; its 3 MiB request
  // limit is their bound in effect (some 240000 env entries of the shortest
  // valid form, `{"name":"a"},`). The defaults sit far above what real pods
  // use and far below that bound, so that a hostile pod costs megabytes,
  // not gigabytes, once decoded. Each list is checked before any of its
  // entries is decoded.
  /// Most env entries in one container; a real container has tens.
  std::size_t max_env = 10000;
  /// Most envFrom entries in one container; a real container has a few.
  std::size_t max_env_from = 1000;
  /// Most volumes in one pod or pod template; a real pod has tens.
  std::size_t max_volumes = 1000;
  /// Most imagePullSecrets entries in one pod or pod template; a real pod
  /// has a few.
  std::size_t max_image_pull_secrets = 1000;
  /// Most errors kept for one input; past it a last error
  /// `<file>: ... and N more errors` counts the rest, so that a file of
  /// many bad documents cannot grow the list without bound.
  std::size_t max_errors = 100;
  /// Not a limit: check each object as the API server validates it
  /// (messages/object_validation.hpp: metadata, Secret and ConfigMap
  /// contents) and drop one that fails. The HTTP front turns this off for
  /// Secrets and ConfigMaps and makes the same checks itself, to answer
  /// every problem at once with the API server's 422. A pod's references
  /// are checked either way.
  bool check_objects = true;
  /// Not a limit: also hand back every document whole, as JSON text, in
  /// manifest_result::documents (`podref apiserver --load` stores the
  /// Pods, Nodes and Namespaces the engine does not decode field by field
  /// as they are written). The limits above bound those documents too.
  bool keep_documents = false;
};

/// One decoded object and where it came from.
struct manifest_object {
  /// Index of the document within the file, from 0 (a List's items share
  /// their List's index).
  std::size_t doc = 0;
  /// The manifest's kind, e.g. "Deployment" for a Deployment's pod template.
  std::string kind;
  /// The object; for workload kinds the pod carries the workload's namespace
  /// and name, and the template's labels and annotations.
  std::variant<pod_ptr, secret_ptr, config_map_ptr, node_ptr> object;
};

/// The outcome of decoding one input: the objects of its valid documents
/// and every error, both in input order.
struct manifest_result {
  std::vector<manifest_object> objects;
  /// Full messages, each starting with the file name; at most
  /// manifest_limits::max_errors of them plus the line that counts the rest.
  std::vector<std::string> errors;
  /// With manifest_limits::keep_documents: each document as JSON text, in
  /// input order (up to the first error that ends the input).
  std::vector<std::string> documents;

  /// True iff the input decoded without any error.
  bool ok() const noexcept {
    return errors.empty();
  }
};

/// Decodes `text`; `file_name` only labels error messages. JSON is recognised
/// by its first non-blank character ('{' or '['), everything else is YAML.
manifest_result decode_manifest(std::string_view text,
                                std::string_view file_name,
                                const manifest_limits& limits = {});

/// Reads and decodes a file ("-" reads standard input).
manifest_result load_manifest_file(const std::string& path,
                                   const manifest_limits& limits = {});

} // namespace podref
