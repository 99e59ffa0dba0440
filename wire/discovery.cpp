#include "podref/wire/discovery.hpp"

#include <nlohmann/json.hpp>

#include "podref/version.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

json resource_entry(const char* name, const char* singular, const char* kind,
                    const char* short_name) {
  json x;
  x["name"] = name;
  x["singularName"] = singular;
  x["namespaced"] = true;
  x["kind"] = kind;
  x["verbs"] = json::array({"create", "delete", "get", "list", "update",
                            "watch"});
  if (short_name != nullptr)
    x["shortNames"] = json::array({short_name});
  return x;
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
     resource_entry("secrets", "secret", "Secret", nullptr)});
  return x.dump();
}

} // namespace podref::wire
