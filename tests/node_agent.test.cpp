// The node agent (node/node_agent.hpp) over a scripted API server: the
// node's pods are registered, their missing objects and keys reported with
// the kubelet's wording (optional ones not), a deleting pod unregistered.
#include "podref/node/node_agent.hpp"

#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"

#include "support/scripted_http_server.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

using namespace podref;
using podref::test::scripted_http_server;

namespace {

const std::string pod_p1 = R"({"metadata":{"name":"p1","namespace":"ns1","uid":"u1","resourceVersion":"8"},
 "spec":{"nodeName":"node1","containers":[{"name":"c","image":"i",
   "env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"s1","key":"k"}}},
          {"name":"B","valueFrom":{"secretKeyRef":{"name":"s1","key":"nokey"}}},
          {"name":"C","valueFrom":{"secretKeyRef":{"name":"gone","key":"k","optional":true}}},
          {"name":"D","valueFrom":{"configMapKeyRef":{"name":"cm-missing","key":"k"}}}]}],
  "volumes":[{"name":"v","secret":{"secretName":"s1","items":[{"key":"absent","path":"p"}]}}]},
 "status":{"phase":"Running"}})";

std::string one_line(std::string s) {
  std::string out;
  for (char c : s)
    if (c != '\n')
      out.push_back(c);
  return out;
}

struct events {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<node_agent_event> seen;

  void add(const node_agent_event& ev) {
    std::lock_guard<std::mutex> guard{mtx};
    seen.push_back(ev);
    cv.notify_all();
  }

  /// The first event of `what` (waits up to 20 s); nullopt when none came.
  std::optional<node_agent_event> wait(node_agent_event::kind what,
                                       std::size_t nth = 0) {
    std::unique_lock<std::mutex> guard{mtx};
    std::optional<node_agent_event> out;
    cv.wait_for(guard, std::chrono::seconds(20), [&] {
      std::size_t n = 0;
      for (const auto& ev : seen)
        if (ev.what == what && n++ == nth) {
          out = ev;
          return true;
        }
      return false;
    });
    return out;
  }
};

} // namespace

TEST_CASE("the node agent registers the node's pods and reports what is "
          "missing as the kubelet does") {
  // The server's n counts every watch, the objects' too: count the pod
  // watches here, whatever order the pod source and the reflectors ask in.
  auto pod_watches = std::make_shared<std::atomic<int>>(0);
  scripted_http_server srv{[pod_watches](const std::string& path,
                                         int) -> std::string {
    if (path == "/api/v1/nodes")
      return scripted_http_server::reply(
        409, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
             R"("message":"nodes \"node1\" already exists","reason":"AlreadyExists","code":409})");
    if (path == "/api/v1/namespaces/ns1/pods/p1")
      return scripted_http_server::reply(200, pod_p1);
    bool watch = path.find("watch=true") != std::string::npos;
    if (path.rfind("/api/v1/pods?", 0) == 0) {
      if (!watch)
        return scripted_http_server::reply(
          200, R"({"kind":"PodList","metadata":{"resourceVersion":"10"},"items":[)"
                 + one_line(pod_p1) + "]}");
      if (++*pod_watches == 1) // p1 is being deleted
        return scripted_http_server::watch(
          {R"({"type":"MODIFIED","object":)"
           + one_line(pod_p1).replace(one_line(pod_p1).find("\"resourceVersion\":\"8\""),
                                      21,
                                      R"("resourceVersion":"11","deletionTimestamp":"2026-12-02T01:57:15Z")")
           + "}"},
          true);
      return scripted_http_server::watch({}, true);
    }
    if (watch)
      return scripted_http_server::watch({}, true);
    if (path.find("/secrets") != std::string::npos
        && path.find("metadata.name%3Ds1") != std::string::npos)
      return scripted_http_server::reply(
        200, R"({"kind":"SecretList","metadata":{"resourceVersion":"5"},"items":[)"
             R"({"metadata":{"name":"s1","namespace":"ns1","uid":"s","resourceVersion":"5"},)"
             R"("data":{"k":"djE="}}]})");
    return scripted_http_server::reply(
      200, R"({"kind":"List","metadata":{"resourceVersion":"5"},"items":[]})");
  }};
  runtime rt;
  wire::client_config cfg;
  cfg.server = srv.url();
  cfg.origin = "test";
  auto c = cluster::connect(rt, cfg);
  REQUIRE(c);
  events seen;
  {
    node_agent_options opts;
    opts.node_name = "node1";
    opts.managers.sync_timeout = std::chrono::seconds(10);
    opts.recheck = std::chrono::hours(1);
    opts.confirm_deletes = true;
    opts.register_node = true;
    node_agent agent{rt, **c, opts,
                     [&seen](const node_agent_event& ev) { seen.add(ev); }};
    auto registered = seen.wait(node_agent_event::kind::registered);
    REQUIRE(registered);
    CHECK(registered->name == "p1");
    auto checked = seen.wait(node_agent_event::kind::checked);
    REQUIRE(checked);
    CHECK(checked->problems
          == std::vector<std::string>{
            "MountVolume.SetUp failed for volume \"v\" : references "
            "non-existent secret key: absent",
            "container \"c\": couldn't find key nokey in Secret ns1/s1",
            "container \"c\": configmap \"cm-missing\" not found"});
    auto gone = seen.wait(node_agent_event::kind::unregistered);
    REQUIRE(gone);
    CHECK(gone->name == "p1");
    auto confirmed = seen.wait(node_agent_event::kind::deletion_confirmed);
    REQUIRE(confirmed);
    CHECK(confirmed->problems.empty());
    auto node = seen.wait(node_agent_event::kind::node_registered);
    REQUIRE(node);
    CHECK(node->problems.empty());
    auto st = agent.stats();
    CHECK(st.deletes_sent == 1);
    CHECK(st.registered_pods == 0);
    CHECK(st.synced);
    CHECK(st.reads == 3);
    CHECK(st.reads_failed == 2);
  }
  auto paths = srv.paths();
  CHECK(std::count(paths.begin(), paths.end(), "POST /api/v1/nodes") == 1);
  auto del = std::find(paths.begin(), paths.end(),
                       "DELETE /api/v1/namespaces/ns1/pods/p1");
  REQUIRE(del != paths.end());
  CHECK(std::count(del, paths.end(), *del) == 1);
  CHECK(srv.bodies()[static_cast<std::size_t>(del - paths.begin())]
        == R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,)"
           R"("preconditions":{"uid":"u1"}})");
}
