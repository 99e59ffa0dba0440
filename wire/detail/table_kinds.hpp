// The Table columns and cells of ServiceAccounts, Deployments, ClusterRoles
// and ClusterRoleBindings (private to wire/'s .cpp files; wire/table.hpp
// puts them together with the other kinds'): what the real server's
// printers compute from the object, read here from the kept JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "podref/messages/api_object.hpp"

namespace podref::wire::detail {

// The API's field documentation, as the real server sends it in a column's
// description.
inline constexpr const char* name_doc
  = "Name must be unique within a namespace. Is required when creating "
    "resources, although some resources may allow a client to request the "
    "generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot "
    "be updated. More info: "
    "http://kubernetes.io/docs/user-guide/identifiers#names";
inline constexpr const char* age_doc
  = "CreationTimestamp is a timestamp representing the server time when this "
    "object was created. It is not guaranteed to be set in happens-before "
    "order across separate operations. Clients may not set this value. It is "
    "represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
    "Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata";

/// One columnDefinition; `priority` 1: a column kubectl shows only with
/// -o wide.
nlohmann::ordered_json table_column(const char* name, const char* format,
                                    const char* doc, int priority = 0,
                                    const char* type = "string");

/// The list at `key` of map `x`, or an empty one.
const nlohmann::ordered_json& array_at(const nlohmann::ordered_json& x,
                                       const char* key);

/// The map at `key` of map `x`, or an empty one.
const nlohmann::ordered_json& object_at(const nlohmann::ordered_json& x,
                                        const char* key);

/// Appends the columns after Name of `res` to `xs`; false (nothing
/// appended) for a kind this file does not print.
bool append_kind_columns(resource res, nlohmann::ordered_json& xs);

/// The cells of one row after its Name: `before` Age, `after` it (the wide
/// ones). `with_age` false for a kind whose columns have no Age (a
/// ClusterRole's Created At is in `before`). False for a kind this file
/// does not print.
bool kind_cells(const api_object& obj, nlohmann::ordered_json& before,
                nlohmann::ordered_json& after, bool& with_age);

} // namespace podref::wire::detail
