// The HTTP front's JSON codec, Status bodies and Table form against the
// bodies a real kube-apiserver sent (kube-apiserver-transcripts), with
// uid, resourceVersion and creationTimestamp taken from the object.
#include "podref/wire/codec.hpp"
#include "podref/wire/status.hpp"
#include "podref/wire/table.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>

#include <nlohmann/json.hpp>

using namespace podref;
using namespace podref::wire;
using json = nlohmann::json;

namespace {

api_object transcript_secret() {
  auto x = std::make_shared<secret>();
  x->metadata.name = "s1";
  x->metadata.ns = "ns1";
  x->metadata.uid = "097bb149-01e1-48ba-a819-6ffbaad151cf";
  x->metadata.resource_version = "224";
  x->metadata.creation_timestamp = "2026-12-02T01:51:55Z";
  x->metadata.labels["app"] = "a";
  x->data["pw"] = "fake-pass";
  x->data["user"] = "fake-user";
  x->type = "Opaque";
  return api_object{secret_ptr{std::move(x)}};
}

} // namespace

TEST_CASE("a Secret encodes as the real server's GET body (no "
          "managedFields)") {
  // secrets/get.json
  auto expected = json::parse(R"({"kind":"Secret","apiVersion":"v1",
    "metadata":{"name":"s1","namespace":"ns1",
      "uid":"097bb149-01e1-48ba-a819-6ffbaad151cf","resourceVersion":"224",
      "creationTimestamp":"2026-12-02T01:51:55Z","labels":{"app":"a"}},
    "data":{"pw":"ZmFrZS1wYXNz","user":"ZmFrZS11c2Vy"},"type":"Opaque"})");
  auto text = encode_object(transcript_secret());
  CHECK(json::parse(text) == expected);
  // Go's field order, not sorted keys.
  CHECK(text.find("\"kind\"") < text.find("\"apiVersion\""));
  CHECK(text.find("\"data\"") < text.find("\"type\""));
}

TEST_CASE("a list carries the cluster resourceVersion, items no kind") {
  auto body = json::parse(encode_list(resource::secrets,
                                      {transcript_secret()}, "229"));
  CHECK(body["kind"] == "SecretList");
  CHECK(body["apiVersion"] == "v1");
  CHECK(body["metadata"] == json{{"resourceVersion", "229"}});
  REQUIRE(body["items"].size() == 1);
  CHECK(body["items"][0].count("kind") == 0);
  CHECK(body["items"][0]["metadata"]["resourceVersion"] == "224");
}

TEST_CASE("request bodies decode with stringData folded into data") {
  auto decoded = decode_request_body(
    resource::secrets, "application/json",
    R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"sd"},
        "data":{"k":"b2xk"},"stringData":{"k":"new","t":"x"}})",
    "ns1", "");
  REQUIRE_FALSE(decoded.failure);
  auto s = decoded.object.as_secret();
  REQUIRE(s);
  CHECK(s->metadata.ns == "ns1");
  CHECK(s->data.at("k") == "new");
  CHECK(s->data.at("t") == "x");
  CHECK(s->string_data.empty());
  CHECK(s->type == "Opaque");
}

TEST_CASE("a request body without Content-Type is read as JSON") {
  // The real server's first media type; kubectl 1.20 sends creates so.
  auto decoded = decode_request_body(
    resource::secrets, "",
    R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"g1"},
        "data":{"a":"Yg=="}})",
    "default", "");
  REQUIRE_FALSE(decoded.failure);
  CHECK(decoded.object.meta().name == "g1");
  auto yaml = decode_request_body(resource::secrets, "",
                                  "kind: Secret\nmetadata: {name: g1}\n",
                                  "default", "");
  REQUIRE(yaml.failure);
  CHECK(yaml.failure->code == 400);
}

TEST_CASE("bad request bodies get the real server's Status") {
  auto status_of_body = [](const char* content_type, const char* body,
                           const char* name = "") {
    auto d = decode_request_body(resource::secrets, content_type, body, "ns1",
                                 name);
    REQUIRE(d.failure);
    return std::make_pair(d.failure->code, json::parse(d.failure->body));
  };
  auto [c1, b1] = status_of_body("text/plain", "x");
  CHECK(c1 == 415);
  CHECK(b1["reason"] == "UnsupportedMediaType");
  auto [c2, b2] = status_of_body("application/json",
                                 R"({"apiVersion":"v1","kind":"Sec)");
  CHECK(c2 == 400);
  CHECK(b2["reason"] == "BadRequest");
  CHECK(b2["message"].get<std::string>().find(
          "the object provided is unrecognized (must be of type Secret)")
        == 0);
  auto [c3, b3] = status_of_body(
    "application/json",
    R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"a","namespace":"other"}})");
  CHECK(c3 == 400);
  CHECK(b3["message"]
        == "the namespace of the provided object does not match the "
           "namespace sent on the request");
  auto [c4, b4] = status_of_body(
    "application/json",
    R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"other"}})",
    "s1");
  CHECK(c4 == 400);
  CHECK(b4["message"]
        == "the name of the object (other) does not match the name on the "
           "URL (s1)");
  auto [c5, b5] = status_of_body(
    "application/json",
    R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"Bad_Name"}})");
  CHECK(c5 == 422);
  CHECK(b5["reason"] == "Invalid");
  CHECK(b5["details"]["kind"] == "Secret");
  CHECK(b5["message"].get<std::string>().find(
          "Secret \"Bad_Name\" is invalid: metadata.name: Invalid value: "
          "\"Bad_Name\": a lowercase RFC 1123 subdomain")
        == 0);
  auto [c6, b6] = status_of_body(
    "application/json", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}})");
  CHECK(c6 == 400);
  CHECK(b6["message"]
        == "Namespace in version \"v1\" cannot be handled as a Secret: "
           "converting (v1.Namespace) to (core.Secret): unknown conversion");
}

TEST_CASE("a bad data key is refused with the real server's 422") {
  // configmaps/invalid-data-key.json, secrets/invalid-data-key.json
  auto refused = [](resource res, const std::string& body) {
    auto d = decode_request_body(res, "application/json", body, "ns1", "");
    REQUIRE(d.failure);
    CHECK(d.failure->code == 422);
    return json::parse(d.failure->body);
  };
  auto cm = refused(resource::config_maps,
                    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":)"
                    R"({"name":"badkey"},"data":{"bad key!":"patched",)"
                    R"("ok.key-1_x":"patched"}})");
  CHECK(cm["message"]
        == "ConfigMap \"badkey\" is invalid: data[bad key!]: Invalid value: "
           "\"bad key!\": a valid config key must consist of alphanumeric "
           "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  "
           "or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
  CHECK(cm["details"]["kind"] == "ConfigMap");
  // stringData is data by the time the server validates it.
  auto secret = refused(resource::secrets,
                        R"({"apiVersion":"v1","kind":"Secret","metadata":)"
                        R"({"name":"badkey"},"stringData":{"..":"x"}})");
  CHECK(secret["message"]
        == "Secret \"badkey\" is invalid: data[..]: Invalid value: "
           "\"..\": must not be '..'");
  // A long key is quoted by its first 256 bytes only, in the path too.
  auto long_key = std::string(3000, 'k');
  auto too_long = refused(resource::config_maps,
                          R"({"apiVersion":"v1","kind":"ConfigMap","metadata":)"
                          R"({"name":"c"},"binaryData":{")"
                            + long_key + R"(":"eA=="}})");
  auto message = too_long["message"].get<std::string>();
  CHECK(message.find("must be no more than 253 characters")
        != std::string::npos);
  CHECK(message.find("... (3000 bytes)") != std::string::npos);
  CHECK(message.size() < 1000);
  auto ok = decode_request_body(
    resource::config_maps, "application/json",
    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},)"
    R"("data":{"ok.key-1_x":"v",".dot":"w"}})",
    "ns1", "");
  CHECK_FALSE(ok.failure);
  // "..." starts with "..", which upstream's IsConfigMapKey refuses.
  auto dots = refused(resource::config_maps,
                      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":)"
                      R"({"name":"c"},"data":{"...":"w"}})");
  CHECK(dots["details"]["causes"][0]["message"]
        == "Invalid value: \"...\": must not start with '..'");
}

TEST_CASE("Status bodies match the transcripts") {
  // secrets/get-missing.json, create-existing.json, replace-stale-rv.json,
  // delete.json, watch/secrets-watch-expired-rv-after-restart.json
  CHECK(json::parse(not_found_status(resource::secrets, "nope").body)
        == json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
             "status":"Failure","message":"secrets \"nope\" not found",
             "reason":"NotFound","details":{"name":"nope","kind":"secrets"},
             "code":404})"));
  auto exists = status_of(
    error_info{errc::already_exists, "secrets \"s1\" already exists"},
    resource::secrets, "s1");
  CHECK(exists.code == 409);
  CHECK(json::parse(exists.body)
        == json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
             "status":"Failure","message":"secrets \"s1\" already exists",
             "reason":"AlreadyExists","details":{"name":"s1","kind":"secrets"},
             "code":409})"));
  auto conflict = status_of(error_info{errc::conflict, "m"},
                            resource::secrets, "s1");
  CHECK(conflict.code == 409);
  CHECK(json::parse(conflict.body)["reason"] == "Conflict");
  auto deleted = delete_success_status(resource::secrets, "s2",
                                       "e4cbf1e5-6239-457b-b340-b69e89c784d6");
  CHECK(deleted.code == 200);
  CHECK(json::parse(deleted.body)
        == json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
             "status":"Success","details":{"name":"s2","kind":"secrets",
             "uid":"e4cbf1e5-6239-457b-b340-b69e89c784d6"}})"));
  CHECK(json::parse(expired_watch_status("too old resource version: 100 (337)"))
        == json::parse(R"j({"kind":"Status","apiVersion":"v1","metadata":{},
             "status":"Failure","message":"too old resource version: 100 (337)",
             "reason":"Expired","code":410})j"));
  CHECK(too_large_status(3u << 20).code == 413);
}

TEST_CASE("the Table form has the real columns and rows") {
  auto now = std::chrono::system_clock::now();
  auto obj = stamp_new(transcript_secret(), now - std::chrono::seconds(4));
  auto table = json::parse(encode_table(resource::secrets, {obj}, "229",
                                        true, now));
  CHECK(table["kind"] == "Table");
  CHECK(table["apiVersion"] == "meta.k8s.io/v1");
  std::vector<std::string> names;
  for (const auto& c : table["columnDefinitions"])
    names.push_back(c["name"]);
  CHECK(names == std::vector<std::string>{"Name", "Type", "Data", "Age"});
  REQUIRE(table["rows"].size() == 1);
  CHECK(table["rows"][0]["cells"] == json::parse(R"(["s1","Opaque",2,"4s"])"));
  CHECK(table["rows"][0]["object"]["kind"] == "PartialObjectMetadata");
  auto later = json::parse(encode_table(resource::config_maps, {}, "230",
                                        false, now));
  CHECK(later["columnDefinitions"].is_null());
  CHECK(wants_table("application/json;as=Table;v=v1;g=meta.k8s.io,"
                    "application/json"));
  CHECK_FALSE(wants_table("application/json"));
  CHECK(short_age(std::chrono::seconds(317)) == "5m17s");
  CHECK(short_age(std::chrono::seconds(89)) == "89s");
}
