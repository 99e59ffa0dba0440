// The Table columns and cells of ServiceAccounts, Deployments, ClusterRoles
// and ClusterRoleBindings, as kubectl 1.32 gets them from the real server:
// its printers (ServiceAccount, Deployment, ClusterRoleBinding) and, for a
// ClusterRole, the default table convertor (Name, Created At).
#include "podref/wire/detail/table_kinds.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "podref/wire/detail/opaque_kinds.hpp"

namespace podref::wire::detail {

namespace {

using json = nlohmann::ordered_json;

constexpr const char* containers_doc
  = "Names of each container in the template.";
constexpr const char* images_doc
  = "Images referenced by each container in the template.";

/// An integer at `key` of `x`, 0 when absent or not an integer.
std::int64_t integer_at(const json& x, const char* key) {
  if (!x.is_object())
    return 0;
  auto i = x.find(key);
  return i != x.end() && i->is_number_integer() ? i->get<std::int64_t>() : 0;
}

std::string joined(const std::vector<std::string>& xs, const char* sep) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : sep) + x;
  return out;
}

/// metav1.LabelSelectorAsSelector(selector).String(): the requirements
/// sorted by key, set values sorted; "" for an empty or absent selector.
std::string selector_text(const json& selector) {
  std::vector<std::pair<std::string, std::string>> reqs;
  for (const auto& [k, v] : object_at(selector, "matchLabels").items())
    if (v.is_string())
      reqs.emplace_back(k, k + "=" + v.get<std::string>());
  for (const auto& e : array_at(selector, "matchExpressions")) {
    auto key = string_at(e, {"key"});
    auto op = string_at(e, {"operator"});
    std::vector<std::string> values;
    for (const auto& v : array_at(e, "values"))
      if (v.is_string())
        values.push_back(v.get<std::string>());
    std::sort(values.begin(), values.end());
    if (op == "In" || op == "NotIn")
      reqs.emplace_back(key, key + (op == "In" ? " in (" : " notin (")
                               + joined(values, ",") + ")");
    else if (op == "Exists")
      reqs.emplace_back(key, key);
    else if (op == "DoesNotExist")
      reqs.emplace_back(key, "!" + key);
  }
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const auto& a, const auto& b) {
                     return a.first < b.first;
                   });
  std::vector<std::string> texts;
  for (auto& r : reqs)
    texts.push_back(std::move(r.second));
  return joined(texts, ",");
}

void deployment_cells(const json& fields, json& before, json& after) {
  const auto& spec = object_at(fields, "spec");
  const auto& status = object_at(fields, "status");
  auto desired = spec.contains("replicas") ? integer_at(spec, "replicas") : 1;
  before.push_back(std::to_string(integer_at(status, "readyReplicas")) + "/"
                   + std::to_string(desired));
  before.push_back(integer_at(status, "updatedReplicas"));
  before.push_back(integer_at(status, "availableReplicas"));
  std::vector<std::string> names;
  std::vector<std::string> images;
  const auto& pod = object_at(object_at(spec, "template"), "spec");
  for (const auto& c : array_at(pod, "containers")) {
    names.push_back(string_at(c, {"name"}));
    images.push_back(string_at(c, {"image"}));
  }
  after.push_back(joined(names, ","));
  after.push_back(joined(images, ","));
  after.push_back(selector_text(object_at(spec, "selector")));
}

void binding_cells(const json& fields, json& before, json& after) {
  const auto& ref = object_at(fields, "roleRef");
  before.push_back(string_at(ref, {"kind"}) + "/" + string_at(ref, {"name"}));
  std::vector<std::string> users;
  std::vector<std::string> groups;
  std::vector<std::string> accounts;
  for (const auto& s : array_at(fields, "subjects")) {
    auto kind = string_at(s, {"kind"});
    auto name = string_at(s, {"name"});
    if (kind == "User")
      users.push_back(name);
    else if (kind == "Group")
      groups.push_back(name);
    else if (kind == "ServiceAccount")
      accounts.push_back(string_at(s, {"namespace"}) + "/" + name);
  }
  after.push_back(joined(users, ", "));
  after.push_back(joined(groups, ", "));
  after.push_back(joined(accounts, ", "));
}

} // namespace

json table_column(const char* name, const char* format, const char* doc,
                  int priority, const char* type) {
  json x;
  x["name"] = name;
  x["type"] = type;
  x["format"] = format;
  x["description"] = doc;
  x["priority"] = priority;
  return x;
}

const json& array_at(const json& x, const char* key) {
  static const json empty = json::array();
  if (!x.is_object())
    return empty;
  auto i = x.find(key);
  return i != x.end() && i->is_array() ? *i : empty;
}

const json& object_at(const json& x, const char* key) {
  static const json empty = json::object();
  if (!x.is_object())
    return empty;
  auto i = x.find(key);
  return i != x.end() && i->is_object() ? *i : empty;
}

bool append_kind_columns(resource res, json& xs) {
  switch (res) {
    case resource::service_accounts:
      xs.push_back(table_column(
        "Secrets", "",
        "Secrets is a list of the secrets in the same namespace that pods "
        "running using this ServiceAccount are allowed to use. Pods are only "
        "limited to this list if this service account has a "
        "\"kubernetes.io/enforce-mountable-secrets\" annotation set to "
        "\"true\". This field should not be used to find auto-generated "
        "service account token secrets for use outside of pods. Instead, "
        "tokens can be requested directly using the TokenRequest API, or "
        "service account token secrets can be manually created. More info: "
        "https://kubernetes.io/docs/concepts/configuration/secret"));
      xs.push_back(table_column("Age", "", age_doc));
      return true;
    case resource::deployments:
      xs.push_back(
        table_column("Ready", "", "Number of the pod with ready state"));
      xs.push_back(table_column("Up-to-date", "",
                                "Total number of non-terminated pods targeted "
                                "by this deployment that have the desired "
                                "template spec."));
      xs.push_back(table_column("Available", "",
                                "Total number of available pods (ready for at "
                                "least minReadySeconds) targeted by this "
                                "deployment."));
      xs.push_back(table_column("Age", "", age_doc));
      xs.push_back(table_column("Containers", "", containers_doc, 1));
      xs.push_back(table_column("Images", "", images_doc, 1));
      xs.push_back(table_column(
        "Selector", "",
        "Label selector for pods. Existing ReplicaSets whose pods are "
        "selected by this will be the ones affected by this deployment. It "
        "must match the pod template's labels.",
        1));
      return true;
    case resource::cluster_roles:
      xs.push_back(table_column("Created At", "", age_doc, 0, "date"));
      return true;
    case resource::cluster_role_bindings:
      xs.push_back(table_column(
        "Role", "",
        "RoleRef can only reference a ClusterRole in the global namespace. If "
        "the RoleRef cannot be resolved, the Authorizer must return an error. "
        "This field is immutable."));
      xs.push_back(table_column("Age", "", age_doc));
      xs.push_back(table_column("Users", "",
                                "Users in the clusterRoleBinding", 1));
      xs.push_back(table_column("Groups", "",
                                "Groups in the clusterRoleBinding", 1));
      xs.push_back(table_column("ServiceAccounts", "",
                                "ServiceAccounts in the clusterRoleBinding",
                                1));
      return true;
    default:
      return false;
  }
}

bool kind_cells(const api_object& obj, json& before, json& after,
                bool& with_age) {
  with_age = true;
  switch (obj.kind()) {
    case resource::service_accounts:
      before.push_back(array_at(opaque_fields(obj), "secrets").size());
      return true;
    case resource::deployments:
      deployment_cells(opaque_fields(obj), before, after);
      return true;
    case resource::cluster_roles:
      // The default convertor's RFC 3339 in UTC: the stored form itself.
      before.push_back(obj.meta().creation_timestamp);
      with_age = false;
      return true;
    case resource::cluster_role_bindings:
      binding_cells(opaque_fields(obj), before, after);
      return true;
    default:
      return false;
  }
}

} // namespace podref::wire::detail
