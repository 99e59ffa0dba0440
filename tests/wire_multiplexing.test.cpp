// Watch multiplexing over the wire (docs/multiplexing.md): Watch managers
// over a cluster whose wire source answers the namespace multiplexer's
// list_ns and watch_ns. Against `podref apiserver`'s front in process: one
// namespace list and watch past K, every write through the front seen,
// writes racing switches up and down from another thread, a namespace watch
// whose history expired, and the node authorizer's 403 falling back per
// object. Against a scripted server, the requests themselves: continue
// pages, an expired continue token, a 429, and a 403 on the watch alone.
#include "podref/runtime/typed_managers.hpp"

#include "support/pod_builders.hpp"
#include "support/scripted_http_server.hpp"
#include "support/front_cluster.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace podref;
using podref::test::eventually;
using podref::test::make_secret;
using podref::test::pod_with_secrets;
using podref::test::scripted_http_server;
using podref::test::front_cluster;

namespace {

manager_options multiplexing(std::size_t k) {
  manager_options o;
  o.strategy = strategy::watch;
  o.sync_timeout = std::chrono::seconds(10);
  o.mux_threshold = k;
  return o;
}

std::vector<std::string> names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i)
    out.push_back("s" + std::to_string(i));
  return out;
}

/// "k" of ns/name as read, or "error: ..." (a read waits for a first sync).
std::string value_of(secret_manager& mgr, const std::string& ns,
                     const std::string& name) {
  auto got = mgr.get_secret(ns, name);
  if (!got)
    return "error: " + got.error().message;
  auto i = (*got)->data.find("k");
  return i == (*got)->data.end() ? "" : i->second;
}

/// The API server's calls for `ns`: namespace-wide (name "") or per object.
source_action_counts calls_of(api_server& api, const std::string& ns,
                              bool namespace_wide) {
  source_action_counts out;
  auto log = api.actions();
  REQUIRE(log);
  for (const auto& a : *log)
    if (a.ns == ns && a.name.empty() == namespace_wide)
      out.add(a.verb);
  return out;
}

std::size_t held_watches(api_server& api) {
  auto n = api.open_watches();
  REQUIRE(n);
  return *n;
}

std::uint64_t requests_with(const cluster_stats& st, const std::string& key) {
  auto i = st.requests.find(key);
  return i == st.requests.end() ? 0 : i->second;
}

} // namespace

TEST_CASE("wire_ more than K objects of a namespace share one namespace "
          "list and watch, and see every write through the front") {
  front_cluster f;
  for (const auto& n : names(5))
    REQUIRE(f.api.create(make_secret("a", n, {{"k", "v1"}})));
  REQUIRE(f.api.create(make_secret("a", "unreferenced", {{"k", "u"}})));
  REQUIRE(f.api.create(make_secret("b", "x", {{"k", "x1"}})));
  secret_manager mgr{f.rt, *f.cl, multiplexing(2)};
  REQUIRE(mgr.register_pod_and_wait(
    pod_with_secrets("a", "pa", "uid-a", names(5), {})));
  REQUIRE(mgr.register_pod_and_wait(
    pod_with_secrets("b", "pb", "uid-b", {"x"}, {})));
  for (const auto& n : names(5))
    CHECK(value_of(mgr, "a", n) == "v1");
  CHECK(value_of(mgr, "b", "x") == "x1");
  // One namespace watch for a's five, one per-object watch for b's one.
  REQUIRE(eventually([&] { return held_watches(f.api) == 2; }));
  CHECK(eventually([&] { return f.cl->stats().open_streams == 2; }));
  auto st = mgr.manager().stats();
  CHECK(st.namespace_watches == 1);
  CHECK(st.multiplexed_watches == 5);
  CHECK(st.open_watches == 6);
  // The batch registration started every reflector at the multiplexer:
  // one namespace list and watch, nothing per object in a.
  auto ns = calls_of(f.api, "a", true);
  CHECK(ns.lists == 1);
  CHECK(ns.watches == 1);
  CHECK(calls_of(f.api, "a", false).lists == 0);
  CHECK(calls_of(f.api, "a", false).watches == 0);
  // Writes through the front (PUT, DELETE), referenced or not.
  REQUIRE(f.put(make_secret("a", "unreferenced", {{"k", "u2"}})) > 0);
  for (const auto& n : names(5))
    REQUIRE(f.put(make_secret("a", n, {{"k", "v2"}})) > 0);
  REQUIRE(f.remove("a", "s1"));
  CHECK(eventually([&] {
    for (const auto& n : names(5))
      if (value_of(mgr, "a", n)
          != (n == "s1" ? "error: secret \"s1\" not found" : "v2"))
        return false;
    return true;
  }));
  // A recreate under the same name comes through the same watch.
  REQUIRE(f.put(make_secret("a", "s1", {{"k", "v3"}}), true) > 0);
  CHECK(eventually([&] { return value_of(mgr, "a", "s1") == "v3"; }));
  CHECK(calls_of(f.api, "a", true).watches == 1);
  CHECK(calls_of(f.api, "a", true).lists == 1);
}

TEST_CASE("wire_ writes racing switches up and down from another thread "
          "are all seen, and no read goes back in version") {
  front_cluster f;
  // K=4: up with the fifth object of a, down when one is left.
  auto all = names(5);
  for (const auto& n : all)
    REQUIRE(f.api.create(make_secret("a", n, {{"k", "0"}})));
  secret_manager mgr{f.rt, *f.cl, multiplexing(4)};
  REQUIRE(mgr.register_pod_and_wait(
    pod_with_secrets("a", "base", "uid-base", {"s0"}, {})));
  // The writer: PUTs round the five names through the front until told to
  // stop; what it last wrote per name, by resourceVersion.
  std::mutex mtx;
  std::map<std::string, std::pair<std::uint64_t, std::string>> written;
  std::atomic<bool> stop{false};
  std::atomic<int> failed_writes{0};
  std::thread writer{[&] {
    for (int i = 1; !stop; ++i) {
      const auto& n = all[static_cast<std::size_t>(i) % all.size()];
      auto value = std::to_string(i);
      auto rv = f.put(make_secret("a", n, {{"k", value}}));
      if (rv == 0) {
        ++failed_writes;
        continue;
      }
      {
        std::lock_guard<std::mutex> guard{mtx};
        auto& w = written[n];
        if (rv > w.first)
          w = {rv, value};
      }
      // A steady stream, not a flood: the sanitizer build shares 2 cores.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }};
  std::map<std::string, std::uint64_t> seen;
  auto read_all = [&](std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      auto got = mgr.get_secret("a", all[i]);
      if (!got)
        continue; // not synced yet at its new source
      std::uint64_t rv = std::stoull((*got)->metadata.resource_version);
      auto& last = seen[all[i]];
      CHECK(rv >= last);
      last = std::max(last, rv);
    }
  };
  auto others = pod_with_secrets("a", "busy", "uid-busy",
                                 {all.begin() + 1, all.end()}, {});
  for (int cycle = 0; cycle < 4; ++cycle) {
    INFO("cycle " << cycle);
    mgr.register_pod(others);
    for (int i = 0; i < 20; ++i)
      read_all(all.size());
    CHECK(eventually(
      [&] { return mgr.manager().stats().namespace_watches == 1; }));
    read_all(all.size());
    mgr.unregister_pod(others);
    for (int i = 0; i < 20; ++i)
      read_all(1);
    CHECK(eventually(
      [&] { return mgr.manager().stats().namespace_watches == 0; }));
  }
  mgr.register_pod(others);
  stop = true;
  writer.join();
  CHECK(failed_writes == 0);
  // After the last write, every name reads as its last written value.
  CHECK(eventually([&] {
    std::lock_guard<std::mutex> guard{mtx};
    for (const auto& [n, w] : written)
      if (value_of(mgr, "a", n) != w.second)
        return false;
    return true;
  }));
  read_all(all.size());
  CHECK(eventually([&] { return held_watches(f.api) == 1; }));
}

TEST_CASE("wire_ a namespace watch whose history expired lists the "
          "namespace again and catches up") {
  front_cluster f;
  for (const auto& n : names(3))
    REQUIRE(f.api.create(make_secret("a", n, {{"k", "v1"}})));
  secret_manager mgr{f.rt, *f.cl, multiplexing(1)};
  REQUIRE(mgr.register_pod_and_wait(
    pod_with_secrets("a", "p", "uid", names(3), {})));
  REQUIRE(eventually([&] { return calls_of(f.api, "a", true).watches == 1; }));
  // A write the watch does not see, the history gone, the watch ended: its
  // re-watch from the old version is too old (410).
  REQUIRE(f.api.create(make_secret("b", "elsewhere")));
  f.api.expire_history();
  f.api.close_watches();
  REQUIRE(eventually([&] {
    auto ns = calls_of(f.api, "a", true);
    return ns.lists == 2 && ns.watches == 3 && held_watches(f.api) == 1;
  }));
  REQUIRE(f.put(make_secret("a", "s2", {{"k", "v2"}})) > 0);
  CHECK(eventually([&] { return value_of(mgr, "a", "s2") == "v2"; }));
  CHECK(value_of(mgr, "a", "s0") == "v1");
  CHECK(calls_of(f.api, "a", true).watches == 3);
}

TEST_CASE("wire_ the node authorizer's 403 on the namespace list falls back "
          "per object without losing a write, and is asked once") {
  test::front_cluster_options o;
  o.node_authorizer = true;
  front_cluster f{o};
  for (const auto& n : {"x", "y", "z"})
    REQUIRE(f.api.create(make_secret("a", n, {{"k", "1"}})));
  secret_manager mgr{f.rt, *f.cl, multiplexing(1)};
  REQUIRE(mgr.register_pod_and_wait(
    pod_with_secrets("a", "p1", "uid-1", {"x"}, {})));
  CHECK(value_of(mgr, "a", "x") == "1");
  // The second object switches the namespace up; a write races the
  // refusal and the handover back.
  mgr.register_pod(pod_with_secrets("a", "p2", "uid-2", {"x", "y"}, {}));
  REQUIRE(f.put(make_secret("a", "x", {{"k", "2"}})) > 0);
  CHECK(eventually([&] { return value_of(mgr, "a", "x") == "2"; }));
  CHECK(value_of(mgr, "a", "y") == "1");
  CHECK(eventually([&] { return held_watches(f.api) == 2; }));
  CHECK(requests_with(f.cl->stats(), "GET 403") == 1);
  auto st = mgr.manager().stats();
  CHECK(st.namespace_watches == 0);
  CHECK(st.multiplexed_watches == 0);
  // The refusal holds for the namespace: a third object, per object.
  REQUIRE(mgr.register_pod_and_wait(
    pod_with_secrets("a", "p3", "uid-3", {"x", "y", "z"}, {})));
  CHECK(value_of(mgr, "a", "z") == "1");
  CHECK(eventually([&] { return held_watches(f.api) == 3; }));
  CHECK(requests_with(f.cl->stats(), "GET 403") == 1);
  CHECK(calls_of(f.api, "a", true).lists == 0); // refused at the front
}

// -- the requests, against a scripted server ------------------------------------

namespace {

std::string secret_json(const std::string& name, const std::string& b64,
                        const std::string& rv) {
  return R"({"metadata":{"name":")" + name
         + R"(","namespace":"a","uid":"u-)" + name
         + R"(","resourceVersion":")" + rv + R"("},"data":{"k":")" + b64
         + R"("},"type":"Opaque"})";
}

std::string list_json(const std::vector<std::string>& items,
                      const std::string& rv, const std::string& cont = {}) {
  std::string out = R"({"kind":"SecretList","apiVersion":"v1","metadata":{"resourceVersion":")"
                    + rv + "\"";
  if (!cont.empty())
    out += R"(,"continue":")" + cont + "\"";
  out += R"(},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i > 0 ? "," : "") + items[i];
  return out + "]}";
}

std::string status_reply(int code, const std::string& reason,
                         const std::string& message) {
  return scripted_http_server::reply(
    code, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")"
            + message + R"(","reason":")" + reason + R"(","code":)"
            + std::to_string(code) + "}");
}

bool has(const std::string& path, const std::string& part) {
  return path.find(part) != std::string::npos;
}

/// The requests for the namespace collection itself (no field selector).
std::vector<std::string> namespace_requests(scripted_http_server& srv) {
  std::vector<std::string> out;
  for (const auto& p : srv.paths())
    if (!has(p, "fieldSelector"))
      out.push_back(p);
  return out;
}

// s1 = "v1" (djE=) and s2 = "v2" (djI=) at list version 7; a watch event
// brings s2 to "v3" (djM=) at 8.
const std::string s1_json = secret_json("s1", "djE=", "5");
const std::string s2_json = secret_json("s2", "djI=", "6");
const std::string s2_event = R"({"type":"MODIFIED","object":)"
                             + secret_json("s2", "djM=", "8") + "}";

/// One Watch manager over a cluster on `srv`, K=1, one pod referencing s1
/// and s2 of namespace a; waits for both to read as `want1` and `want2`,
/// then for `settled` (the requests expected of it).
void sync_through(scripted_http_server& srv, const std::string& want1,
                  const std::string& want2,
                  const std::function<bool()>& settled) {
  runtime rt;
  wire::client_config cfg;
  cfg.server = srv.url();
  cfg.origin = "test";
  auto cl = cluster::connect(rt, cfg);
  REQUIRE(cl);
  {
    secret_manager mgr{rt, **cl, multiplexing(1)};
    mgr.register_pod(pod_with_secrets("a", "p", "uid", {"s1", "s2"}, {}));
    CHECK(eventually([&] {
      return value_of(mgr, "a", "s1") == want1
             && value_of(mgr, "a", "s2") == want2;
    }));
    CHECK(eventually(settled));
  }
}

/// How many requests of `srv` contain `part`.
std::size_t requests_with_part(scripted_http_server& srv,
                               const std::string& part) {
  std::size_t n = 0;
  for (const auto& p : srv.paths())
    if (has(p, part))
      ++n;
  return n;
}

/// Per-object requests answered with the object, watches held open.
std::string per_object(const std::string& path) {
  if (has(path, "watch=true"))
    return scripted_http_server::watch({}, true);
  auto obj = has(path, "%3Ds1") ? s1_json : s2_json;
  return scripted_http_server::reply(200, list_json({obj}, "7"));
}

const std::string base = "/api/v1/namespaces/a/secrets";

} // namespace

TEST_CASE("wire_ a namespace list follows its continue pages, lists again "
          "whole when the token expired, and waits out a 429") {
  std::string scenario = GENERATE("pages", "expired", "429");
  INFO(scenario);
  std::atomic<int> first_pages{0};
  scripted_http_server srv{[&](const std::string& path, int) -> std::string {
    if (has(path, "fieldSelector"))
      return per_object(path);
    if (has(path, "watch=true"))
      return scripted_http_server::watch({s2_event}, true);
    if (has(path, "continue=c1"))
      return scenario == "expired"
               ? status_reply(410, "Expired",
                              "The provided continue parameter is too old")
               : scripted_http_server::reply(200, list_json({s2_json}, "7"));
    if (scenario == "429" && path == base + "?limit=500&resourceVersion=0"
        && ++first_pages == 1)
      return "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\n"
             "Content-Length: 0\r\nConnection: close\r\n\r\n";
    if (scenario == "pages" || path == base + "?limit=500&resourceVersion=0")
      return scripted_http_server::reply(200, list_json({s1_json}, "7", "c1"));
    return scripted_http_server::reply(200, list_json({s1_json, s2_json}, "7"));
  }};
  sync_through(srv, "v1", "v3", [&] {
    return requests_with_part(srv, "allowWatchBookmarks") == 1;
  });
  auto paths = namespace_requests(srv);
  REQUIRE(paths.size() >= 3);
  std::vector<std::string> lists{paths.begin(), paths.end() - 1};
  CHECK(lists.front() == "GET " + base + "?limit=500&resourceVersion=0");
  if (scenario == "pages")
    CHECK(lists == std::vector<std::string>{
                     "GET " + base + "?limit=500&resourceVersion=0",
                     "GET " + base + "?continue=c1&limit=500"});
  else if (scenario == "expired")
    CHECK(lists == std::vector<std::string>{
                     "GET " + base + "?limit=500&resourceVersion=0",
                     "GET " + base + "?continue=c1&limit=500",
                     "GET " + base + "?resourceVersion=0"});
  else
    CHECK(lists == std::vector<std::string>{
                     "GET " + base + "?limit=500&resourceVersion=0",
                     "GET " + base + "?limit=500&resourceVersion=0",
                     "GET " + base + "?continue=c1&limit=500"});
  // Then the namespace watch from the list's version, with bookmarks.
  CHECK(paths.back().rfind("GET " + base
                             + "?allowWatchBookmarks=true&resourceVersion=7"
                               "&timeoutSeconds=",
                           0)
        == 0);
  CHECK(has(paths.back(), "&watch=true"));
  // Nothing went per object.
  CHECK(paths.size() == srv.paths().size());
}

TEST_CASE("wire_ a 403 on the namespace list or on its watch alone falls "
          "back per object") {
  bool watch_only = GENERATE(false, true);
  INFO((watch_only ? "watch refused" : "list refused"));
  const std::string refused
    = "secrets is forbidden: User \\\"system:node:n1\\\" cannot list resource "
      "\\\"secrets\\\" in API group \\\"\\\" in the namespace \\\"a\\\"";
  scripted_http_server srv{[&](const std::string& path, int) -> std::string {
    if (has(path, "fieldSelector"))
      return per_object(path);
    if (!watch_only || has(path, "watch=true"))
      return status_reply(403, "Forbidden", refused);
    return scripted_http_server::reply(200,
                                       list_json({s1_json, s2_json}, "7"));
  }};
  // Then each object listed and watched on its own.
  auto per_object_watches = [&] {
    std::size_t n = 0;
    for (const auto& p : srv.paths())
      if (has(p, "fieldSelector") && has(p, "watch=true"))
        ++n;
    return n;
  };
  sync_through(srv, "v1", "v2", [&] { return per_object_watches() == 2; });
  auto ns_paths = namespace_requests(srv);
  CHECK(ns_paths.size() == (watch_only ? 2u : 1u));
  CHECK(requests_with_part(srv, "fieldSelector") - per_object_watches()
        >= 2);
}
