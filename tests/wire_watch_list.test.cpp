// The wire source's streaming list (wire_source_options::watch_list):
// against `podref apiserver`'s front in process, a sync is one watch-list
// request whose stream then serves the watch; against a scripted server,
// the fallbacks to list+watch: a 422 refusal (remembered: later objects go
// straight to list+watch) and a stream that never sends its end bookmark.
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "support/pod_builders.hpp"
#include "support/scripted_http_server.hpp"
#include "support/wire_front.hpp"
#include "support/wire_steps.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace podref;
using namespace std::chrono_literals;
using podref::test::actions_of;
using podref::test::eventually;
using podref::test::make_secret;
using podref::test::pod_with_secrets;
using podref::test::scripted_http_server;
using podref::test::value_of;
using podref::test::watching;
using podref::test::wire_front;
using podref::test::wire_transport;

namespace {

bool has(const std::string& path, const char* part) {
  return path.find(part) != std::string::npos;
}

std::string list_of(const std::string& name, int rv) {
  return scripted_http_server::reply(
    200, R"({"kind":"SecretList","metadata":{"resourceVersion":")"
           + std::to_string(rv) + R"("},"items":[{"metadata":{"name":")" + name
           + R"(","namespace":"default","uid":"u","resourceVersion":")"
           + std::to_string(rv) + R"("},"data":{"k":"djE="}}]})");
}

std::unique_ptr<cluster> streaming_cluster(runtime& rt, const std::string& url,
                                           std::chrono::milliseconds timeout) {
  wire::client_config cfg;
  cfg.server = url;
  cfg.origin = "test";
  cluster_options opts;
  opts.source.watch_list = true;
  opts.source.watch_list_timeout = timeout;
  auto c = cluster::connect(rt, cfg, opts);
  REQUIRE(c);
  return std::move(c).value();
}

} // namespace

TEST_CASE("wire_ a streaming list syncs with one watch-list request that "
          "goes on as the watch") {
  auto t = GENERATE(wire_transport::http1, wire_transport::tls_token);
  INFO(test::name_of(t));
  wire_front f{t};
  f.options.source.watch_list = true;
  REQUIRE(f.api.create(make_secret("default", "s1", {{"k", "v1"}})));
  auto cl = f.connect();
  {
    secret_manager mgr{f.rt, *cl, watching()};
    REQUIRE(mgr.register_pod_and_wait(
      pod_with_secrets("default", "p1", "uid-1", {"s1"}, {})));
    CHECK(value_of(mgr, "s1") == "v1");
    REQUIRE(f.api.update(make_secret("default", "s1", {{"k", "v2"}})));
    CHECK(eventually([&] { return value_of(mgr, "s1") == "v2"; }));
    // At the server: one watch (from "": its initial events), no list.
    auto n = actions_of(f.api, "s1");
    CHECK(n.lists == 0);
    CHECK(n.watches == 1);
    auto st = cl->stats();
    CHECK(st.watch_list_adopted == 1);
    CHECK(st.watch_list_fallbacks == 0);
    CHECK(st.requests.empty()); // nothing finished: one stream, open
    CHECK(st.open_streams == 1);
  }
  CHECK(eventually([&] { return cl->stats().open_streams == 0; }));
}

TEST_CASE("wire_ a server that refuses the streaming list with 422 gets "
          "list and watch, and no second try") {
  // The recorded Jan-2023 kube-apiserver's answer (no WatchList).
  const std::string refused
    = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: resourceVersionMatch is forbidden for watch","field":"resourceVersionMatch"}]},"code":422})";
  scripted_http_server srv{[&](const std::string& path, int) -> std::string {
    if (has(path, "sendInitialEvents=true"))
      return scripted_http_server::reply(422, refused);
    auto name = has(path, "%3Ds1") ? "s1" : "s2";
    if (!has(path, "watch=true"))
      return list_of(name, 5);
    return scripted_http_server::watch({}, true);
  }};
  runtime rt;
  auto cl = streaming_cluster(rt, srv.url(), 10s);
  {
    secret_manager mgr{rt, *cl, watching()};
    REQUIRE(mgr.register_pod_and_wait(
      pod_with_secrets("default", "p1", "uid-1", {"s1"}, {})));
    CHECK(value_of(mgr, "s1") == "v1");
    REQUIRE(mgr.register_pod_and_wait(
      pod_with_secrets("default", "p2", "uid-2", {"s2"}, {})));
    CHECK(value_of(mgr, "s2") == "v1");
    CHECK(eventually([&] { return cl->stats().open_streams == 2; }));
    auto paths = srv.paths();
    REQUIRE(paths.size() == 5);
    CHECK(paths[0]
          == "GET /api/v1/namespaces/default/secrets?allowWatchBookmarks=true"
             "&fieldSelector=metadata.name%3Ds1&resourceVersion=0"
             "&resourceVersionMatch=NotOlderThan&sendInitialEvents=true"
             "&timeoutSeconds="
               + paths[0].substr(paths[0].find("timeoutSeconds=") + 15));
    int streamed = 0;
    for (const auto& p : paths)
      streamed += has(p, "sendInitialEvents") ? 1 : 0;
    CHECK(streamed == 1);
    auto st = cl->stats();
    CHECK(st.watch_list_fallbacks == 1);
    CHECK(st.watch_list_adopted == 0);
    CHECK(st.requests["GET 422"] == 1);
  }
}

TEST_CASE("wire_ a streaming list without its end bookmark falls back "
          "after the timeout") {
  // As a server that ignores sendInitialEvents: the current state as
  // ADDED, then nothing.
  scripted_http_server srv{[](const std::string& path, int) -> std::string {
    if (has(path, "sendInitialEvents=true"))
      return scripted_http_server::watch(
        {R"({"type":"ADDED","object":{"metadata":{"name":"s1","namespace":"default","uid":"u","resourceVersion":"5"},"data":{"k":"djE="}}})"},
        true);
    if (!has(path, "watch=true"))
      return list_of("s1", 6);
    return scripted_http_server::watch({}, true);
  }};
  runtime rt;
  auto cl = streaming_cluster(rt, srv.url(), 200ms);
  {
    secret_manager mgr{rt, *cl, watching()};
    REQUIRE(mgr.register_pod_and_wait(
      pod_with_secrets("default", "p1", "uid-1", {"s1"}, {})));
    CHECK(value_of(mgr, "s1") == "v1");
    auto st = mgr.status("default", "s1");
    REQUIRE(st);
    CHECK(st->resource_version == "6"); // the list's, not the stream's
    // The abandoned stream is closed: only the watch is left open.
    CHECK(eventually([&] { return cl->stats().open_streams == 1; }));
    auto paths = srv.paths();
    REQUIRE(paths.size() == 3);
    CHECK(has(paths[0], "sendInitialEvents=true"));
    CHECK(has(paths[1], "limit=500&resourceVersion=0"));
    CHECK(has(paths[2], "resourceVersion=6&timeoutSeconds="));
    CHECK(cl->stats().watch_list_fallbacks == 1);
  }
}
