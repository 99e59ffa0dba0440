#include "podref/messages/resource_kinds.hpp"

namespace podref {

namespace {

constexpr std::array<resource_kind, resource_count> kinds{{
  {resource::secrets, "secrets", "secret", "Secret", "", "v1", "v1",
   "secrets", "Secret", "", true, false},
  {resource::config_maps, "configmaps", "configmap", "ConfigMap", "", "v1",
   "v1", "configmaps", "ConfigMap", "cm", true, false},
  {resource::pods, "pods", "pod", "Pod", "", "v1", "v1", "pods", "Pod", "po",
   true, true},
  {resource::nodes, "nodes", "node", "Node", "", "v1", "v1", "nodes", "Node",
   "no", false, false},
  {resource::namespaces, "namespaces", "namespace", "Namespace", "", "v1",
   "v1", "namespaces", "Namespace", "ns", false, false, name_rule::label},
  {resource::service_accounts, "serviceaccounts", "serviceaccount",
   "ServiceAccount", "", "v1", "v1", "serviceaccounts", "ServiceAccount", "sa",
   true, false},
  {resource::deployments, "deployments", "deployment", "Deployment", "apps",
   "v1", "apps/v1", "deployments.apps", "Deployment.apps", "deploy", true,
   true},
  {resource::cluster_roles, "clusterroles", "clusterrole", "ClusterRole",
   "rbac.authorization.k8s.io", "v1", "rbac.authorization.k8s.io/v1",
   "clusterroles.rbac.authorization.k8s.io",
   "ClusterRole.rbac.authorization.k8s.io", "", false, false,
   name_rule::path_segment},
  {resource::cluster_role_bindings, "clusterrolebindings",
   "clusterrolebinding", "ClusterRoleBinding", "rbac.authorization.k8s.io",
   "v1", "rbac.authorization.k8s.io/v1",
   "clusterrolebindings.rbac.authorization.k8s.io",
   "ClusterRoleBinding.rbac.authorization.k8s.io", "", false, false,
   name_rule::path_segment},
}};

/// Each row sits at its resource's index (kind_of relies on it).
constexpr bool rows_in_order() {
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (static_cast<std::size_t>(kinds[i].res) != i)
      return false;
  return true;
}
static_assert(rows_in_order(), "resource_kinds: rows out of resource order");

} // namespace

const std::array<resource_kind, resource_count>& resource_kinds() noexcept {
  return kinds;
}

const resource_kind& kind_of(resource r) noexcept {
  auto i = static_cast<std::size_t>(r);
  return kinds[i < kinds.size() ? i : 0];
}

const resource_kind* find_resource(std::string_view group,
                                   std::string_view version,
                                   std::string_view plural) noexcept {
  for (const auto& k : kinds)
    if (k.plural == plural && k.group == group && k.version == version)
      return &k;
  return nullptr;
}

const resource_kind* find_kind(std::string_view kind) noexcept {
  for (const auto& k : kinds)
    if (k.kind == kind)
      return &k;
  return nullptr;
}

} // namespace podref
