// The opaque kinds on the wire (Pods, Nodes, Namespaces, ServiceAccounts,
// Deployments, ClusterRoles, ClusterRoleBindings; private to wire/'s .cpp
// files): their request bodies with each kind's checks and defaults, their
// JSON, and the fields the front reads from the JSON text that
// messages/opaque_object.hpp keeps.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "podref/messages/api_object.hpp"
#include "podref/wire/codec.hpp"

namespace podref::wire::detail {

/// Deepest nesting of maps and lists the front stores or walks, as the
/// manifest decoder's default limit: kept JSON is printed recursively.
constexpr std::size_t max_json_depth = 64;

/// Whether JSON text `body` nests maps and lists deeper than max_json_depth
/// (checked on the text, before a parser recurses).
bool too_deep(std::string_view body);

/// Decodes a JSON request body of opaque resource `res` after check_json
/// passed: metadata parsed, the rest kept as text, the server's defaults
/// added (a pod's status.phase Pending; a namespace's name label,
/// kubernetes finalizer and phase Active; a deployment's spec.replicas 1
/// and empty status). 422 for a missing or invalid name (DNS-1123
/// subdomain; a namespace's a label; RBAC objects' a path segment) and for
/// a required field missing or empty (a pod's spec.containers; a
/// deployment's spec.selector and spec.template.spec.containers; a cluster
/// role binding's roleRef.kind and roleRef.name).
decoded_body decode_opaque_body(resource res, std::string_view body,
                                const std::string& path_ns);

/// Whether a body of `res` must also pass the manifest decoder (Pods,
/// Nodes, Deployments: what the engine reads of them).
bool engine_decodes(resource res);

/// Whether a DELETE of `res` answers the deleted object (ServiceAccounts;
/// Pods and Namespaces have their own deletes) rather than a Success
/// Status.
bool delete_answers_object(resource res);

/// The object's JSON: kind and apiVersion when `with_type`, metadata with
/// the deletion fields, then the kept fields.
nlohmann::ordered_json opaque_json(const api_object& obj, bool with_type);

/// The kept fields of `obj` as JSON (an empty object when it holds none or
/// is not an opaque object).
nlohmann::ordered_json opaque_fields(const api_object& obj);

/// A pod's spec.nodeName, read from its kept JSON without building a
/// document (the kubelets' field selector evaluates it for every pod of a
/// list and every pod event of every node's watch); empty when absent.
std::string pod_node_name(const api_object& obj);

/// The string at `path` (keys from the top) in `x`; empty when absent or
/// not a string.
std::string string_at(const nlohmann::ordered_json& x,
                      std::initializer_list<const char*> path);

} // namespace podref::wire::detail
