// Change notifications at the actor level, on the deterministic scheduler:
// the manager's subscribe / unsub messages, with a polled change hub so that
// the test decides when callbacks run (docs/notifications.md).
//
// Every step runs the scheduler until idle, then polls the hub: what a
// subscriber saw is exact, and "slow" means "not polled yet".
#include "podref/actors/manager.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <caf/send.hpp>

#include "podref/actors/memory_api_server.hpp"
#include "podref/messages/object_change.hpp"
#include "podref/read_side/change_hub.hpp"
#include "support/manager_fixture.hpp"
#include "support/pod_builders.hpp"

using namespace podref;
using podref::test::make_secret;

namespace {

using strings = std::vector<std::string>;

/// What one callback was given, without the object itself.
struct seen {
  change_kind kind;
  std::uint64_t rv;
  std::uint64_t skipped;
  strings uids;
  std::string value; // data["k"] of an updated Secret
};

struct recorder {
  std::vector<seen> calls;

  change_callback callback() {
    return [this](const object_change& c) {
      seen x{c.kind, c.resource_version, c.skipped, c.pod_uids(), {}};
      if (c.kind == change_kind::updated) {
        auto s = c.object.as_secret();
        REQUIRE(s);
        auto i = s->data.find("k");
        if (i != s->data.end())
          x.value = i->second;
      }
      calls.push_back(std::move(x));
    };
  }
};

struct notify_fixture : podref::test::manager_fixture_base {
  std::vector<std::string> hook_seen;
  std::shared_ptr<detail::change_hub> hub = std::make_shared<detail::change_hub>(
    change_executor{},
    [this](const object_change& c, std::exception_ptr e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        hook_seen.push_back(c.name + ": " + x.what());
      }
    },
    detail::change_pump::polled);

  explicit notify_fixture(strategy s = strategy::watch) {
    auto cfg = config_for(resource::secrets);
    cfg.strategy = s;
    cfg.changes = hub;
    cfg.recycle_period = caf::timespan{0};
    spawn_manager(std::move(cfg));
  }

  ~notify_fixture() {
    hub->stop();
  }

  /// Stores data k=`v` in Secret ns/s; its resourceVersion.
  std::uint64_t put(const std::string& v) {
    auto x = request<api_object>(server, apply_atom::value,
                                 make_secret("ns", "s", {{"k", v}}));
    REQUIRE(x);
    run();
    return x->resource_version();
  }

  void remove() {
    auto ok = request<caf::ok_atom>(server, caf::delete_atom::value,
                                    resource::secrets, std::string{"ns"},
                                    std::string{"s"});
    REQUIRE(ok);
    run();
  }

  caf::expected<subscription_id> subscribe(recorder& r,
                                           const std::string& name = "s") {
    auto id = request<subscription_id>(mgr, subscribe_atom::value,
                                       std::string{"ns"}, name, r.callback());
    run();
    return id;
  }

  void unsubscribe(subscription_id id) {
    self->send(mgr, unsub_atom::value, id);
    run();
  }

  std::size_t poll() {
    return hub->poll();
  }
};

} // namespace

TEST_CASE_METHOD(notify_fixture,
                 "a subscriber gets the current version, then every new one "
                 "in resourceVersion order with the referencing uids",
                 "[notify]") {
  auto rv1 = put("v1");
  add_ref("ns", "s", "uid-b");
  add_ref("ns", "s", "uid-a");
  recorder r;
  auto id = subscribe(r);
  REQUIRE(id);
  CHECK(*id != 0);
  CHECK(poll() == 1);
  REQUIRE(r.calls.size() == 1);
  CHECK(r.calls[0].kind == change_kind::updated);
  CHECK(r.calls[0].rv == rv1);
  CHECK(r.calls[0].value == "v1");
  CHECK(r.calls[0].uids == strings{"uid-a", "uid-b"});
  std::vector<std::uint64_t> rvs{rv1};
  for (auto v : {"v2", "v3", "v4"}) {
    rvs.push_back(put(v));
    poll();
  }
  REQUIRE(r.calls.size() == 4);
  for (std::size_t i = 0; i < rvs.size(); ++i) {
    CHECK(r.calls[i].rv == rvs[i]);
    CHECK(r.calls[i].skipped == 0);
  }
  CHECK(r.calls[3].value == "v4");
  // A pod more, then one less: the next versions carry the uids of then.
  add_ref("ns", "s", "uid-c");
  put("v5");
  poll();
  del_ref("ns", "s", "uid-a");
  put("v6");
  poll();
  REQUIRE(r.calls.size() == 6);
  CHECK(r.calls[4].uids == strings{"uid-a", "uid-b", "uid-c"});
  CHECK(r.calls[5].uids == strings{"uid-b", "uid-c"});
  // The same state again (a relist after the watch closed) is no new version.
  self->send(server, close_atom::value);
  run();
  CHECK(poll() == 0);
  CHECK(r.calls.size() == 6);
}

TEST_CASE_METHOD(notify_fixture,
                 "a slow subscriber gets the latest version and how many it "
                 "skipped, without holding others back",
                 "[notify]") {
  put("v1");
  add_ref("ns", "s", "uid-a");
  recorder slow;
  recorder fast;
  REQUIRE(subscribe(slow));
  REQUIRE(subscribe(fast));
  poll();
  REQUIRE(slow.calls.size() == 1);
  // Nobody polls between the writes (both callbacks "busy"): each
  // subscriber keeps one pending slot, replaced by every new version.
  put("v2");
  put("v3");
  auto last = put("v4");
  CHECK(poll() == 2); // one call each, not three
  REQUIRE(slow.calls.size() == 2);
  CHECK(slow.calls[1].rv == last);
  CHECK(slow.calls[1].value == "v4");
  CHECK(slow.calls[1].skipped == 2);
  REQUIRE(fast.calls.size() == 2);
  CHECK(fast.calls[1].skipped == 2);
  auto st = hub->stats();
  CHECK(st.skipped == 4);
  CHECK(st.delivered == 4);
}

TEST_CASE_METHOD(notify_fixture,
                 "a callback that is still running when new versions come "
                 "gets only the latest next, and the others are not delayed",
                 "[notify]") {
  put("v1");
  add_ref("ns", "s", "uid-a");
  recorder other;
  std::vector<std::uint64_t> busy_rvs;
  std::uint64_t written = 0;
  // A callback that, on its first call, makes the API server write twice:
  // both versions arrive while it runs.
  bool first = true;
  change_callback busy = [&](const object_change& c) {
    busy_rvs.push_back(c.resource_version);
    if (!std::exchange(first, false))
      return;
    put("v2");
    written = put("v3");
  };
  auto id = request<subscription_id>(mgr, subscribe_atom::value,
                                     std::string{"ns"}, std::string{"s"},
                                     busy);
  REQUIRE(id);
  run();
  REQUIRE(subscribe(other));
  poll();
  REQUIRE(busy_rvs.size() == 2);
  CHECK(busy_rvs[1] == written);
  // The other subscriber's slot was never blocked: it has the latest too.
  REQUIRE(!other.calls.empty());
  CHECK(other.calls.back().rv == written);
}

TEST_CASE_METHOD(notify_fixture,
                 "a deletion is delivered as a delete, a recreate as a new "
                 "version",
                 "[notify]") {
  put("v1");
  add_ref("ns", "s", "uid-a");
  recorder r;
  REQUIRE(subscribe(r));
  poll();
  remove();
  poll();
  REQUIRE(r.calls.size() == 2);
  CHECK(r.calls[1].kind == change_kind::deleted);
  CHECK(r.calls[1].uids == strings{"uid-a"});
  auto rv = put("again");
  poll();
  REQUIRE(r.calls.size() == 3);
  CHECK(r.calls[2].kind == change_kind::updated);
  CHECK(r.calls[2].rv == rv);
  CHECK(r.calls[2].rv > r.calls[1].rv);
}

TEST_CASE_METHOD(notify_fixture,
                 "an object that does not exist is first offered as deleted",
                 "[notify]") {
  add_ref("ns", "s", "uid-a");
  recorder r;
  REQUIRE(subscribe(r));
  poll();
  REQUIRE(r.calls.size() == 1);
  CHECK(r.calls[0].kind == change_kind::deleted);
  put("v1");
  poll();
  REQUIRE(r.calls.size() == 2);
  CHECK(r.calls[1].kind == change_kind::updated);
}

TEST_CASE_METHOD(notify_fixture,
                 "unregistering the object's last pod ends the subscription "
                 "with one ended call",
                 "[notify]") {
  put("v1");
  add_ref("ns", "s", "uid-a");
  add_ref("ns", "s", "uid-b");
  recorder r;
  REQUIRE(subscribe(r));
  poll();
  del_ref("ns", "s", "uid-a");
  put("v2");
  poll();
  REQUIRE(r.calls.size() == 2);
  del_ref("ns", "s", "uid-b");
  poll();
  REQUIRE(r.calls.size() == 3);
  CHECK(r.calls[2].kind == change_kind::ended);
  CHECK(hub->stats().subscriptions == 0);
  // Referenced again, updated: the old subscription stays ended.
  add_ref("ns", "s", "uid-a");
  put("v3");
  CHECK(poll() == 0);
  CHECK(r.calls.size() == 3);
}

TEST_CASE_METHOD(notify_fixture,
                 "the last pod going while a change is pending replaces it "
                 "by the ended call",
                 "[notify]") {
  put("v1");
  add_ref("ns", "s", "uid-a");
  recorder r;
  REQUIRE(subscribe(r));
  poll();
  put("v2");
  del_ref("ns", "s", "uid-a");
  poll();
  REQUIRE(r.calls.size() == 2);
  CHECK(r.calls[1].kind == change_kind::ended);
}

TEST_CASE_METHOD(notify_fixture,
                 "after unsub no call comes, also for a change already "
                 "pending",
                 "[notify]") {
  put("v1");
  add_ref("ns", "s", "uid-a");
  recorder r;
  recorder other;
  auto id = subscribe(r);
  REQUIRE(id);
  REQUIRE(subscribe(other));
  poll();
  put("v2"); // pending for both
  unsubscribe(*id);
  put("v3");
  poll();
  CHECK(r.calls.size() == 1);
  CHECK(other.calls.size() == 2);
  CHECK(hub->stats().subscriptions == 1);
  unsubscribe(*id); // again: a no-op
  unsubscribe(12345);
}

TEST_CASE_METHOD(notify_fixture,
                 "a throwing callback is reported and others still get "
                 "every version",
                 "[notify]") {
  put("v1");
  add_ref("ns", "s", "uid-a");
  int thrown = 0;
  change_callback bad = [&](const object_change&) {
    ++thrown;
    throw std::runtime_error("boom");
  };
  auto id = request<subscription_id>(mgr, subscribe_atom::value,
                                     std::string{"ns"}, std::string{"s"}, bad);
  REQUIRE(id);
  recorder good;
  REQUIRE(subscribe(good));
  poll();
  put("v2");
  poll();
  CHECK(thrown == 2);
  CHECK(good.calls.size() == 2);
  CHECK(hook_seen == strings{"s: boom", "s: boom"});
  CHECK(hub->stats().callback_errors == 2);
}

TEST_CASE_METHOD(notify_fixture,
                 "subscribing to an object no pod references fails",
                 "[notify]") {
  recorder r;
  auto id = subscribe(r, "nobody");
  REQUIRE(!id);
  auto err = from_caf_error(id.error(), error_info{errc::unavailable, {}});
  CHECK(err.code == errc::not_registered);
  CHECK(err.message == not_registered_error("ns", "nobody").message);
  add_ref("ns", "s", "uid-a");
  auto empty = request<subscription_id>(mgr, subscribe_atom::value,
                                        std::string{"ns"}, std::string{"s"},
                                        change_callback{});
  REQUIRE(!empty);
  CHECK(from_caf_error(empty.error(), error_info{errc::unavailable, {}}).code
        == errc::invalid_argument);
}

namespace {

struct cache_notify_fixture : notify_fixture {
  cache_notify_fixture() : notify_fixture(strategy::cache) {
    // nop
  }
};

} // namespace

TEST_CASE_METHOD(cache_notify_fixture,
                 "subscribing needs the Watch strategy", "[notify]") {
  add_ref("ns", "s", "uid-a");
  recorder r;
  auto id = subscribe(r);
  REQUIRE(!id);
  auto err = from_caf_error(id.error(), error_info{errc::unavailable, {}});
  CHECK(err.code == errc::invalid_argument);
  CHECK(err.message.find("Watch") != std::string::npos);
}

TEST_CASE_METHOD(notify_fixture,
                 "a subscribed watch is never stopped as idle", "[notify]") {
  put("v1");
  add_ref("ns", "s", "uid-a");
  recorder r;
  REQUIRE(subscribe(r));
  poll();
  advance(std::chrono::minutes(10));
  self->send(mgr, recycle_atom::value);
  run();
  CHECK(rs->counters.open_watches.load() == 1);
  put("v2");
  poll();
  CHECK(r.calls.size() == 2);
}

TEST_CASE("an executor that refuses a delivery leaves the change pending "
          "for the next offer",
          "[notify]") {
  std::vector<std::function<void()>> tasks;
  bool refuse = true;
  auto hub = std::make_shared<detail::change_hub>(
    [&](std::function<void()> f) {
      if (refuse)
        throw std::runtime_error("full");
      tasks.push_back(std::move(f));
    },
    change_error_hook{}, detail::change_pump::polled);
  recorder r;
  auto sub = hub->add("ns", "s", r.callback());
  REQUIRE(sub);
  auto change = [](std::uint64_t rv) {
    object_change c;
    c.kind = change_kind::deleted;
    c.resource_version = rv;
    return c;
  };
  if (sub->offer(change(1), 1))
    hub->schedule(sub);
  CHECK(hub->poll() == 1);
  CHECK(tasks.empty());
  refuse = false;
  if (sub->offer(change(2), 2))
    hub->schedule(sub);
  hub->poll();
  REQUIRE(tasks.size() == 1);
  tasks[0]();
  REQUIRE(r.calls.size() == 1);
  CHECK(r.calls[0].rv == 2);
  CHECK(r.calls[0].skipped == 1);
  // An older sequence number is ignored.
  CHECK(!sub->offer(change(1), 1));
  hub->stop();
  CHECK(hub->add("ns", "s", r.callback()) == nullptr);
}
