// Server-side apply and the managedFields of plain writes over the HTTP
// front, against the recorded real server
// (kube-apiserver-transcripts/{secrets,configmaps}/apply-*.json,
// secrets/create.json): the apply sequence (create, unchanged, update,
// conflict, force, shared ownership, no fieldManager), what an apply
// refuses, Pods by their keyed lists, and the Update entries of creates,
// PUTs and patches. Bodies are compared whole, with uids,
// resourceVersions and times masked.
#include "support/write_test_support.hpp"

#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

using namespace podref;
using namespace podref::test;
using json = nlohmann::json;

namespace {

/// The kind-specific parts of the transcripts' apply sequence.
struct apply_kind {
  std::string plural;
  std::string kind;
  std::string name;
  /// The transcripts' two values (base64 in a Secret).
  std::string patched;
  std::string other;
  /// Fields the server adds to every stored object of the kind.
  json stored_extra;
};

} // namespace

// -- server-side apply -----------------------------------------------------------------

TEST_CASE("server-side apply: the transcripts' sequence for Secrets and "
          "ConfigMaps") {
  auto k = GENERATE(apply_kind{"secrets", "Secret", "s1-ssa", "cGF0Y2hlZA==",
                               "b3RoZXI=", {{"type", "Opaque"}}},
                    apply_kind{"configmaps", "ConfigMap", "c1-ssa", "patched",
                               "other", json::object()});
  http_test_server s;
  http_test_client c{s.port()};
  auto item = base_of(k.plural) + "/" + k.name;
  auto manifest = [&](bool with_k2) {
    return "apiVersion: v1\nkind: " + k.kind + "\nmetadata:\n  name: " + k.name
           + "\n  labels:\n    owner: x\ndata:\n  k: " + k.patched + "\n"
           + (with_k2 ? "  k2: " + k.patched + "\n" : "");
  };
  auto stored = [&](json data, json managed) {
    json x{{"kind", k.kind},
           {"apiVersion", "v1"},
           {"metadata",
            {{"name", k.name},
             {"namespace", "ns1"},
             {"uid", "u"},
             {"resourceVersion", "1"},
             {"creationTimestamp", "t"},
             {"labels", {{"owner", "x"}}},
             {"managedFields", std::move(managed)}}},
           {"data", std::move(data)}};
    for (auto& [key, v] : k.stored_extra.items())
      x[key] = v;
    return masked(x);
  };
  auto entry = [](const char* manager, json fields, bool timed = true) {
    json x{{"manager", manager}, {"operation", "Apply"}, {"apiVersion", "v1"}};
    if (timed)
      x["time"] = "t";
    x["fieldsType"] = "FieldsV1";
    x["fieldsV1"] = std::move(fields);
    return x;
  };
  auto x_fields = [](json data) {
    return json{{"f:data", std::move(data)},
                {"f:metadata", {{"f:labels", {{"f:owner", json::object()}}}}}};
  };

  // apply-no-fieldmanager: 422 PatchOptions.
  auto refused = c.call(http_verb::patch, item,
                        R"({"apiVersion": "v1", "kind": ")" + k.kind
                          + R"(", "metadata": {"name": ")" + k.name + R"("}})",
                        apply_type);
  CHECK(refused.status == 422);
  CHECK(j(refused.body) == j(R"({"kind":"Status","apiVersion":"v1",
    "metadata":{},"status":"Failure","message":"PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
    "reason":"Invalid","details":{"group":"meta.k8s.io","kind":"PatchOptions",
    "causes":[{"reason":"FieldValueRequired","message":"Required value: is required for apply patch",
    "field":"fieldManager"}]},"code":422})"));

  // apply-create: 201, x owns what it applied (YAML body).
  auto created = c.call(http_verb::patch, item + "?fieldManager=x",
                        manifest(false), apply_type);
  REQUIRE(created.status == 201);
  CHECK(masked(j(created.body))
        == stored({{"k", k.patched}},
                  json::array({entry("x", x_fields({{"f:k", json::object()}}))})));

  // Again unchanged: 200, nothing stored.
  auto before = cluster_version(c);
  auto again = c.call(http_verb::patch, item + "?fieldManager=x",
                      manifest(false), apply_type);
  CHECK(again.status == 200);
  CHECK(j(again.body) == j(created.body));
  CHECK(cluster_version(c) == before);

  // apply-update-same-manager: x adds k2.
  auto updated = c.call(http_verb::patch, item + "?fieldManager=x",
                        manifest(true), apply_type);
  REQUIRE(updated.status == 200);
  CHECK(masked(j(updated.body))
        == stored({{"k", k.patched}, {"k2", k.patched}},
                  json::array({entry("x", x_fields({{"f:k", json::object()},
                                                    {"f:k2", json::object()}}))})));

  // apply-conflict: y changes x's k (JSON body, as kubectl sends).
  auto by_y = R"({"apiVersion": "v1", "kind": ")" + k.kind
              + R"(", "metadata": {"name": ")" + k.name
              + R"("}, "data": {"k": ")" + k.other + R"("}})";
  auto conflict = c.call(http_verb::patch, item + "?fieldManager=y", by_y,
                         apply_type);
  CHECK(conflict.status == 409);
  CHECK(j(conflict.body) == j(R"({"kind":"Status","apiVersion":"v1",
    "metadata":{},"status":"Failure",
    "message":"Apply failed with 1 conflict: conflict with \"x\": .data.k",
    "reason":"Conflict","details":{"causes":[{"reason":"FieldManagerConflict",
    "message":"conflict with \"x\"","field":".data.k"}]},"code":409})"));

  // apply-force: k moves to y.
  auto forced = c.call(http_verb::patch, item + "?fieldManager=y&force=true",
                       by_y, apply_type);
  REQUIRE(forced.status == 200);
  auto k2_owner = entry("x", x_fields({{"f:k2", json::object()}}));
  auto y_owner = entry("y", {{"f:data", {{"f:k", json::object()}}}});
  CHECK(masked(j(forced.body))
        == stored({{"k", k.other}, {"k2", k.patched}},
                  json::array({k2_owner, y_owner})));

  // apply-shared-same-value: z applies y's value: shared, z untimed first.
  auto shared = c.call(http_verb::patch, item + "?fieldManager=z",
                       by_y, apply_type);
  REQUIRE(shared.status == 200);
  CHECK(masked(j(shared.body))
        == stored({{"k", k.other}, {"k2", k.patched}},
                  json::array({entry("z", {{"f:data", {{"f:k", json::object()}}}},
                                     false),
                               k2_owner, y_owner})));
  // A GET answers the stored managedFields.
  CHECK(j(c.get(item).body) == j(shared.body));
}

TEST_CASE("server-side apply refuses what it cannot apply") {
  http_test_server s;
  http_test_client c{s.port()};
  auto item = base_of("secrets") + "/a?fieldManager=m";
  auto bad = [&](const std::string& body) {
    auto reply = c.call(http_verb::patch, item, body, apply_type);
    CHECK(reply.status == 400);
    return j(reply.body)["message"].get<std::string>();
  };
  CHECK(bad(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}})")
        == "Incorrect kind specified in apply patch. Specified patch kind: "
           "ConfigMap, expected: Secret");
  CHECK(bad(R"({"apiVersion":"v2","kind":"Secret","metadata":{"name":"a"}})")
        == "Incorrect version specified in apply patch. Specified patch "
           "version: v2, expected: v1");
  CHECK(bad(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"a",
    "managedFields":[]}})")
        == "metadata.managedFields must be nil");
  CHECK(bad("a: [").rfind("error decoding YAML: ", 0) == 0);
  // force only with an apply.
  auto forced = c.call(http_verb::patch, base_of("secrets") + "/a?force=true",
                       "{}", "application/merge-patch+json");
  CHECK(forced.status == 422);
  CHECK(j(forced.body)["message"]
        == "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may "
           "not be specified for non-apply patch");
  // The 415 lists apply among the patch types.
  auto other = c.call(http_verb::patch, base_of("secrets") + "/a", "{}",
                      "text/plain");
  CHECK(other.status == 415);
  CHECK(j(other.body)["message"].get<std::string>().find(
          "application/apply-patch+yaml")
        != std::string::npos);
}

TEST_CASE("server-side apply creates and updates Pods by their keyed lists") {
  http_test_server s;
  http_test_client c{s.port()};
  auto item = base_of("pods") + "/p1?fieldManager=m";
  auto pod = [](const char* image) {
    return std::string{R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},
      "spec":{"containers":[{"name":"c","image":")"}
           + image + R"("}]}})";
  };
  auto created = c.call(http_verb::patch, item, pod("i:1"), apply_type);
  REQUIRE(created.status == 201);
  auto doc = j(created.body);
  CHECK(doc["status"]["phase"] == "Pending");
  CHECK(doc["metadata"]["managedFields"][0]["fieldsV1"]
        == j(R"({"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},
          "f:image":{},"f:name":{}}}}})"));
  auto updated = c.call(http_verb::patch, item, pod("i:2"), apply_type);
  REQUIRE(updated.status == 200);
  CHECK(j(updated.body)["spec"]["containers"][0]["image"] == "i:2");
}

// -- managedFields of plain writes ----------------------------------------------------

TEST_CASE("creates, updates and patches record Update entries by manager") {
  http_test_server s;
  http_test_client c{s.port()};
  auto base = base_of("secrets");
  auto created = c.call(http_verb::post, base,
                        R"({"apiVersion":"v1","kind":"Secret","metadata":{
                          "name":"s1","labels":{"app":"a"}},
                          "data":{"pw":"cA==","user":"dQ=="}})",
                        "application/json", {}, "curl/8.5.0");
  REQUIRE(created.status == 201);
  // secrets/create.json's entry.
  CHECK(masked(j(created.body)["metadata"]["managedFields"]) == masked(j(R"([{
    "manager":"curl","operation":"Update","apiVersion":"v1","time":"t",
    "fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:pw":{},"f:user":{}},
    "f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:type":{}}}])")));
  // A PUT by another manager takes the field it adds.
  auto replaced = c.call(http_verb::put, base + "/s1?fieldManager=kubectl-replace",
                         R"({"apiVersion":"v1","kind":"Secret","metadata":{
                           "name":"s1","labels":{"app":"a"}},
                           "data":{"pw":"cA==","user":"dQ==","extra":"eA=="}})");
  REQUIRE(replaced.status == 200);
  auto entries = j(replaced.body)["metadata"]["managedFields"];
  REQUIRE(entries.size() == 2);
  CHECK(entries[1]["manager"] == "kubectl-replace");
  CHECK(entries[1]["fieldsV1"] == j(R"({"f:data":{"f:extra":{}}})"));
  // A PUT that changes nothing stores nothing.
  auto before = cluster_version(c);
  auto same = c.call(http_verb::put, base + "/s1", j(replaced.body).dump());
  CHECK(same.status == 200);
  CHECK(cluster_version(c) == before);
  // A JSON patch may set managedFields (kubectl's apply upgrade does).
  auto patched = c.call(
    http_verb::patch, base + "/s1",
    R"([{"op":"replace","path":"/metadata/managedFields","value":[
      {"manager":"m","operation":"Apply","apiVersion":"v1",
       "fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:pw":{}}}}]}])",
    "application/json-patch+json");
  REQUIRE(patched.status == 200);
  CHECK(j(patched.body)["metadata"]["managedFields"]
        == j(R"([{"manager":"m","operation":"Apply","apiVersion":"v1",
          "fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:pw":{}}}}])"));
}
