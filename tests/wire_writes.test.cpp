// dryRun, generateName, DELETE preconditions and deletecollection over the
// HTTP front against the recorded real server
// (kube-apiserver-transcripts/{secrets,configmaps}/create-dryrun.json,
// delete-dryrun.json, create-generatename.json, deletecollection.json,
// delete-precondition-uid.json, method-not-allowed.json). Bodies are
// compared whole, with uids, resourceVersions and times masked.
#include "support/write_test_support.hpp"

#include "podref/wire/write_request.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

using namespace podref;
using namespace podref::test;
using json = nlohmann::json;

// -- dryRun ----------------------------------------------------------------------------

TEST_CASE("dryRun=All answers every write as the real server, storing "
          "nothing") {
  http_test_server s;
  http_test_client c{s.port()};
  auto base = base_of("secrets");
  create_secret(c, "s1");
  auto version = cluster_version(c);
  auto uid = j(c.get(base + "/s1").body)["metadata"]["uid"];

  // secrets/create-dryrun.json: 201, no resourceVersion.
  auto created = c.call(http_verb::post, base + "?dryRun=All",
                        R"({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1-dry"}, "data": {}})",
                        "application/json", {}, "curl/8.5.0");
  CHECK(created.status == 201);
  CHECK(masked(j(created.body)) == masked(j(R"({"kind":"Secret",
    "apiVersion":"v1","metadata":{"name":"s1-dry","namespace":"ns1",
    "uid":"u","creationTimestamp":"t","managedFields":[{"manager":"curl",
    "operation":"Update","apiVersion":"v1","time":"t","fieldsType":"FieldsV1",
    "fieldsV1":{"f:type":{}}}]},"type":"Opaque"})")));
  CHECK(c.get(base + "/s1-dry").status == 404);
  // A dry-run create of an existing object is refused as the create.
  CHECK(c.call(http_verb::post, base + "?dryRun=All",
               R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1"}})")
          .status
        == 409);

  auto update = R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1"},
    "data":{"k":"dg=="}})";
  auto put = c.call(http_verb::put, base + "/s1?dryRun=All", update);
  CHECK(put.status == 200);
  CHECK(j(put.body)["data"]["k"] == "dg==");
  CHECK(j(put.body)["metadata"]["resourceVersion"] == "1");
  auto merge = c.call(http_verb::patch, base + "/s1?dryRun=All",
                      R"({"data":{"k":"dg=="}})",
                      "application/merge-patch+json");
  CHECK(merge.status == 200);
  CHECK(j(merge.body)["data"]["k"] == "dg==");
  auto applied = c.call(http_verb::patch,
                        base + "/s1?dryRun=All&fieldManager=m",
                        R"({"apiVersion":"v1","kind":"Secret",
                          "metadata":{"name":"s1"},"data":{"k":"dg=="}})",
                        apply_type);
  CHECK(applied.status == 200);
  auto apply_created = c.call(http_verb::patch,
                              base + "/s2?dryRun=All&fieldManager=m",
                              R"({"apiVersion":"v1","kind":"Secret",
                                "metadata":{"name":"s2"}})",
                              apply_type);
  CHECK(apply_created.status == 201);
  CHECK(c.get(base + "/s2").status == 404);

  // secrets/delete-dryrun.json: the Success Status, the object kept.
  auto removed = c.call(http_verb::delete_, base + "/s1?dryRun=All");
  CHECK(removed.status == 200);
  CHECK(j(removed.body) == json{{"kind", "Status"},
                                {"apiVersion", "v1"},
                                {"metadata", json::object()},
                                {"status", "Success"},
                                {"details",
                                 {{"name", "s1"},
                                  {"kind", "secrets"},
                                  {"uid", uid}}}});
  auto body_dry = c.call(http_verb::delete_, base + "/s1",
                         R"({"kind":"DeleteOptions","apiVersion":"v1",
                           "dryRun":["All"]})");
  CHECK(body_dry.status == 200);
  auto collection = c.call(http_verb::delete_, base + "?dryRun=All");
  CHECK(collection.status == 200);
  CHECK(j(collection.body)["items"].size() == 1);

  auto kept = j(c.get(base + "/s1").body);
  CHECK(kept["metadata"]["resourceVersion"] == "1");
  CHECK_FALSE(kept.contains("data"));
  // No write: no resourceVersion consumed (so no watch event either).
  CHECK(cluster_version(c) == version);

  // An unknown value is the real 422.
  auto unknown = c.call(http_verb::post, base + "?dryRun=Some",
                        R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}})");
  CHECK(unknown.status == 422);
  CHECK(j(unknown.body) == j(R"({"kind":"Status","apiVersion":"v1",
    "metadata":{},"status":"Failure",
    "message":"CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\"",
    "reason":"Invalid","details":{"group":"meta.k8s.io","kind":"CreateOptions",
    "causes":[{"reason":"FieldValueNotSupported",
    "message":"Unsupported value: []string{\"Some\"}: supported values: \"All\"",
    "field":"dryRun"}]},"code":422})"));
  CHECK(j(c.call(http_verb::delete_, base + "/s1?dryRun=x").body)["details"]
             ["kind"]
        == "DeleteOptions");
}

// -- generateName ------------------------------------------------------------------

TEST_CASE("generateName: the server names the object (secrets/"
          "create-generatename.json)") {
  http_test_server s;
  http_test_client c{s.port()};
  auto created = c.call(http_verb::post, base_of("secrets"),
                        R"({"apiVersion": "v1", "kind": "Secret", "metadata": {"generateName": "gen-"}})",
                        "application/json", {}, "curl/8.5.0");
  REQUIRE(created.status == 201);
  auto doc = j(created.body);
  auto name = doc["metadata"]["name"].get<std::string>();
  REQUIRE(name.size() == 9);
  CHECK(name.substr(0, 4) == "gen-");
  CHECK(name.substr(4).find_first_not_of("bcdfghjklmnpqrstvwxz2456789")
        == std::string::npos);
  doc["metadata"]["name"] = "gen-brkw6";
  CHECK(masked(doc) == masked(j(R"({"kind":"Secret","apiVersion":"v1",
    "metadata":{"name":"gen-brkw6","generateName":"gen-","namespace":"ns1",
    "uid":"u","resourceVersion":"1","creationTimestamp":"t",
    "managedFields":[{"manager":"curl","operation":"Update","apiVersion":"v1",
    "time":"t","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{
    "f:generateName":{}},"f:type":{}}}]},"type":"Opaque"})")));
  CHECK(c.get(base_of("secrets") + "/" + name).status == 200);
  // A generateName that cannot start a name is 422.
  auto bad = c.call(http_verb::post, base_of("configmaps"),
                    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"Bad_"}})");
  CHECK(bad.status == 422);
  CHECK(j(bad.body)["message"].get<std::string>().rfind(
          "ConfigMap \"\" is invalid: metadata.generateName: Invalid value: "
          "\"Bad_\"",
          0)
        == 0);
}

TEST_CASE("generated names: the prefix is cut to 58 bytes, the alphabet is "
          "the real server's") {
  CHECK(wire::generated_name("gen-", 0) == "gen-bbbbb");
  CHECK(wire::generated_name("gen-", 26) == "gen-9bbbb");
  CHECK(wire::generated_name(std::string(80, 'a'), 1).size() == 63);
  CHECK(wire::generated_name("x", 27 * 27 + 1) == "xcbcbb");
}

// -- delete --------------------------------------------------------------------------

TEST_CASE("deletecollection deletes what the selectors select, answering "
          "the list (secrets/deletecollection.json)") {
  http_test_server s;
  http_test_client c{s.port()};
  auto base = "/api/v1/namespaces/ns2/secrets";
  for (auto [name, app] : {std::pair{"s3", "a"}, {"s4", "b"}})
    REQUIRE(c.call(http_verb::post, base,
                   json{{"apiVersion", "v1"},
                        {"kind", "Secret"},
                        {"metadata", {{"name", name}, {"labels", {{"app", app}}}}}}
                     .dump(),
                   "application/json", {}, "curl/8.5.0")
              .status
            == 201);
  auto version = cluster_version(c);
  auto s3 = j(c.get(std::string{base} + "/s3").body);
  auto reply = c.call(http_verb::delete_,
                      std::string{base} + "?labelSelector=app%3Da");
  REQUIRE(reply.status == 200);
  auto doc = j(reply.body);
  CHECK(masked(doc) == masked(j(R"({"kind":"SecretList","apiVersion":"v1",
    "metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"s3",
    "namespace":"ns2","uid":"u","resourceVersion":"1","creationTimestamp":"t",
    "labels":{"app":"a"},"managedFields":[{"manager":"curl",
    "operation":"Update","apiVersion":"v1","time":"t","fieldsType":"FieldsV1",
    "fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},
    "f:type":{}}}]},"type":"Opaque"}]})")));
  // The list is the state before the deletes.
  CHECK(doc["metadata"]["resourceVersion"] == version);
  CHECK(doc["items"][0] == [&] {
    s3.erase("kind");
    s3.erase("apiVersion");
    return s3;
  }());
  CHECK(c.get(std::string{base} + "/s3").status == 404);
  CHECK(c.get(std::string{base} + "/s4").status == 200);
  // One write (a DELETED event) per object.
  // (A watch's connection closes at its end: another connection.)
  http_test_client watcher{s.port()};
  auto events = watcher.get(std::string{base} + "?watch=1&timeoutSeconds=1&"
                                          "resourceVersion="
                      + version);
  CHECK(events.body.find(R"("type":"DELETED")") != std::string::npos);
  CHECK(std::stoull(cluster_version(c)) == std::stoull(version) + 1);
  // Where the real server has no deletecollection: 405.
  CHECK(c.call(http_verb::delete_, "/api/v1/secrets").status == 405);
  CHECK(c.call(http_verb::delete_, "/api/v1/namespaces").status == 405);
  CHECK(c.call(http_verb::delete_, "/api/v1/nodes").status == 200);
}

TEST_CASE("a DELETE's preconditions (secrets/delete-precondition-uid.json) "
          "and the 405 of a POST on an item (method-not-allowed.json)") {
  http_test_server s;
  http_test_client c{s.port()};
  auto base = base_of("secrets");
  create_secret(c, "s1");
  auto uid = j(c.get(base + "/s1").body)["metadata"]["uid"].get<std::string>();
  auto refused = c.call(http_verb::delete_, base + "/s1",
                        R"({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}})");
  CHECK(refused.status == 409);
  CHECK(j(refused.body) == json{
    {"kind", "Status"},
    {"apiVersion", "v1"},
    {"metadata", json::object()},
    {"status", "Failure"},
    {"message",
     "Operation cannot be fulfilled on Secret \"s1\": the UID in the "
     "precondition (00000000-0000-0000-0000-000000000000) does not match the "
     "UID in record (" + uid + "). The object might have been deleted and "
     "then recreated"},
    {"reason", "Conflict"},
    {"details", {{"name", "s1"}, {"kind", "Secret"}}},
    {"code", 409}});
  auto stale = c.call(http_verb::delete_, base + "/s1",
                      R"({"preconditions":{"resourceVersion":"7"}})");
  CHECK(stale.status == 409);
  CHECK(j(stale.body)["message"]
        == "Operation cannot be fulfilled on Secret \"s1\": the "
           "ResourceVersion in the precondition (7) does not match the "
           "ResourceVersion in record (1). The object might have been "
           "modified");
  CHECK(c.get(base + "/s1").status == 200);
  auto matching = c.call(http_verb::delete_, base + "/s1",
                         R"({"preconditions":{"uid":")" + uid + R"("}})");
  CHECK(matching.status == 200);
  CHECK(c.get(base + "/s1").status == 404);

  auto post = c.call(http_verb::post, base + "/s1",
                     R"({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}})");
  CHECK(post.status == 405);
  CHECK(j(post.body) == j(R"({"kind":"Status","apiVersion":"v1","metadata":{},
    "status":"Failure","message":"the server does not allow this method on the requested resource",
    "reason":"MethodNotAllowed","details":{},"code":405})"));
}

TEST_CASE("a dry-run DELETE of a pod or a namespace answers the marked "
          "object and keeps it") {
  http_test_server s;
  http_test_client c{s.port()};
  REQUIRE(c.call(http_verb::post, base_of("pods"),
                 R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
                   "spec":{"nodeName":"n1","containers":[{"name":"c",
                   "image":"i"}]}})")
            .status
          == 201);
  REQUIRE(c.call(http_verb::post, "/api/v1/namespaces",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}})")
            .status
          == 201);
  auto version = cluster_version(c);
  auto pod = c.call(http_verb::delete_, base_of("pods") + "/p?dryRun=All");
  CHECK(pod.status == 200);
  CHECK(j(pod.body)["metadata"]["deletionGracePeriodSeconds"] == 30);
  auto ns = c.call(http_verb::delete_, "/api/v1/namespaces/x?dryRun=All");
  CHECK(ns.status == 200);
  CHECK(j(ns.body)["status"]["phase"] == "Terminating");
  CHECK_FALSE(j(c.get(base_of("pods") + "/p").body)["metadata"].contains(
    "deletionTimestamp"));
  CHECK(j(c.get("/api/v1/namespaces/x").body)["status"]["phase"] == "Active");
  CHECK(cluster_version(c) == version);
}

TEST_CASE("a write's parameters are checked as the real server's options") {
  wire::write_parameters p;
  p.kind = wire::options_kind::update;
  p.field_manager = std::string(129, 'm');
  auto long_manager = wire::check_write_parameters(p);
  REQUIRE(long_manager);
  CHECK(j(long_manager->body)["message"]
        == "UpdateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too "
           "long: must have at most 128 bytes");
  p.field_manager = "a\nb";
  p.dry_run = {"All", "x"};
  auto two = wire::check_write_parameters(p);
  REQUIRE(two);
  CHECK(j(two->body)["message"]
        == "UpdateOptions.meta.k8s.io \"\" is invalid: [fieldManager: "
           "Invalid value: \"a\\nb\": invalid character U+000A (at position "
           "1), dryRun: Unsupported value: []string{\"All\", \"x\"}: "
           "supported values: \"All\"]");
  p.field_manager = "kubectl";
  p.dry_run = {"All"};
  CHECK_FALSE(wire::check_write_parameters(p));
  auto options = wire::parse_delete_options(
    R"({"gracePeriodSeconds":5,"dryRun":["All"],
        "preconditions":{"uid":"u","resourceVersion":"7"}})");
  CHECK(options.grace_period_seconds == 5);
  CHECK(options.dry_run == std::vector<std::string>{"All"});
  CHECK(options.uid == "u");
  CHECK(options.resource_version == "7");
}

// -- validation of dry runs and applies ------------------------------------------

TEST_CASE("dry runs and server-side applies are validated as the writes "
          "they stand for") {
  http_test_server s;
  http_test_client c{s.port()};
  auto base = base_of("secrets");
  // An invalid object: a TLS Secret without tls.crt.
  auto tls = R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"t"},
    "type":"kubernetes.io/tls","data":{"tls.key":"aw=="}})";
  auto refused = c.call(http_verb::post, base, tls);
  REQUIRE(refused.status == 422);
  CHECK(j(refused.body)["message"]
        == "Secret \"t\" is invalid: data[tls.crt]: Required value");
  auto version = cluster_version(c);
  auto dry = c.call(http_verb::post, base + "?dryRun=All", tls);
  CHECK(dry.status == 422);
  CHECK(j(dry.body) == j(refused.body));
  auto applied = c.call(http_verb::patch, base + "/t?fieldManager=m", tls,
                        apply_type);
  CHECK(applied.status == 422);
  CHECK(j(applied.body) == j(refused.body));
  CHECK(c.get(base + "/t").status == 404);
  CHECK(cluster_version(c) == version);

  // An immutable Secret: PUT, dry-run PUT, apply and dry-run apply that
  // change its data get the same 422 and store nothing.
  REQUIRE(c.call(http_verb::post, base,
                 R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"i"},
                   "immutable":true,"data":{"k":"dg=="}})")
            .status
          == 201);
  version = cluster_version(c);
  auto changed = R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"i"},
    "immutable":true,"data":{"k":"dw=="}})";
  auto put = c.call(http_verb::put, base + "/i", changed);
  REQUIRE(put.status == 422);
  CHECK(j(put.body)["message"]
        == "Secret \"i\" is invalid: data: Forbidden: field is immutable "
           "when `immutable` is set");
  for (const auto& [verb, target, type] :
       {std::tuple{http_verb::put, base + "/i?dryRun=All",
                   std::string{"application/json"}},
        // Forced: the data is its creator's (a conflict comes first).
        std::tuple{http_verb::patch, base + "/i?fieldManager=m&force=true",
                   apply_type},
        std::tuple{http_verb::patch,
                   base + "/i?fieldManager=m&force=true&dryRun=All",
                   apply_type}}) {
    INFO(target << ' ' << type);
    auto reply = c.call(verb, target, changed, type);
    CHECK(reply.status == 422);
    CHECK(j(reply.body) == j(put.body));
  }
  auto merge = c.call(http_verb::patch, base + "/i?dryRun=All",
                      R"({"data":{"k":"dw=="}})",
                      "application/merge-patch+json");
  CHECK(merge.status == 422);
  CHECK(j(merge.body) == j(put.body));
  // Its labels may change, dry run or not.
  CHECK(c.call(http_verb::patch, base + "/i?dryRun=All",
               R"({"metadata":{"labels":{"a":"b"}}})",
               "application/merge-patch+json")
          .status
        == 200);
  CHECK(j(c.get(base + "/i").body)["data"]["k"] == "dg==");
  CHECK(cluster_version(c) == version);

  // A Pod's spec: a dry-run PUT is refused as the PUT.
  auto pods = base_of("pods");
  REQUIRE(c.call(http_verb::post, pods,
                 R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
                   "spec":{"containers":[{"name":"c","image":"i:1"}]}})")
            .status
          == 201);
  auto pod = j(c.get(pods + "/p").body);
  pod["spec"]["containers"].push_back(json{{"name", "d"}, {"image", "i:1"}});
  auto pod_put = c.call(http_verb::put, pods + "/p", pod.dump());
  REQUIRE(pod_put.status == 422);
  auto pod_dry = c.call(http_verb::put, pods + "/p?dryRun=All", pod.dump());
  CHECK(pod_dry.status == 422);
  CHECK(j(pod_dry.body) == j(pod_put.body));
  // Its image may change.
  pod["spec"]["containers"].erase(1);
  pod["spec"]["containers"][0]["image"] = "i:2";
  auto image = c.call(http_verb::put, pods + "/p?dryRun=All", pod.dump());
  CHECK(image.status == 200);
  INFO(image.body);
  CHECK(j(image.body)["spec"]["containers"][0]["image"] == "i:2");
  auto real = c.call(http_verb::put, pods + "/p", pod.dump());
  CHECK(real.status == 200);
  INFO(real.body);
  CHECK(j(real.body)["spec"]["containers"][0]["image"] == "i:2");
}
