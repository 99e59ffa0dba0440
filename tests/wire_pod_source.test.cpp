// The pod source (wire/pod_source.hpp) against a scripted HTTP/1.1 server:
// the kubelet's requests, add / update / delete, relist on 410 (from the
// last version, then from ""), an informer's Replace on relist, rejected
// pods, backoff after errors.
#include "podref/wire/pod_source.hpp"

#include "podref/runtime/runtime.hpp"
#include "podref/wire/http_client.hpp"

#include "support/scripted_http_server.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace podref;
using namespace podref::wire;
using podref::test::scripted_http_server;

namespace {

std::string pod_json(const std::string& name, const std::string& uid,
                     const std::string& rv, const std::string& extra_meta = "",
                     const std::string& phase = "Pending") {
  return R"({"metadata":{"name":")" + name
         + R"(","namespace":"ns1","uid":")" + uid + R"(","resourceVersion":")"
         + rv + "\"" + extra_meta
         + R"(},"spec":{"nodeName":"node1","containers":[{"name":"c","image":"i",)"
           R"("env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"s1","key":"k"}}}]}]},)"
           R"("status":{"phase":")"
         + phase + R"("}})";
}

std::string list_json(const std::string& rv,
                      const std::vector<std::string>& items) {
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")"
                    + rv + R"("},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i ? "," : "") + items[i];
  return out + "]}";
}

std::string event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}";
}

const std::string status_410
  = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
    R"x("message":"too old resource version: 12 (30)","reason":"Expired","code":410})x";

/// Collects events; waits for a count with a bound.
struct recorder {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::string> seen;

  void operator()(const pod_event& ev) {
    std::string line;
    switch (ev.kind) {
      case pod_event_kind::added:
        line = "added " + ev.pod.pod->metadata.name;
        break;
      case pod_event_kind::updated:
        line = "updated " + ev.pod.pod->metadata.name
               + (ev.pod.is_deleting() ? " deleting" : "");
        break;
      case pod_event_kind::deleted:
        line = "deleted " + ev.pod.pod->metadata.name;
        break;
      case pod_event_kind::rejected:
        line = "rejected " + ev.rejected.name + " " + ev.rejected.path;
        break;
      case pod_event_kind::synced:
        line = "synced";
        break;
      case pod_event_kind::failed:
        line = "failed";
        break;
    }
    std::lock_guard<std::mutex> guard{mtx};
    seen.push_back(std::move(line));
    cv.notify_all();
  }

  std::vector<std::string> wait_for(std::size_t n) {
    std::unique_lock<std::mutex> guard{mtx};
    cv.wait_for(guard, std::chrono::seconds(15),
                [&] { return seen.size() >= n; });
    return seen;
  }
};

client_config plain(const std::string& url) {
  client_config cfg;
  cfg.server = url;
  cfg.origin = "test";
  return cfg;
}

pod_source_options options() {
  pod_source_options o;
  o.node_name = "node1";
  o.timing.backoff_initial = std::chrono::milliseconds(10);
  o.timing.backoff_cap = std::chrono::milliseconds(50);
  return o;
}

} // namespace

TEST_CASE("the pod source lists and watches as the kubelet, relists on 410") {
  scripted_http_server srv{[](const std::string& path, int n) -> std::string {
    bool watch = path.find("watch=true") != std::string::npos;
    if (!watch && n == 1)
      return scripted_http_server::reply(
        200, list_json("10", {pod_json("p1", "u1", "8"),
                              pod_json("p2", "u2", "9")}));
    if (watch && n == 1)
      return scripted_http_server::watch(
        {event("MODIFIED",
               pod_json("p1", "u1", "11",
                        R"(,"deletionTimestamp":"2026-12-02T01:57:15Z")")),
         event("DELETED", pod_json("p2", "u2", "12")),
         event("ERROR", status_410)},
        true);
    if (!watch && n == 2) // from the last version: gone too
      return scripted_http_server::reply(410, status_410);
    if (!watch && n == 3) // a consistent read: p1 gone, p3 new
      return scripted_http_server::reply(
        200, list_json("30", {pod_json("p3", "u3", "25")}));
    return scripted_http_server::watch({}, true);
  }};
  runtime rt;
  recorder rec;
  {
    auto client = std::shared_ptr<http_client>{
      http_client::start(plain(srv.url())).value()};
    auto src = pod_source::start(rt.system(), client, options(),
                                 [&rec](pod_event ev) { rec(ev); });
    auto seen = rec.wait_for(10);
    CHECK(seen
          == std::vector<std::string>{"added p1", "added p2", "synced",
                                      "updated p1 deleting", "deleted p2",
                                      "failed", "failed", "added p3",
                                      "deleted p1", "synced"});
    CHECK(src->counters().relists_expired == 1);
    CHECK(src->counters().pods == 1);
    // The watch that follows the last list.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (srv.paths().size() < 5 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto paths = srv.paths();
  REQUIRE(paths.size() >= 5);
  CHECK(paths[0]
        == "GET /api/v1/pods?fieldSelector=spec.nodeName%3Dnode1&limit=500"
           "&resourceVersion=0");
  CHECK(paths[1].rfind("GET /api/v1/pods?allowWatchBookmarks=true&fieldSelector="
                       "spec.nodeName%3Dnode1&resourceVersion=10&timeoutSeconds=",
                       0)
        == 0);
  CHECK(paths[1].find("&watch=true") != std::string::npos);
  CHECK(paths[2]
        == "GET /api/v1/pods?fieldSelector=spec.nodeName%3Dnode1"
           "&resourceVersion=12");
  CHECK(paths[3]
        == "GET /api/v1/pods?fieldSelector=spec.nodeName%3Dnode1&limit=500");
  CHECK(paths[4].find("resourceVersion=30&") != std::string::npos);
}

TEST_CASE("the pod source relists at once on a watch's 504 Too large "
          "resource version, as on 410") {
  const std::string too_large
    = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"("message":"Too large resource version: 11, current: 10",)"
      R"("reason":"Timeout","details":{"causes":[{"reason":)"
      R"("ResourceVersionTooLarge","message":"Too large resource version"}],)"
      R"("retryAfterSeconds":1},"code":504})";
  scripted_http_server srv{
    [&](const std::string& path, int n) -> std::string {
      bool watch = path.find("watch=true") != std::string::npos;
      if (!watch && n == 1)
        return scripted_http_server::reply(
          200, list_json("10", {pod_json("p1", "u1", "8")}));
      if (watch && n == 1)
        return scripted_http_server::watch({event("ERROR", too_large)}, true);
      if (!watch && n == 2)
        return scripted_http_server::reply(
          200, list_json("10", {pod_json("p1", "u1", "8")}));
      return scripted_http_server::watch({}, true);
    }};
  runtime rt;
  recorder rec;
  {
    auto client = std::shared_ptr<http_client>{
      http_client::start(plain(srv.url())).value()};
    // A backoff no test outlasts: the relist must not wait for it.
    auto o = options();
    o.timing.backoff_initial = std::chrono::hours(1);
    o.timing.backoff_cap = std::chrono::hours(1);
    auto src = pod_source::start(rt.system(), client, o,
                                 [&rec](pod_event ev) { rec(ev); });
    auto seen = rec.wait_for(4);
    CHECK(seen
          == std::vector<std::string>{"added p1", "synced", "failed",
                                      "synced"});
  }
  auto paths = srv.paths();
  REQUIRE(paths.size() >= 3);
  CHECK(paths[2]
        == "GET /api/v1/pods?fieldSelector=spec.nodeName%3Dnode1"
           "&resourceVersion=10");
}

TEST_CASE("the pod source rejects a bad pod, backs off after errors") {
  scripted_http_server srv{[](const std::string& path, int n) -> std::string {
    bool watch = path.find("watch=true") != std::string::npos;
    if (!watch && n == 1)
      return scripted_http_server::reply(
        403, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
             R"("message":"pods is forbidden: User \"nobody\" cannot list resource \"pods\"",)"
             R"("reason":"Forbidden","code":403})");
    if (!watch && n == 2)
      return scripted_http_server::reply(
        200, list_json("5", {R"({"metadata":{"name":"bad","namespace":"ns1","uid":"ub"},)"
                             R"("spec":{"volumes":[{"name":"v","secret":{}}]}})",
                             pod_json("ok", "u1", "4")}));
    return scripted_http_server::watch({}, true);
  }};
  runtime rt;
  recorder rec;
  {
    auto client = std::shared_ptr<http_client>{
      http_client::start(plain(srv.url())).value()};
    auto src = pod_source::start(rt.system(), client, options(),
                                 [&rec](pod_event ev) { rec(ev); });
    auto seen = rec.wait_for(4);
    CHECK(seen
          == std::vector<std::string>{"failed",
                                      "rejected bad spec.volumes[0].secret."
                                      "secretName",
                                      "added ok", "synced"});
    CHECK(src->counters().rejected == 1);
    CHECK(src->counters().failures == 1);
  }
  // After the 403: the same list again (from "0", nothing seen yet).
  auto paths = srv.paths();
  REQUIRE(paths.size() >= 2);
  CHECK(paths[0] == paths[1]);
}
