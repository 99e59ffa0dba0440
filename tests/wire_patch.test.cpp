// The patch algorithms alone (merge, JSON, strategic merge) and the PATCH
// of a stored object (apply_patch) against the bodies a real kube-apiserver
// answered (kube-apiserver-transcripts/secrets/patch-*.json).
#include "podref/wire/json_patch.hpp"
#include "podref/wire/merge_patch.hpp"
#include "podref/wire/patch_request.hpp"
#include "podref/wire/strategic_merge_patch.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using namespace podref;
using namespace podref::wire;
using json = nlohmann::ordered_json;
using reason = patch_failure::reason;

namespace {

json j(const char* text) {
  return json::parse(text);
}

/// The Secret of the transcripts before their patches.
api_object stored_secret() {
  auto x = std::make_shared<secret>();
  x->metadata.name = "s1";
  x->metadata.ns = "ns1";
  x->metadata.uid = "097bb149-01e1-48ba-a819-6ffbaad151cf";
  x->metadata.resource_version = "230";
  x->metadata.creation_timestamp = "2026-12-02T01:51:55Z";
  x->metadata.labels["app"] = "a";
  x->data["pw"] = "fake-pass";
  x->data["user"] = "fake-user";
  x->type = "Opaque";
  return api_object{secret_ptr{std::move(x)}};
}

api_object stored_config_map() {
  auto x = std::make_shared<config_map>();
  x->metadata.name = "c1";
  x->metadata.ns = "ns1";
  x->metadata.resource_version = "7";
  x->data["a"] = "1";
  x->data["b"] = "2";
  return api_object{config_map_ptr{std::move(x)}};
}

} // namespace

// -- merge patch (RFC 7386) ----------------------------------------------------

TEST_CASE("merge patch: null deletes a key, objects merge, the rest replaces") {
  auto doc = j(R"({"a":"b","c":{"d":"e","f":"g"},"l":[1,2]})");
  auto out = merge_patch(doc, j(R"({"a":"z","c":{"f":null,"h":1},"l":[3]})"));
  CHECK(out == j(R"({"a":"z","c":{"d":"e","h":1},"l":[3]})"));
  CHECK(merge_patch(doc, j(R"({"a":null,"absent":null})"))
        == j(R"({"c":{"d":"e","f":"g"},"l":[1,2]})"));
  // A new object drops the nulls inside it; a non-object patch replaces.
  CHECK(merge_patch(j("{}"), j(R"({"n":{"x":null,"y":1}})"))
        == j(R"({"n":{"y":1}})"));
  CHECK(merge_patch(doc, j("[1]")) == j("[1]"));
  CHECK(merge_patch(j(R"({"a":[1]})"), j(R"({"a":{"b":"c"}})"))
        == j(R"({"a":{"b":"c"}})"));
}

// -- JSON patch (RFC 6902) -----------------------------------------------------

TEST_CASE("JSON patch: add, remove, replace, move, copy and test") {
  auto doc = j(R"({"a":{"b":1},"l":[1,2,3],"x/y":0,"t~":1})");
  auto out = json_patch(doc, j(R"([
    {"op":"add","path":"/a/c","value":2},
    {"op":"add","path":"/l/1","value":9},
    {"op":"add","path":"/l/-","value":4},
    {"op":"remove","path":"/l/0"},
    {"op":"replace","path":"/x~1y","value":5},
    {"op":"move","from":"/t~0","path":"/moved"},
    {"op":"copy","from":"/a","path":"/copied"},
    {"op":"test","path":"/copied/c","value":2}
  ])"));
  REQUIRE(out.ok());
  CHECK(out.document
        == j(R"({"a":{"b":1,"c":2},"l":[9,2,3,4],"x/y":5,"moved":1,
                 "copied":{"b":1,"c":2}})"));
  // The whole document.
  auto whole = json_patch(doc, j(R"([{"op":"add","path":"","value":{"n":1}}])"));
  REQUIRE(whole.ok());
  CHECK(whole.document == j(R"({"n":1})"));
}

TEST_CASE("JSON patch: a failed test or a missing path refuses the patch") {
  auto doc = j(R"({"a":{"b":1},"l":[1]})");
  auto failed = json_patch(doc, j(R"([{"op":"add","path":"/n","value":1},
                                       {"op":"test","path":"/a/b","value":2}])"));
  REQUIRE(failed.failure);
  CHECK(failed.failure->why == reason::invalid);
  CHECK(failed.failure->message == "operation 1: test: failed");
  for (const char* bad : {
         R"([{"op":"remove","path":"/a/absent"}])",
         R"([{"op":"replace","path":"/absent","value":1}])",
         R"([{"op":"add","path":"/no/such","value":1}])",
         R"([{"op":"add","path":"/l/5","value":1}])",
         R"([{"op":"remove","path":"/l/01"}])",
         R"([{"op":"copy","from":"/absent","path":"/x"}])",
         R"([{"op":"move","from":"/a","path":"/a/b/c"}])",
         R"([{"op":"add","path":"a","value":1}])",
         R"([{"op":"add","path":"/~2","value":1}])",
         R"([{"op":"add","path":"/n"}])",
         R"([{"op":"frobnicate","path":"/a"}])",
         R"([{"path":"/a"}])",
         R"([7])",
       }) {
    INFO(bad);
    auto out = json_patch(doc, j(bad));
    REQUIRE(out.failure);
    CHECK(out.failure->why == reason::invalid);
  }
}

TEST_CASE("JSON patch: not an array is a bad request; the operations are "
          "bounded") {
  auto doc = j(R"({"a":1})");
  auto not_array = json_patch(doc, j(R"({"op":"add"})"));
  REQUIRE(not_array.failure);
  CHECK(not_array.failure->why == reason::bad_request);
  auto ops = json::array();
  for (int i = 0; i < 4; ++i)
    ops.push_back(j(R"({"op":"test","path":"/a","value":1})"));
  CHECK(json_patch(doc, ops, 4).ok());
  auto over = json_patch(doc, ops, 3);
  REQUIRE(over.failure);
  CHECK(over.failure->why == reason::too_large);
  CHECK(over.failure->message
        == "The allowed maximum operations in a JSON patch is 3, got 4");
  CHECK(max_json_patch_operations == 10000);
}

// -- strategic merge patch -----------------------------------------------------

TEST_CASE("strategic merge patch: maps merge, $patch replaces or deletes") {
  auto doc = j(R"({"metadata":{"labels":{"a":"1","b":"2"}},
                   "data":{"p":"x","q":"y"}})");
  auto merged = strategic_merge_patch(
    doc, j(R"({"data":{"r":"z","q":null},"metadata":{"labels":{"c":"3"}}})"));
  REQUIRE(merged.ok());
  CHECK(merged.document
        == j(R"({"metadata":{"labels":{"a":"1","b":"2","c":"3"}},
                 "data":{"p":"x","r":"z"}})"));
  auto replaced
    = strategic_merge_patch(doc, j(R"({"data":{"$patch":"replace","n":"v"}})"));
  REQUIRE(replaced.ok());
  CHECK(replaced.document["data"] == j(R"({"n":"v"})"));
  auto deleted
    = strategic_merge_patch(doc, j(R"({"data":{"$patch":"delete"}})"));
  REQUIRE(deleted.ok());
  CHECK(!deleted.document.contains("data"));
  CHECK(deleted.document["metadata"] == doc["metadata"]);
  auto bad = strategic_merge_patch(doc, j(R"({"data":{"$patch":"explode"}})"));
  REQUIRE(bad.failure);
  CHECK(bad.failure->why == reason::bad_request);
  CHECK(!strategic_merge_patch(doc, j("[1]")).ok());
}

TEST_CASE("strategic merge patch: $retainKeys and $setElementOrder") {
  auto doc = j(R"({"data":{"a":"1","b":"2","c":"3"},
                   "metadata":{"finalizers":["x","y","z"]}})");
  auto retained = strategic_merge_patch(
    doc, j(R"({"data":{"$retainKeys":["a","d"],"d":"4"}})"));
  REQUIRE(retained.ok());
  CHECK(retained.document["data"] == j(R"({"a":"1","d":"4"})"));
  auto ordered = strategic_merge_patch(
    doc, j(R"({"metadata":{"$setElementOrder/finalizers":["z","x"]}})"));
  REQUIRE(ordered.ok());
  CHECK(ordered.document["metadata"]["finalizers"] == j(R"(["z","x","y"])"));
  CHECK(!ordered.document["metadata"].contains("$setElementOrder/finalizers"));
}

TEST_CASE("strategic merge patch: finalizers merge by value, ownerReferences "
          "by uid, other lists are replaced") {
  auto doc = j(R"({"metadata":{
    "finalizers":["a","b"],
    "ownerReferences":[{"uid":"1","name":"one","kind":"X"},
                       {"uid":"2","name":"two","kind":"X"}]},
    "other":[1,2]})");
  auto out = strategic_merge_patch(doc, j(R"({"metadata":{
    "finalizers":["b","c"],
    "$deleteFromPrimitiveList/finalizers":["a"],
    "ownerReferences":[{"uid":"2","name":"TWO"},{"uid":"3","name":"three"},
                       {"uid":"1","$patch":"delete"}]},
    "other":[3]})"));
  REQUIRE(out.ok());
  CHECK(out.document["metadata"]["finalizers"] == j(R"(["b","c"])"));
  CHECK(out.document["metadata"]["ownerReferences"]
        == j(R"([{"uid":"2","name":"TWO","kind":"X"},
                 {"uid":"3","name":"three"}])"));
  CHECK(out.document["other"] == j("[3]"));
  auto replaced = strategic_merge_patch(doc, j(R"({"metadata":{
    "ownerReferences":[{"$patch":"replace"},{"uid":"9"}]}})"));
  REQUIRE(replaced.ok());
  CHECK(replaced.document["metadata"]["ownerReferences"]
        == j(R"([{"uid":"9"}])"));
  auto no_key = strategic_merge_patch(
    doc, j(R"({"metadata":{"ownerReferences":[{"name":"x"}]}})"));
  REQUIRE(no_key.failure);
  CHECK(no_key.failure->why == reason::bad_request);
  CHECK(no_key.failure->message.find("merge key: uid") != std::string::npos);
}

// -- PATCH of a stored object --------------------------------------------------

TEST_CASE("apply_patch: the transcripts' merge, strategic and JSON patches") {
  // secrets/patch-merge.json
  auto merged = apply_patch(
    stored_secret(), patch_type::merge,
    R"({"data":{"p":"cGF0Y2hlZA==","extra":null},"metadata":{"labels":{"m":"1"}}})",
    "ns1", "s1");
  REQUIRE(!merged.failure);
  auto s = merged.object.as_secret();
  REQUIRE(s);
  CHECK(s->data.at("p") == "patched");
  CHECK(s->data.size() == 3);
  CHECK(s->metadata.labels.at("m") == "1");
  CHECK(s->metadata.uid == "097bb149-01e1-48ba-a819-6ffbaad151cf");
  CHECK(s->metadata.resource_version == "230");
  // secrets/patch-strategic-directive.json
  auto replaced = apply_patch(stored_secret(), patch_type::strategic,
                              R"({"data":{"$patch":"replace","p":"cGF0Y2hlZA=="}})",
                              "ns1", "s1");
  REQUIRE(!replaced.failure);
  CHECK(replaced.object.as_secret()->data
        == std::map<std::string, std::string>{{"p", "patched"}});
  // secrets/patch-json.json
  auto patched = apply_patch(
    stored_secret(), patch_type::json,
    R"([{"op":"add","path":"/data/jp","value":"cGF0Y2hlZA=="},
        {"op":"add","path":"/metadata/labels/m","value":"2"}])",
    "ns1", "s1");
  REQUIRE(!patched.failure);
  CHECK(patched.object.as_secret()->data.at("jp") == "patched");
  // A ConfigMap's text data.
  auto cm = apply_patch(stored_config_map(), patch_type::merge,
                        R"({"data":{"a":null,"c":"3"}})", "ns1", "c1");
  REQUIRE(!cm.failure);
  CHECK(cm.object.as_config_map()->data
        == std::map<std::string, std::string>{{"b", "2"}, {"c", "3"}});
}

TEST_CASE("apply_patch: the real server's Status for patches that fail") {
  auto generic_422 = nlohmann::json::parse(R"({"kind":"Status","apiVersion":"v1",
    "metadata":{},"status":"Failure",
    "message":"the server rejected our request due to an error in our request",
    "reason":"Invalid","details":{},"code":422})");
  // secrets/patch-json-test-fails.json, secrets/patch-json-bad-path.json
  for (const char* body :
       {R"([{"op":"test","path":"/metadata/labels/m","value":"nope"}])",
        R"([{"op":"remove","path":"/data/absent"}])"}) {
    auto out = apply_patch(stored_secret(), patch_type::json, body, "ns1",
                           "s1");
    REQUIRE(out.failure);
    CHECK(out.failure->code == 422);
    CHECK(nlohmann::json::parse(out.failure->body) == generic_422);
  }
  auto ops = json::array();
  for (std::size_t i = 0; i <= max_json_patch_operations; ++i)
    ops.push_back(j(R"({"op":"test","path":"/kind","value":"Secret"})"));
  auto many = apply_patch(stored_secret(), patch_type::json, ops.dump(), "ns1",
                          "s1");
  REQUIRE(many.failure);
  CHECK(many.failure->code == 413);
  CHECK(nlohmann::json::parse(many.failure->body)["message"]
        == "Request entity too large: The allowed maximum operations in a "
           "JSON patch is 10000, got 10001");
  auto not_json = apply_patch(stored_secret(), patch_type::merge,
                              "{\"data\":", "ns1", "s1");
  REQUIRE(not_json.failure);
  CHECK(not_json.failure->code == 400);
  // A patch nested a million levels deep is refused before anything walks
  // it (copying, merging and writing JSON recurse: the server used to
  // crash on it).
  for (auto type : {patch_type::merge, patch_type::strategic,
                    patch_type::json}) {
    const std::size_t levels = 1000000;
    std::string value = std::string(levels, '[') + std::string(levels, ']');
    auto body = type == patch_type::json
                  ? R"([{"op":"add","path":"/zz","value":)" + value + "}]"
                  : R"({"zz":)" + value + "}";
    auto deep = apply_patch(stored_secret(), type, body, "ns1", "s1");
    REQUIRE(deep.failure);
    CHECK(deep.failure->code == 400);
    CHECK(nlohmann::json::parse(deep.failure->body)["message"]
          == "error decoding patch: nesting deeper than the limit of 64 "
             "levels");
  }
  // The patched object is checked as a PUT body is.
  auto renamed = apply_patch(stored_secret(), patch_type::merge,
                             R"({"metadata":{"name":"other"}})", "ns1", "s1");
  REQUIRE(renamed.failure);
  CHECK(renamed.failure->code == 400);
  auto bad_base64 = apply_patch(stored_secret(), patch_type::merge,
                                R"({"data":{"k":"!!!"}})", "ns1", "s1");
  REQUIRE(bad_base64.failure);
  CHECK(bad_base64.failure->code >= 400);
  auto bad_key = apply_patch(stored_config_map(), patch_type::strategic,
                             R"({"data":{"bad key!":"x"}})", "ns1", "c1");
  REQUIRE(bad_key.failure);
  CHECK(bad_key.failure->code == 422);
  // A resourceVersion in the patch is kept: the store makes it a
  // precondition.
  auto rv = apply_patch(stored_secret(), patch_type::merge,
                        R"({"metadata":{"resourceVersion":"224"}})", "ns1", "s1");
  REQUIRE(!rv.failure);
  CHECK(rv.object.meta().resource_version == "224");
}

TEST_CASE("apply_patch: fieldValidation of the fields a patch adds") {
  auto message_of = [](const decoded_body& out) {
    REQUIRE(out.failure);
    CHECK(out.failure->code == 422);
    auto body = nlohmann::json::parse(out.failure->body);
    CHECK(body["reason"] == "Invalid");
    // errors.NewInvalid with no kind and no name: details hold the cause.
    CHECK(body["details"].size() == 1);
    CHECK(body["details"]["causes"][0]["field"] == "patch");
    return body["message"].get<std::string>();
  };
  // A strategic merge patch is quoted as Go prints the map it decoded to:
  // keys sorted, integers as int64, floats as %v, strings bare; the
  // errors sorted.
  const char* smp
    = R"({"zeta":1.5,"n":12345678,"big":1e21,"small":0.00001,)"
      R"("metadata":{"junk":[1,"a",true,null]}})";
  CHECK(message_of(apply_patch(stored_config_map(), patch_type::strategic,
                               smp, "ns1", "c1", "Strict"))
        == " \"\" is invalid: patch: Invalid value: \"map[big:1e+21 "
           "metadata:map[junk:[1 a true <nil>]] n:12345678 small:1e-05 "
           "zeta:1.5]\": strict decoding error: unknown field \"big\", "
           "unknown field \"metadata.junk\", unknown field \"n\", "
           "unknown field \"small\", unknown field \"zeta\"");
  // A merge patch: the patched object as JSON with sorted keys; a Secret's
  // values are not shown.
  auto secret_message = message_of(
    apply_patch(stored_secret(), patch_type::merge,
                R"({"bogus":1,"data":{"q":"c2VjcmV0"}})", "ns1", "s1",
                "Strict"));
  CHECK(secret_message.find(
          R"(Invalid value: "{\"apiVersion\":\"v1\",\"bogus\":1,\"data\":{\"pw\":\"<redacted>\",\"q\":\"<redacted>\")")
        != std::string::npos);
  CHECK(secret_message.find("c2VjcmV0") == std::string::npos);
  CHECK(secret_message.find("ZmFrZS") == std::string::npos); // fake-...
  CHECK(secret_message.substr(secret_message.size() - 44)
        == "strict decoding error: unknown field \"bogus\"");
  // Warn (and the default) names them for the reply's Warnings, in the
  // patched object's sorted order; Ignore drops them.
  for (const char* validation : {"Warn", ""}) {
    auto warned = apply_patch(stored_config_map(), patch_type::json,
                              R"([{"op":"add","path":"/zz","value":1},
                                  {"op":"add","path":"/metadata/x","value":1},
                                  {"op":"add","path":"/aa","value":1}])",
                              "ns1", "c1", validation);
    REQUIRE_FALSE(warned.failure);
    CHECK(warned.unknown_fields
          == std::vector<std::string>{"aa", "metadata.x", "zz"});
  }
  auto ignored = apply_patch(stored_config_map(), patch_type::merge,
                             R"({"bogus":1})", "ns1", "c1", "Ignore");
  REQUIRE_FALSE(ignored.failure);
  CHECK(ignored.unknown_fields.empty());
  CHECK(ignored.object.as_config_map()->data.size() == 2);
}

TEST_CASE("server-side apply: fields the schema lacks are the real "
          "server's 500") {
  auto one = parse_apply_config(
    resource::config_maps,
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a1\n"
    "  namespace: default\nbogus: 1\n");
  REQUIRE(one.failure);
  CHECK(one.failure->code == 500);
  auto body = nlohmann::json::parse(one.failure->body);
  // StatusReasonUnknown: no reason, no details.
  CHECK(body == nlohmann::json{
                  {"kind", "Status"},
                  {"apiVersion", "v1"},
                  {"metadata", nlohmann::json::object()},
                  {"status", "Failure"},
                  {"message", "failed to create typed patch object "
                              "(default/a1; /v1, Kind=ConfigMap): .bogus: "
                              "field not declared in schema"},
                  {"code", 500}});
  auto two = parse_apply_config(
    resource::secrets,
    R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","x":1},)"
    R"("extra":2})");
  REQUIRE(two.failure);
  CHECK(nlohmann::json::parse(two.failure->body)["message"]
        == "failed to create typed patch object (/s; /v1, Kind=Secret): "
           "errors:\n  .metadata.x: field not declared in schema\n  "
           ".extra: field not declared in schema");
}

TEST_CASE("the patch type comes from the Content-Type") {
  CHECK(patch_type_of("application/merge-patch+json") == patch_type::merge);
  CHECK(patch_type_of("application/json-patch+json; charset=utf-8")
        == patch_type::json);
  CHECK(patch_type_of("application/strategic-merge-patch+json")
        == patch_type::strategic);
  CHECK(!patch_type_of("application/json"));
  CHECK(!patch_type_of("text/plain"));
  auto status = nlohmann::json::parse(unsupported_patch_status().body);
  CHECK(unsupported_patch_status().code == 415);
  CHECK(status["reason"] == "UnsupportedMediaType");
}
