// The API server's validation as the HTTP front answers it: every recorded
// rule of kube-apiserver-transcripts (tests/data/wire_validation.json holds
// their requests and Status bodies) with its status, reason, message and
// causes: names, labels, data keys, base64, Secret types and the 1 MiB
// limit on create; immutable objects, a Secret's type and a Pod's spec on
// update; fieldValidation Strict and Warn.
#include "podref/wire/codec.hpp"

#include "podref/manifest/manifest.hpp"
#include "podref/messages/base64.hpp"

#include "support/http_test_client.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

using namespace podref;
using namespace podref::wire;
using json = nlohmann::json;
namespace http = boost::beast::http;

namespace {

const json& recorded() {
  static const json doc = [] {
    std::ifstream in{std::string{PODREF_SOURCE_DIR}
                     + "/tests/data/wire_validation.json"};
    std::stringstream text;
    text << in.rdbuf();
    return json::parse(text.str());
  }();
  return doc;
}

resource resource_of(const json& x) {
  return x["resource"] == "secrets" ? resource::secrets
                                    : resource::config_maps;
}

std::string collection(resource res) {
  return "/api/v1/namespaces/ns1/" + std::string{plural_name(res)};
}

/// A Secret or ConfigMap body whose one value has `bytes` bytes.
std::string sized_body(resource res, std::size_t bytes) {
  json x{{"apiVersion", "v1"},
         {"kind", std::string{kind_name(res)}},
         {"metadata", {{"name", "big"}}}};
  std::string value(bytes, 'a');
  x["data"]["k"] = res == resource::secrets ? encode_base64(value) : value;
  return x.dump();
}

json refused(resource res, const std::string& body, int code) {
  auto d = decode_request_body(res, "application/json", body, "ns1", "");
  REQUIRE(d.failure);
  CHECK(d.failure->code == code);
  return json::parse(d.failure->body);
}

} // namespace

TEST_CASE("every recorded rule of a create answers as the real server") {
  for (const auto& c : recorded()["creates"]) {
    DYNAMIC_SECTION(c["transcript"].get<std::string>()) {
      auto d = decode_request_body(resource_of(c), "application/json",
                                   c["body"].dump(), "ns1", "");
      if (c["code"].get<int>() >= 400) {
        REQUIRE(d.failure);
        CHECK(d.failure->code == c["code"].get<int>());
        CHECK(json::parse(d.failure->body) == c["status"]);
      } else {
        CHECK_FALSE(d.failure);
      }
    }
  }
}

TEST_CASE("data over 1 MiB is the recorded 422, and 1 MiB passes") {
  // secrets/invalid-too-large.json, configmaps/invalid-too-large.json
  auto secret = refused(resource::secrets,
                        sized_body(resource::secrets, (1u << 20) + 1), 422);
  CHECK(secret == json::parse(R"({"kind":"Status","apiVersion":"v1",
    "metadata":{},"status":"Failure",
    "message":"Secret \"big\" is invalid: data: Too long: must have at most 1048576 bytes",
    "reason":"Invalid","details":{"name":"big","kind":"Secret","causes":[
      {"reason":"FieldValueTooLong","message":"Too long: must have at most 1048576 bytes",
       "field":"data"}]},"code":422})"));
  auto cm = refused(resource::config_maps,
                    sized_body(resource::config_maps, (1u << 20) + 1), 422);
  CHECK(cm["message"]
        == "ConfigMap \"big\" is invalid: []: Too long: must have at most "
           "1048576 bytes");
  CHECK(cm["details"]["causes"][0]["field"] == "[]");
  for (auto res : {resource::secrets, resource::config_maps})
    CHECK_FALSE(decode_request_body(res, "application/json",
                                    sized_body(res, 1u << 20), "ns1", "")
                  .failure);
}

TEST_CASE("the Secret types' requirements, several problems at once") {
  auto secret = [](const std::string& type, const std::string& data,
                   const std::string& meta = R"({"name":"s"})") {
    return R"({"apiVersion":"v1","kind":"Secret","metadata":)" + meta
           + R"(,"type":")" + type + R"(","data":)" + data + "}";
  };
  auto basic = refused(resource::secrets,
                       secret("kubernetes.io/basic-auth", "{}"), 422);
  // Upstream's paths for basic-auth and ssh-auth really read `data[%s]`.
  CHECK(basic["message"]
        == "Secret \"s\" is invalid: [data[%s][username]: Required value, "
           "data[%s][password]: Required value]");
  CHECK(basic["details"]["causes"].size() == 2);
  CHECK_FALSE(decode_request_body(
                resource::secrets, "application/json",
                secret("kubernetes.io/basic-auth", R"({"password":""})"),
                "ns1", "")
                .failure);
  CHECK(refused(resource::secrets, secret("kubernetes.io/ssh-auth", "{}"),
                422)["details"]["causes"][0]["field"]
        == "data[%s][ssh-privatekey]");
  auto tls = refused(resource::secrets, secret("kubernetes.io/tls", "{}"),
                     422);
  CHECK(tls["details"]["causes"].size() == 2);
  // A docker config that is not a JSON object; its contents never shown.
  auto docker = refused(
    resource::secrets,
    secret("kubernetes.io/dockerconfigjson",
           R"({".dockerconfigjson":")" + encode_base64("[\"hunter2\"]")
             + R"("})"),
    422);
  CHECK(docker["message"]
        == "Secret \"s\" is invalid: data[.dockerconfigjson]: Invalid value: "
           "\"<secret contents redacted>\": json: cannot unmarshal array "
           "into Go value of type map[string]interface {}");
  auto cut = refused(resource::secrets,
                     secret("kubernetes.io/dockercfg",
                            R"({".dockercfg":")" + encode_base64("{\"a\":")
                              + R"("})"),
                     422);
  CHECK(cut["details"]["causes"][0]["message"]
        == "Invalid value: \"<secret contents redacted>\": unexpected end of "
           "JSON input");
  CHECK(cut.dump().find("hunter2") == std::string::npos);
  // stringData is folded into data before the checks, as on the server.
  auto key = refused(resource::secrets,
                     R"({"apiVersion":"v1","kind":"Secret","metadata":)"
                     R"({"name":"s"},"stringData":{"...x":"v"}})",
                     422);
  CHECK(key["message"]
        == "Secret \"s\" is invalid: data[...x]: Invalid value: \"...x\": "
           "must not start with '..'");
  // A name that breaks two rules has two causes; so do a bad label key
  // and value.
  auto both = refused(resource::config_maps,
                      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":)"
                      R"({"name":"ok","labels":{"a/b/c":"-x"}}})",
                      422);
  REQUIRE(both["details"]["causes"].size() == 2);
  CHECK(both["details"]["causes"][0]["message"].get<std::string>().find(
          "Invalid value: \"a/b/c\": a qualified name must consist of")
        == 0);
  // sa-token with its annotation passes.
  CHECK_FALSE(
    decode_request_body(
      resource::secrets, "application/json",
      secret("kubernetes.io/service-account-token", "{}",
             R"({"name":"s","annotations":{"kubernetes.io/service-account.name":"d"}})"),
      "ns1", "")
      .failure);
}

TEST_CASE("every recorded rule of an update answers as the real server") {
  test::http_test_server s;
  test::http_test_client c{s.port()};
  std::string created;
  for (const auto& u : recorded()["updates"]) {
    auto res = resource_of(u);
    auto name = u["create"]["metadata"]["name"].get<std::string>();
    // Each update starts from the object as its transcript created it.
    if (created != name) {
      c.call(http::verb::delete_, collection(res) + "/" + name);
      REQUIRE(c.call(http::verb::post, collection(res), u["create"].dump())
                .status
              == 201);
      created = name;
    }
    INFO(u["transcript"].get<std::string>());
    auto reply = c.call(http::verb::patch, collection(res) + "/" + name,
                        u["patch"].dump(), u["patch_type"]);
    CHECK(reply.status == u["code"].get<int>());
    if (u.contains("status"))
      CHECK(json::parse(reply.body) == u["status"]);
  }
  // A PUT is held to the same rules: the data of an immutable Secret.
  auto stored = json::parse(c.get(collection(resource::secrets) + "/s1-imm")
                              .body);
  stored["data"]["k"] = encode_base64("other");
  auto put = c.call(http::verb::put, collection(resource::secrets) + "/s1-imm",
                    stored.dump());
  CHECK(put.status == 422);
  CHECK(json::parse(put.body)["details"]["causes"]
        == json::parse(R"([{"reason":"FieldValueForbidden",
             "message":"Forbidden: field is immutable when `immutable` is set",
             "field":"data"}])"));
  // Both problems of one update, in upstream's order.
  stored["immutable"] = false;
  auto two = json::parse(c.call(http::verb::put,
                                collection(resource::secrets) + "/s1-imm",
                                stored.dump())
                           .body);
  CHECK(two["message"]
        == "Secret \"s1-imm\" is invalid: [immutable: Forbidden: field is "
           "immutable when `immutable` is set, data: Forbidden: field is "
           "immutable when `immutable` is set]");
}

TEST_CASE("a pod's spec changes only where the real server allows") {
  // pods/update-forbidden-spec.json, update-image.json, update-nodename.json
  test::http_test_server s;
  test::http_test_client c{s.port()};
  const auto& pod = recorded()["pod"];
  const std::string path = "/api/v1/namespaces/ns1/pods/p3";
  REQUIRE(c.call(http::verb::post, "/api/v1/namespaces/ns1/pods",
                 pod["create"].dump())
            .status
          == 201);
  for (const auto& u : pod["updates"]) {
    INFO(u["transcript"].get<std::string>());
    auto verb = u["method"] == "PUT" ? http::verb::put : http::verb::patch;
    auto reply = c.call(verb, path, u["body"].dump(), u["content_type"]);
    REQUIRE(reply.status == u["code"].get<int>());
    if (!u.contains("status"))
      continue;
    // Status, reason, details and the message's first line as recorded;
    // podref lists the changed fields as JSON paths where upstream prints
    // go-cmp's diff of its Go structs.
    auto got = json::parse(reply.body);
    const auto& want = u["status"];
    for (const char* key : {"kind", "status", "reason", "code"})
      CHECK(got[key] == want[key]);
    CHECK(got["details"]["name"] == "p3");
    CHECK(got["details"]["kind"] == "Pod");
    REQUIRE(got["details"]["causes"].size() == 1);
    const auto& cause = got["details"]["causes"][0];
    CHECK(cause["reason"] == "FieldValueForbidden");
    CHECK(cause["field"] == "spec");
    auto first_line = [](const json& text) {
      auto s = text.get<std::string>();
      return s.substr(0, s.find('\n'));
    };
    CHECK(first_line(got["message"]) == first_line(want["message"]));
    CHECK(first_line(cause["message"])
          == first_line(want["details"]["causes"][0]["message"]));
  }
  auto stored = json::parse(c.get(path).body);
  CHECK(stored["spec"]["containers"][0]["image"] == "registry.example/fake:2");
  CHECK(stored["spec"]["nodeName"] == "node2");
  // The message names what changed, old and new.
  auto renamed = c.call(http::verb::patch, path,
                        R"({"spec":{"nodeName":"node1"}})",
                        "application/merge-patch+json");
  auto message = json::parse(renamed.body)["message"].get<std::string>();
  CHECK(message.find("- \tspec.nodeName: \"node2\"\n+ \tspec.nodeName: "
                     "\"node1\"\n")
        != std::string::npos);
  // Tolerations may be added to, not changed.
  auto added = json::parse(c.get(path).body);
  added["spec"]["tolerations"].push_back(
    json{{"key", "k"}, {"operator", "Exists"}});
  CHECK(c.call(http::verb::put, path, added.dump()).status == 200);
  added = json::parse(c.get(path).body);
  added["spec"]["tolerations"][0]["effect"] = "NoSchedule";
  auto changed = json::parse(c.call(http::verb::put, path, added.dump()).body);
  CHECK(changed["message"]
        == "Pod \"p3\" is invalid: spec.tolerations: Forbidden: existing "
           "toleration can not be modified except its tolerationSeconds");
  // activeDeadlineSeconds may be set, then only lowered.
  CHECK(c.call(http::verb::patch, path,
               R"({"spec":{"activeDeadlineSeconds":60}})",
               "application/merge-patch+json")
          .status
        == 200);
  auto raised = json::parse(c.call(http::verb::patch, path,
                                   R"({"spec":{"activeDeadlineSeconds":61}})",
                                   "application/merge-patch+json")
                              .body);
  CHECK(raised["message"]
        == "Pod \"p3\" is invalid: spec.activeDeadlineSeconds: Invalid "
           "value: 61: must be less than or equal to previous value");
  // A container added is refused before the spec is compared.
  added = json::parse(c.get(path).body);
  added["spec"]["containers"].push_back(json{{"name", "d"}, {"image", "x"}});
  CHECK(json::parse(c.call(http::verb::put, path, added.dump()).body)
          ["message"]
        == "Pod \"p3\" is invalid: spec.containers: Forbidden: pod updates "
           "may not add or remove containers");
}

TEST_CASE("fieldValidation: Strict refuses unknown fields, Warn warns, "
          "Ignore says nothing") {
  test::http_test_server s;
  test::http_test_client c{s.port()};
  for (const auto& v : recorded()["field_validation"]) {
    INFO(v["transcript"].get<std::string>());
    auto res = resource_of(v);
    auto query = v["query"].get<std::string>();
    auto reply = c.call(http::verb::post,
                        collection(res) + (query.empty() ? "" : "?" + query),
                        v["body"].dump());
    CHECK(reply.status == v["code"].get<int>());
    if (v.contains("status"))
      CHECK(json::parse(reply.body) == v["status"]);
    if (v["warning"] != "")
      CHECK(reply.warnings == std::vector<std::string>{v["warning"]});
    else
      CHECK(reply.warnings.empty());
  }
  const std::string body
    = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"i",)"
      R"("bogus":1},"extra":{"x":1}})";
  auto send = [&c, &body](http::verb verb, const std::string& suffix) {
    return c.call(verb, collection(resource::config_maps) + suffix, body);
  };
  auto ignored = send(http::verb::post, "?fieldValidation=Ignore");
  CHECK(ignored.status == 201);
  CHECK(ignored.warnings.empty());
  auto strict = send(http::verb::put, "/i?fieldValidation=Strict");
  CHECK(strict.status == 400);
  CHECK(json::parse(strict.body)["message"]
        == "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: "
           "strict decoding error: unknown field \"metadata.bogus\", "
           "unknown field \"extra\"");
  auto bad = send(http::verb::post, "?fieldValidation=Loose");
  CHECK(bad.status == 422);
  CHECK(json::parse(bad.body)["message"]
        == "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: "
           "Unsupported value: \"Loose\": supported values: \"\", "
           "\"Ignore\", \"Strict\", \"Warn\"");

  // A PATCH's unknown fields: the Warnings come with the stored reply,
  // Strict stores nothing, and a server-side apply's are its 500.
  const auto item = collection(resource::config_maps) + "/i";
  auto patch = [&c, &item](const std::string& query, const std::string& body,
                           const std::string& type) {
    return c.call(http::verb::patch, item + query, body, type);
  };
  auto warned = patch("", R"({"data":{"k":"1"},"bogus":1})",
                      "application/merge-patch+json");
  CHECK(warned.status == 200);
  CHECK(warned.warnings
        == std::vector<std::string>{"299 - \"unknown field \\\"bogus\\\"\""});
  CHECK(json::parse(warned.body)["data"]["k"] == "1");
  auto refused = patch("?fieldValidation=Strict", R"({"data":{"k":"2"},"bogus":1})",
                       "application/strategic-merge-patch+json");
  CHECK(refused.status == 422);
  CHECK(json::parse(refused.body)["message"]
        == " \"\" is invalid: patch: Invalid value: \"map[bogus:1 "
           "data:map[k:2]]\": strict decoding error: unknown field "
           "\"bogus\"");
  CHECK(json::parse(c.get(item).body)["data"]["k"] == "1");
  auto applied = patch("?fieldManager=m&fieldValidation=Ignore",
                       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                       "  name: i\nbogus: 1\n",
                       "application/apply-patch+yaml");
  CHECK(applied.status == 500);
  CHECK(json::parse(applied.body)["message"]
        == "failed to create typed patch object (/i; /v1, Kind=ConfigMap): "
           ".bogus: field not declared in schema");
}

TEST_CASE("the manifest decoder refuses what the API server refuses, with "
          "its texts") {
  auto first_error = [](const std::string& text) {
    auto result = decode_manifest(text, "m.yaml");
    REQUIRE(result.errors.size() == 1);
    CHECK(result.objects.empty());
    return result.errors.front();
  };
  CHECK(first_error("kind: Secret\nmetadata: {name: t}\n"
                    "type: kubernetes.io/tls\ndata: {tls.key: eA==}\n")
        == "m.yaml: document 0: data[tls.crt]: Required value");
  CHECK(first_error("kind: ConfigMap\nmetadata: {name: c, labels: {app: "
                    "-bad-}}\n")
          .find("m.yaml: document 0: metadata.labels: Invalid value: "
                "\"-bad-\": a valid label must be an empty string")
        == 0);
  CHECK(first_error("kind: Secret\nmetadata: {name: b}\n"
                    "data: {k: not base64!}\n")
        == "m.yaml: document 0: data.k: illegal base64 data at input byte 3");
  CHECK(first_error("kind: List\nitems:\n- kind: ConfigMap\n"
                    "  metadata: {name: d}\n  data: {k: v}\n"
                    "  binaryData: {k: dg==}\n")
        == "m.yaml: document 0: items[0].data[k]: Invalid value: \"k\": "
           "duplicate of key present in binaryData");
}
