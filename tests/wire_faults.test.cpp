// The wire source against a scripted HTTP/1.1 server (support/scripted_
// http_server.hpp) for the faults tests/wire_client.test.cpp does not
// cover: a 504 "too large resource version" on a list and as a watch's
// ERROR event, an HTTP 410 on a list, 500s on lists and watches, an event
// split across chunks and reads. After each: the object reads as the
// server's latest version, every request is the one the kubelet's
// reflector sends, and one watch stream is left open (none leaked; none
// once the manager is gone).
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "support/pod_builders.hpp"
#include "support/scripted_http_server.hpp"
#include "support/wire_steps.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace podref;
using podref::test::eventually;
using podref::test::scripted_http_server;
using podref::test::value_of;
using podref::test::watching;

namespace {

const std::string base = "GET /api/v1/namespaces/default/secrets?";
const std::string first_list
  = base + "fieldSelector=metadata.name%3Ds1&limit=500&resourceVersion=0";
const std::string relist = base + "fieldSelector=metadata.name%3Ds1&limit=500";

std::string secret(int rv, const std::string& b64) {
  return R"({"metadata":{"name":"s1","namespace":"default","uid":"u1","resourceVersion":")"
         + std::to_string(rv) + R"("},"data":{"k":")" + b64
         + R"("},"type":"Opaque"})";
}

std::string list_at(int rv, const std::string& b64) {
  return scripted_http_server::reply(
    200, R"({"kind":"SecretList","apiVersion":"v1","metadata":{"resourceVersion":")"
           + std::to_string(rv) + R"("},"items":[)" + secret(rv, b64) + "]}");
}

std::string event(const char* type, int rv, const std::string& b64) {
  return std::string{R"({"type":")"} + type + R"(","object":)"
         + secret(rv, b64) + "}";
}

bool is_watch(const std::string& path) {
  return path.find("watch=true") != std::string::npos;
}

/// The watch request's resourceVersion, "" for a list.
std::string watch_rv(const std::string& path) {
  if (!is_watch(path))
    return "";
  auto at = path.find("&resourceVersion=") + 17;
  return path.substr(at, path.find('&', at) - at);
}

// The recorded real server's 504 for a version ahead of it.
const std::string too_large
  = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 99999999, current: 229","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504})";

/// A cluster over `srv` and a Watch manager of one pod referencing s1;
/// runs `check` while both live, then checks that no stream is left.
template <class Check>
void with_manager(scripted_http_server& srv, Check check) {
  runtime rt;
  wire::client_config cfg;
  cfg.server = srv.url();
  cfg.origin = "test";
  auto connected = cluster::connect(rt, cfg);
  REQUIRE(connected);
  auto cl = std::move(connected).value();
  {
    secret_manager mgr{rt, *cl, watching()};
    REQUIRE(mgr.register_pod(
      test::pod_with_secrets("default", "p1", "uid-1", {"s1"}, {})));
    check(mgr, *cl);
    // One watch open, none leaked by the fault.
    CHECK(eventually([&] { return cl->stats().open_streams == 1; }));
  }
  CHECK(eventually([&] { return cl->stats().open_streams == 0; }));
}

} // namespace

TEST_CASE("wire_ a list answered 504 too large resource version or 410 "
          "relists without a version") {
  struct case_t {
    const char* desc;
    int status;
    std::string body;
  };
  auto c = GENERATE(
    case_t{"504 too large resource version", 504, too_large},
    case_t{"410 expired", 410,
           R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The resourceVersion for the provided list is too old.","reason":"Expired","code":410})"});
  INFO(c.desc);
  scripted_http_server srv{[&](const std::string& path, int n) -> std::string {
    if (!is_watch(path))
      return n == 1 ? scripted_http_server::reply(c.status, c.body)
                    : list_at(7, "djI=");
    return scripted_http_server::watch({}, true);
  }};
  with_manager(srv, [&](secret_manager& mgr, cluster& cl) {
    CHECK(eventually([&] { return value_of(mgr, "s1") == "v2"; }));
    CHECK(eventually([&] { return srv.paths().size() == 3; }));
    auto paths = srv.paths();
    REQUIRE(paths.size() == 3);
    CHECK(paths[0] == first_list);
    CHECK(paths[1] == relist);
    CHECK(watch_rv(paths[2]) == "7");
    CHECK(cl.stats().requests["GET " + std::to_string(c.status)] == 1);
  });
}

TEST_CASE("wire_ a watch's ERROR 504 too large resource version relists") {
  scripted_http_server srv{[](const std::string& path, int n) -> std::string {
    if (!is_watch(path))
      return n == 1 ? list_at(5, "djE=") : list_at(9, "djM=");
    if (n == 1)
      return scripted_http_server::watch(
        {R"({"type":"ERROR","object":)" + too_large + "}"}, false);
    return scripted_http_server::watch({}, true);
  }};
  with_manager(srv, [&](secret_manager& mgr, cluster&) {
    CHECK(eventually([&] { return value_of(mgr, "s1") == "v3"; }));
    CHECK(eventually([&] { return srv.paths().size() == 4; }));
    auto paths = srv.paths();
    REQUIRE(paths.size() == 4);
    CHECK(watch_rv(paths[1]) == "5");
    CHECK(paths[2] == relist);
    CHECK(watch_rv(paths[3]) == "9");
  });
}

TEST_CASE("wire_ 500s on lists and on a watch are retried with backoff and "
          "lose no update") {
  const std::string internal
    = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: etcdserver: leader changed","reason":"InternalError","code":500})";
  scripted_http_server srv{[&](const std::string& path, int n) -> std::string {
    if (!is_watch(path))
      return n <= 2 ? scripted_http_server::reply(500, internal)
                    : list_at(5, "djE=");
    if (n == 1)
      return scripted_http_server::reply(500, internal);
    if (n == 2)
      return scripted_http_server::watch({event("MODIFIED", 6, "djI=")},
                                         false);
    return scripted_http_server::watch({event("MODIFIED", 7, "djM=")}, true);
  }};
  with_manager(srv, [&](secret_manager& mgr, cluster& cl) {
    CHECK(eventually([&] { return value_of(mgr, "s1") == "v3"; }));
    auto paths = srv.paths();
    REQUIRE(paths.size() == 6);
    CHECK(paths[2] == first_list);
    // The failed watch is sent again from the list's version; the stream's
    // end re-watches from the event's.
    CHECK(watch_rv(paths[3]) == "5");
    CHECK(watch_rv(paths[4]) == "5");
    CHECK(watch_rv(paths[5]) == "6");
    CHECK(cl.stats().requests["GET 500"] == 3);
    auto st = mgr.status("default", "s1");
    REQUIRE(st);
    CHECK_FALSE(st->failure);
  });
}

TEST_CASE("wire_ an event split across chunks and reads is applied once, "
          "whole") {
  // The first event's line is cut in the middle of its object, in two
  // chunks written 50 ms apart; the second chunk also carries the next
  // event and half of a third, whose rest comes in a third chunk.
  auto e2 = event("MODIFIED", 6, "djI=") + "\n";
  auto e3 = event("MODIFIED", 7, "djM=") + "\n";
  auto e4 = event("MODIFIED", 8, "djQ=") + "\n";
  scripted_http_server srv{[&](const std::string& path, int) -> std::string {
    if (!is_watch(path))
      return list_at(5, "djE=");
    using s = scripted_http_server;
    return std::string{"HOLD:"}
           + "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
             "Transfer-Encoding: chunked\r\n\r\n"
           + s::chunk(e2.substr(0, 40)) + s::pause
           + s::chunk(e2.substr(40) + e3 + e4.substr(0, 10))
           + s::chunk(e4.substr(10));
  }};
  with_manager(srv, [&](secret_manager& mgr, cluster& cl) {
    CHECK(eventually([&] { return value_of(mgr, "s1") == "v4"; }));
    CHECK(srv.paths().size() == 2);
    CHECK(cl.stats().bad_streams == 0);
    auto st = mgr.status("default", "s1");
    REQUIRE(st);
    CHECK(st->resource_version == "8");
  });
}
