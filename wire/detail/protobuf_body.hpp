// Request bodies in Kubernetes protobuf (private to wire/'s .cpp files):
// kubectl 1.32 and later POST `create secret generic`, `create configmap`
// and `create namespace` with Content-Type application/vnd.kubernetes.protobuf
// and do not retry a 415 as JSON.
//
// The envelope is the magic "k8s\0" and a runtime.Unknown {typeMeta 1
// {apiVersion 1, kind 2}, raw 2, contentEncoding 3, contentType 4}; raw is
// the object:
// - Secret {metadata 1, data 2 (map<string, bytes>), type 3, stringData 4
//   (map<string, string>), immutable 5};
// - ConfigMap {metadata 1, data 2 (map<string, string>), binaryData 3
//   (map<string, bytes>), immutable 4};
// - Namespace {metadata 1, spec 2 {finalizers 1}};
// ObjectMeta {name 1, generateName 2, namespace 3, uid 5, resourceVersion 6,
// labels 11, annotations 12, finalizers 14}; map entries {key 1, value 2}.
// Other fields are skipped: a create or update takes nothing else from the
// client. A known field with the wrong wire type is an error, as for Go's
// generated decoders.
//
// The object comes out as the JSON the same request would have carried
// (bytes as base64), so that it goes through the JSON body's checks and
// decoding unchanged: one path for every format. Strings that are not
// UTF-8 are replaced (U+FFFD), as Go's JSON encoder prints them.
#pragma once

#include <string>
#include <string_view>

#include "podref/messages/api_object.hpp"

namespace podref::wire::detail {

/// Whether a request body of `res` may be protobuf (Secrets, ConfigMaps,
/// Namespaces).
bool takes_protobuf(resource res) noexcept;

/// A protobuf body read as JSON text, or why it is not one of its kind
/// (`error` non-empty, a message for a 400).
struct protobuf_json {
  std::string json;
  std::string error;
};

/// Reads `body` as a v1 object of `res` (takes_protobuf(res) must hold).
/// Bounded by protobuf_reader's limits; the JSON is linear in the body.
protobuf_json json_from_protobuf(resource res, std::string_view body);

} // namespace podref::wire::detail
