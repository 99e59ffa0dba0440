// Recreated immutable objects (issue: kubernetes #131589): the kubelet stops
// watching an immutable object and serves its old content until its last
// pod is gone, even after it was deleted and recreated. podref lists such an
// object again when a new pod references it (at once: that pod's first read
// sees the API server's state) and once per immutable_recheck (from the
// watch cache). Written on the test kit, public headers only.
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
using podref::testing::deterministic_runtime;

namespace podref::kit_test {

namespace {

/// An immutable secret ns/name read by pod "a", so that its watch stopped.
struct recreate_kit {
  deterministic_runtime rt;
  api_server api{rt};
  std::optional<secret_manager> mgr;

  explicit recreate_kit(std::chrono::nanoseconds recheck = 10min) {
    manager_options opts;
    opts.immutable_recheck = recheck;
    mgr.emplace(rt, api, strategy::watch, opts);
    REQUIRE(api.create(test::make_secret("ns", "name", {{"v", "old"}}, true)));
    REQUIRE(mgr->register_pod_and_wait(user("a")));
    rt.run_until_idle();
    CHECK(value() == "old");
    rt.run_until_idle();
    CHECK(phase() == object_phase::immutable_stopped);
    api.clear_actions();
  }

  static pod user(const std::string& uid) {
    return test::pod_with_secrets("ns", "pod-" + uid, uid, {"name"}, {});
  }

  /// Deletes the secret and creates it again with `v`.
  void recreate(const std::string& v, bool immutable) {
    REQUIRE(api.remove(resource::secrets, "ns", "name"));
    REQUIRE(api.create(test::make_secret("ns", "name", {{"v", v}}, immutable)));
    rt.run_until_idle();
  }

  /// The secret's "v", or the error's text.
  std::string value() {
    auto s = mgr->get_secret("ns", "name");
    if (!s)
      return s.error().message;
    return (*s)->data.at("v");
  }

  object_phase phase() {
    auto st = mgr->status("ns", "name");
    REQUIRE(st);
    return st->phase;
  }
};

} // namespace

TEST_CASE("kit: a new pod's reference lists a stopped immutable object "
          "again, so its first read sees the recreated content",
          "[kit][immutable]") {
  recreate_kit k;
  k.recreate("new", true);
  CHECK(k.value() == "old"); // stopped: as upstream, until rechecked
  REQUIRE(k.mgr->register_pod_and_wait(recreate_kit::user("b")));
  CHECK(k.value() == "new");
  k.rt.run_until_idle();
  CHECK(k.phase() == object_phase::immutable_stopped); // still no watch
  CHECK(action_log(k.api) == strings{"list secrets ns/name rv=\"\""});
  CHECK(*k.api.open_watches() == 0u);
}

TEST_CASE("kit: a recreated immutable object is served within "
          "immutable_recheck plus one recycling pass",
          "[kit][immutable]") {
  recreate_kit k;
  k.recreate("new", true);
  k.rt.advance(9min);
  k.rt.advance(2min); // 10 min recheck + 1 min pass, whatever its share
  CHECK(k.value() == "new");
  CHECK(k.phase() == object_phase::immutable_stopped);
  CHECK(action_log(k.api) == strings{"list secrets ns/name rv=\"0\""});
  // One cheap list per object and period, never a watch.
  k.api.clear_actions();
  k.rt.advance(30min);
  CHECK(action_log(k.api).size() == 3);
  CHECK(*k.api.open_watches() == 0u);
}

TEST_CASE("kit: a deleted immutable object reads as not found after the "
          "recheck, and is watched again",
          "[kit][immutable]") {
  recreate_kit k;
  REQUIRE(k.api.remove(resource::secrets, "ns", "name"));
  k.rt.advance(11min);
  CHECK(k.value() == "secret \"name\" not found");
  CHECK(k.phase() == object_phase::synced);
  CHECK(*k.api.open_watches() == 1u);
  // Watched again: a new object shows at once.
  REQUIRE(k.api.create(test::make_secret("ns", "name", {{"v", "back"}})));
  k.rt.run_until_idle();
  CHECK(k.value() == "back");
}

TEST_CASE("kit: an immutable object recreated mutable is watched again",
          "[kit][immutable]") {
  recreate_kit k;
  k.recreate("mutable", false);
  REQUIRE(k.mgr->register_pod_and_wait(recreate_kit::user("b")));
  CHECK(k.value() == "mutable");
  CHECK(k.phase() == object_phase::synced);
  REQUIRE(k.api.apply(test::make_secret("ns", "name", {{"v", "changed"}})));
  k.rt.run_until_idle();
  CHECK(k.value() == "changed");
}

TEST_CASE("kit: a failed recheck keeps serving the immutable content",
          "[kit][immutable]") {
  recreate_kit k;
  k.api.fail_next(source_verb::list, 1,
                  error_info{errc::unavailable, "etcd is down"});
  REQUIRE(k.mgr->register_pod_and_wait(recreate_kit::user("b")));
  CHECK(k.value() == "old");
  CHECK(k.phase() == object_phase::immutable_stopped);
}

TEST_CASE("kit: with immutable_recheck zero only new references recheck",
          "[kit][immutable]") {
  recreate_kit k{0s};
  k.recreate("new", true);
  k.rt.advance(1h);
  CHECK(k.value() == "old");
  CHECK(action_log(k.api).empty());
}

} // namespace podref::kit_test
