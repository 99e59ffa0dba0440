// Discovery by Accept header: the aggregated /api and /apis
// (apidiscovery.k8s.io/v2beta1) as the recorded server answers them
// (kube-apiserver-transcripts/discovery/api-aggregated-*.json,
// apis-aggregated-v2beta1.json), the legacy documents otherwise, 406 for an
// Accept podref cannot answer; both forms list the same resources.
#include "podref/wire/discovery.hpp"

#include "support/http_test_client.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "podref/messages/resource_kinds.hpp"

using namespace podref;
using namespace podref::wire;
using json = nlohmann::json;
namespace http = boost::beast::http;

namespace {

constexpr const char* v2beta1
  = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as="
    "APIGroupDiscoveryList";

/// kubectl 1.32's Accept (discovery/api-aggregated-kubectl132-accept.json).
constexpr const char* kubectl_132
  = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as="
    "APIGroupDiscoveryList,application/json";

/// The recorded server's entries of the resources podref serves
/// (discovery/api-aggregated-v2beta1.json), without verbs and subresources.
const json recorded_resources = json::parse(R"([
  {"resource":"configmaps","responseKind":{"group":"","version":"","kind":"ConfigMap"},
   "scope":"Namespaced","singularResource":"configmap","shortNames":["cm"]},
  {"resource":"namespaces","responseKind":{"group":"","version":"","kind":"Namespace"},
   "scope":"Cluster","singularResource":"namespace","shortNames":["ns"]},
  {"resource":"nodes","responseKind":{"group":"","version":"","kind":"Node"},
   "scope":"Cluster","singularResource":"node","shortNames":["no"]},
  {"resource":"pods","responseKind":{"group":"","version":"","kind":"Pod"},
   "scope":"Namespaced","singularResource":"pod","shortNames":["po"],
   "categories":["all"]},
  {"resource":"secrets","responseKind":{"group":"","version":"","kind":"Secret"},
   "scope":"Namespaced","singularResource":"secret"},
  {"resource":"serviceaccounts","responseKind":{"group":"","version":"","kind":"ServiceAccount"},
   "scope":"Namespaced","singularResource":"serviceaccount","shortNames":["sa"]}])");

/// The recorded server's /apis (discovery/apis-aggregated-v2beta1.json):
/// the groups podref serves with the resources it serves of them, without
/// verbs and subresources.
const json recorded_groups = json::parse(R"([
  {"metadata":{"name":"apps","creationTimestamp":null},
   "versions":[{"version":"v1","resources":[
     {"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"},
      "scope":"Namespaced","singularResource":"deployment","shortNames":["deploy"],
      "categories":["all"]}]}]},
  {"metadata":{"name":"rbac.authorization.k8s.io","creationTimestamp":null},
   "versions":[{"version":"v1","resources":[
     {"resource":"clusterrolebindings","responseKind":{"group":"","version":"","kind":"ClusterRoleBinding"},
      "scope":"Cluster","singularResource":"clusterrolebinding"},
     {"resource":"clusterroles","responseKind":{"group":"","version":"","kind":"ClusterRole"},
      "scope":"Cluster","singularResource":"clusterrole"}]}]}])");

/// `doc`'s items with each resource's verbs checked (watch among them)
/// and taken out.
json without_verbs(json items) {
  for (auto& item : items)
    for (auto& version : item["versions"])
      for (auto& r : version["resources"]) {
        const auto& verbs = r["verbs"];
        CHECK(std::find(verbs.begin(), verbs.end(), "watch") != verbs.end());
        r.erase("verbs");
      }
  return items;
}

} // namespace

TEST_CASE("the Accept header picks the aggregated or the legacy form") {
  CHECK(discovery_form_of("") == discovery_form::legacy);
  CHECK(discovery_form_of("application/json") == discovery_form::legacy);
  CHECK(discovery_form_of("*/*") == discovery_form::legacy);
  CHECK(discovery_form_of(v2beta1) == discovery_form::aggregated);
  CHECK(discovery_form_of(kubectl_132) == discovery_form::aggregated);
  CHECK(discovery_form_of(" application/json ; g=apidiscovery.k8s.io ; "
                          "v=v2beta1 ; as=APIGroupDiscoveryList")
        == discovery_form::aggregated);
  CHECK(discovery_form_of("application/json;g=apidiscovery.k8s.io;v=v2;"
                          "as=APIGroupDiscoveryList")
        == discovery_form::not_acceptable);
  CHECK(discovery_form_of("application/yaml") == discovery_form::not_acceptable);
  CHECK(discovery_form_of("application/yaml, application/json")
        == discovery_form::legacy);
}

TEST_CASE("aggregated /api and /apis as the recorded server sends them") {
  test::http_test_server s;
  test::http_test_client c{s.port()};
  for (const char* accept : {v2beta1, kubectl_132}) {
    INFO(accept);
    auto api = c.call(http::verb::get, "/api", {}, {}, accept);
    REQUIRE(api.status == 200);
    CHECK(api.content_type == v2beta1);
    auto doc = json::parse(api.body);
    CHECK(doc["kind"] == "APIGroupDiscoveryList");
    CHECK(doc["apiVersion"] == "apidiscovery.k8s.io/v2beta1");
    CHECK(doc["metadata"] == json::object());
    REQUIRE(doc["items"].size() == 1);
    const auto& core = doc["items"][0];
    CHECK(core["metadata"] == json{{"creationTimestamp", nullptr}});
    REQUIRE(core["versions"].size() == 1);
    CHECK(core["versions"][0]["version"] == "v1");
    const auto& resources = core["versions"][0]["resources"];
    REQUIRE(resources.size() == recorded_resources.size());
    for (std::size_t i = 0; i < resources.size(); ++i) {
      auto r = resources[i];
      auto verbs = r["verbs"];
      r.erase("verbs");
      CHECK(r == recorded_resources[i]);
      CHECK(std::find(verbs.begin(), verbs.end(), "watch") != verbs.end());
    }
    auto apis = c.call(http::verb::get, "/apis", {}, {}, accept);
    REQUIRE(apis.status == 200);
    CHECK(apis.content_type == v2beta1);
    auto groups = json::parse(apis.body);
    CHECK(groups["kind"] == "APIGroupDiscoveryList");
    CHECK(groups["apiVersion"] == "apidiscovery.k8s.io/v2beta1");
    CHECK(groups["metadata"] == json::object());
    CHECK(without_verbs(groups["items"]) == recorded_groups);
  }
  // discovery/api-aggregated-v2-only.json
  auto v2 = c.call(http::verb::get, "/api", {}, {},
                   "application/json;g=apidiscovery.k8s.io;v=v2;as="
                   "APIGroupDiscoveryList");
  CHECK(v2.status == 406);
  CHECK(json::parse(v2.body)
        == json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
             "status":"Failure","message":"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
             "reason":"NotAcceptable","code":406})"));
  // discovery/api-no-accept.json, api.json: the legacy form.
  for (const char* accept : {"", "application/json"}) {
    auto legacy = c.call(http::verb::get, "/api", {}, {}, accept);
    REQUIRE(legacy.status == 200);
    CHECK(legacy.content_type == "application/json");
    CHECK(json::parse(legacy.body)["kind"] == "APIVersions");
  }
}

TEST_CASE("the aggregated and the legacy forms list the same groups and "
          "resources") {
  // The legacy documents: /api/v1, /apis and each /apis/GROUP/VERSION.
  std::vector<std::string> legacy;
  auto add = [&legacy](const std::string& group_version) {
    auto list = json::parse(api_resources_document(group_version));
    for (const auto& r : list["resources"])
      legacy.push_back(group_version + " " + r["name"].get<std::string>() + " "
                       + r["kind"].get<std::string>() + " "
                       + (r["namespaced"].get<bool>() ? "Namespaced"
                                                      : "Cluster")
                       + " " + r["verbs"].dump());
  };
  add("v1");
  // Named: a range-for over a temporary's member would dangle.
  auto groups = json::parse(api_groups_document());
  for (const auto& g : groups["groups"])
    for (const auto& v : g["versions"])
      add(v["groupVersion"]);
  std::vector<std::string> aggregated;
  auto read = [&aggregated](const json& doc) {
    for (const auto& item : doc["items"]) {
      auto group = item["metadata"].value("name", std::string{});
      for (const auto& v : item["versions"])
        for (const auto& r : v["resources"])
          aggregated.push_back(
            (group.empty() ? "" : group + "/")
            + v["version"].get<std::string>() + " "
            + r["resource"].get<std::string>() + " "
            + r["responseKind"]["kind"].get<std::string>() + " "
            + r["scope"].get<std::string>() + " " + r["verbs"].dump());
    }
  };
  read(json::parse(aggregated_api_document()));
  read(json::parse(aggregated_apis_document()));
  CHECK(aggregated == legacy);
  CHECK(legacy.size() == resource_count);
}
