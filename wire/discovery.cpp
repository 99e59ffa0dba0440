#include "podref/wire/discovery.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "podref/messages/resource_kinds.hpp"
#include "podref/version.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

json resource_entry(const resource_kind& k) {
  json x;
  x["name"] = std::string{k.plural};
  x["singularName"] = std::string{k.singular};
  x["namespaced"] = k.namespaced;
  x["kind"] = std::string{k.kind};
  // As the real server lists them; namespaces have no deletecollection.
  auto verbs = json::array({"create", "delete", "deletecollection", "get",
                            "list", "patch", "update", "watch"});
  if (k.plural == "namespaces")
    verbs.erase(2);
  x["verbs"] = std::move(verbs);
  if (!k.short_name.empty())
    x["shortNames"] = json::array({std::string{k.short_name}});
  // `kubectl get all` lists the resources of category all.
  if (k.in_category_all)
    x["categories"] = json::array({"all"});
  return x;
}

/// The path of one object of `k`, as the OpenAPI documents name it.
std::string item_path(const resource_kind& k) {
  auto prefix = k.group.empty() ? std::string{"/api/v1"}
                                : "/apis/" + std::string{k.api_version};
  return prefix + (k.namespaced ? "/namespaces/{namespace}/" : "/")
         + std::string{k.plural} + "/{name}";
}

json patch_path(const resource_kind& k) {
  json gvk{{"group", std::string{k.group}},
           {"version", std::string{k.version}},
           {"kind", std::string{k.kind}}};
  json param{{"name", "fieldValidation"},
             {"in", "query"},
             {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
  json patch{{"x-kubernetes-action", "patch"},
             {"x-kubernetes-group-version-kind", gvk},
             {"parameters", json::array({param})}};
  return json{{"patch", std::move(patch)}};
}

/// Every group-version served, core first, in the table's order.
std::vector<std::string> group_versions() {
  std::vector<std::string> xs;
  for (const auto& k : resource_kinds()) {
    std::string gv{k.api_version};
    if (std::find(xs.begin(), xs.end(), gv) == xs.end())
      xs.push_back(gv);
  }
  return xs;
}

json group_entry(std::string_view group) {
  auto versions = json::array();
  for (const auto& gv : group_versions())
    if (gv.compare(0, group.size() + 1, std::string{group} + "/") == 0)
      versions.push_back(json{{"groupVersion", gv},
                              {"version", gv.substr(group.size() + 1)}});
  json x;
  x["name"] = std::string{group};
  x["versions"] = versions;
  x["preferredVersion"] = versions.empty() ? json::object() : versions[0];
  return x;
}

/// FNV-1a, as upper-case hex: the document's hash in its URL.
std::string hash_of(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (auto c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llX", static_cast<unsigned long long>(h));
  return buf;
}

} // namespace

std::string version_document() {
  json x;
  x["major"] = "1";
  x["minor"] = "32";
  x["gitVersion"] = "v1.32.0+podref-" PODREF_VERSION_STRING;
  x["gitCommit"] = "";
  x["gitTreeState"] = "";
  x["buildDate"] = "1970-01-01T00:00:00Z";
  x["goVersion"] = "";
  x["compiler"] = "";
  x["platform"] = "linux/amd64";
  return x.dump();
}

std::string api_versions_document(const std::string& server_address) {
  json x;
  x["kind"] = "APIVersions";
  x["versions"] = json::array({"v1"});
  x["serverAddressByClientCIDRs"] = json::array(
    {json{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}});
  return x.dump();
}

std::string api_groups_document() {
  json x;
  x["kind"] = "APIGroupList";
  x["apiVersion"] = "v1";
  auto groups = json::array();
  std::vector<std::string_view> seen;
  for (const auto& k : resource_kinds()) {
    if (k.group.empty()
        || std::find(seen.begin(), seen.end(), k.group) != seen.end())
      continue;
    seen.push_back(k.group);
    groups.push_back(group_entry(k.group));
  }
  x["groups"] = std::move(groups);
  return x.dump();
}

std::string api_group_document(const std::string& group) {
  json x;
  x["kind"] = "APIGroup";
  x["apiVersion"] = "v1";
  auto entry = group_entry(group);
  for (auto& [k, v] : entry.items())
    x[k] = std::move(v);
  return x.dump();
}

std::string api_resources_document(const std::string& group_version) {
  std::vector<const resource_kind*> served;
  for (const auto& k : resource_kinds())
    if (k.api_version == group_version)
      served.push_back(&k);
  std::sort(served.begin(), served.end(),
            [](auto* a, auto* b) { return a->plural < b->plural; });
  json x;
  x["kind"] = "APIResourceList";
  // The core group's list has no apiVersion on the real server.
  if (group_version != "v1")
    x["apiVersion"] = "v1";
  x["groupVersion"] = group_version;
  auto resources = json::array();
  for (auto* k : served)
    resources.push_back(resource_entry(*k));
  x["resources"] = std::move(resources);
  return x.dump();
}

std::string openapi_group_version_document(const std::string& group_version) {
  json x;
  x["openapi"] = "3.0.0";
  x["info"] = json{{"title", "Kubernetes"}, {"version", "v1.32.0"}};
  auto paths = json::object();
  for (const auto& k : resource_kinds())
    if (k.api_version == group_version)
      paths[item_path(k)] = patch_path(k);
  x["paths"] = std::move(paths);
  return x.dump();
}

std::string openapi_index_document() {
  auto paths = json::object();
  for (const auto& gv : group_versions()) {
    auto key = (gv == "v1" ? "api/" : "apis/") + gv;
    paths[key] = json{{"serverRelativeURL",
                       "/openapi/v3/" + key + "?hash="
                         + hash_of(openapi_group_version_document(gv))}};
  }
  json x;
  x["paths"] = std::move(paths);
  return x.dump();
}

} // namespace podref::wire
