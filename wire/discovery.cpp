#include "podref/wire/discovery.hpp"

#include <cstdint>
#include <cstdio>
#include <string_view>

#include <nlohmann/json.hpp>

#include "podref/version.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

json resource_entry(const char* name, const char* singular, const char* kind,
                    const char* short_name, bool namespaced = true) {
  json x;
  x["name"] = name;
  x["singularName"] = singular;
  x["namespaced"] = namespaced;
  x["kind"] = kind;
  // As the real server lists them; namespaces have no deletecollection.
  auto verbs = json::array({"create", "delete", "deletecollection", "get",
                            "list", "patch", "update", "watch"});
  if (std::string_view{name} == "namespaces")
    verbs.erase(2);
  x["verbs"] = std::move(verbs);
  if (short_name != nullptr)
    x["shortNames"] = json::array({short_name});
  // `kubectl get all` lists the resources of category all.
  if (std::string_view{name} == "pods")
    x["categories"] = json::array({"all"});
  return x;
}

json patch_path(const char* kind) {
  json gvk{{"group", ""}, {"version", "v1"}, {"kind", kind}};
  json param{{"name", "fieldValidation"},
             {"in", "query"},
             {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
  json patch{{"x-kubernetes-action", "patch"},
             {"x-kubernetes-group-version-kind", gvk},
             {"parameters", json::array({param})}};
  return json{{"patch", std::move(patch)}};
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
  x["groups"] = json::array();
  return x.dump();
}

std::string api_resources_document() {
  json x;
  x["kind"] = "APIResourceList";
  x["groupVersion"] = "v1";
  x["resources"] = json::array(
    {resource_entry("configmaps", "configmap", "ConfigMap", "cm"),
     resource_entry("namespaces", "namespace", "Namespace", "ns", false),
     resource_entry("nodes", "node", "Node", "no", false),
     resource_entry("pods", "pod", "Pod", "po"),
     resource_entry("secrets", "secret", "Secret", nullptr)});
  return x.dump();
}

std::string openapi_v1_document() {
  json x;
  x["openapi"] = "3.0.0";
  x["info"] = json{{"title", "Kubernetes"}, {"version", "v1.32.0"}};
  x["paths"] = json{
    {"/api/v1/namespaces/{namespace}/configmaps/{name}",
     patch_path("ConfigMap")},
    {"/api/v1/namespaces/{namespace}/pods/{name}", patch_path("Pod")},
    {"/api/v1/namespaces/{namespace}/secrets/{name}", patch_path("Secret")},
    {"/api/v1/namespaces/{name}", patch_path("Namespace")},
    {"/api/v1/nodes/{name}", patch_path("Node")}};
  return x.dump();
}

std::string openapi_index_document() {
  json x;
  x["paths"] = json{
    {"api/v1",
     {{"serverRelativeURL",
       "/openapi/v3/api/v1?hash=" + hash_of(openapi_v1_document())}}}};
  return x.dump();
}

} // namespace podref::wire
