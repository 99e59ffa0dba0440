// The engine's scenario catalogue (tests/manager.test.cpp, tests/kit/,
// tests/faults.test.cpp) through the wire source: managers over a cluster
// against `podref apiserver`'s front in process on loopback, each scenario
// over HTTP/1.1, h2c, and TLS (h2 by ALPN) with a token and with a client
// certificate (support/wire_front.hpp), the API actions counted exactly on
// the server's side. Real time: the scenarios that need the recycling pass
// run a manager actor whose max_idle is 600 ms (the facade keeps
// upstream's one-minute floor).
#include "podref/actors/manager.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/read_side/read_side.hpp"
#include "support/pod_builders.hpp"
#include "support/wire_front.hpp"
#include "support/wire_steps.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/scoped_actor.hpp>

using namespace podref;
using namespace std::chrono_literals;
using podref::test::actions_of;
using podref::test::eventually;
using podref::test::make_secret;
using podref::test::pod_with_secrets;
using podref::test::value_of;
using podref::test::watching;
using podref::test::wire_front;
using podref::test::wire_transport;

namespace {

wire_transport any_transport() {
  return GENERATE(wire_transport::http1, wire_transport::h2c,
                  wire_transport::tls_token, wire_transport::tls_cert);
}

/// The server's open watches of default/`name`.
std::size_t server_watches(api_server& api, const std::string& name) {
  auto n = api.open_watches(resource::secrets, "default", name);
  REQUIRE(n);
  return *n;
}

/// One GET /version over the cluster's client, waited for (bounded).
void one_request(cluster& cl) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  wire::http_client::handlers h;
  h.on_done = [done](wire::http_response) { *done = true; };
  cl.client()->get("/version", std::move(h));
  REQUIRE(eventually([&] { return done->load(); }));
}

/// Whether the server's watches of `name` end once the client ended its
/// stream: at once over HTTP/1.1 (the connection closes); over HTTP/2 with
/// the connection's next writes, as libcurl 7.88 keeps a cancelled
/// stream's RST_STREAM until the connection writes again (docs/client.md).
/// A request can land on another connection of the client: a few are sent.
bool server_watch_ends(wire_front& f, cluster& cl, const std::string& name) {
  auto ended = [&] { return server_watches(f.api, name) == 0; };
  if (f.transport == wire_transport::http1)
    return eventually(ended);
  for (int i = 0; i < 5; ++i) {
    one_request(cl);
    if (eventually(ended, std::chrono::seconds(2)))
      return true;
  }
  return false;
}

std::vector<std::string> list_rvs(api_server& api, const std::string& name) {
  std::vector<std::string> out;
  auto log = api.actions();
  REQUIRE(log);
  for (const auto& a : *log)
    if (a.name == name && a.verb == source_verb::list)
      out.push_back(a.rv);
  return out;
}

/// A Secret manager actor over a cluster with a short idle limit and
/// recycling period (real time), driven by messages.
struct idle_manager {
  caf::actor_system& sys;
  detail::read_side_ptr rs = std::make_shared<detail::read_side>();
  manager_actor mgr;

  idle_manager(runtime& rt, cluster& cl) : sys(rt.system()) {
    manager_config cfg;
    cfg.res = resource::secrets;
    cfg.source = caf::actor_cast<object_source_actor>(cl.actor());
    cfg.read_side = rs;
    cfg.sync_timeout = 10s;
    cfg.backoff_initial = 20ms;
    cfg.max_idle = 600ms;
    cfg.recycle_period = 100ms;
    mgr = sys.spawn(manager, std::move(cfg));
  }

  ~idle_manager() {
    caf::scoped_actor self{sys};
    self->monitor(mgr);
    self->send_exit(mgr, caf::exit_reason::user_shutdown);
    self->receive([](caf::down_msg&) {});
  }

  void reg(const pod& p) {
    caf::anon_send(mgr, reg_pod_atom::value,
                   make_registration(p, resource::secrets));
  }

  /// Key "k" of default/`name` through the manager, or the error.
  std::string read(const std::string& name) {
    caf::scoped_actor self{sys};
    std::string out;
    self->request(mgr, 20s, get_obj_atom::value, std::string{"default"}, name)
      .receive(
        [&](api_object& x) {
          auto s = x.as_secret();
          out = s && s->data.count("k") ? s->data.at("k") : "";
        },
        [&](caf::error& e) { out = "error: " + caf::to_string(e); });
    return out;
  }
};

/// Secret default/s ("v1") watched by one pod's Watch manager over a
/// cluster of transport `t`.
struct watched_secret {
  wire_front f;
  std::unique_ptr<cluster> cl;
  std::optional<secret_manager> mgr;

  explicit watched_secret(wire_transport t) : f(t) {
    REQUIRE(f.api.create(make_secret("default", "s", {{"k", "v1"}})));
    cl = f.connect();
    mgr.emplace(f.rt, *cl, watching());
    REQUIRE(mgr->register_pod_and_wait(
      pod_with_secrets("default", "p", "uid-1", {"s"}, {})));
  }

  ~watched_secret() {
    mgr.reset(); // before the cluster
  }
};

} // namespace

TEST_CASE("wire scenarios: re-registering a pod starts and stops only the "
          "watches of the names that changed") {
  auto t = any_transport();
  INFO(test::name_of(t));
  wire_front f{t};
  for (const char* n : {"a", "b", "c"})
    REQUIRE(f.api.create(make_secret("default", n, {{"k", "v1"}})));
  auto cl = f.connect();
  {
    secret_manager mgr{f.rt, *cl, watching()};
    REQUIRE(mgr.register_pod_and_wait(
      pod_with_secrets("default", "p", "uid-1", {"a", "b"}, {})));
    CHECK(value_of(mgr, "a") == "v1");
    CHECK(value_of(mgr, "b") == "v1");
    // Both watches at the server before a's is stopped: else a's watch may
    // never be sent, and its count below would be 0 (seen under load).
    REQUIRE(eventually([&] {
      return server_watches(f.api, "a") == 1
             && server_watches(f.api, "b") == 1;
    }));
    REQUIRE(mgr.register_pod_and_wait(
      pod_with_secrets("default", "p", "uid-1", {"b", "c"}, {})));
    CHECK(value_of(mgr, "c") == "v1");
    CHECK(server_watch_ends(f, *cl, "a"));
    CHECK(eventually([&] { return server_watches(f.api, "c") == 1; }));
    REQUIRE(f.api.update(make_secret("default", "b", {{"k", "v2"}})));
    REQUIRE(f.api.update(make_secret("default", "c", {{"k", "v2"}})));
    CHECK(eventually([&] {
      return value_of(mgr, "b") == "v2" && value_of(mgr, "c") == "v2";
    }));
    // One list and one watch per name; b's watch went on untouched.
    for (const char* n : {"a", "b", "c"}) {
      INFO(n);
      auto c = actions_of(f.api, n);
      CHECK(c.lists == 1);
      CHECK(c.watches == 1);
      CHECK(c.gets == 0);
    }
    CHECK(eventually([&] { return cl->stats().open_streams == 2; }));
  }
  CHECK(eventually([&] { return cl->stats().open_streams == 0; }));
  CHECK(server_watch_ends(f, *cl, "b"));
}

TEST_CASE("wire scenarios: a watch nobody reads is stopped and the next read "
          "restarts it") {
  auto t = any_transport();
  INFO(test::name_of(t));
  wire_front f{t};
  REQUIRE(f.api.create(make_secret("default", "s", {{"k", "v1"}})));
  auto cl = f.connect();
  {
    idle_manager m{f.rt, *cl};
    m.reg(pod_with_secrets("default", "p", "uid-1", {"s"}, {}));
    CHECK(m.read("s") == "v1");
    REQUIRE(eventually([&] { return server_watches(f.api, "s") == 1; }));
    // Unread past max_idle: the recycling pass stops the watch.
    CHECK(eventually([&] { return cl->stats().open_streams == 0; }));
    CHECK(server_watch_ends(f, *cl, "s"));
    auto idle = actions_of(f.api, "s");
    CHECK(idle.lists == 1);
    CHECK(idle.watches == 1);
    // The read restarts it: one more list and watch, and it follows again.
    CHECK(m.read("s") == "v1");
    REQUIRE(f.api.update(make_secret("default", "s", {{"k", "v2"}})));
    CHECK(eventually([&] { return m.read("s") == "v2"; }));
    auto again = actions_of(f.api, "s");
    CHECK(again.lists == 2);
    CHECK(again.watches == 2);
    auto total = f.api.open_watches();
    REQUIRE(total);
    CHECK(*total == 1);
    CHECK(m.rs->counters.reflectors_started.load() == 1);
  }
  CHECK(eventually([&] { return cl->stats().open_streams == 0; }));
}

TEST_CASE("wire scenarios: a slow first list is not stopped by the idle "
          "pass") {
  auto t = any_transport();
  INFO(test::name_of(t));
  wire_front f{t};
  REQUIRE(f.api.create(make_secret("default", "s", {{"k", "v1"}})));
  // Longer than max_idle (600 ms) and several recycling passes (100 ms).
  f.api.delay_lists(1000ms);
  auto cl = f.connect();
  {
    idle_manager m{f.rt, *cl};
    m.reg(pod_with_secrets("default", "p", "uid-1", {"s"}, {}));
    // Nobody reads: the passes during the list find it unsynced and leave
    // it; the watch opens once the list is answered. (Synced and unread, it
    // is idle from then on: a pass may stop it within 100 ms of its watch
    // opening, so the check is that the watch was asked for.)
    CHECK(eventually([&] { return actions_of(f.api, "s").watches == 1; }));
    CHECK(m.rs->counters.reflectors_started.load() == 1);
    auto n = actions_of(f.api, "s");
    CHECK(n.lists == 1);
    CHECK(n.watches == 1);
    CHECK(list_rvs(f.api, "s") == std::vector<std::string>{"0"});
  }
}

TEST_CASE("wire scenarios: a read of an immutable object stops its watch "
          "for good") {
  auto t = any_transport();
  INFO(test::name_of(t));
  wire_front f{t};
  auto s = make_secret("default", "s", {{"k", "v1"}});
  auto imm = std::make_shared<secret>(*s.as_secret());
  imm->immutable = true;
  REQUIRE(f.api.create(api_object{secret_ptr{imm}}));
  auto cl = f.connect();
  {
    auto opts = watching();
    opts.immutable_recheck = 0s;
    secret_manager mgr{f.rt, *cl, opts};
    REQUIRE(mgr.register_pod_and_wait(
      pod_with_secrets("default", "p", "uid-1", {"s"}, {})));
    REQUIRE(eventually([&] { return server_watches(f.api, "s") == 1; }));
    CHECK(value_of(mgr, "s") == "v1");
    CHECK(eventually([&] { return cl->stats().open_streams == 0; }));
    CHECK(server_watch_ends(f, *cl, "s"));
    for (int i = 0; i < 10; ++i)
      CHECK(value_of(mgr, "s") == "v1");
    auto n = actions_of(f.api, "s");
    CHECK(n.lists == 1);
    CHECK(n.watches == 1);
  }
}

TEST_CASE("wire scenarios: expired history relists without a version, from "
          "an ERROR 410 event and from an HTTP 410") {
  watched_secret w{any_transport()};
  auto& f = w.f;
  auto& cl = w.cl;
  auto& mgr = *w.mgr;
  INFO(test::name_of(f.transport));
  CHECK(value_of(mgr, "s") == "v1");
  REQUIRE(eventually([&] { return server_watches(f.api, "s") == 1; }));
  SECTION("ERROR 410 on the re-watch") {
    // A write the watch does not see, then the history is gone: the
    // re-watch from the old version gets 200 and ERROR 410.
    REQUIRE(f.api.create(make_secret("default", "other", {{"k", "x"}})));
    f.api.expire_history();
    f.api.close_watches();
    REQUIRE(eventually([&] {
      auto n = actions_of(f.api, "s");
      return n.lists == 2 && n.watches == 3;
    }));
    CHECK(list_rvs(f.api, "s") == std::vector<std::string>{"0", ""});
  }
  SECTION("HTTP 410 on the relist") {
    // The watch's ERROR 410 relists; that list is answered HTTP 410 as an
    // expired continue token is; the next one works.
    f.api.fail_next(source_verb::list, 1, {errc::expired, "too old"});
    REQUIRE(f.api.create(make_secret("default", "other", {{"k", "x"}})));
    f.api.expire_history();
    f.api.close_watches();
    REQUIRE(eventually([&] {
      auto n = actions_of(f.api, "s");
      return n.lists == 3 && n.watches == 3;
    }));
    CHECK(list_rvs(f.api, "s") == std::vector<std::string>{"0", "", ""});
    CHECK(cl->stats().requests["GET 410"] == 1);
  }
  REQUIRE(f.api.update(make_secret("default", "s", {{"k", "v3"}})));
  CHECK(eventually([&] { return value_of(mgr, "s") == "v3"; }));
  CHECK(eventually([&] { return cl->stats().open_streams == 1; }));
  CHECK(server_watches(f.api, "s") == 1);
}

TEST_CASE("wire scenarios: managers follow an API server restart") {
  watched_secret w{any_transport()};
  auto& f = w.f;
  auto& cl = w.cl;
  auto& mgr = *w.mgr;
  INFO(test::name_of(f.transport));
  REQUIRE(eventually([&] { return server_watches(f.api, "s") == 1; }));
  // A write s's watch does not see: after the restart its version is
  // behind the server's and outside the (empty) history.
  REQUIRE(f.api.create(make_secret("default", "other", {{"k", "x"}})));
  REQUIRE(f.api.restart());
  // Served throughout from the snapshot.
  CHECK(value_of(mgr, "s") == "v1");
  REQUIRE(f.api.update(make_secret("default", "s", {{"k", "v2"}})));
  CHECK(eventually([&] { return value_of(mgr, "s") == "v2"; }));
  CHECK(eventually([&] { return server_watches(f.api, "s") == 1; }));
  // On the new server (its log starts empty): the re-watch from the old
  // version, expired; the relist without a version; the watch from it.
  auto n = actions_of(f.api, "s");
  CHECK(n.lists == 1);
  CHECK(n.watches == 2);
  CHECK(list_rvs(f.api, "s") == std::vector<std::string>{""});
  CHECK(eventually([&] { return cl->stats().open_streams == 1; }));
}
