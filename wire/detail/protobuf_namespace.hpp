// A Namespace sent as Kubernetes protobuf (private to wire/'s .cpp files):
// kubectl 1.32 and later POST `kubectl create namespace` with Content-Type
// application/vnd.kubernetes.protobuf and do not retry a 415 as JSON.
//
// The envelope is the magic "k8s\0" and a runtime.Unknown {typeMeta 1
// {apiVersion 1, kind 2}, raw 2}; raw is a Namespace {metadata 1, spec 2
// {finalizers 1}}, its ObjectMeta {name 1, generateName 2, namespace 3,
// labels 11, annotations 12} (map entries {key 1, value 2}). Other fields
// are skipped: a create takes nothing else from the client.
#pragma once

#include <string>
#include <string_view>

namespace podref::wire::detail {

/// The result of reading a protobuf Namespace: its JSON text, or why the
/// body is not one (`error` non-empty, a message for a 400).
struct protobuf_namespace {
  std::string json;
  std::string error;
};

/// Reads `body` (at most the request body limit; every length is checked
/// against what is left, so a peer cannot make it read past the end or
/// allocate more than the body holds).
protobuf_namespace namespace_from_protobuf(std::string_view body);

} // namespace podref::wire::detail
