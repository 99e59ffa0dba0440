// ServiceAccounts, Deployments, ClusterRoles and ClusterRoleBindings over
// the HTTP front (the kinds deploy/ applies): their group paths, bodies
// with each kind's apiVersion, checks and defaults, group-qualified
// errors, discovery, OpenAPI and Tables.
#include "support/http_test_client.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "podref/wire/codec.hpp"

using namespace podref;
using podref::test::http_test_client;
using podref::test::http_test_server;
using verb = boost::beast::http::verb;
using json = nlohmann::json;

namespace {

constexpr const char* apps = "/apis/apps/v1";
constexpr const char* rbac = "/apis/rbac.authorization.k8s.io/v1";
constexpr const char* table_accept
  = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

json deployment(const std::string& name, int replicas = -1) {
  json x{{"apiVersion", "apps/v1"},
         {"kind", "Deployment"},
         {"metadata", {{"name", name}}},
         {"spec",
          {{"selector", {{"matchLabels", {{"app", name}}}}},
           {"template",
            {{"metadata", {{"labels", {{"app", name}}}}},
             {"spec",
              {{"containers",
                json::array({{{"name", "c"}, {"image", "img:1"}},
                             {{"name", "d"}, {"image", "img:2"}}})}}}}}}}};
  if (replicas >= 0)
    x["spec"]["replicas"] = replicas;
  return x;
}

json binding(const std::string& name) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRoleBinding"},
          {"metadata", {{"name", name}}},
          {"roleRef",
           {{"apiGroup", "rbac.authorization.k8s.io"},
            {"kind", "ClusterRole"},
            {"name", "reader"}}},
          {"subjects",
           json::array({{{"kind", "ServiceAccount"},
                         {"name", "sa"},
                         {"namespace", "ns1"}},
                        {{"kind", "User"}, {"name", "alice"}},
                        {{"kind", "User"}, {"name", "bob"}},
                        {{"kind", "Group"}, {"name", "ops"}}})}};
}

json doc_of(const podref::test::http_test_reply& r) {
  return json::parse(r.body);
}

std::string path_in(const char* prefix, const std::string& ns,
                    const std::string& rest) {
  return std::string{prefix} + "/namespaces/" + ns + "/" + rest;
}

} // namespace

TEST_CASE("a Deployment: created with its defaults, got, listed, replaced, "
          "patched, deleted") {
  http_test_server s;
  http_test_client c{s.port()};
  auto collection = path_in(apps, "ns1", "deployments");
  auto created = c.call(verb::post, collection, deployment("web").dump());
  REQUIRE(created.status == 201);
  auto x = doc_of(created);
  CHECK(x["apiVersion"] == "apps/v1");
  CHECK(x["kind"] == "Deployment");
  CHECK(x["metadata"]["namespace"] == "ns1");
  CHECK(x["spec"]["replicas"] == 1); // defaulted
  CHECK(x["status"] == json::object());
  CHECK(x["spec"]["template"]["spec"]["containers"].size() == 2);
  auto got = doc_of(c.get(collection + "/web"));
  CHECK(got["metadata"]["uid"] == x["metadata"]["uid"]);
  auto list = doc_of(c.get(std::string{apps} + "/deployments"));
  CHECK(list["kind"] == "DeploymentList");
  CHECK(list["apiVersion"] == "apps/v1");
  REQUIRE(list["items"].size() == 1);
  CHECK(list["items"][0]["metadata"]["name"] == "web");

  auto changed = deployment("web", 3);
  changed["metadata"]["resourceVersion"] = x["metadata"]["resourceVersion"];
  auto replaced = c.call(verb::put, collection + "/web", changed.dump());
  REQUIRE(replaced.status == 200);
  CHECK(doc_of(replaced)["spec"]["replicas"] == 3);
  auto stale = c.call(verb::put, collection + "/web", changed.dump());
  CHECK(stale.status == 409);
  CHECK(doc_of(stale)["message"]
        == "Operation cannot be fulfilled on deployments.apps \"web\": the "
           "object has been modified; please apply your changes to the "
           "latest version and try again");

  CHECK(c.call(verb::post, collection, deployment("web").dump()).status
        == 409);
  auto again = doc_of(c.call(verb::post, collection, deployment("web").dump()));
  CHECK(again["message"] == "deployments.apps \"web\" already exists");
  CHECK(again["details"]
        == json{{"name", "web"}, {"group", "apps"}, {"kind", "deployments"}});

  auto deleted = c.call(verb::delete_, collection + "/web");
  REQUIRE(deleted.status == 200);
  auto status = doc_of(deleted);
  CHECK(status["kind"] == "Status");
  CHECK(status["status"] == "Success");
  CHECK(status["details"]["group"] == "apps");
  CHECK(status["details"]["kind"] == "deployments");
  auto missing = c.get(collection + "/web");
  CHECK(missing.status == 404);
  CHECK(doc_of(missing)["message"] == "deployments.apps \"web\" not found");
  CHECK(doc_of(missing)["details"]["group"] == "apps");
}

TEST_CASE("a Deployment without a selector, containers or a valid template "
          "reference is a 422 naming Deployment.apps") {
  http_test_server s;
  http_test_client c{s.port()};
  auto collection = path_in(apps, "ns1", "deployments");
  auto no_selector = deployment("d");
  no_selector["spec"].erase("selector");
  auto r = c.call(verb::post, collection, no_selector.dump());
  CHECK(r.status == 422);
  CHECK(doc_of(r)["message"]
        == "Deployment.apps \"d\" is invalid: spec.selector: Required value");
  CHECK(doc_of(r)["details"]
        == json{{"name", "d"},
                {"group", "apps"},
                {"kind", "Deployment"},
                {"causes",
                 json::array({{{"reason", "FieldValueRequired"},
                               {"message", "Required value"},
                               {"field", "spec.selector"}}})}});
  auto no_containers = deployment("d");
  no_containers["spec"]["template"]["spec"]["containers"] = json::array();
  CHECK(doc_of(c.call(verb::post, collection, no_containers.dump()))["message"]
        == "Deployment.apps \"d\" is invalid: "
           "spec.template.spec.containers: Required value");
  // Every problem, the metadata's first, one cause each.
  auto several = no_containers;
  several["spec"].erase("selector");
  several["metadata"]["labels"] = {{"a", "-bad-"}};
  auto all = doc_of(c.call(verb::post, collection, several.dump()));
  std::vector<std::string> fields;
  for (const auto& cause : all["details"]["causes"])
    fields.push_back(cause["field"].get<std::string>());
  CHECK(fields
        == std::vector<std::string>{"metadata.labels", "spec.selector",
                                    "spec.template.spec.containers"});
  CHECK(all["message"].get<std::string>().rfind(
          "Deployment.apps \"d\" is invalid: [metadata.labels: ", 0)
        == 0);
  // The pod template goes through the engine's decoder, as a pod does.
  auto bad_ref = deployment("d");
  bad_ref["spec"]["template"]["spec"]["volumes"]
    = json::array({{{"name", "v"}, {"secret", json::object()}}});
  auto refused = c.call(verb::post, collection, bad_ref.dump());
  CHECK(refused.status == 422);
  CHECK(doc_of(refused)["message"].get<std::string>().find(
          "spec.template.spec.volumes[0].secret.secretName: Required value")
        != std::string::npos);
  auto wrong_kind = deployment("d");
  wrong_kind["kind"] = "Pod";
  CHECK(doc_of(c.call(verb::post, collection, wrong_kind.dump()))["message"]
        == "Pod in version \"v1\" cannot be handled as a Deployment: "
           "converting (v1.Pod) to (apps.Deployment): unknown conversion");
  CHECK(c.get(collection).body.find("\"items\":[]") != std::string::npos);
}

TEST_CASE("a ServiceAccount delete answers the object; a namespace delete "
          "removes every namespaced kind") {
  http_test_server s;
  http_test_client c{s.port()};
  REQUIRE(c.call(verb::post, "/api/v1/namespaces",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns1"}})")
            .status
          == 201);
  auto sa = c.call(verb::post, "/api/v1/namespaces/ns1/serviceaccounts",
                   R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa"}})");
  REQUIRE(sa.status == 201);
  CHECK(doc_of(sa)["apiVersion"] == "v1");
  auto deleted = c.call(verb::delete_,
                        "/api/v1/namespaces/ns1/serviceaccounts/sa");
  REQUIRE(deleted.status == 200);
  CHECK(doc_of(deleted)["kind"] == "ServiceAccount");
  CHECK(doc_of(deleted)["metadata"]["name"] == "sa");

  REQUIRE(c.call(verb::post, "/api/v1/namespaces/ns1/serviceaccounts",
                 R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa2"}})")
            .status
          == 201);
  REQUIRE(c.call(verb::post, path_in(apps, "ns1", "deployments"),
                 deployment("web").dump())
            .status
          == 201);
  REQUIRE(c.call(verb::delete_, "/api/v1/namespaces/ns1").status == 200);
  // The namespace's objects go, then the namespace (at once, no waiting).
  for (int i = 0; i < 200 && c.get("/api/v1/namespaces/ns1").status != 404;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(c.get("/api/v1/namespaces/ns1/serviceaccounts/sa2").status == 404);
  CHECK(c.get(path_in(apps, "ns1", "deployments/web")).status == 404);
}

TEST_CASE("RBAC objects: path-segment names, a binding's roleRef, watches") {
  http_test_server s;
  http_test_client c{s.port()};
  auto roles = std::string{rbac} + "/clusterroles";
  auto role = c.call(verb::post, roles,
                     R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",
                         "metadata":{"name":"system:podref"},
                         "rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]})");
  REQUIRE(role.status == 201);
  CHECK(doc_of(role)["apiVersion"] == "rbac.authorization.k8s.io/v1");
  CHECK_FALSE(doc_of(role)["metadata"].contains("namespace"));
  CHECK(doc_of(c.get(roles + "/system:podref"))["rules"][0]["verbs"][0]
        == "get");
  auto slash = c.call(verb::post, roles,
                      R"({"kind":"ClusterRole","metadata":{"name":"a/b"}})");
  CHECK(slash.status == 422);
  CHECK(doc_of(slash)["message"]
        == "ClusterRole.rbac.authorization.k8s.io \"a/b\" is invalid: "
           "metadata.name: Invalid value: \"a/b\": may not contain '/'");

  auto bindings = std::string{rbac} + "/clusterrolebindings";
  auto no_ref = binding("b");
  no_ref["roleRef"].erase("name");
  CHECK(doc_of(c.call(verb::post, bindings, no_ref.dump()))["message"]
        == "ClusterRoleBinding.rbac.authorization.k8s.io \"b\" is invalid: "
           "roleRef.name: Required value");
  http_test_client watcher{s.port()};
  auto watched_after = doc_of(c.get(bindings))["metadata"]["resourceVersion"]
                         .get<std::string>();
  REQUIRE(c.call(verb::post, bindings, binding("b").dump()).status == 201);
  auto events = watcher.get(bindings + "?watch=true&timeoutSeconds=1&"
                                       "resourceVersion="
                            + watched_after);
  auto line = json::parse(events.body.substr(0, events.body.find('\n')));
  CHECK(line["type"] == "ADDED");
  CHECK(line["object"]["kind"] == "ClusterRoleBinding");
  CHECK(line["object"]["apiVersion"] == "rbac.authorization.k8s.io/v1");
  auto missing = c.get(bindings + "/nope");
  CHECK(doc_of(missing)["message"]
        == "clusterrolebindings.rbac.authorization.k8s.io \"nope\" not found");
}

TEST_CASE("Tables: the columns and cells kubectl prints for each kind") {
  http_test_server s;
  http_test_client c{s.port()};
  REQUIRE(c.call(verb::post, path_in(apps, "ns1", "deployments"),
                 deployment("web", 3).dump())
            .status
          == 201);
  auto names = [](const json& table) {
    std::vector<std::string> xs;
    for (const auto& col : table["columnDefinitions"])
      xs.push_back(col["name"].get<std::string>()
                   + (col["priority"] == 1 ? "*" : ""));
    return xs;
  };
  auto t = doc_of(c.call(verb::get, path_in(apps, "ns1", "deployments"), {},
                         "application/json", table_accept));
  CHECK(names(t)
        == std::vector<std::string>{"Name", "Ready", "Up-to-date", "Available",
                                    "Age", "Containers*", "Images*",
                                    "Selector*"});
  auto cells = t["rows"][0]["cells"];
  REQUIRE(cells.size() == 8);
  // No controller runs: nothing is ready, updated or available.
  CHECK(cells[0] == "web");
  CHECK(cells[1] == "0/3");
  CHECK(cells[2] == 0);
  CHECK(cells[3] == 0);
  CHECK(cells[5] == "c,d");
  CHECK(cells[6] == "img:1,img:2");
  CHECK(cells[7] == "app=web");

  REQUIRE(c.call(verb::post, "/api/v1/namespaces/ns1/serviceaccounts",
                 R"({"kind":"ServiceAccount","metadata":{"name":"sa"},
                     "secrets":[{"name":"a"},{"name":"b"}]})")
            .status
          == 201);
  t = doc_of(c.call(verb::get, "/api/v1/namespaces/ns1/serviceaccounts", {},
                    "application/json", table_accept));
  CHECK(names(t) == std::vector<std::string>{"Name", "Secrets", "Age"});
  CHECK(t["rows"][0]["cells"][1] == 2);

  REQUIRE(c.call(verb::post, std::string{rbac} + "/clusterroles",
                 R"({"kind":"ClusterRole","metadata":{"name":"reader"}})")
            .status
          == 201);
  t = doc_of(c.call(verb::get, std::string{rbac} + "/clusterroles", {},
                    "application/json", table_accept));
  CHECK(names(t) == std::vector<std::string>{"Name", "Created At"});
  CHECK(t["columnDefinitions"][1]["type"] == "date");
  REQUIRE(t["rows"][0]["cells"].size() == 2);
  auto created = t["rows"][0]["cells"][1].get<std::string>();
  CHECK(created.size() == 20);
  CHECK(created.back() == 'Z');

  REQUIRE(c.call(verb::post, std::string{rbac} + "/clusterrolebindings",
                 binding("b").dump())
            .status
          == 201);
  t = doc_of(c.call(verb::get, std::string{rbac} + "/clusterrolebindings",
                    {}, "application/json", table_accept));
  CHECK(names(t)
        == std::vector<std::string>{"Name", "Role", "Age", "Users*",
                                    "Groups*", "ServiceAccounts*"});
  cells = t["rows"][0]["cells"];
  REQUIRE(cells.size() == 6);
  CHECK(cells[1] == "ClusterRole/reader");
  CHECK(cells[3] == "alice, bob");
  CHECK(cells[4] == "ops");
  CHECK(cells[5] == "ns1/sa");
}

TEST_CASE("discovery and OpenAPI list the apps and rbac groups") {
  http_test_server s;
  http_test_client c{s.port()};
  auto groups = doc_of(c.get("/apis"));
  std::vector<std::string> seen;
  for (const auto& g : groups["groups"])
    seen.push_back(g["preferredVersion"]["groupVersion"].get<std::string>());
  CHECK(seen
        == std::vector<std::string>{"apps/v1", "rbac.authorization.k8s.io/v1"});
  auto group = doc_of(c.get("/apis/apps"));
  CHECK(group["kind"] == "APIGroup");
  CHECK(group["versions"][0]["version"] == "v1");
  auto apps_list = doc_of(c.get(apps));
  CHECK(apps_list["groupVersion"] == "apps/v1");
  REQUIRE(apps_list["resources"].size() == 1);
  auto d = apps_list["resources"][0];
  CHECK(d["name"] == "deployments");
  CHECK(d["kind"] == "Deployment");
  CHECK(d["shortNames"] == json::array({"deploy"}));
  CHECK(d["categories"] == json::array({"all"}));
  std::vector<std::string> rbac_names;
  auto rbac_list = doc_of(c.get(rbac));
  for (const auto& r : rbac_list["resources"])
    rbac_names.push_back(r["name"].get<std::string>()
                         + (r["namespaced"].get<bool>() ? "" : " cluster"));
  CHECK(rbac_names
        == std::vector<std::string>{"clusterrolebindings cluster",
                                    "clusterroles cluster"});
  CHECK(c.get("/apis/nope/v1").status == 404);

  auto index = doc_of(c.get("/openapi/v3"));
  REQUIRE(index["paths"].contains("apis/apps/v1"));
  REQUIRE(index["paths"].contains("apis/rbac.authorization.k8s.io/v1"));
  auto url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
               .get<std::string>();
  CHECK(url.rfind("/openapi/v3/apis/apps/v1?hash=", 0) == 0);
  auto v3 = doc_of(c.get(url));
  auto patch = v3["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/"
                           "{name}"]["patch"];
  CHECK(patch["x-kubernetes-group-version-kind"]
        == json{{"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}});
  CHECK(patch["parameters"][0]["name"] == "fieldValidation");
  auto core = doc_of(c.get("/openapi/v3/api/v1"));
  CHECK(core["paths"].contains(
    "/api/v1/namespaces/{namespace}/serviceaccounts/{name}"));
  CHECK(doc_of(c.get("/openapi/v3/apis/rbac.authorization.k8s.io/v1"))["paths"]
          .contains("/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}"));
}
