// The JSON codec: api_object <-> the Kubernetes JSON of v1 Secrets and
// ConfigMaps (and of the other kinds, kept as JSON: see
// wire/detail/opaque_kinds.hpp), as the real API server writes them (kube-apiserver-transcripts):
// fields in Go's struct order, metadata name, namespace, uid,
// resourceVersion, creationTimestamp, labels, annotations; then immutable,
// data (Secret: base64; ConfigMap: text), binaryData (base64) and type.
// managedFields are not kept. List items carry no kind and apiVersion, as
// the real server's lists.
//
// Request bodies (wire/request_body.cpp) are decoded with the manifest
// decoder's public API (decode_manifest) and checked with the API server's
// validation (messages/object_validation.hpp), the decoder's own, so that
// the decoder's and the server's rules agree; the codec adds what belongs to
// a request: the media type, the kind of the path, the namespace and name
// of the path, stringData folded into data, the unknown fields.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/source_protocol.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire {

/// The namespaces a new API server has: default, kube-node-lease,
/// kube-public, kube-system.
std::vector<std::string> initial_namespaces();

/// Namespace `name` (a DNS-1123 label) as a create stores it before
/// stamp_new: its name label, the kubernetes finalizer and phase Active.
api_object namespace_object(const std::string& name);

/// One object with kind and apiVersion (a GET or write reply).
std::string encode_object(const api_object& obj);

/// A SecretList / ConfigMapList at the cluster resourceVersion `rv`.
std::string encode_list(resource res, const std::vector<api_object>& items,
                        const std::string& rv);

/// One watch stream line (with its '\n'): {"type":..,"object":..}, with
/// `object_json` already encoded.
std::string encode_watch_line(std::string_view type,
                              std::string_view object_json);

/// The object of a BOOKMARK event: only kind, apiVersion and the
/// resourceVersion (creationTimestamp null, as the server writes it); the
/// one that ends a watch's initial events (sendInitialEvents) carries the
/// annotation `k8s.io/initial-events-end: "true"`.
std::string encode_bookmark(resource res, std::uint64_t rv,
                            bool initial_events_end = false);

/// RFC 3339 in UTC to the second, e.g. 2026-12-02T01:51:55Z.
std::string format_timestamp(std::chrono::system_clock::time_point t);

/// A random (version 4) UUID, as the API server gives every new object.
std::string new_uid();

/// Most unknown fields one body reports (the rest are dropped unnamed).
constexpr std::size_t max_unknown_fields = 100;

/// A decoded request body: the object, or the Status that refuses it.
struct decoded_body {
  api_object object;
  std::optional<api_status> failure;
  /// The fields of a Secret or ConfigMap body its type does not have
  /// (`bogus`, `metadata.bogus`), at most max_unknown_fields, for
  /// fieldValidation; decoding dropped them.
  std::vector<std::string> unknown_fields = {};
};

/// Decodes the body of a POST (path_name empty) or PUT to a collection or
/// object of `res` in namespace `path_ns` (empty for a cluster-scoped
/// kind), named `path_name`: application/json or
/// application/yaml of the kind `res` (a Secret, ConfigMap or Namespace also
/// as protobuf, see wire/detail/protobuf_body.hpp); otherwise 415. A body
/// without a namespace takes the path's; a different namespace or name is
/// a 400, and so is a body that does not decode as its kind (a field of the
/// wrong type, base64 Go would not decode: `Secret in version "v1" cannot
/// be handled as a Secret: illegal base64 data at input byte 3`). The
/// decoded object is then checked as the API server validates it
/// (messages/object_validation.hpp): 422 with every problem as a cause.
decoded_body decode_request_body(resource res, std::string_view content_type,
                                 std::string_view body,
                                 const std::string& path_ns,
                                 const std::string& path_name);

/// `unknown field "bogus"`, as a strict decoder and a Warning name it.
std::string unknown_field_text(const std::string& field);

/// `strict decoding error: unknown field "a", unknown field "b"`.
std::string strict_decoding_error(const std::vector<std::string>& unknown);

/// fieldValidation=Strict's 400 for `unknown` fields: `Secret in version
/// "v1" cannot be handled as a Secret: strict decoding error: unknown field
/// "bogus"` (several joined with ", ").
api_status strict_decoding_status(resource res,
                                  const std::vector<std::string>& unknown);

/// `obj` as the API server stores it in namespace `ns`: stringData folded
/// into data (stringData wins) and a Secret's empty type made "Opaque".
api_object normalize_object(const api_object& obj, const std::string& ns);

/// `obj` as a create stores it: a new uid and creationTimestamp `now`.
api_object stamp_new(const api_object& obj,
                     std::chrono::system_clock::time_point now);

} // namespace podref::wire
