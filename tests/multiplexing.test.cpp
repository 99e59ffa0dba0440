// Adaptive watch multiplexing on the deterministic scheduler
// (docs/multiplexing.md): the switch up past K and down below K/2, no update
// lost and no older version served across a switch with writes racing it, the
// fallback when the namespace-wide calls are forbidden, idle and immutable
// stops, and the last pod's unregistration.
#include "podref/actors/manager.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>

#include "podref/actors/memory_api_server.hpp"
#include "support/manager_fixture.hpp"
#include "support/pod_builders.hpp"

using namespace podref;
using namespace std::chrono_literals;
using podref::test::make_secret;
using podref::test::pod_with_secrets;

namespace {

struct mux_fixture : podref::test::manager_fixture_base {
  void start_manager(std::size_t k) {
    auto cfg = config_for(resource::secrets);
    cfg.mux_threshold = k;
    cfg.recycle_period = caf::timespan{0};
    spawn_manager(std::move(cfg));
  }

  source_action_counts counts() {
    auto x = request<source_action_counts>(server, act_counts_atom::value);
    REQUIRE(x);
    return *x;
  }

  std::size_t object_watches(const std::string& ns, const std::string& name) {
    auto n = request<std::size_t>(server, obj_watches_atom::value,
                                  resource::secrets, ns, name);
    REQUIRE(n);
    return *n;
  }

  /// Open namespace-wide watches of `ns` (the server keys them by an
  /// empty name).
  std::size_t namespace_watches(const std::string& ns) {
    return object_watches(ns, "");
  }

  api_object write(const std::string& ns, const std::string& name,
                   const std::string& value) {
    auto x = request<api_object>(server, apply_atom::value,
                                 make_secret(ns, name, {{"k", value}}));
    REQUIRE(x);
    return *x;
  }

  /// Sends a write without running anything: it races what is queued.
  void write_async(const std::string& ns, const std::string& name,
                   const std::string& value) {
    self->send(server, apply_atom::value,
               make_secret(ns, name, {{"k", value}}));
  }

  void forbid(bool on) {
    self->send(server, forbid_ns_atom::value, on);
    run();
  }

  /// The value a read serves ("" when it fails), and checks that its
  /// version never goes back for this object.
  std::string read(const std::string& ns, const std::string& name) {
    auto x = get(ns, name);
    if (!x || !*x)
      return "";
    auto& last = seen[ns + "/" + name];
    CHECK(x->resource_version() >= last);
    last = x->resource_version();
    return x->as_secret()->data.at("k");
  }

  std::map<std::string, std::uint64_t> seen;
};

std::string name_of(int i) {
  return "s" + std::to_string(i);
}

} // namespace

TEST_CASE_METHOD(mux_fixture,
                 "more than K objects of a namespace share one namespace "
                 "watch; other namespaces stay per object",
                 "[multiplexing]") {
  start_manager(3);
  for (int i = 0; i < 4; ++i)
    write("a", name_of(i), "v" + std::to_string(i));
  write("b", "x", "bx");
  for (int i = 0; i < 3; ++i)
    add_ref("a", name_of(i), "pod");
  add_ref("b", "x", "pod");
  CHECK(server_watches() == 4);
  CHECK(namespace_watches("a") == 0);
  add_ref("a", name_of(3), "pod");
  CHECK(namespace_watches("a") == 1);
  for (int i = 0; i < 4; ++i)
    CHECK(object_watches("a", name_of(i)) == 0);
  CHECK(object_watches("b", "x") == 1);
  CHECK(server_watches() == 2);
  for (int i = 0; i < 4; ++i)
    CHECK(read("a", name_of(i)) == "v" + std::to_string(i));
  CHECK(read("b", "x") == "bx");
  // Served through the namespace watch from now on.
  write("a", name_of(2), "v2'");
  CHECK(read("a", name_of(2)) == "v2'");
}

TEST_CASE_METHOD(mux_fixture,
                 "a multiplexed namespace goes back per object only below "
                 "K/2",
                 "[multiplexing]") {
  start_manager(4);
  for (int i = 0; i < 5; ++i) {
    write("a", name_of(i), "v");
    add_ref("a", name_of(i), "pod");
  }
  REQUIRE(namespace_watches("a") == 1);
  del_ref("a", name_of(4), "pod");
  del_ref("a", name_of(3), "pod");
  del_ref("a", name_of(2), "pod"); // 2 left: not below 4/2
  CHECK(namespace_watches("a") == 1);
  CHECK(server_watches() == 1);
  // Back above K/2 but not above K: stays multiplexed (hysteresis).
  add_ref("a", name_of(2), "pod");
  add_ref("a", name_of(3), "pod");
  CHECK(namespace_watches("a") == 1);
  del_ref("a", name_of(3), "pod");
  del_ref("a", name_of(2), "pod");
  del_ref("a", name_of(1), "pod"); // 1 left: below 4/2
  CHECK(namespace_watches("a") == 0);
  CHECK(object_watches("a", name_of(0)) == 1);
  CHECK(server_watches() == 1);
  write("a", name_of(0), "after");
  CHECK(read("a", name_of(0)) == "after");
}

TEST_CASE_METHOD(mux_fixture,
                 "writes racing a switch up and a switch down are all seen, "
                 "and no read goes back in version",
                 "[multiplexing]") {
  // K=4: up with the 5th object, down when 1 is left (below 4/2).
  start_manager(4);
  for (int i = 0; i < 5; ++i)
    write("a", name_of(i), "0");
  add_ref("a", name_of(0), "pod");
  int round = 0;
  auto check_all = [&](int n) {
    for (int i = 0; i < n; ++i) {
      auto stored = request<api_object>(server, peek_atom::value,
                                        resource::secrets, std::string{"a"},
                                        name_of(i));
      REQUIRE(stored);
      CHECK(read("a", name_of(i)) == stored->as_secret()->data.at("k"));
    }
  };
  for (int cycle = 0; cycle < 8; ++cycle) {
    for (int i = 1; i < 4; ++i)
      add_ref("a", name_of(i), "pod");
    REQUIRE(namespace_watches("a") == 0);
    // Up: the 5th reference, with writes queued before, between and after
    // the steps of the handover.
    write_async("a", name_of(0), std::to_string(++round));
    self->send(mgr, add_ref_atom::value, std::string{"a"}, name_of(4),
               std::string{"pod"});
    for (int step = 0; step < cycle; ++step)
      sched.run_once();
    write_async("a", name_of(1), std::to_string(++round));
    write_async("a", name_of(4), std::to_string(++round));
    for (int step = 0; step < 3; ++step)
      sched.run_once();
    write_async("a", name_of(0), std::to_string(++round));
    run();
    CHECK(namespace_watches("a") == 1);
    check_all(5);
    // Down: four references go, with writes racing.
    write_async("a", name_of(0), std::to_string(++round));
    for (int i = 4; i > 0; --i)
      self->send(mgr, del_ref_atom::value, std::string{"a"}, name_of(i),
                 std::string{"pod"});
    for (int step = 0; step < cycle; ++step)
      sched.run_once();
    write_async("a", name_of(0), std::to_string(++round));
    for (int step = 0; step < 2; ++step)
      sched.run_once();
    write_async("a", name_of(0), std::to_string(++round));
    run();
    CHECK(namespace_watches("a") == 0);
    CHECK(object_watches("a", name_of(0)) == 1);
    check_all(1);
    CHECK(read("a", name_of(0)) == std::to_string(round));
  }
}

TEST_CASE_METHOD(mux_fixture,
                 "a forbidden namespace watch falls back per object without "
                 "losing a write made meanwhile",
                 "[multiplexing]") {
  forbid(true);
  start_manager(1);
  write("a", "x", "1");
  write("a", "y", "1");
  add_ref("a", "x", "pod");
  CHECK(read("a", "x") == "1");
  self->send(mgr, add_ref_atom::value, std::string{"a"}, std::string{"y"},
             std::string{"pod"});
  sched.run_once();
  write_async("a", "x", "2");
  run();
  CHECK(namespace_watches("a") == 0);
  CHECK(object_watches("a", "x") == 1);
  CHECK(object_watches("a", "y") == 1);
  CHECK(read("a", "x") == "2");
  CHECK(read("a", "y") == "1");
  // Refused once: not asked again for this namespace.
  auto before = counts();
  add_ref("a", "z", "pod");
  auto log = actions();
  for (const auto& a : log)
    CHECK(!(a.name.empty() && a.ns == "a" && a.verb == source_verb::watch));
  CHECK((counts() - before).lists == 1);
  CHECK(server_watches() == 3);
}

TEST_CASE_METHOD(mux_fixture,
                 "idle and immutable stops close the namespace watch with "
                 "the last reflector watching; an immutable recheck then "
                 "lists its object, not the namespace",
                 "[multiplexing]") {
  auto cfg = config_for(resource::secrets);
  cfg.mux_threshold = 1;
  // The passes are the test's (the timer's first is an hour away), and
  // each rechecks every immutable object.
  cfg.recycle_period = 1h;
  cfg.immutable_recheck = 1h;
  cfg.max_idle = 1min;
  spawn_manager(std::move(cfg));
  write("a", "x", "1");
  self->send(server, create_atom::value,
             make_secret("a", "frozen", {{"k", "f"}}, true));
  run();
  add_ref("a", "x", "pod");
  add_ref("a", "frozen", "pod");
  REQUIRE(namespace_watches("a") == 1);
  CHECK(read("a", "frozen") == "f"); // immutable: its watch stops
  CHECK(namespace_watches("a") == 1); // x still watched
  advance(2min);
  self->send(mgr, recycle_atom::value);
  run();
  CHECK(namespace_watches("a") == 0);
  CHECK(server_watches() == 0);
  // Nobody watches: the recheck is one list of its object from the cache.
  clear_actions();
  self->send(mgr, recycle_atom::value);
  run();
  auto log = actions();
  REQUIRE(log.size() == 1);
  CHECK(log[0].verb == source_verb::list);
  CHECK(log[0].name == "frozen");
  CHECK(log[0].rv == "0");
  CHECK(server_watches() == 0);
  // A read restarts x: one namespace list and one namespace watch.
  auto before = counts();
  write("a", "x", "2");
  CHECK(read("a", "x") == "2");
  CHECK((counts() - before).lists == 1);
  CHECK((counts() - before).watches == 1);
  CHECK(namespace_watches("a") == 1);
  CHECK(read("a", "frozen") == "f");
}

TEST_CASE_METHOD(mux_fixture,
                 "a multiplexer that fails hands its namespace back to the "
                 "API server at once",
                 "[multiplexing]") {
  start_manager(1);
  write("a", "x", "1");
  write("a", "y", "1");
  add_ref("a", "x", "pod");
  add_ref("a", "y", "pod");
  REQUIRE(namespace_watches("a") == 1);
  // The multiplexer answers mux_stats itself: its address is the reply's.
  caf::strong_actor_ptr mux;
  auto handle = self->request(mgr, caf::infinite, mux_stats_atom::value,
                              std::string{"a"});
  run();
  handle.receive(
    [&](const mux_stats& st) {
      CHECK(st.sub_watches == 2);
      mux = self->current_sender();
    },
    [&](caf::error& err) { FAIL(caf::to_string(err)); });
  REQUIRE(mux);
  caf::anon_send(caf::actor_cast<caf::actor>(mux),
                 caf::exit_msg{mux->address(),
                               caf::make_error(caf::sec::runtime_error)});
  mux = nullptr;
  run(); // no time passes: no backoff
  CHECK(namespace_watches("a") == 0);
  CHECK(object_watches("a", "x") == 1);
  CHECK(object_watches("a", "y") == 1);
  write("a", "x", "2");
  CHECK(read("a", "x") == "2");
  auto none = request<mux_stats>(mgr, mux_stats_atom::value, std::string{"a"});
  REQUIRE_FALSE(none);
  CHECK(from_caf_error(none.error(), {}).code == errc::not_found);
  // The next reference past K multiplexes the namespace again.
  write("a", "z", "1");
  add_ref("a", "z", "pod");
  CHECK(namespace_watches("a") == 1);
  CHECK(server_watches() == 1);
  CHECK(read("a", "y") == "1");
  CHECK(read("a", "z") == "1");
}

TEST_CASE_METHOD(mux_fixture,
                 "unregistering the last pod ends the namespace watch and "
                 "the multiplexer",
                 "[multiplexing]") {
  start_manager(1);
  write("a", "x", "1");
  write("a", "y", "1");
  auto p = pod_with_secrets("a", "pod", "uid", {"x", "y"}, {});
  reg(p);
  CHECK(read("a", "x") == "1");
  CHECK(namespace_watches("a") == 1);
  CHECK(server_watches() == 1);
  unreg(p);
  CHECK(server_watches() == 0);
  auto x = get("a", "x");
  REQUIRE_FALSE(x);
  CHECK(from_caf_error(x.error(), {}).code == errc::not_registered);
  // Registered again: a new multiplexer, nothing of the old one left.
  write("a", "x", "2");
  reg(p);
  CHECK(read("a", "x") == "2");
  CHECK(server_watches() == 1);
}

TEST_CASE_METHOD(mux_fixture,
                 "10 objects over 2 namespaces sync with 2 watches and 4 "
                 "requests instead of 10 and 20",
                 "[multiplexing]") {
  start_manager(1);
  std::vector<std::string> names;
  for (int i = 0; i < 5; ++i) {
    write("a", name_of(i), "a");
    write("b", name_of(i), "b");
    names.push_back(name_of(i));
  }
  write("a", "unreferenced", "u");
  auto before = counts();
  reg(pod_with_secrets("a", "pod", "ua", names, {}));
  reg(pod_with_secrets("b", "pod", "ub", names, {}));
  for (const auto& n : names) {
    CHECK(read("a", n) == "a");
    CHECK(read("b", n) == "b");
  }
  auto used = counts() - before;
  CHECK(server_watches() == 2);
  // The first reference of each namespace lists and watches per object
  // (K=1: the second one switches); a batch registration at once would not.
  // Per namespace: the first reflector's list (sent before the second
  // reference switched), one namespace list and one namespace watch.
  CHECK(used.watches == 2);
  CHECK(used.lists == 4);
}

// The figures of docs/multiplexing.md: 10k referenced objects over 100
// namespaces (plus 10 unreferenced ones per namespace), synced per object
// and multiplexed, on the deterministic scheduler: API calls exact, wall
// time as measured. Hidden ([.]); run with `test_multiplexing "[figures]"`.
TEST_CASE_METHOD(mux_fixture, "figures: 10k objects over 100 namespaces",
                 "[.][figures]") {
  constexpr int namespaces = 100;
  constexpr int per_namespace = 100;
  std::size_t k = GENERATE(0, 1, 16);
  for (int n = 0; n < namespaces; ++n)
    for (int i = 0; i < per_namespace + 10; ++i)
      self->send(server, apply_atom::value,
                 make_secret("ns" + std::to_string(n),
                             (i < per_namespace ? "s" : "u")
                               + std::to_string(i),
                             {{"k", "v"}}));
  run();
  start_manager(k);
  auto before = counts();
  auto t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < namespaces; ++n) {
    std::vector<std::string> names;
    for (int i = 0; i < per_namespace; ++i)
      names.push_back("s" + std::to_string(i));
    self->send(mgr, reg_pod_atom::value,
               make_registration(pod_with_secrets("ns" + std::to_string(n),
                                                  "pod", "u" + std::to_string(n),
                                                  names, {}),
                                 resource::secrets));
  }
  run();
  auto t1 = std::chrono::steady_clock::now();
  auto used = counts() - before;
  auto held = server_watches();
  // One write per namespace to an unreferenced object: what it costs.
  for (int n = 0; n < namespaces; ++n)
    write_async("ns" + std::to_string(n), "u0", "changed");
  run();
  WARN("K=" << k << ": watches held " << held << ", requests to sync "
            << used.lists + used.watches + used.gets << " (lists "
            << used.lists << ", watches " << used.watches << "), wall "
            << std::chrono::duration_cast<std::chrono::milliseconds>(t1 - t0)
                 .count()
            << " ms, live reflectors " << rs->counters.live_reflectors.load()
            << ", unreferenced objects per namespace 10");
  CHECK(rs->counters.live_reflectors.load() == namespaces * per_namespace);
}
