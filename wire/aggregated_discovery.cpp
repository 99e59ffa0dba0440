// Aggregated discovery (KEP-3352) as the recorded server answers it
// (discovery/api-aggregated-*.json, apis-aggregated-v2beta1.json): one
// APIGroupDiscoveryList for /api, one for /apis, chosen by the Accept header.
#include "podref/wire/discovery.hpp"

#include <optional>

#include <nlohmann/json.hpp>

#include "podref/wire/status.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

std::string_view trimmed(std::string_view x) {
  while (!x.empty() && (x.front() == ' ' || x.front() == '\t'))
    x.remove_prefix(1);
  while (!x.empty() && (x.back() == ' ' || x.back() == '\t'))
    x.remove_suffix(1);
  return x;
}

/// What one media range of an Accept header asks for: nullopt for what
/// podref does not serve.
std::optional<discovery_form> form_of(std::string_view range) {
  auto semi = range.find(';');
  auto type = trimmed(range.substr(0, semi));
  std::string_view group;
  std::string_view version;
  std::string_view as;
  while (semi != std::string_view::npos) {
    range.remove_prefix(semi + 1);
    semi = range.find(';');
    auto param = trimmed(range.substr(0, semi));
    auto eq = param.find('=');
    if (eq == std::string_view::npos)
      continue;
    auto key = param.substr(0, eq);
    auto value = param.substr(eq + 1);
    if (key == "g")
      group = value;
    else if (key == "v")
      version = value;
    else if (key == "as")
      as = value;
  }
  bool json_type = type == "application/json" || type == "application/*"
                   || type == "*/*";
  if (!json_type)
    return std::nullopt;
  if (as.empty())
    return discovery_form::legacy;
  if (as == "APIGroupDiscoveryList" && group == "apidiscovery.k8s.io"
      && version == "v2beta1")
    return discovery_form::aggregated;
  return std::nullopt;
}

json discovery_list(json items) {
  json x;
  x["kind"] = "APIGroupDiscoveryList";
  x["apiVersion"] = "apidiscovery.k8s.io/v2beta1";
  x["metadata"] = json::object();
  x["items"] = std::move(items);
  return x;
}

/// One version of a group as aggregated discovery lists it: the resources
/// of the legacy APIResourceList of `group_version`, so that both forms
/// always list the same names, verbs, short names and categories.
json discovery_version(const std::string& group_version,
                       const std::string& version) {
  auto legacy = json::parse(api_resources_document(group_version));
  auto resources = json::array();
  for (const auto& r : legacy["resources"]) {
    json x;
    x["resource"] = r["name"];
    x["responseKind"] = json{{"group", ""}, {"version", ""}, {"kind", r["kind"]}};
    x["scope"] = r["namespaced"].get<bool>() ? "Namespaced" : "Cluster";
    x["singularResource"] = r["singularName"];
    x["verbs"] = r["verbs"];
    for (const char* key : {"shortNames", "categories"})
      if (r.contains(key))
        x[key] = r[key];
    resources.push_back(std::move(x));
  }
  return json{{"version", version}, {"resources", std::move(resources)}};
}

} // namespace

discovery_form discovery_form_of(std::string_view accept) {
  if (trimmed(accept).empty())
    return discovery_form::legacy;
  while (!accept.empty()) {
    auto comma = accept.find(',');
    if (auto form = form_of(accept.substr(0, comma)))
      return *form;
    if (comma == std::string_view::npos)
      break;
    accept.remove_prefix(comma + 1);
  }
  return discovery_form::not_acceptable;
}

std::string aggregated_api_document() {
  json core{{"metadata", {{"creationTimestamp", nullptr}}},
            {"versions", json::array({discovery_version("v1", "v1")})}};
  return discovery_list(json::array({std::move(core)})).dump();
}

std::string aggregated_apis_document() {
  auto items = json::array();
  auto legacy = json::parse(api_groups_document());
  for (const auto& group : legacy["groups"]) {
    auto versions = json::array();
    for (const auto& v : group["versions"])
      versions.push_back(discovery_version(v["groupVersion"], v["version"]));
    items.push_back(json{{"metadata",
                          {{"name", group["name"]},
                           {"creationTimestamp", nullptr}}},
                         {"versions", std::move(versions)}});
  }
  return discovery_list(std::move(items)).dump();
}

std::string not_acceptable_body() {
  return failure_status(406, "NotAcceptable",
                        "only the following media types are accepted: "
                        "application/json, application/yaml, "
                        "application/vnd.kubernetes.protobuf")
    .body;
}

} // namespace podref::wire
