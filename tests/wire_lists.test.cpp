// Lists over HTTP as the real server answers them (kube-apiserver-
// transcripts: secrets/list-*.json, watch/list-*.json): pages with limit and
// continue from one snapshot, an expired continue, resourceVersion and
// resourceVersionMatch, and the selectors.
#include "support/http_test_client.hpp"

#include "podref/wire/continue_token.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using namespace podref;
using podref::test::http_test_client;
using podref::test::http_test_server;
using json = nlohmann::json;
using namespace std::string_literals;

namespace {

api_object secret_of(const std::string& ns, const std::string& name,
                     std::map<std::string, std::string> labels = {}) {
  auto s = std::make_shared<secret>();
  s->metadata.ns = ns;
  s->metadata.name = name;
  s->metadata.labels = std::move(labels);
  s->type = "Opaque";
  s->data["k"] = "v";
  return api_object{secret_ptr{std::move(s)}};
}

void create(http_test_server& s, const std::string& ns,
            const std::string& name,
            std::map<std::string, std::string> labels = {}) {
  REQUIRE(s.api.create(secret_of(ns, name, std::move(labels))));
}

/// The names (ns/name) of a list's items.
std::vector<std::string> names_of(const json& list) {
  std::vector<std::string> out;
  for (const auto& x : list["items"])
    out.push_back(x["metadata"]["namespace"].get<std::string>() + "/"
                  + x["metadata"]["name"].get<std::string>());
  return out;
}

json listed(http_test_client& c, const std::string& target,
            std::string* raw = nullptr) {
  auto r = c.get(target);
  if (raw)
    *raw = r.body;
  INFO(target << " -> " << r.body);
  REQUIRE(r.status == 200);
  return json::parse(r.body);
}

} // namespace

TEST_CASE("limit and continue page through one snapshot") {
  http_test_server s;
  for (auto name : {"a", "b", "c", "d"})
    create(s, "ns1", name);
  create(s, "ns2", "e");
  http_test_client c{s.port()};
  const std::string base = "/api/v1/namespaces/ns1/secrets";
  std::string raw;
  auto first = listed(c, base + "?limit=1", &raw);
  CHECK(names_of(first) == std::vector<std::string>{"ns1/a"});
  // The real server's field order.
  CHECK(raw.find(R"("metadata":{"resourceVersion":"5","continue":")")
        != std::string::npos);
  const auto& meta = first["metadata"];
  CHECK(meta["resourceVersion"] == "5");
  CHECK(meta["remainingItemCount"] == 3);
  // The token is the real server's: the snapshot and the last key.
  CHECK(meta["continue"] == wire::encode_continue({5, "a\0"s}));
  // Writes after the first page do not show on the later ones.
  auto changed = secret_of("ns1", "b", {{"new", "label"}});
  REQUIRE(s.api.update(changed));
  REQUIRE(s.api.remove(resource::secrets, "ns1", "c"));
  create(s, "ns1", "bb");
  auto second = listed(c, base + "?limit=2&continue="
                            + meta["continue"].get<std::string>());
  CHECK(names_of(second) == std::vector<std::string>{"ns1/b", "ns1/c"});
  CHECK(second["items"][0]["metadata"]["resourceVersion"] == "2");
  CHECK(second["items"][0]["metadata"].count("labels") == 0);
  CHECK(second["metadata"]["resourceVersion"] == "5");
  CHECK(second["metadata"]["remainingItemCount"] == 1);
  auto last = listed(c, base + "?limit=2&continue="
                           + second["metadata"]["continue"].get<std::string>());
  CHECK(names_of(last) == std::vector<std::string>{"ns1/d"});
  CHECK(last["metadata"].count("continue") == 0);
  CHECK(last["metadata"].count("remainingItemCount") == 0);
  // A fresh list sees the writes.
  CHECK(names_of(listed(c, base))
        == std::vector<std::string>{"ns1/a", "ns1/b", "ns1/bb", "ns1/d"});
}

TEST_CASE("pages across namespaces key by namespace and name") {
  http_test_server s;
  create(s, "ns2", "a");
  create(s, "ns1", "z");
  create(s, "ns1", "y");
  http_test_client c{s.port()};
  auto first = listed(c, "/api/v1/secrets?limit=2");
  CHECK(names_of(first) == std::vector<std::string>{"ns1/y", "ns1/z"});
  CHECK(first["metadata"]["continue"]
        == wire::encode_continue({3, "ns1/z\0"s}));
  auto rest = listed(c, "/api/v1/secrets?limit=2&continue="
                          + first["metadata"]["continue"].get<std::string>());
  CHECK(names_of(rest) == std::vector<std::string>{"ns2/a"});
  // limit=500 (kubectl, the kubelet) on a short list: whole, no token.
  CHECK(listed(c, "/api/v1/secrets?limit=500")["metadata"]
        == json{{"resourceVersion", "3"}});
  // resourceVersion=0 is the watch cache's: the limit is ignored.
  auto any = listed(c, "/api/v1/secrets?limit=1&resourceVersion=0");
  CHECK(any["items"].size() == 3);
  CHECK(any["metadata"].count("continue") == 0);
}

TEST_CASE("a continue past the history is 410 with an inconsistent token") {
  http_test_server s{2};
  for (auto name : {"a", "b", "c"})
    create(s, "ns1", name);
  http_test_client c{s.port()};
  const std::string base = "/api/v1/namespaces/ns1/secrets";
  auto first = listed(c, base + "?limit=1");
  auto token = first["metadata"]["continue"].get<std::string>();
  for (int i = 0; i < 3; ++i)
    REQUIRE(s.api.update(secret_of("ns1", "c", {{"i", std::to_string(i)}})));
  auto expired = c.get(base + "?limit=1&continue=" + token);
  REQUIRE(expired.status == 410);
  // watch/list-continue-expired.json, with this list's token.
  CHECK(json::parse(expired.body)
        == json::parse(
          R"({"kind":"Status","apiVersion":"v1","metadata":{"continue":")"
          + wire::encode_continue({-1, "a\0"s})
          + R"("},"status":"Failure","message":"The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.","reason":"Expired","code":410})"));
  // Its token continues at the newest version.
  auto rest = listed(
    c, base + "?continue="
         + json::parse(expired.body)["metadata"]["continue"].get<std::string>());
  CHECK(names_of(rest) == std::vector<std::string>{"ns1/b", "ns1/c"});
  CHECK(rest["metadata"]["resourceVersion"] == "6");
  CHECK(rest["items"][1]["metadata"]["labels"]["i"] == "2");
  // A broken token is a 400, never a read.
  auto broken = c.get(base + "?limit=1&continue=%25%25");
  CHECK(broken.status == 400);
  CHECK(json::parse(broken.body)["message"]
        == "invalid continue token: continue key is not valid: illegal "
           "base64 data at input byte 0");
  // One from the future (forged) waits for nothing: 504.
  auto future = c.get(base + "?continue="
                      + wire::encode_continue({999, "a\0"s}));
  CHECK(future.status == 504);
}

TEST_CASE("resourceVersion and resourceVersionMatch read as recorded") {
  http_test_server s;
  create(s, "ns1", "w1");
  REQUIRE(s.api.update(secret_of("ns1", "w1", {{"after", "x"}})));
  create(s, "ns1", "w2");
  http_test_client c{s.port()};
  const std::string base = "/api/v1/namespaces/ns1/secrets";
  // Exact: the state at that version, with that list version
  // (watch/list-exact-old-rv-before-compaction.json).
  auto exact = listed(c, base + "?fieldSelector=metadata.name%3Dw1&"
                                "resourceVersion=1&resourceVersionMatch=Exact");
  CHECK(exact["metadata"]["resourceVersion"] == "1");
  REQUIRE(exact["items"].size() == 1);
  CHECK(exact["items"][0]["metadata"]["resourceVersion"] == "1");
  CHECK(exact["items"][0]["metadata"].count("labels") == 0);
  CHECK(names_of(listed(c, base + "?resourceVersion=2&"
                                  "resourceVersionMatch=Exact"))
        == std::vector<std::string>{"ns1/w1"});
  // A limit with a version and no match is Exact too (the API's table).
  CHECK(listed(c, base + "?limit=5&resourceVersion=1")["metadata"]
                         ["resourceVersion"]
        == "1");
  // NotOlderThan (and a version alone): the current state
  // (secrets/list-rv-match-notolderthan.json).
  auto newer = listed(c, base + "?resourceVersion=1&"
                                "resourceVersionMatch=NotOlderThan");
  CHECK(newer["metadata"]["resourceVersion"] == "3");
  CHECK(newer["items"].size() == 2);
  CHECK(listed(c, base + "?resourceVersion=2")["metadata"]["resourceVersion"]
        == "3");
  // Ahead of the server: secrets/list-rv-too-large.json.
  auto ahead = c.get(base + "?resourceVersion=99999999");
  CHECK(ahead.status == 504);
  CHECK(json::parse(ahead.body)
        == json::parse(
          R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 99999999, current: 3","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504})"));
  CHECK(c.get(base + "/w1?resourceVersion=99").status == 504);
  CHECK(json::parse(c.get(base + "/w1?resourceVersion=1").body)["metadata"]
                   ["resourceVersion"]
        == "2");
  // Past the history: watch/list-exact-expired-rv.json.
  s.api.expire_history();
  auto old = c.get(base + "?resourceVersion=1&resourceVersionMatch=Exact");
  CHECK(old.status == 410);
  CHECK(json::parse(old.body)
        == json::parse(
          R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The resourceVersion for the provided list is too old.","reason":"Expired","code":410})"));
  // NotOlderThan past the history still answers
  // (watch/list-notolderthan-old-rv-after-compaction.json).
  CHECK(c.get(base + "?resourceVersion=1&resourceVersionMatch=NotOlderThan")
          .status
        == 200);
}

TEST_CASE("selectors filter lists; a selected page has no remaining count") {
  http_test_server s;
  create(s, "ns1", "s1", {{"app", "a"}});
  create(s, "ns1", "s2", {{"app", "b"}});
  create(s, "ns2", "s3", {{"app", "a"}});
  create(s, "ns2", "s4", {{"app", "c"}});
  create(s, "ns2", "s5");
  http_test_client c{s.port()};
  // secrets/list-labelselector-set.json
  CHECK(names_of(listed(c, "/api/v1/secrets?labelSelector=app+in+%28a%2Cb%29"))
        == std::vector<std::string>{"ns1/s1", "ns1/s2", "ns2/s3"});
  CHECK(names_of(listed(c, "/api/v1/secrets?labelSelector=app+notin+%28a%29"))
        == std::vector<std::string>{"ns1/s2", "ns2/s4", "ns2/s5"});
  CHECK(names_of(listed(c, "/api/v1/secrets?labelSelector=%21app"))
        == std::vector<std::string>{"ns2/s5"});
  // secrets/list-fieldselector-namespace.json
  CHECK(names_of(listed(c, "/api/v1/secrets?fieldSelector=metadata.namespace"
                           "%3Dns1"))
        == std::vector<std::string>{"ns1/s1", "ns1/s2"});
  auto page = listed(c, "/api/v1/secrets?labelSelector=app&limit=1");
  CHECK(names_of(page) == std::vector<std::string>{"ns1/s1"});
  CHECK(page["metadata"].count("continue") == 1);
  CHECK(page["metadata"].count("remainingItemCount") == 0);
  // secrets/list-fieldselector-unsupported.json
  auto bad = c.get("/api/v1/namespaces/ns1/secrets?fieldSelector=data.k%3Dv");
  CHECK(bad.status == 400);
  CHECK(json::parse(bad.body)["message"] == "field label not supported: data.k");
}

TEST_CASE("an Exact list undoes deletes and re-creates") {
  http_test_server s;
  create(s, "ns1", "x");
  REQUIRE(s.api.remove(resource::secrets, "ns1", "x"));
  create(s, "ns1", "x");
  create(s, "ns1", "y");
  http_test_client c{s.port()};
  auto at = [&](const std::string& rv) {
    auto list = listed(c, "/api/v1/namespaces/ns1/secrets?resourceVersion="
                            + rv + "&resourceVersionMatch=Exact");
    std::vector<std::string> out;
    for (const auto& x : list["items"])
      out.push_back(x["metadata"]["name"].get<std::string>() + "@"
                    + x["metadata"]["resourceVersion"].get<std::string>());
    return out;
  };
  CHECK(at("1") == std::vector<std::string>{"x@1"});
  CHECK(at("2").empty());
  CHECK(at("3") == std::vector<std::string>{"x@3"});
  CHECK(at("4") == std::vector<std::string>{"x@3", "y@4"});
}
