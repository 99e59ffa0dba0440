// A watch's own timers on the deterministic runtime's virtual clock: its
// bookmarks (periodic, and the one before timeoutSeconds ends), the end at
// timeoutSeconds, and sendInitialEvents (kube-apiserver-transcripts:
// watch/*-kubelet-watch*.json; kube-wire.md A.1 for the watch-list).
#include "podref/wire/detail/watch_hubs.hpp"

#include "podref/messages/actor_types.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/testing/deterministic_runtime.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/response_promise.hpp>
#include <caf/send.hpp>
#include <nlohmann/json.hpp>

using namespace podref;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

api_object config_map_of(const std::string& name) {
  auto x = std::make_shared<config_map>();
  x->metadata.ns = "ns1";
  x->metadata.name = name;
  x->data["k"] = "v";
  return api_object{config_map_ptr{std::move(x)}};
}

/// One watch through the bridge, as a connection opens it.
struct watch_fixture {
  testing::deterministic_runtime rt;
  api_server api{rt};
  wire::detail::watch_hubs hubs{rt.system(), 1};
  std::vector<std::string> lines;
  bool ended = false;
  std::shared_ptr<wire::detail::watch_session> session;

  void open(const std::string& target,
            wire::detail::bookmark_timing timing = {}) {
    wire::detail::api_call call;
    call.r = wire::route_request("GET", target);
    REQUIRE(call.r.kind == wire::route_kind::watch);
    call.bookmarks = timing;
    session = hubs.start(api.current_actor()(), std::move(call),
                         [this](std::optional<std::string> line) {
                           if (line)
                             lines.push_back(std::move(*line));
                           else
                             ended = true;
                         });
    rt.run_until_idle();
  }

  void create(const std::string& name) {
    REQUIRE(api.create(config_map_of(name)));
    rt.run_until_idle();
  }

  /// The lines so far as (type, name or resourceVersion), and forgets them.
  std::vector<std::string> take() {
    std::vector<std::string> out;
    for (const auto& line : lines) {
      REQUIRE(line.back() == '\n');
      auto ev = json::parse(line);
      const auto& meta = ev["object"]["metadata"];
      out.push_back(ev["type"].get<std::string>() + " "
                    + (meta.contains("name")
                         ? meta["name"].get<std::string>()
                         : meta.value("resourceVersion", std::string{})));
    }
    lines.clear();
    return out;
  }

  ~watch_fixture() {
    if (session)
      session->cancel();
    rt.run_until_idle();
  }
};

using events = std::vector<std::string>;

} // namespace

TEST_CASE_METHOD(watch_fixture,
                 "a bookmark comes before the deadline once the version "
                 "moved, and the watch ends at timeoutSeconds") {
  create("c1");
  open("/api/v1/namespaces/ns1/configmaps?allowWatchBookmarks=true&"
       "fieldSelector=metadata.name%3Dc1&resourceVersion=1&"
       "timeoutSeconds=10&watch=true");
  // Another object moves the version; the field selector hides it.
  create("c2");
  rt.advance(7900ms);
  CHECK(lines.empty());
  rt.advance(200ms);
  REQUIRE(lines.size() == 1);
  // The real server's bookmark, byte for byte.
  CHECK(lines[0]
        == R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"2","creationTimestamp":null}}})"
           "\n");
  lines.clear();
  rt.advance(1800ms);
  CHECK_FALSE(ended);
  rt.advance(200ms);
  CHECK(ended);
  CHECK(lines.empty());
}

TEST_CASE_METHOD(watch_fixture,
                 "an idle watch, or one without allowWatchBookmarks, gets no "
                 "bookmark") {
  create("c1");
  open("/api/v1/namespaces/ns1/configmaps?allowWatchBookmarks=true&"
       "resourceVersion=1&timeoutSeconds=6&watch=true");
  rt.advance(6s);
  CHECK(ended);
  CHECK(lines.empty());
  ended = false;
  open("/api/v1/namespaces/ns1/configmaps?fieldSelector=metadata.name%3Dc1&"
       "resourceVersion=1&timeoutSeconds=6&watch=true");
  create("c2");
  rt.advance(6s);
  CHECK(ended);
  CHECK(lines.empty());
}

TEST_CASE_METHOD(watch_fixture,
                 "periodic bookmarks come only when the version moved") {
  create("c1");
  open("/api/v1/namespaces/ns1/configmaps?allowWatchBookmarks=true&"
       "fieldSelector=metadata.name%3Dc1&resourceVersion=1&watch=true",
       {3s, 2s});
  create("c2");
  rt.advance(3s);
  CHECK(take() == events{"BOOKMARK 2"});
  rt.advance(3s);
  CHECK(take().empty());
  create("c3");
  rt.advance(3s);
  CHECK(take() == events{"BOOKMARK 3"});
  // timeoutSeconds=0 is no deadline, as for the real server.
  CHECK_FALSE(ended);
}

TEST_CASE_METHOD(watch_fixture,
                 "sendInitialEvents sends the state, then the marked "
                 "bookmark, then live events") {
  create("c1");
  create("c2");
  open("/api/v1/namespaces/ns1/configmaps?allowWatchBookmarks=true&"
       "resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true");
  REQUIRE(lines.size() == 3);
  CHECK(json::parse(lines[2])
        == json::parse(
          R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"2","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}})"));
  CHECK(take() == events{"ADDED c1", "ADDED c2", "BOOKMARK 2"});
  create("c3");
  CHECK(take() == events{"ADDED c3"});
}

TEST_CASE_METHOD(watch_fixture,
                 "sendInitialEvents without allowWatchBookmarks never marks "
                 "the end") {
  create("c1");
  open("/api/v1/namespaces/ns1/configmaps?resourceVersion=0&"
       "resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true");
  create("c2");
  CHECK(take() == events{"ADDED c1", "ADDED c2"});
}

TEST_CASE_METHOD(watch_fixture,
                 "sendInitialEvents=false from \"\" starts now, with no "
                 "initial events") {
  create("c1");
  open("/api/v1/namespaces/ns1/configmaps?allowWatchBookmarks=true&"
       "resourceVersionMatch=NotOlderThan&sendInitialEvents=false&"
       "watch=true");
  CHECK(lines.empty());
  create("c2");
  CHECK(take() == events{"ADDED c2"});
}

TEST_CASE_METHOD(watch_fixture,
                 "sendInitialEvents from a version ahead of the server is an "
                 "ERROR event") {
  create("c1");
  open("/api/v1/namespaces/ns1/configmaps?allowWatchBookmarks=true&"
       "resourceVersion=99&resourceVersionMatch=NotOlderThan&"
       "sendInitialEvents=true&watch=true");
  REQUIRE(lines.size() == 1);
  auto ev = json::parse(lines[0]);
  CHECK(ev["type"] == "ERROR");
  CHECK(ev["object"]["code"] == 504);
  CHECK(ev["object"]["message"]
        == "Timeout: Too large resource version: 99, current: 1");
  CHECK(ended);
}

TEST_CASE("watches on one hub keep their own events and deadlines; a watch "
          "cancelled before the server answered is not left open there") {
  testing::deterministic_runtime rt;
  api_server api{rt};
  wire::detail::watch_hubs hubs{rt.system(), 1};
  struct seen {
    std::vector<std::string> lines;
    bool ended = false;
  };
  auto open = [&](const std::string& target, seen& s) {
    wire::detail::api_call call;
    call.r = wire::route_request("GET", target);
    return hubs.start(api.current_actor()(), std::move(call),
                      [&s](std::optional<std::string> line) {
                        if (line)
                          s.lines.push_back(std::move(*line));
                        else
                          s.ended = true;
                      });
  };
  seen a, b, c;
  auto wa = open("/api/v1/namespaces/ns1/configmaps?fieldSelector="
                 "metadata.name%3Dc1&timeoutSeconds=6&watch=true",
                 a);
  auto wb = open("/api/v1/namespaces/ns1/configmaps?fieldSelector="
                 "metadata.name%3Dc2&timeoutSeconds=10&watch=true",
                 b);
  rt.run_until_idle();
  REQUIRE(api.create(config_map_of("c1")));
  REQUIRE(api.create(config_map_of("c2")));
  rt.run_until_idle();
  REQUIRE(a.lines.size() == 1);
  REQUIRE(b.lines.size() == 1);
  CHECK(json::parse(a.lines[0])["object"]["metadata"]["name"] == "c1");
  CHECK(json::parse(b.lines[0])["object"]["metadata"]["name"] == "c2");
  CHECK(api.open_watches().value() == 2);
  rt.advance(6s);
  CHECK(a.ended);
  CHECK_FALSE(b.ended);
  CHECK(api.open_watches().value() == 1);
  rt.advance(4s);
  CHECK(b.ended);
  auto wc = open("/api/v1/namespaces/ns1/configmaps?watch=true", c);
  wc->cancel(); // before the hub asked the server
  rt.run_until_idle();
  REQUIRE(api.create(config_map_of("c3")));
  rt.run_until_idle();
  CHECK(c.lines.empty());
  CHECK_FALSE(c.ended);
  CHECK(api.open_watches().value() == 0);
}

TEST_CASE("a watch whose deadline passed before its server answered is "
          "cancelled there when the answer comes") {
  testing::deterministic_runtime rt;
  wire::detail::watch_hubs hubs{rt.system(), 1};
  // A server that answers a watch's open only when told to (a busy one),
  // and records the watches cancelled at it.
  struct server_side {
    caf::response_promise open;
    bool asked = false;
    std::vector<watch_id> cancelled;
  };
  auto side = std::make_shared<server_side>();
  auto server = rt.system().spawn(
    [side](caf::event_based_actor* self) -> caf::behavior {
      return {
        [self, side](watch_atom, resource, const std::string&,
                     const std::string&, const std::string&,
                     const watcher_actor&) {
          side->asked = true;
          side->open = self->make_response_promise();
          return side->open;
        },
        [side](caf::ok_atom) { side->open.deliver(watch_id{7}); },
        [side](cancel_atom, watch_id id) { side->cancelled.push_back(id); },
      };
    });
  bool ended = false;
  std::vector<std::string> lines;
  wire::detail::api_call call;
  call.r = wire::route_request(
    "GET", "/api/v1/namespaces/ns1/configmaps?fieldSelector=metadata.name%3D"
           "c1&resourceVersion=1&timeoutSeconds=2&watch=true");
  auto w = hubs.start(server, std::move(call),
                      [&](std::optional<std::string> line) {
                        if (line)
                          lines.push_back(std::move(*line));
                        else
                          ended = true;
                      });
  rt.run_until_idle();
  REQUIRE(side->asked);
  rt.advance(2s); // the deadline, before the server answered
  CHECK(ended);
  CHECK(lines.empty());
  CHECK(side->cancelled.empty());
  caf::anon_send(server, caf::ok_atom::value);
  rt.run_until_idle();
  CHECK(side->cancelled == std::vector<watch_id>{7});
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  rt.run_until_idle();
}
