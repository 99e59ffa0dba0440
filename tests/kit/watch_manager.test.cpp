// Upstream's watch-based manager tests (reference kubelet-manager.md, 5.2),
// written as an embedder would: the public facades on the test kit's
// deterministic runtime, no CAF and no internal header. Time is virtual, so
// "poll until" becomes "run until idle" and a minute passes in microseconds.
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "podref/testing/deterministic_runtime.hpp"
#include "support/pod_builders.hpp"
#include "kit_steps.hpp"

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using podref::testing::deterministic_runtime;

namespace podref::kit_test {

namespace {

pod secret_user(const std::string& uid, const std::string& secret = "name",
                const std::string& ns = "ns") {
  return test::pod_with_secrets(ns, "pod-" + uid, uid, {secret}, {});
}

/// The deterministic runtime, its API server and one Watch manager.
struct watch_kit {
  deterministic_runtime rt;
  api_server api{rt};
  std::optional<secret_manager> mgr;

  explicit watch_kit(manager_options opts = {}) {
    mgr.emplace(rt, api, strategy::watch, opts);
  }

  /// The server's open watches of ns/`name`.
  std::size_t watches(const std::string& name) {
    auto n = api.open_watches(resource::secrets, "ns", name);
    REQUIRE(n);
    return *n;
  }

  object_phase phase(const std::string& ns, const std::string& name) {
    auto st = mgr->status(ns, name);
    REQUIRE(st);
    return st->phase;
  }
};

} // namespace

TEST_CASE("kit: TestSecretCache: a watched object follows creation and "
          "deletion, and is not registered once released",
          "[kit][5.2]") {
  watch_kit k;
  auto p = secret_user("pod");
  REQUIRE(k.mgr->register_pod_and_wait(p));
  k.rt.run_until_idle();
  auto missing = k.mgr->get_secret("ns", "name");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == errc::not_found);
  REQUIRE(k.api.create(test::make_secret("ns", "name", {{"k", "v"}})));
  k.rt.run_until_idle();
  auto found = k.mgr->get_secret("ns", "name");
  REQUIRE(found);
  CHECK((*found)->metadata.name == "name");
  CHECK((*found)->metadata.ns == "ns");
  REQUIRE(k.api.remove(resource::secrets, "ns", "name"));
  k.rt.run_until_idle();
  auto gone = k.mgr->get_secret("ns", "name");
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == errc::not_found);
  REQUIRE(k.mgr->unregister_pod_and_wait(p));
  auto released = k.mgr->get_secret("ns", "name");
  REQUIRE_FALSE(released);
  CHECK_THAT(released.error().message, Contains("not registered"));
}

TEST_CASE("kit: TestSecretCacheMultipleRegistrations: more pods of one "
          "object make no more list or watch",
          "[kit][5.2]") {
  watch_kit k;
  auto p = secret_user("pod");
  REQUIRE(k.mgr->register_pod_and_wait(p));
  k.rt.run_until_idle();
  const strings once{"list secrets ns/name rv=\"0\"",
                     "watch secrets ns/name rv=\"\""};
  CHECK(action_log(k.api) == once);
  for (int i = 0; i < 20; ++i) {
    auto other = secret_user("pod-" + std::to_string(i));
    REQUIRE(k.mgr->register_pod(other));
    REQUIRE(k.mgr->unregister_pod(other));
  }
  REQUIRE(k.mgr->sync());
  k.rt.run_until_idle();
  CHECK(action_log(k.api) == once);
  REQUIRE(k.mgr->unregister_pod_and_wait(p));
  auto released = k.mgr->get_secret("ns", "name");
  REQUIRE_FALSE(released);
  CHECK_THAT(released.error().message, Contains("not registered"));
  CHECK(action_log(k.api) == once);
}

TEST_CASE("kit: TestImmutableSecretStopsTheReflector: a read of an "
          "immutable object stops its watch for good",
          "[kit][5.2]") {
  struct step {
    bool exists;
    bool immutable;
  };
  struct scenario {
    const char* desc;
    std::optional<step> initial;
    std::optional<step> eventual;
  };
  auto s = GENERATE(
    scenario{"secret doesn't exist, created as mutable", std::nullopt,
             step{true, false}},
    scenario{"secret doesn't exist, created as immutable", std::nullopt,
             step{true, true}},
    scenario{"mutable secret modified to mutable", step{true, false},
             step{true, false}},
    scenario{"mutable secret modified to immutable", step{true, false},
             step{true, true}},
    scenario{"immutable secret", step{true, true}, std::nullopt});
  INFO(s.desc);
  watch_kit k;
  if (s.initial)
    REQUIRE(k.api.create(
      test::make_secret("ns", "name", {{"v", "1"}}, s.initial->immutable)));
  REQUIRE(k.mgr->register_pod_and_wait(secret_user("pod")));
  k.rt.run_until_idle();
  auto first = k.mgr->get_secret("ns", "name");
  CHECK(static_cast<bool>(first) == s.initial.has_value());
  k.rt.run_until_idle();
  bool running = !s.initial || !s.initial->immutable;
  CHECK(k.phase("ns", "name")
        == (running ? object_phase::synced : object_phase::immutable_stopped));
  if (!s.eventual)
    return;
  REQUIRE(k.api.apply(
    test::make_secret("ns", "name", {{"v", "2"}}, s.eventual->immutable)));
  k.rt.run_until_idle();
  auto second = k.mgr->get_secret("ns", "name");
  REQUIRE(second);
  CHECK((*second)->data.at("v") == "2");
  k.rt.run_until_idle();
  CHECK(k.phase("ns", "name")
        == (s.eventual->immutable ? object_phase::immutable_stopped
                                  : object_phase::synced));
}

TEST_CASE("kit: TestMaxIdleTimeStopsTheReflector: a watch nobody reads for "
          "max_idle stops, and the next read restarts it",
          "[kit][5.2]") {
  manager_options opts;
  opts.sync_frequency = 12s; // max_idle: 5 x 12 s = 1 min
  opts.recycle_period = 1s;
  watch_kit k{opts};
  REQUIRE(k.api.create(test::make_secret("ns", "name")));
  REQUIRE(k.mgr->register_pod_and_wait(secret_user("pod")));
  k.rt.run_until_idle();
  REQUIRE(k.mgr->get_secret("ns", "name"));
  CHECK(k.phase("ns", "name") == object_phase::synced);
  k.rt.advance(90s);
  CHECK(k.phase("ns", "name") == object_phase::idle_stopped);
  auto again = k.mgr->get_secret("ns", "name");
  REQUIRE(again);
  CHECK((*again)->metadata.name == "name");
  CHECK(k.phase("ns", "name") == object_phase::synced);
  for (int i = 0; i < 3; ++i) {
    k.rt.advance(20s);
    REQUIRE(k.mgr->get_secret("ns", "name"));
  }
  CHECK(k.phase("ns", "name") == object_phase::synced);
}

TEST_CASE("kit: TestReflectorNotStoppedOnSlowInitialization: a slow first "
          "list fails reads after the sync timeout, and is not recycled",
          "[kit][5.2]") {
  manager_options opts;
  opts.sync_frequency = 12s;
  watch_kit k{opts};
  REQUIRE(k.api.create(test::make_secret("ns", "name")));
  k.api.delay_lists(120s);
  const auto t0 = k.rt.now();
  REQUIRE(k.mgr->register_pod_and_wait(secret_user("pod")));
  k.rt.run_until_idle();
  k.rt.advance(90s);
  CHECK(k.phase("ns", "name") == object_phase::unsynced);
  auto slow = k.mgr->get_secret("ns", "name");
  REQUIRE_FALSE(slow);
  CHECK(slow.error().code == errc::sync_timeout);
  CHECK_THAT(slow.error().message, Contains("failed to sync"));
  // The read waited exactly the sync timeout, in virtual time.
  CHECK(k.rt.now() - t0 == 91s);
  k.rt.advance(29s);
  CHECK(k.phase("ns", "name") == object_phase::synced);
  auto ready = k.mgr->get_secret("ns", "name");
  REQUIRE(ready);
  CHECK((*ready)->metadata.name == "name");
}

TEST_CASE("kit: TestRefMapHandlesReferencesCorrectly: references count per "
          "pod uid, never below zero, and only on their object",
          "[kit][5.2]") {
  watch_kit k;
  REQUIRE(k.api.create(test::make_secret("ns1", "secret1")));
  auto refs = [&](const std::string& ns, const std::string& name) {
    auto st = k.mgr->status(ns, name);
    REQUIRE(st);
    return st->references;
  };
  using ref_map = std::map<std::string, int>;
  auto p1 = secret_user("p1", "secret1", "ns1");
  auto p2 = secret_user("p2", "secret1", "ns1");
  REQUIRE(k.mgr->register_pod_and_wait(p1));
  CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}});
  REQUIRE(k.mgr->register_pod_and_wait(p2));
  CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}, {"p2", 1}});
  REQUIRE(k.mgr->unregister_pod_and_wait(p2));
  REQUIRE(k.mgr->unregister_pod_and_wait(p2)); // unknown now: no effect
  CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}});
  // Pods that are not p1 (its name and uid in another namespace, its name
  // with another uid) do not touch its references.
  REQUIRE(k.mgr->unregister_pod_and_wait(secret_user("p1", "secret1", "ns2")));
  REQUIRE(k.mgr->unregister_pod_and_wait(
    test::pod_with_secrets("ns1", "pod-p1", "p3", {"secret1"}, {})));
  CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}});
  REQUIRE(k.mgr->unregister_pod_and_wait(p1));
  REQUIRE(k.mgr->unregister_pod_and_wait(p1));
  auto st = k.mgr->status("ns1", "secret1");
  REQUIRE(st);
  CHECK(st->phase == object_phase::unreferenced);
  CHECK(st->references.empty());
}

} // namespace podref::kit_test

namespace podref::kit_test {

TEST_CASE("kit: a failing list shows in the object's status until the "
          "backoff's retry succeeds; its watch is counted per object",
          "[kit]") {
  manager_options opts;
  opts.backoff_initial = 800ms;
  watch_kit k{opts};
  REQUIRE(k.api.create(test::make_secret("ns", "name")));
  k.api.fail_next(source_verb::list, 1,
                  error_info{errc::unavailable, "etcd is down"});
  REQUIRE(k.mgr->register_pod_and_wait(secret_user("pod")));
  k.rt.run_until_idle();
  auto st = k.mgr->status("ns", "name");
  REQUIRE(st);
  CHECK(st->phase == object_phase::failing);
  REQUIRE(st->failure);
  CHECK(st->failure->message == "etcd is down");
  CHECK(k.watches("name") == 0u);
  // The first retry comes within twice the initial backoff (jitter).
  k.rt.advance(1600ms);
  st = k.mgr->status("ns", "name");
  REQUIRE(st);
  CHECK(st->phase == object_phase::synced);
  CHECK_FALSE(st->failure);
  CHECK(st->found);
  CHECK(st->resource_version
        == std::to_string(
          (*k.api.get(resource::secrets, "ns", "name")).resource_version()));
  CHECK(k.watches("name") == 1u);
  CHECK(k.watches("other") == 0u);
  CHECK(action_log(k.api)
        == strings{"list secrets ns/name rv=\"0\"",
                   "list secrets ns/name rv=\"0\"",
                   "watch secrets ns/name rv=\"\"", // the log keeps no watch RV
                   "get secrets ns/name rv=\"\""});
}

} // namespace podref::kit_test

namespace podref::kit_test {

TEST_CASE("kit: a registration is applied by the next run, with no time "
          "passing",
          "[kit]") {
  watch_kit k;
  REQUIRE(k.api.create(test::make_secret("ns", "name")));
  const auto t0 = k.rt.now();
  REQUIRE(k.mgr->register_pod(secret_user("pod")));
  k.rt.run_until_idle();
  CHECK(k.rt.now() == t0);
  CHECK(k.watches("name") == 1u);
  CHECK(k.mgr->manager().stats().live_reflectors == 1);
}

} // namespace podref::kit_test
