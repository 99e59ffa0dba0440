// Change notifications (docs/notifications.md) over the wire: a Watch
// manager over a cluster against `podref apiserver`'s front in process, the
// object written through the front (PUT, POST, DELETE, as a client writes),
// per object and with the namespace multiplexed (K=1). A subscriber sees
// every version in order with the referencing pods' uids, the delete and
// the recreate, a burst coalesced to the latest with every version called
// or counted, and the end at the last pod's unregistration.
#include "podref/runtime/typed_managers.hpp"

#include "support/pod_builders.hpp"
#include "support/front_cluster.hpp"

#include <catch2/catch.hpp>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace podref;
using podref::test::eventually;
using podref::test::make_secret;
using podref::test::pod_with_secrets;
using podref::test::front_cluster;

namespace {

using strings = std::vector<std::string>;

struct seen_change {
  change_kind kind;
  std::uint64_t rv;
  std::uint64_t skipped;
  std::string value;
  strings uids;
};

/// What a subscription was called with; a gate, when closed, holds every
/// call (a busy subscriber).
struct recorder {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<seen_change> calls;
  bool closed = false;
  bool waiting = false;

  change_callback callback() {
    return [this](const object_change& c) {
      seen_change s{c.kind, c.resource_version, c.skipped, {}, c.pod_uids()};
      if (auto sec = c.object.as_secret()) {
        auto i = sec->data.find("k");
        if (i != sec->data.end())
          s.value = i->second;
      }
      std::unique_lock<std::mutex> guard{mtx};
      waiting = true;
      cv.notify_all();
      // Bounded: a test that forgets to open the gate fails, not hangs.
      cv.wait_for(guard, std::chrono::seconds(30), [this] { return !closed; });
      waiting = false;
      calls.push_back(std::move(s));
    };
  }

  std::vector<seen_change> snapshot() {
    std::lock_guard<std::mutex> guard{mtx};
    return calls;
  }

  std::size_t size() {
    std::lock_guard<std::mutex> guard{mtx};
    return calls.size();
  }

  bool seen_rv(std::uint64_t rv) {
    std::lock_guard<std::mutex> guard{mtx};
    return !calls.empty() && calls.back().rv == rv;
  }

  void close() {
    std::lock_guard<std::mutex> guard{mtx};
    closed = true;
  }

  /// Waits (bounded) until a call is held at the closed gate.
  bool held() {
    std::unique_lock<std::mutex> guard{mtx};
    return cv.wait_for(guard, std::chrono::seconds(20),
                       [this] { return waiting; });
  }

  void open() {
    std::lock_guard<std::mutex> guard{mtx};
    closed = false;
    cv.notify_all();
  }
};

manager_options watching(std::size_t k) {
  manager_options o;
  o.strategy = strategy::watch;
  o.sync_timeout = std::chrono::seconds(10);
  o.mux_threshold = k;
  return o;
}

pod pod_of(const std::string& name, const std::string& uid) {
  // "other" too, so that K=1 multiplexes the namespace.
  return pod_with_secrets("ns", name, uid, {"s", "other"}, {});
}

api_object secret_with(const std::string& value) {
  return make_secret("ns", "s", {{"k", value}});
}

/// The front holding ns/other and ns/s at "v0" (written through it), a
/// Watch manager over its cluster (threshold `k`) with pods p<i> (uid-<i>)
/// registered for i in [1, pods], and a subscription on s: waited for its
/// first call, or held in it when `busy`.
struct subscribed {
  front_cluster f;
  std::uint64_t first = 0;
  recorder r;
  std::unique_ptr<secret_manager> mgr;
  subscription_id id = 0;

  subscribed(std::size_t k, int pods, bool busy = false) {
    REQUIRE(f.api.create(make_secret("ns", "other")));
    first = f.put(secret_with("v0"), true);
    REQUIRE(first > 0);
    mgr = std::make_unique<secret_manager>(f.rt, *f.cl, watching(k));
    for (int i = 1; i <= pods; ++i)
      REQUIRE(mgr->register_pod_and_wait(pod_of(
        "p" + std::to_string(i), "uid-" + std::to_string(i))));
    if (busy)
      r.close();
    auto sub = mgr->subscribe("ns", "s", r.callback());
    REQUIRE(sub);
    id = *sub;
    if (busy)
      REQUIRE(r.held());
    else
      REQUIRE(eventually([&] { return r.seen_rv(first); }));
  }
};

} // namespace

TEST_CASE("wire_ a subscriber sees every version written through the front "
          "in order, with the pods' uids, the delete and the recreate") {
  std::size_t k = GENERATE(0, 1);
  INFO((k == 0 ? "per object" : "multiplexed"));
  subscribed x{k, 2};
  auto& f = x.f;
  auto& mgr = *x.mgr;
  auto& r = x.r;
  auto first = x.first;
  // One write at a time, each waited for: every version, none skipped. A
  // third pod comes and the first goes on the way.
  std::vector<std::uint64_t> written{first};
  std::vector<strings> uids{{"uid-1", "uid-2"}};
  for (int i = 1; i <= 6; ++i) {
    if (i == 3) {
      REQUIRE(mgr.register_pod_and_wait(pod_of("p3", "uid-3")));
    }
    if (i == 5) {
      mgr.unregister_pod(pod_of("p1", "uid-1"));
      REQUIRE(mgr.manager().sync());
    }
    written.push_back(f.put(secret_with("v" + std::to_string(i))));
    REQUIRE(written.back() > 0);
    uids.push_back(i < 3   ? strings{"uid-1", "uid-2"}
                   : i < 5 ? strings{"uid-1", "uid-2", "uid-3"}
                           : strings{"uid-2", "uid-3"});
    REQUIRE(eventually([&] { return r.seen_rv(written.back()); }));
  }
  auto calls = r.snapshot();
  REQUIRE(calls.size() == written.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    INFO("call " << i);
    CHECK(calls[i].kind == change_kind::updated);
    CHECK(calls[i].rv == written[i]);
    CHECK(calls[i].value == "v" + std::to_string(i));
    CHECK(calls[i].skipped == 0);
    CHECK(calls[i].uids == uids[i]);
  }
  // Deleted through the front, then created again under the name.
  REQUIRE(f.remove("ns", "s"));
  REQUIRE(eventually([&] { return r.size() == calls.size() + 1; }));
  auto again = f.put(secret_with("again"), true);
  REQUIRE(again > 0);
  REQUIRE(eventually([&] { return r.seen_rv(again); }));
  calls = r.snapshot();
  REQUIRE(calls.size() == written.size() + 2);
  auto& gone = calls[calls.size() - 2];
  CHECK(gone.kind == change_kind::deleted);
  CHECK(gone.rv > written.back());
  CHECK(gone.rv < again);
  CHECK(calls.back().kind == change_kind::updated);
  CHECK(calls.back().value == "again");
  // Per object one list and one watch carried it all; multiplexed, one
  // namespace list and watch.
  auto log = f.api.actions();
  REQUIRE(log);
  source_action_counts n;
  for (const auto& a : *log)
    if (a.name == (k == 0 ? "s" : ""))
      n.add(a.verb);
  CHECK(n.lists == 1);
  CHECK(n.watches == 1);
  mgr.unsubscribe(x.id);
}

TEST_CASE("wire_ a busy subscriber gets the latest version written through "
          "the front, the others counted as skipped") {
  std::size_t k = GENERATE(0, 1);
  INFO((k == 0 ? "per object" : "multiplexed"));
  // The first call is held at the gate: the subscriber is busy while the
  // burst arrives.
  subscribed x{k, 1, true};
  auto& f = x.f;
  auto& mgr = *x.mgr;
  auto& r = x.r;
  std::uint64_t last = 0;
  for (int i = 1; i <= 30; ++i) {
    last = f.put(secret_with("v" + std::to_string(i)));
    REQUIRE(last > 0);
  }
  // Every version has reached the manager (the snapshot read serves it).
  REQUIRE(eventually([&] {
    auto s = mgr.get_secret("ns", "s");
    return s && (*s)->metadata.resource_version == std::to_string(last);
  }));
  r.open();
  REQUIRE(eventually([&] { return r.seen_rv(last); }));
  auto calls = r.snapshot();
  // The held first call, then at most the latest: every version written
  // was called or counted as skipped, in order, the last one delivered.
  CHECK(calls.front().rv == x.first);
  std::uint64_t offered = 0;
  for (std::size_t i = 1; i < calls.size(); ++i) {
    CHECK(calls[i].rv > calls[i - 1].rv);
    offered += 1 + calls[i].skipped;
  }
  CHECK(calls.size() == 2);
  CHECK(offered == 30);
  CHECK(calls.back().value == "v30");
  mgr.unsubscribe(x.id);
}

TEST_CASE("wire_ the last pod's unregistration ends the subscription with "
          "one call") {
  std::size_t k = GENERATE(0, 1);
  INFO((k == 0 ? "per object" : "multiplexed"));
  subscribed x{k, 2};
  auto& f = x.f;
  auto& mgr = *x.mgr;
  auto& r = x.r;
  // Not the last pod: nothing ends. Applied before the write, so that the
  // write's call carries the one pod left.
  REQUIRE(mgr.unregister_pod_and_wait(pod_of("p1", "uid-1")));
  auto v1 = f.put(secret_with("v1"));
  REQUIRE(eventually([&] { return r.seen_rv(v1); }));
  CHECK(r.snapshot().back().uids == strings{"uid-2"});
  mgr.unregister_pod(pod_of("p2", "uid-2"));
  REQUIRE(eventually([&] { return r.size() == 3; }));
  auto calls = r.snapshot();
  CHECK(calls.back().kind == change_kind::ended);
  CHECK(calls.back().rv == 0);
  // Nothing after the end, whatever is written; the watches are closed.
  REQUIRE(f.put(secret_with("v2")) > 0);
  CHECK(eventually([&] { return f.cl->stats().open_streams == 0; }));
  CHECK(r.size() == 3);
  CHECK(mgr.manager().stats().subscriptions == 0);
  mgr.unsubscribe(x.id); // a no-op now
}
