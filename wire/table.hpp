// The Table form (meta.k8s.io/v1) that kubectl asks for with
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...`: the columns
// the real server prints for Secrets (Name, Type, Data, Age), ConfigMaps
// (Name, Data, Age), Pods (Name, Ready, Status, Restarts, Age; wide: IP,
// Node, Nominated Node, Readiness Gates), Nodes (Name, Status, Roles, Age,
// Version; wide: Internal-IP, External-IP, OS-Image, Kernel-Version,
// Container-Runtime), Namespaces (Name, Status, Age), ServiceAccounts
// (Name, Secrets, Age), Deployments (Name, Ready, Up-to-date, Available,
// Age; wide: Containers, Images, Selector), ClusterRoles (Name, Created At)
// and ClusterRoleBindings (Name, Role, Age; wide: Users, Groups,
// ServiceAccounts), one row per object with its PartialObjectMetadata
// (includeObject's default, Metadata).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"

namespace podref::wire {

/// Whether an Accept header asks for a Table (as=Table).
bool wants_table(std::string_view accept);

/// kubectl's short age ("4s", "5m17s", "3h", "12d") of `since` at `now`.
std::string short_age(std::chrono::system_clock::duration age);

/// A Table of `items` at list resourceVersion `rv`. `with_columns` false
/// writes columnDefinitions null, as every watch event after the first.
std::string encode_table(resource res, const std::vector<api_object>& items,
                         const std::string& rv, bool with_columns,
                         std::chrono::system_clock::time_point now);

} // namespace podref::wire
