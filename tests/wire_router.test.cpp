// The HTTP front's router: paths and queries to requests, and the Status
// of what it refuses (kube-apiserver-transcripts: secrets/, watch/).
#include "podref/messages/resource_kinds.hpp"
#include "podref/wire/detail/protobuf_reader.hpp"
#include "podref/wire/openapi_v2.hpp"
#include "podref/wire/router.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

using namespace podref;
using namespace podref::wire;

namespace {

nlohmann::json body_of(const route& r) {
  return nlohmann::json::parse(r.failure.body);
}

} // namespace

TEST_CASE("the router maps item and collection paths to verbs") {
  auto get = route_request("GET", "/api/v1/namespaces/ns1/secrets/s1");
  CHECK(get.kind == route_kind::get);
  CHECK(get.res == resource::secrets);
  CHECK(get.ns == "ns1");
  CHECK(get.name == "s1");
  CHECK(route_request("PUT", "/api/v1/namespaces/ns1/configmaps/c1").kind
        == route_kind::update);
  CHECK(route_request("DELETE", "/api/v1/namespaces/ns1/secrets/s1").kind
        == route_kind::remove);
  auto list = route_request("GET", "/api/v1/namespaces/ns1/configmaps?limit=500");
  CHECK(list.kind == route_kind::list);
  CHECK(list.res == resource::config_maps);
  auto all = route_request("GET", "/api/v1/secrets");
  CHECK(all.kind == route_kind::list);
  CHECK(all.ns.empty());
  CHECK(route_request("POST", "/api/v1/namespaces/ns1/secrets").kind
        == route_kind::create);
  CHECK(route_request("GET", "/api").kind == route_kind::api_versions);
  CHECK(route_request("GET", "/apis?timeout=32s").kind
        == route_kind::api_groups);
  CHECK(route_request("GET", "/api/v1?timeout=32s").kind
        == route_kind::api_resources);
  CHECK(route_request("GET", "/version").kind == route_kind::version);
  CHECK(route_request("GET", "/healthz").kind == route_kind::healthz);
  CHECK(route_request("GET", "/openapi/v3?timeout=32s").kind
        == route_kind::openapi_index);
  auto openapi = route_request("GET", "/openapi/v3/api/v1?hash=AB&timeout=32s");
  CHECK(openapi.kind == route_kind::openapi_group_version);
  CHECK(openapi.group_version == "v1");
}

TEST_CASE("the router maps the apps and rbac groups' paths") {
  auto get = route_request("GET", "/apis/apps/v1/namespaces/ns1/deployments/d1");
  CHECK(get.kind == route_kind::get);
  CHECK(get.res == resource::deployments);
  CHECK(get.ns == "ns1");
  CHECK(get.name == "d1");
  auto all = route_request("GET", "/apis/apps/v1/deployments?watch=1");
  CHECK(all.kind == route_kind::watch);
  CHECK(all.ns.empty());
  auto role = route_request(
    "PUT", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Ax");
  CHECK(role.kind == route_kind::update);
  CHECK(role.res == resource::cluster_roles);
  CHECK(role.name == "system:x");
  CHECK(route_request("POST", "/apis/rbac.authorization.k8s.io/v1/"
                              "clusterrolebindings")
          .res
        == resource::cluster_role_bindings);
  CHECK(route_request("GET", "/api/v1/namespaces/ns1/serviceaccounts/sa").res
        == resource::service_accounts);
  // A resource only in its own group and version, at its own scope.
  for (const char* path :
       {"/api/v1/namespaces/ns1/deployments", "/apis/apps/v1/secrets",
        "/apis/apps/v2/deployments", "/apis/nope/v1/deployments",
        "/apis/apps/v1/namespaces/ns1/deployments/d1/scale",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/clusterroles",
        "/apis/apps/v1/deployments/d1", "/apis//v1", "/apis/nope",
        "/openapi/v3/apis/nope/v1", "/openapi/v3/apis/apps"}) {
    INFO(path);
    auto r = route_request("GET", path);
    CHECK(r.kind == route_kind::failure);
    CHECK(r.failure.code == 404);
  }
  auto group = route_request("GET", "/apis/apps");
  CHECK(group.kind == route_kind::api_group);
  CHECK(group.group_version == "apps");
  auto resources = route_request("GET", "/apis/rbac.authorization.k8s.io/v1/");
  CHECK(resources.kind == route_kind::api_resources);
  CHECK(resources.group_version == "rbac.authorization.k8s.io/v1");
  auto openapi = route_request("GET", "/openapi/v3/apis/apps/v1?hash=X");
  CHECK(openapi.kind == route_kind::openapi_group_version);
  CHECK(openapi.group_version == "apps/v1");
  CHECK(route_request("POST", "/apis/apps/v1").failure.code == 405);
}

TEST_CASE("the router reads the kubelet's watch query") {
  auto r = route_request(
    "GET", "/api/v1/namespaces/ns1/secrets?allowWatchBookmarks=true&"
           "fieldSelector=metadata.name%3Dw1&resourceVersion=100&"
           "timeout=9m11s&timeoutSeconds=551&watch=true");
  CHECK(r.kind == route_kind::watch);
  REQUIRE(r.field_name);
  CHECK(*r.field_name == "w1");
  CHECK(r.resource_version == "100");
  REQUIRE(r.timeout_seconds);
  CHECK(*r.timeout_seconds == 551);
  CHECK(route_request("GET", "/api/v1/configmaps?watch=1").kind
        == route_kind::watch);
  CHECK(route_request("GET", "/api/v1/configmaps?watch=false").kind
        == route_kind::list);
}

TEST_CASE("the router parses equality label selectors") {
  auto r = route_request("GET", "/api/v1/namespaces/ns1/secrets?"
                                "labelSelector=app%3Da%2Ctier%21%3Dweb%2Cx");
  REQUIRE(r.kind == route_kind::list);
  REQUIRE(r.labels.size() == 3);
  CHECK(r.labels[0].key == "app");
  CHECK(r.labels[0].value == "a");
  CHECK(r.labels[1].kind == label_requirement::op::not_equals);
  CHECK(r.labels[2].kind == label_requirement::op::exists);
}

TEST_CASE("the router refuses with the real server's Status") {
  auto bad_field = route_request(
    "GET", "/api/v1/namespaces/ns1/secrets?fieldSelector=data.k%3Dv");
  CHECK(bad_field.kind == route_kind::failure);
  CHECK(bad_field.failure.code == 400);
  CHECK(body_of(bad_field)
        == nlohmann::json::parse(
          R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
              "message":"field label not supported: data.k","reason":"BadRequest","code":400})"));
  auto bad_label = route_request(
    "GET", "/api/v1/namespaces/ns1/secrets?labelSelector=app%3D%3D%3Dx");
  CHECK(bad_label.failure.code == 400);
  CHECK(body_of(bad_label)["message"]
        == "unable to parse requirement: found '=', expected: identifier");
  auto post_item = route_request("POST", "/api/v1/namespaces/ns1/secrets/s1");
  CHECK(post_item.failure.code == 405);
  CHECK(body_of(post_item)
        == nlohmann::json::parse(
          R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
              "message":"the server does not allow this method on the requested resource",
              "reason":"MethodNotAllowed","details":{},"code":405})"));
  auto unknown = route_request("GET", "/api/v1/namespaces/ns1/services");
  CHECK(unknown.failure.code == 404);
  CHECK(body_of(unknown)["message"]
        == "the server could not find the requested resource");
  CHECK(route_request("GET", "/apis/batch/v1").failure.code == 404);
}

namespace {

using podref::wire::detail::protobuf_field;
using podref::wire::detail::protobuf_reader;

/// The length-delimited fields numbered `number` of `message`.
std::vector<std::string_view> fields_of(std::string_view message,
                                        unsigned number) {
  std::vector<std::string_view> out;
  protobuf_reader r{message};
  while (auto f = r.next())
    if (f->number == number)
      out.push_back(f->bytes);
  REQUIRE_FALSE(r.failed());
  return out;
}

std::string_view field_of(std::string_view message, unsigned number) {
  auto all = fields_of(message, number);
  REQUIRE(all.size() == 1);
  return all.front();
}

} // namespace

TEST_CASE("/openapi/v2 is served, as JSON and as kubectl 1.20's protobuf") {
  CHECK(route_request("GET", "/openapi/v2?timeout=32s").kind
        == route_kind::openapi_v2);
  auto json = nlohmann::json::parse(openapi_v2_json());
  CHECK(json["swagger"] == "2.0");
  CHECK(json["info"]["title"] == "Kubernetes");
  CHECK(json["definitions"].empty());
  auto secret_patch
    = json["paths"]["/api/v1/namespaces/{namespace}/secrets/{name}"]["patch"];
  CHECK(secret_patch["parameters"][0]["name"] == "dryRun");
  CHECK(secret_patch["parameters"][0]["in"] == "query");
  CHECK(secret_patch["x-kubernetes-group-version-kind"]
        == nlohmann::json{{"group", ""}, {"kind", "Secret"}, {"version", "v1"}});
  CHECK(json["paths"].contains(
    "/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}"));

  // openapi.v2.Document: swagger (1), info (2) { title (1), version (2) },
  // and what kubectl 1.20's dry-run check reads: paths (8) { path (2)
  // { name (1), value (2) { patch (8) { parameters (8) { parameter (1)
  // { non_body_parameter (2) { query_parameter_sub_schema (3) { name (4) }
  // } } }, vendor_extension (13) { name (1), value (2) { yaml (2) } } } } } }.
  auto doc = openapi_v2_protobuf();
  CHECK(field_of(doc, 1) == "2.0");
  CHECK(field_of(field_of(doc, 2), 1) == "Kubernetes");
  CHECK(field_of(field_of(doc, 2), 2) == "v0.0.0");
  std::map<std::string, std::string> dry_run_kinds; // path -> GVK YAML
  for (auto item : fields_of(field_of(doc, 8), 2)) {
    auto operation = field_of(field_of(item, 2), 8);
    auto query = field_of(
      field_of(field_of(field_of(field_of(operation, 8), 1), 2), 3), 4);
    if (query != "dryRun")
      continue;
    for (auto extension : fields_of(operation, 13))
      if (field_of(extension, 1) == "x-kubernetes-group-version-kind")
        dry_run_kinds[std::string{field_of(item, 1)}]
          = std::string{field_of(field_of(extension, 2), 2)};
  }
  CHECK(dry_run_kinds.size() == podref::resource_count);
  CHECK(dry_run_kinds["/api/v1/namespaces/{namespace}/secrets/{name}"]
        == "group: \"\"\nkind: Secret\nversion: v1\n");
  CHECK(dry_run_kinds["/api/v1/namespaces/{name}"]
        == "group: \"\"\nkind: Namespace\nversion: v1\n");
  CHECK(dry_run_kinds["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
        == "group: apps\nkind: Deployment\nversion: v1\n");
}

TEST_CASE("the router reads paging, versions and watch options") {
  auto page = route_request(
    "GET", "/api/v1/namespaces/ns1/secrets?continue=abc&limit=2");
  REQUIRE(page.kind == route_kind::list);
  CHECK(page.limit == 2);
  CHECK(page.continue_token == "abc");
  // Go's int64: a negative limit lists whole; a bad one is refused.
  CHECK(route_request("GET", "/api/v1/secrets?limit=-1").limit == 0);
  CHECK(route_request("GET", "/api/v1/secrets?limit=x").failure.code == 400);
  // RV "0" may go with continue (the watch cache ignores it), others not.
  CHECK(route_request("GET", "/api/v1/secrets?continue=a&resourceVersion=0")
          .kind
        == route_kind::list);
  auto both = route_request("GET",
                            "/api/v1/secrets?continue=a&resourceVersion=5");
  CHECK(both.failure.code == 400);
  CHECK(body_of(both)["message"]
        == "specifying resource version is not allowed when using continue");
  auto w = route_request("GET", "/api/v1/configmaps?allowWatchBookmarks=1&"
                                "resourceVersionMatch=NotOlderThan&"
                                "sendInitialEvents=true&watch=true&"
                                "timeoutSeconds=99999999999999");
  REQUIRE(w.kind == route_kind::watch);
  CHECK(w.allow_bookmarks);
  CHECK(w.send_initial_events == true);
  CHECK(w.resource_version_match == "NotOlderThan");
  CHECK(*w.timeout_seconds == max_timeout_seconds);
  CHECK(route_request("GET", "/api/v1/secrets?watch=1&allowWatchBookmarks=yes")
          .failure.code
        == 400);
}

TEST_CASE("the router refuses invalid ListOptions with the real 422") {
  // secrets/list-rv-match-without-rv.json, byte for byte.
  auto no_rv = route_request(
    "GET", "/api/v1/namespaces/ns1/secrets?resourceVersionMatch=NotOlderThan");
  CHECK(no_rv.failure.code == 422);
  CHECK(no_rv.failure.body
        == R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided","field":"resourceVersionMatch"}]},"code":422})");
  auto exact0 = route_request("GET", "/api/v1/secrets?resourceVersion=0&"
                                     "resourceVersionMatch=Exact");
  CHECK(body_of(exact0)["details"]["causes"][0]["message"]
        == "Forbidden: resourceVersionMatch \"exact\" is forbidden for "
           "resourceVersion \"0\"");
  auto odd = route_request("GET", "/api/v1/secrets?resourceVersion=1&"
                                  "resourceVersionMatch=Newest");
  CHECK(body_of(odd)["details"]["causes"][0]["reason"]
        == "FieldValueNotSupported");
  CHECK(body_of(odd)["message"]
        == "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: "
           "Unsupported value: \"Newest\": supported values: \"Exact\", "
           "\"NotOlderThan\", \"\"");
  // Watches, as a server with WatchList does it.
  auto watch_match = route_request(
    "GET", "/api/v1/secrets?resourceVersionMatch=NotOlderThan&watch=true");
  CHECK(body_of(watch_match)["message"]
        == "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: "
           "Forbidden: resourceVersionMatch is forbidden for watch unless "
           "sendInitialEvents is provided");
  auto initial_alone = route_request(
    "GET", "/api/v1/secrets?sendInitialEvents=true&watch=true");
  CHECK(initial_alone.failure.code == 422);
  CHECK(body_of(initial_alone)["message"]
        == "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: "
           "Forbidden: sendInitialEvents requires setting "
           "resourceVersionMatch to NotOlderThan");
  auto on_list = route_request("GET", "/api/v1/secrets?sendInitialEvents=true");
  CHECK(body_of(on_list)["details"]["causes"][0]["field"]
        == "sendInitialEvents");
  // Several causes: a bracketed list.
  auto two = route_request("GET", "/api/v1/secrets?continue=x&"
                                  "resourceVersionMatch=Exact");
  CHECK(body_of(two)["message"]
        == "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: "
           "Forbidden: resourceVersionMatch is forbidden unless "
           "resourceVersion is provided, resourceVersionMatch: Forbidden: "
           "resourceVersionMatch is forbidden when continue is provided]");
}

TEST_CASE("the router takes the set-based label selectors") {
  auto r = route_request("GET", "/api/v1/secrets?labelSelector=app+in+%28a%2Cb%29");
  REQUIRE(r.kind == route_kind::list);
  REQUIRE(r.labels.size() == 1);
  CHECK(r.labels[0].kind == label_requirement::op::in);
  CHECK(r.labels[0].values == std::vector<std::string>{"a", "b"});
}

TEST_CASE("the router reads field selectors as the real server splits them") {
  auto r = route_request("GET", "/api/v1/secrets?fieldSelector=metadata."
                                "namespace%3D%3Dns1%2Cmetadata.name%21%3Ds1%2C"
                                "type%3DOpaque");
  REQUIRE(r.kind == route_kind::list);
  REQUIRE(r.fields.size() == 3);
  CHECK(r.fields[0].field == "metadata.namespace");
  CHECK(r.fields[0].equal);
  CHECK(r.fields[0].value == "ns1");
  CHECK(r.fields[1].field == "metadata.name");
  CHECK_FALSE(r.fields[1].equal);
  CHECK(r.fields[1].value == "s1");
  CHECK(r.fields[2].field == "type");
  REQUIRE(r.field_namespace);
  CHECK(*r.field_namespace == "ns1");
  // A != term does not route to the name.
  CHECK_FALSE(r.field_name);
  // A ConfigMap has no type field (its text names the fields it takes, as
  // configmaps/list-fieldselector-unsupported.json; a Secret's and a Pod's
  // do not); a term without operator is not a term.
  CHECK(body_of(route_request("GET", "/api/v1/configmaps?fieldSelector=type%3Dx"))
          ["message"]
        == "\"type\" is not a known field selector: only \"metadata.name\", "
           "\"metadata.namespace\"");
  CHECK(body_of(route_request("GET", "/api/v1/secrets?fieldSelector=data.k%3Dv"))
          ["message"]
        == "field label not supported: data.k");
  CHECK(body_of(route_request("GET", "/api/v1/secrets?fieldSelector=a%2Cb"))
          ["message"]
        == "invalid selector: 'a,b'; can't understand 'a'");
  std::string many = "/api/v1/secrets?fieldSelector=";
  for (int i = 0; i < 21; ++i)
    many += "metadata.name%3Dx%2C";
  CHECK(route_request("GET", many).failure.code == 400);
}

TEST_CASE("pods are namespaced; nodes and namespaces cluster-scoped") {
  auto pods = route_request("GET", "/api/v1/namespaces/ns1/pods/p1");
  CHECK(pods.kind == route_kind::get);
  CHECK(pods.res == resource::pods);
  CHECK(pods.ns == "ns1");
  CHECK(pods.name == "p1");
  auto all = route_request("GET", "/api/v1/pods?fieldSelector=spec.nodeName"
                                  "%3Dnode1&watch=true");
  CHECK(all.kind == route_kind::watch);
  REQUIRE(all.fields.size() == 1);
  CHECK(all.fields[0].field == "spec.nodeName");
  CHECK(all.fields[0].value == "node1");
  CHECK(all.fields[0].equal);
  CHECK(route_request("POST", "/api/v1/pods").failure.code == 405);
  auto node = route_request("PUT", "/api/v1/nodes/node1");
  CHECK(node.kind == route_kind::update);
  CHECK(node.res == resource::nodes);
  CHECK(node.ns.empty());
  CHECK(route_request("POST", "/api/v1/nodes").kind == route_kind::create);
  CHECK(route_request("POST", "/api/v1/namespaces/ns1/nodes").failure.code
        == 404);
  CHECK(route_request("GET", "/api/v1/secrets/s1").failure.code == 404);
  auto ns = route_request("DELETE", "/api/v1/namespaces/ns1"
                                    "?gracePeriodSeconds=0");
  CHECK(ns.kind == route_kind::remove);
  CHECK(ns.res == resource::namespaces);
  CHECK(ns.name == "ns1");
  CHECK(ns.grace_period_seconds == std::optional<std::int64_t>{0});
  CHECK(route_request("POST", "/api/v1/namespaces").kind
        == route_kind::create);
  CHECK(route_request("GET", "/api/v1/namespaces/ns1/secrets?fieldSelector="
                             "spec.nodeName%3Dn")
          .failure.code
        == 400);
}
