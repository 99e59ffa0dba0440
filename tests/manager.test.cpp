// The manager actor on the deterministic scheduler, against upstream's
// watch_based_manager_test.go and cache_based_manager_test.go (reference
// kubelet-manager.md 5.1 #8 to #10, 5.2, 5.3) with their exact numbers, plus
// the holes podref closes (3.4 quirk, 3.10 race).
//
// Every step runs the scheduler until idle, so counts are exact: the in-memory
// API server's action log stands for client-go's fake clientset, and virtual
// time for the fake clock. Recycling runs only when a test sends recycle
// (recycle_period 0), as upstream tests call startRecycleIdleWatch.
#include "podref/actors/manager.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/error.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>

#include "podref/actors/memory_api_server.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/read_side/read_side.hpp"
#include "support/manager_fixture.hpp"
#include "support/pod_builders.hpp"

using namespace podref;
using namespace std::chrono_literals;
using podref::test::env_refs;
using podref::test::make_config_map;
using podref::test::make_secret;
using podref::test::pending_reply;
using podref::test::pod_with_config_maps;
using podref::test::pod_with_secrets;

namespace {

using strings = std::vector<std::string>;

/// What a read produced, in upstream's words: the error text, or "object".
std::string outcome(const caf::expected<api_object>& x) {
  if (x)
    return *x ? "object" : "empty object";
  return from_caf_error(x.error(),
                        error_info{errc::unavailable,
                                   "CAF error: " + caf::to_string(x.error())})
    .message;
}

/// The podref error code of a failed read.
errc code_of(const caf::expected<api_object>& x) {
  return from_caf_error(x.error(), error_info{errc::unavailable, {}}).code;
}

/// "verb ns/name" for every action, to compare logs in one line.
strings describe(const std::vector<source_action>& xs) {
  strings result;
  for (const auto& x : xs)
    result.push_back(std::string{to_string(x.verb)} + " " + x.ns + "/"
                     + x.name);
  return result;
}

struct manager_fixture : podref::test::manager_fixture_base {
  detail::engine_counters& counters = rs->counters;

  /// Spawns the manager under test; reads wait up to 1 s for a first sync
  /// and watches idle for longer than `max_idle` may be stopped.
  /// `recycle_period` 0 leaves recycling to the test.
  void start_manager(resource r = resource::secrets,
                     caf::timespan max_idle = std::chrono::minutes(1),
                     caf::timespan recycle_period = caf::timespan{0}) {
    res = r;
    auto cfg = config_for(r);
    cfg.max_idle = max_idle;
    cfg.recycle_period = recycle_period;
    spawn_manager(std::move(cfg));
  }

  // -- the API server --------------------------------------------------------

  void remove(const std::string& ns, const std::string& name) {
    auto ok = request<caf::ok_atom>(server, caf::delete_atom::value, res, ns,
                                    name);
    REQUIRE(ok);
  }

  strings action_log() {
    return describe(actions());
  }

  // -- the manager -----------------------------------------------------------

  void recycle() {
    self->send(mgr, recycle_atom::value);
    run();
  }

  /// checkObject: registered iff a read yields anything but "not
  /// registered". With an empty API server, registered objects read as
  /// upstream's watch-store NotFound, so both outcomes are checked exactly.
  bool registered(const std::string& ns, const std::string& name) {
    auto x = get(ns, name);
    auto text = outcome(x);
    if (text == not_registered_error(ns, name).message)
      return false;
    CHECK(text == watch_not_found_error(res, name).message);
    return true;
  }

  std::int64_t live() const {
    return counters.live_reflectors.load();
  }

  std::uint64_t started() const {
    return counters.reflectors_started.load();
  }

  std::uint64_t stopped() const {
    return counters.reflectors_stopped.load();
  }

  std::int64_t open_watches() const {
    return counters.open_watches.load();
  }
};

} // namespace

// -- 5.2 watch_based_manager_test.go -----------------------------------------

TEST_CASE_METHOD(manager_fixture,
                 "a watched secret follows creation and deletion in the API "
                 "server and is not registered after its last reference",
                 "[manager][upstream]") {
  start_manager();
  add_ref("ns", "name", "pod");
  auto x = get("ns", "name");
  REQUIRE_FALSE(x);
  CHECK(code_of(x) == errc::not_found);
  CHECK(outcome(x) == "secret \"name\" not found");
  auto stored = create(make_secret("ns", "name", {{"k", "v1"}}));
  x = get("ns", "name");
  REQUIRE(x);
  CHECK(x->meta().ns == "ns");
  CHECK(x->meta().name == "name");
  CHECK(*x == stored);
  remove("ns", "name");
  x = get("ns", "name");
  CHECK(outcome(x) == "secret \"name\" not found");
  del_ref("ns", "name", "pod");
  x = get("ns", "name");
  CHECK(code_of(x) == errc::not_registered);
  CHECK(outcome(x) == "object \"ns\"/\"name\" not registered");
  CHECK(started() == 1);
  CHECK(stopped() == 1);
  CHECK(live() == 0);
  CHECK(open_watches() == 0);
  CHECK(server_watches() == 0);
}

TEST_CASE_METHOD(manager_fixture,
                 "references added and dropped around a standing one cause "
                 "exactly one list and one watch",
                 "[manager][upstream]") {
  start_manager();
  add_ref("ns", "name", "pod");
  CHECK(action_log() == strings{"list ns/name", "watch ns/name"});
  for (int i = 0; i < 20; ++i) {
    auto uid = "pod-" + std::to_string(i);
    add_ref("ns", "name", uid);
    del_ref("ns", "name", uid);
  }
  CHECK(action_log() == strings{"list ns/name", "watch ns/name"});
  CHECK(started() == 1);
  CHECK(live() == 1);
  del_ref("ns", "name", "pod");
  CHECK(outcome(get("ns", "name"))
        == "object \"ns\"/\"name\" not registered");
  CHECK(actions().size() == 2);
  CHECK(stopped() == 1);
  CHECK(live() == 0);
  CHECK(server_watches() == 0);
}

TEST_CASE_METHOD(manager_fixture,
                 "21 registrations of one object cause exactly one list and "
                 "one watch",
                 "[manager][upstream]") {
  start_manager();
  for (int i = 0; i < 21; ++i) {
    auto name = "pod-" + std::to_string(i);
    self->send(mgr, reg_pod_atom::value,
               make_registration("ns", name, "uid-" + std::to_string(i),
                                 {"name"}));
  }
  run();
  CHECK(action_log() == strings{"list ns/name", "watch ns/name"});
  CHECK(refcount("ns", "name") == 21);
  CHECK(counters.registered_pods.load() == 21);
  CHECK(started() == 1);
  CHECK(live() == 1);
  CHECK(open_watches() == 1);
  for (int i = 0; i < 21; ++i)
    unreg_bare("ns", "pod-" + std::to_string(i), "uid-" + std::to_string(i));
  CHECK(actions().size() == 2);
  CHECK(counters.registered_pods.load() == 0);
  CHECK(refs("ns", "name").empty());
  CHECK(stopped() == 1);
  CHECK(live() == 0);
  CHECK(open_watches() == 0);
  CHECK(server_watches() == 0);
}

TEST_CASE_METHOD(manager_fixture,
                 "per-uid reference counts follow adds and deletes and never "
                 "go negative",
                 "[manager][upstream]") {
  create(make_secret("ns1", "secret1"));
  start_manager();
  SECTION("adding and deleting should work") {
    add_ref("ns1", "secret1", "p1");
    CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}});
    add_ref("ns1", "secret1", "p1");
    CHECK(refs("ns1", "secret1") == ref_map{{"p1", 2}});
    del_ref("ns1", "secret1", "p1");
    CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}});
    CHECK(live() == 1);
    del_ref("ns1", "secret1", "p1");
    CHECK(refs("ns1", "secret1").empty());
    CHECK(started() == 1);
    CHECK(stopped() == 1);
    CHECK(live() == 0);
  }
  SECTION("deleting a non-existent reference should have no effect") {
    del_ref("ns1", "secret1", "p1");
    CHECK(refs("ns1", "secret1").empty());
    CHECK(started() == 0);
    CHECK(actions().empty());
  }
  SECTION("deleting more than adding should not lead to a negative count") {
    add_ref("ns1", "secret1", "p1");
    CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}});
    del_ref("ns1", "secret1", "p1");
    CHECK(refs("ns1", "secret1").empty());
    del_ref("ns1", "secret1", "p1");
    CHECK(refs("ns1", "secret1").empty());
    CHECK(started() == 1);
    CHECK(stopped() == 1);
    CHECK(live() == 0);
  }
  SECTION("deleting should not affect other objects or other uids") {
    add_ref("ns1", "secret1", "p1");
    CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}});
    // Upstream would store {p2: -1} here and keep the reflector forever.
    del_ref("ns1", "secret1", "p2");
    CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}});
    del_ref("ns1", "secret2", "p1");
    CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}});
    del_ref("ns2", "secret1", "p1");
    CHECK(refs("ns1", "secret1") == ref_map{{"p1", 1}});
    CHECK(live() == 1);
    // The ignored deletes left nothing behind: the real one stops it.
    del_ref("ns1", "secret1", "p1");
    CHECK(refs("ns1", "secret1").empty());
    CHECK(live() == 0);
    CHECK(open_watches() == 0);
    CHECK(server_watches() == 0);
  }
}

// -- 5.1 cache_based_manager_test.go (registration bookkeeping) --------------

TEST_CASE_METHOD(manager_fixture,
                 "registering and unregistering the same pod twice changes "
                 "nothing the second time",
                 "[manager][upstream]") {
  start_manager();
  auto spec = [](const std::string& name) {
    return pod_with_secrets("ns1", name, "ns1/" + name, {"s1"}, {});
  };
  reg(spec("name1"));
  CHECK(refcount("ns1", "s1") == 1);
  reg(spec("name1"));
  CHECK(refcount("ns1", "s1") == 1);
  reg(spec("name2"));
  CHECK(refcount("ns1", "s1") == 2);
  unreg(spec("name1"));
  CHECK(refcount("ns1", "s1") == 1);
  unreg(spec("name1"));
  CHECK(refcount("ns1", "s1") == 1);
  unreg(spec("name2"));
  CHECK(refcount("ns1", "s1") == 0);
  CHECK(started() == 1);
  CHECK(stopped() == 1);
  CHECK(live() == 0);
  CHECK(counters.registered_pods.load() == 0);
}

TEST_CASE_METHOD(manager_fixture,
                 "reference counts match upstream after a mixed sequence of "
                 "registrations",
                 "[manager][upstream]") {
  start_manager();
  // secretsToAttach s1 to s5 of TestCacheRefcounts.
  struct attach {
    strings pull;
    std::vector<env_refs> containers;
  };
  const attach s1{{"s1"}, {{{"s1"}, {"s10"}}, {{"s2"}, {}}, {{"s3"}, {}}}};
  const attach s2{{"s2"}, {{{"s4"}, {}}, {{"s5"}, {"s50"}}}};
  const attach s3{{"s1"}, {{{"s3"}, {"s30"}}, {{"s5"}, {}}}};
  const attach s4{{"s3"}, {{{"s6"}, {}}, {{}, {"s60"}}}};
  const attach s5{{}, {{{"s7"}, {}}, {{}, {"s70"}}}};
  auto p = [](const std::string& name, const attach& a) {
    return pod_with_secrets("ns", name, "ns/" + name, a.pull, a.containers);
  };
  reg(p("name1", s1));
  reg(p("name2", s1));
  reg(p("name2", s2));
  reg(p("name3", s2));
  reg(p("name4", s2));
  unreg(p("name3", s2));
  reg(p("name5", s3));
  reg(p("name6", s3));
  reg(p("name7", s4));
  unreg(p("name7", s4));
  reg(p("other-name", s1));
  reg(p("other-name", s2));
  unreg(p("other-name", s2));
  reg(p("noop-pod", s5));
  reg(p("noop-pod", s5));
  const std::map<std::string, int> expected{
    {"s1", 3}, {"s10", 1}, {"s2", 3}, {"s3", 3},  {"s30", 2}, {"s4", 2},
    {"s5", 4}, {"s50", 2}, {"s6", 0}, {"s60", 0}, {"s7", 1},  {"s70", 1},
  };
  for (const auto& [name, count] : expected) {
    INFO("secret " << name);
    CHECK(refcount("ns", name) == count);
  }
  CHECK(counters.registered_pods.load() == 6);
  CHECK(counters.referenced_objects.load() == 10);
  // Every name ever referenced got one reflector; s6 and s60 lost theirs.
  CHECK(started() == 12);
  CHECK(stopped() == 2);
  CHECK(live() == 10);
  CHECK(open_watches() == 10);
}

TEST_CASE_METHOD(manager_fixture,
                 "pods with the same name and different uids keep separate "
                 "references",
                 "[manager][upstream]") {
  start_manager();
  auto p = [](const std::string& uid, const std::string& secret) {
    return pod_with_secrets("nsinterleaved", "pod", uid, {},
                            {{{secret}, {}}});
  };
  CHECK(refcount("nsinterleaved", "secret1") == 0);
  CHECK(refcount("nsinterleaved", "secret2") == 0);
  reg(p("poduid1", "secret1"));
  CHECK(refcount("nsinterleaved", "secret1") == 1);
  CHECK(refcount("nsinterleaved", "secret2") == 0);
  reg(p("poduid2", "secret2"));
  CHECK(refcount("nsinterleaved", "secret1") == 1);
  CHECK(refcount("nsinterleaved", "secret2") == 1);
  unreg_bare("nsinterleaved", "pod", "poduid1");
  CHECK(refcount("nsinterleaved", "secret1") == 0);
  CHECK(refcount("nsinterleaved", "secret2") == 1);
  unreg_bare("nsinterleaved", "pod", "poduid2");
  CHECK(refcount("nsinterleaved", "secret1") == 0);
  CHECK(refcount("nsinterleaved", "secret2") == 0);
  CHECK(live() == 0);
}

TEST_CASE_METHOD(manager_fixture,
                 "the secret manager serves exactly the secrets of its "
                 "registered pods",
                 "[manager][upstream]") {
  start_manager(resource::secrets);
  auto s1 = [](const std::string& ns, const std::string& name) {
    return pod_with_secrets(ns, name, ns + "/" + name, {"s1"},
                            {{{"s1"}, {}}, {{"s2"}, {}}, {{}, {"s20"}}});
  };
  auto s2 = [](const std::string& ns, const std::string& name) {
    return pod_with_secrets(ns, name, ns + "/" + name, {"s1"},
                            {{{"s3"}, {}}, {{"s4"}, {}}, {{}, {"s40"}}});
  };
  auto s3 = [](const std::string& ns, const std::string& name) {
    return pod_with_secrets(ns, name, ns + "/" + name, {"s5"},
                            {{{"s6"}, {}}, {{}, {"s60"}}});
  };
  reg(s1("ns1", "name1"));
  reg(s2("ns1", "name1"));
  reg(s2("ns2", "name2"));
  reg(s3("ns3", "name"));
  unreg(s3("ns3", "name"));
  const std::set<std::string> present{"s1", "s3", "s4", "s40"};
  for (std::string ns : {"ns1", "ns2", "ns3"}) {
    for (std::string name :
         {"s1", "s2", "s3", "s4", "s5", "s6", "s20", "s40", "s50"}) {
      INFO(ns << "/" << name);
      auto expected = present.count(name) == 1 && ns != "ns3";
      CHECK(registered(ns, name) == expected);
    }
  }
  CHECK(live() == 8);
}

TEST_CASE_METHOD(manager_fixture,
                 "the configmap manager serves exactly the config maps of its "
                 "registered pods",
                 "[manager][upstream]") {
  start_manager(resource::config_maps);
  auto s1 = [](const std::string& ns, const std::string& name) {
    return pod_with_config_maps(ns, name, ns + "/" + name,
                                {{{"s1"}, {}}, {{}, {"s20"}}}, {"s2"});
  };
  auto s2 = [](const std::string& ns, const std::string& name) {
    return pod_with_config_maps(ns, name, ns + "/" + name,
                                {{{"s3"}, {}}, {{"s4"}, {}}, {{}, {"s40"}}});
  };
  auto s3 = [](const std::string& ns, const std::string& name) {
    return pod_with_config_maps(ns, name, ns + "/" + name,
                                {{{"s6"}, {}}, {{}, {"s60"}}});
  };
  reg(s1("ns1", "name1"));
  reg(s1("ns2", "name2"));
  reg(s2("ns2", "name2"));
  reg(s3("ns3", "name"));
  unreg(s3("ns3", "name"));
  const std::map<std::string, std::set<std::string>> present{
    {"ns1", {"s1", "s2", "s20"}},
    {"ns2", {"s3", "s4", "s40"}},
  };
  for (std::string ns : {"ns1", "ns2", "ns3"}) {
    for (std::string name :
         {"s1", "s2", "s3", "s4", "s5", "s6", "s20", "s40", "s50"}) {
      INFO(ns << "/" << name);
      auto i = present.find(ns);
      auto expected = i != present.end() && i->second.count(name) == 1;
      CHECK(registered(ns, name) == expected);
    }
  }
  CHECK(live() == 6);
}

// -- registration details ----------------------------------------------------

TEST_CASE_METHOD(manager_fixture,
                 "re-registering a pod starts and stops only the reflectors "
                 "of the names that changed",
                 "[manager]") {
  start_manager();
  reg(pod_with_secrets("ns", "pod", "uid", {"a"}, {{{"b"}, {}}}));
  CHECK(started() == 2);
  CHECK(server_watches() == 2);
  clear_actions();
  reg(pod_with_secrets("ns", "pod", "uid", {}, {{{"b"}, {"c"}}}));
  // Only c is new: one list and one watch; b keeps its watch, a stops.
  CHECK(action_log() == strings{"list ns/c", "watch ns/c"});
  CHECK(started() == 3);
  CHECK(stopped() == 1);
  CHECK(live() == 2);
  CHECK(open_watches() == 2);
  CHECK(server_watches() == 2);
  CHECK(refs("ns", "a").empty());
  CHECK(refs("ns", "b") == ref_map{{"uid", 1}});
  CHECK(refs("ns", "c") == ref_map{{"uid", 1}});
  CHECK(counters.registered_pods.load() == 1);
  CHECK(counters.referenced_objects.load() == 2);
  // The same version again: no change at all.
  clear_actions();
  reg(pod_with_secrets("ns", "pod", "uid", {}, {{{"b"}, {"c"}}}));
  CHECK(actions().empty());
  CHECK(started() == 3);
  CHECK(stopped() == 1);
}

TEST_CASE_METHOD(manager_fixture,
                 "unregistering drops the stored pod's references whatever "
                 "names the argument carries",
                 "[manager]") {
  start_manager();
  reg(pod_with_secrets("ns", "pod", "uid", {"a"}, {{{"b"}, {"c"}}}));
  CHECK(live() == 3);
  // A pod with the same identity and other names: only the key counts.
  unreg(pod_with_secrets("ns", "pod", "uid", {"x"}, {}));
  CHECK(refs("ns", "a").empty());
  CHECK(refs("ns", "b").empty());
  CHECK(refs("ns", "c").empty());
  CHECK(refs("ns", "x").empty());
  CHECK(counters.registered_pods.load() == 0);
  CHECK(counters.referenced_objects.load() == 0);
  CHECK(started() == 3);
  CHECK(stopped() == 3);
  CHECK(live() == 0);
  CHECK(open_watches() == 0);
  CHECK(server_watches() == 0);
  // Unknown pods (here: the same one again, and another uid) are no-ops.
  reg(pod_with_secrets("ns", "pod", "uid", {"a"}, {}));
  unreg_bare("ns", "pod", "other-uid");
  unreg_bare("ns", "other-pod", "uid");
  CHECK(refs("ns", "a") == ref_map{{"uid", 1}});
  CHECK(counters.registered_pods.load() == 1);
  unreg_bare("ns", "pod", "uid");
  unreg_bare("ns", "pod", "uid");
  CHECK(refs("ns", "a").empty());
  CHECK(counters.registered_pods.load() == 0);
  CHECK(live() == 0);
}

// -- the closed race (reference 3.10) ----------------------------------------

TEST_CASE_METHOD(manager_fixture,
                 "a read queued before the last reference goes is answered "
                 "and leaves no reflector behind",
                 "[manager][race]") {
  auto stored = create(make_secret("ns", "name", {{"k", "v"}}));
  start_manager();
  SECTION("the object is synced when the read arrives") {
    add_ref("ns", "name", "pod");
    REQUIRE(open_watches() == 1);
    // Both queued before anything runs: the read first, then the delete.
    pending_reply<api_object> read{sys, mgr, get_obj_atom::value,
                                   std::string{"ns"}, std::string{"name"}};
    self->send(mgr, del_ref_atom::value, std::string{"ns"},
               std::string{"name"}, std::string{"pod"});
    run();
    REQUIRE(read.ready());
    auto x = read.take();
    REQUIRE(x);
    CHECK(*x == stored);
  }
  SECTION("the object is still listing when the read arrives") {
    self->send(mgr, add_ref_atom::value, std::string{"ns"},
               std::string{"name"}, std::string{"pod"});
    pending_reply<api_object> read{sys, mgr, get_obj_atom::value,
                                   std::string{"ns"}, std::string{"name"}};
    self->send(mgr, del_ref_atom::value, std::string{"ns"},
               std::string{"name"}, std::string{"pod"});
    run();
    REQUIRE(read.ready());
    auto x = read.take();
    CHECK(outcome(x) == "object \"ns\"/\"name\" not registered");
    // The list went out, but no watch was ever opened.
    CHECK(action_log() == strings{"list ns/name"});
  }
  CHECK(started() == 1);
  CHECK(stopped() == 1);
  CHECK(live() == 0);
  CHECK(open_watches() == 0);
  CHECK(server_watches() == 0);
  // A read after the last delete restarts nothing.
  clear_actions();
  auto x = get("ns", "name");
  CHECK(outcome(x) == "object \"ns\"/\"name\" not registered");
  CHECK(actions().empty());
  CHECK(started() == 1);
  CHECK(live() == 0);
  // Pending sync timers of the dead reflector fire into the void.
  advance(std::chrono::seconds(2));
  CHECK(live() == 0);
  CHECK(server_watches() == 0);
}

// -- idle recycling, slow lists, immutability --------------------------------

TEST_CASE_METHOD(manager_fixture,
                 "a watch idle for longer than max idle is stopped and the "
                 "next read restarts it with a fresh list",
                 "[manager][upstream][idle]") {
  auto stored = create(make_secret("ns", "name", {{"k", "v"}}));
  start_manager(resource::secrets, std::chrono::minutes(1));
  add_ref("ns", "name", "pod");
  auto x = get("ns", "name");
  REQUIRE(x);
  CHECK(*x == stored);
  CHECK(open_watches() == 1);
  advance(std::chrono::seconds(90));
  recycle();
  CHECK(open_watches() == 0);
  CHECK(server_watches() == 0);
  CHECK(live() == 1);
  // The read restarts the watch and waits for the relist.
  clear_actions();
  hold_lists(std::chrono::milliseconds(500));
  pending_reply<api_object> read{sys, mgr, get_obj_atom::value,
                                 std::string{"ns"}, std::string{"name"}};
  run();
  CHECK_FALSE(read.ready());
  advance(std::chrono::milliseconds(500));
  REQUIRE(read.ready());
  x = read.take();
  REQUIRE(x);
  CHECK(*x == stored);
  CHECK(action_log() == strings{"list ns/name", "watch ns/name"});
  CHECK(open_watches() == 1);
  hold_lists(caf::timespan{0});
  clear_actions();
  for (int i = 0; i < 3; ++i) {
    advance(std::chrono::seconds(20));
    x = get("ns", "name");
    REQUIRE(x);
    CHECK(*x == stored);
  }
  recycle();
  CHECK(open_watches() == 1);
  CHECK(actions().empty());
  // Idle means strictly longer than max idle.
  advance(std::chrono::minutes(1));
  recycle();
  CHECK(open_watches() == 1);
  advance(std::chrono::nanoseconds(1));
  recycle();
  CHECK(open_watches() == 0);
  CHECK(server_watches() == 0);
  CHECK(started() == 1);
  CHECK(stopped() == 0);
}

TEST_CASE_METHOD(manager_fixture,
                 "the recycling timer first runs one period after the start "
                 "and then every period",
                 "[manager][upstream][idle]") {
  create(make_secret("ns", "name"));
  start_manager(resource::secrets, std::chrono::minutes(1),
                std::chrono::minutes(1));
  add_ref("ns", "name", "pod");
  REQUIRE(open_watches() == 1);
  advance(std::chrono::seconds(59));
  CHECK(open_watches() == 1);
  // The first pass: a synced object never read counts as idle since time
  // zero (upstream's lastAccessTime starts at zero).
  advance(std::chrono::seconds(1));
  CHECK(open_watches() == 0);
  REQUIRE(get("ns", "name"));
  CHECK(open_watches() == 1);
  // Read at the first pass: exactly max idle later is not idle yet.
  advance(std::chrono::minutes(1));
  CHECK(open_watches() == 1);
  advance(std::chrono::minutes(1));
  CHECK(open_watches() == 0);
  CHECK(server_watches() == 0);
  CHECK(live() == 1);
}

TEST_CASE_METHOD(manager_fixture,
                 "a slow initial list is neither recycled nor served before "
                 "it completes",
                 "[manager][upstream][idle]") {
  auto stored = create(make_secret("ns", "name", {{"k", "v"}}));
  hold_lists(std::chrono::seconds(120));
  start_manager(resource::secrets, std::chrono::minutes(1));
  add_ref("ns", "name", "pod");
  advance(std::chrono::seconds(90));
  recycle();
  CHECK(live() == 1);
  CHECK(counters.busy.load() == 1);
  CHECK(action_log() == strings{"list ns/name"});
  pending_reply<api_object> read{sys, mgr, get_obj_atom::value,
                                 std::string{"ns"}, std::string{"name"}};
  run();
  advance(std::chrono::milliseconds(999));
  CHECK_FALSE(read.ready());
  advance(std::chrono::milliseconds(1));
  REQUIRE(read.ready());
  auto x = read.take();
  CHECK(code_of(x) == errc::sync_timeout);
  CHECK(outcome(x)
        == "failed to sync secret cache: timed out waiting for the condition");
  recycle();
  CHECK(live() == 1);
  CHECK(action_log() == strings{"list ns/name"});
  // 120 s after the list arrived, it completes and the watch opens.
  advance(std::chrono::seconds(29));
  CHECK(action_log() == strings{"list ns/name", "watch ns/name"});
  CHECK(open_watches() == 1);
  CHECK(counters.busy.load() == 0);
  // Last read at +90 s, now +120 s: not idle.
  recycle();
  CHECK(open_watches() == 1);
  x = get("ns", "name");
  REQUIRE(x);
  CHECK(*x == stored);
  CHECK(started() == 1);
}

TEST_CASE_METHOD(manager_fixture,
                 "reading an immutable secret stops its watch and keeps "
                 "serving it without calls",
                 "[manager][upstream][immutable]") {
  auto stored = create(make_secret("ns", "name", {{"k", "v"}}, true));
  start_manager();
  add_ref("ns", "name", "pod");
  CHECK(server_watches() == 1);
  auto x = get("ns", "name");
  REQUIRE(x);
  CHECK(*x == stored);
  CHECK(server_watches() == 0);
  CHECK(open_watches() == 0);
  CHECK(live() == 1);
  clear_actions();
  for (int i = 0; i < 3; ++i) {
    x = get("ns", "name");
    REQUIRE(x);
    CHECK(*x == stored);
  }
  advance(std::chrono::minutes(10));
  recycle();
  x = get("ns", "name");
  REQUIRE(x);
  CHECK(*x == stored);
  CHECK(actions().empty());
  CHECK(started() == 1);
  CHECK(stopped() == 0);
}

TEST_CASE_METHOD(manager_fixture,
                 "a snapshot read's immutability report stops the watch of "
                 "an immutable object only",
                 "[manager][immutable]") {
  auto frozen = create(make_secret("ns", "frozen", {{"k", "v"}}, true));
  create(make_secret("ns", "mutable", {{"k", "v"}}));
  start_manager();
  add_ref("ns", "frozen", "pod");
  add_ref("ns", "mutable", "pod");
  CHECK(server_watches() == 2);
  self->send(mgr, immut_atom::value, std::string{"ns"},
             std::string{"mutable"});
  run();
  CHECK(server_watches() == 2);
  self->send(mgr, immut_atom::value, std::string{"ns"},
             std::string{"frozen"});
  run();
  CHECK(server_watches() == 1);
  CHECK(open_watches() == 1);
  clear_actions();
  auto x = get("ns", "frozen");
  REQUIRE(x);
  CHECK(*x == frozen);
  CHECK(actions().empty());
  // An unknown object's report is ignored.
  self->send(mgr, immut_atom::value, std::string{"ns"},
             std::string{"unknown"});
  run();
  CHECK(live() == 2);
}

TEST_CASE_METHOD(manager_fixture,
                 "after every pod is unregistered no reflector and no watch "
                 "is left",
                 "[manager]") {
  for (auto name : {"a", "b", "c", "d"})
    create(make_secret("ns", name));
  start_manager();
  reg(pod_with_secrets("ns", "p1", "u1", {"a"}, {{{"b"}, {"c"}}}));
  reg(pod_with_secrets("ns", "p2", "u2", {"c"}, {{{"d"}, {}}}));
  reg(pod_with_secrets("ns", "p3", "u3", {}, {{{"a"}, {"d"}}}));
  CHECK(started() == 4);
  CHECK(live() == 4);
  CHECK(open_watches() == 4);
  CHECK(server_watches() == 4);
  for (auto name : {"a", "b", "c", "d"})
    CHECK(get("ns", name));
  auto sync = request<caf::ok_atom>(mgr, sync_atom::value);
  CHECK(sync);
  unreg_bare("ns", "p1", "u1");
  CHECK(live() == 3);
  unreg_bare("ns", "p2", "u2");
  CHECK(live() == 2);
  unreg_bare("ns", "p3", "u3");
  CHECK(started() == 4);
  CHECK(stopped() == 4);
  CHECK(live() == 0);
  CHECK(open_watches() == 0);
  CHECK(server_watches() == 0);
  CHECK(counters.busy.load() == 0);
  CHECK(counters.referenced_objects.load() == 0);
  CHECK(counters.registered_pods.load() == 0);
}

// -- failures ----------------------------------------------------------------

TEST_CASE_METHOD(manager_fixture,
                 "a failed reflector is replaced and its object is served "
                 "again",
                 "[manager][failure]") {
  auto stored = create(make_secret("ns", "name", {{"k", "v"}}));
  start_manager();
  add_ref("ns", "name", "pod");
  // The reflector answers delegated reads itself: the reply names it.
  caf::strong_actor_ptr reflector;
  auto read = self->request(mgr, caf::infinite, get_obj_atom::value,
                            std::string{"ns"}, std::string{"name"});
  run();
  REQUIRE_FALSE(self->mailbox().empty());
  read.receive(
    [&](const api_object& x) {
      CHECK(x == stored);
      reflector = self->current_sender();
    },
    [&](caf::error&) { FAIL("the read failed"); });
  REQUIRE(reflector);
  REQUIRE(reflector->address() != mgr.address());
  clear_actions();
  // What an exception in a handler does. (exit_reason::kill is not used:
  // CAF 0.17 makes a kill fatal for linked actors too, exit handler or not.)
  caf::anon_send(caf::actor_cast<caf::actor>(reflector),
                 caf::exit_msg{reflector->address(),
                               caf::make_error(caf::sec::runtime_error)});
  run();
  CHECK(started() == 2);
  CHECK(stopped() == 1);
  CHECK(live() == 1);
  CHECK(action_log() == strings{"list ns/name", "watch ns/name"});
  CHECK(open_watches() == 1);
  CHECK(server_watches() == 1);
  CHECK(refs("ns", "name") == ref_map{{"pod", 1}});
  auto x = get("ns", "name");
  REQUIRE(x);
  CHECK(*x == stored);
  // The replacement is the one the last reference stops.
  del_ref("ns", "name", "pod");
  CHECK(stopped() == 2);
  CHECK(live() == 0);
  CHECK(open_watches() == 0);
  CHECK(server_watches() == 0);
}

// -- reflector reuse (actors/reflector_pool.hpp) --------------------------------

TEST_CASE_METHOD(manager_fixture,
                 "a reflector whose object lost its last reference serves the "
                 "next new object, and an idle manager keeps none",
                 "[manager][pool]") {
  start_manager();
  create(make_secret("ns", "a", {{"k", "a"}}));
  create(make_secret("ns", "b", {{"k", "b"}}));
  create(make_secret("ns", "c", {{"k", "c"}}));
  add_ref("ns", "c", "keep"); // keeps the manager busy: the pool stays
  auto base = sys.registry().running();
  // The actor that answers a read of ns/name.
  auto server_of = [&](const std::string& name) {
    caf::strong_actor_ptr who;
    auto read = self->request(mgr, caf::infinite, get_obj_atom::value,
                              std::string{"ns"}, name);
    run();
    read.receive([&](const api_object&) { who = self->current_sender(); },
                 [&](caf::error&) { FAIL("the read failed"); });
    return who;
  };
  add_ref("ns", "a", "pod");
  auto first = server_of("a");
  REQUIRE(first);
  CHECK(sys.registry().running() == base + 1);
  del_ref("ns", "a", "pod");
  CHECK(sys.registry().running() == base + 1); // parked, not stopped
  add_ref("ns", "b", "pod");
  auto second = server_of("b");
  CHECK(second == first);
  CHECK(sys.registry().running() == base + 1);
  auto x = get("ns", "b");
  REQUIRE(x);
  CHECK(x->as_secret()->data.at("k") == "b");
  CHECK(code_of(get("ns", "a")) == errc::not_registered);
  CHECK(started() == 3);
  CHECK(stopped() == 1);
  CHECK(live() == 2);
  CHECK(open_watches() == 2);
  // The last references go: nothing referenced, nothing waiting, so the
  // parked reflectors are stopped as well.
  del_ref("ns", "b", "pod");
  del_ref("ns", "c", "keep");
  CHECK(live() == 0);
  CHECK(stopped() == 3);
  CHECK(open_watches() == 0);
  CHECK(sys.registry().running() == base - 1);
}

TEST_CASE_METHOD(manager_fixture,
                 "a pooled reflector that dies before taking up its next "
                 "object is replaced and its activation counted",
                 "[manager][pool][failure]") {
  start_manager();
  create(make_secret("ns", "a", {{"k", "a"}}));
  create(make_secret("ns", "b", {{"k", "b"}}));
  create(make_secret("ns", "c", {{"k", "c"}}));
  add_ref("ns", "c", "keep"); // keeps the pool from being drained
  add_ref("ns", "a", "pod");
  caf::strong_actor_ptr pooled;
  auto read = self->request(mgr, caf::infinite, get_obj_atom::value,
                            std::string{"ns"}, std::string{"a"});
  run();
  read.receive([&](const api_object&) { pooled = self->current_sender(); },
               [&](caf::error&) { FAIL("the read failed"); });
  REQUIRE(pooled);
  del_ref("ns", "a", "pod"); // parked
  // The manager hands the parked actor ns/b; the actor dies (urgent exit,
  // as a crash) before it handles the activation.
  self->send(mgr, add_ref_atom::value, std::string{"ns"}, std::string{"b"},
             std::string{"pod"});
  sched.prioritize(mgr);
  sched.run_once();
  caf::anon_send<caf::message_priority::high>(
    caf::actor_cast<caf::actor>(pooled),
    caf::exit_msg{pooled->address(), caf::make_error(caf::sec::runtime_error)});
  run();
  CHECK(counters.reflectors_spawned.load() == started());
  CHECK(live() == 2);
  auto x = get("ns", "b");
  REQUIRE(x);
  CHECK(x->as_secret()->data.at("k") == "b");
  del_ref("ns", "b", "pod");
  del_ref("ns", "c", "keep");
  CHECK(live() == 0);
  CHECK(started() == stopped());
}

// -- commands through the inbox (the facade's path) ------------------------------

namespace {

/// A manager fed through a command inbox, as the facade feeds it: a push
/// that the parked manager waits for sends it a drain.
struct inbox_fixture : manager_fixture {
  std::shared_ptr<detail::command_inbox> inbox
    = std::make_shared<detail::command_inbox>();
  int wakes = 0;

  void start(caf::timespan coalesce) {
    auto cfg = config_for(resource::secrets);
    cfg.recycle_period = caf::timespan{0};
    cfg.inbox = inbox;
    cfg.coalesce = coalesce;
    spawn_manager(std::move(cfg));
  }

  /// Pushes without running the scheduler.
  void push(detail::command::kind what, const std::string& pod,
            const std::string& secret) {
    auto reg = make_registration("ns", pod, "uid-" + pod, {secret});
    if (inbox->push(what, std::move(reg))) {
      ++wakes;
      self->send(mgr, drain_atom::value);
    }
  }

  void register_pods(int first, int last) {
    for (int i = first; i < last; ++i)
      push(detail::command::kind::reg, "p" + std::to_string(i), "s");
  }

  std::int64_t pods() const {
    return counters.registered_pods.load();
  }
};

} // namespace

TEST_CASE_METHOD(inbox_fixture,
                 "pushed commands are applied by one drain per wake-up",
                 "[manager][inbox]") {
  start(caf::timespan{0});
  create(make_secret("ns", "s", {}));
  register_pods(0, 3);
  CHECK(wakes == 1); // only the first push finds the manager parked
  CHECK(pods() == 0);
  run();
  CHECK(pods() == 3);
  CHECK(inbox->unapplied() == 0);
  CHECK(counters.referenced_objects.load() == 1);
  // Parked again: the next push wakes it.
  push(detail::command::kind::unreg, "p0", "s");
  CHECK(wakes == 2);
  run();
  CHECK(pods() == 2);
}

TEST_CASE_METHOD(inbox_fixture,
                 "a small batch is coalesced; a sync or a big batch is not",
                 "[manager][inbox][coalesce]") {
  start(std::chrono::milliseconds(1));
  create(make_secret("ns", "s", {}));
  register_pods(0, 3);
  run();
  // Three commands wait: the manager lets the batch grow for 1 ms first,
  // and no push wakes it meanwhile.
  CHECK(pods() == 0);
  register_pods(3, 5);
  CHECK(wakes == 1);
  advance(std::chrono::microseconds(999));
  CHECK(pods() == 0);
  advance(std::chrono::microseconds(1));
  CHECK(pods() == 5);
  CHECK(inbox->unapplied() == 0);
  // A sync applies what waits at once.
  register_pods(5, 6);
  CHECK(wakes == 2);
  auto ok = request<caf::ok_atom>(mgr, sync_atom::value);
  REQUIRE(ok);
  CHECK(pods() == 6);
  advance(std::chrono::milliseconds(1)); // the coalescing drain finds none
  CHECK(pods() == 6);
  // Enough commands for a batch of their own are applied at once.
  register_pods(6, 6 + 128);
  CHECK(wakes == 3);
  run();
  CHECK(pods() == 6 + 128);
}

TEST_CASE_METHOD(inbox_fixture,
                 "an object referenced and released within one batch gets "
                 "no reflector; one still referenced at its end does",
                 "[manager][inbox][churn]") {
  start(caf::timespan{0});
  create(make_secret("ns", "s", {}));
  create(make_secret("ns", "kept", {}));
  clear_actions();
  // One batch: p0 comes and goes (its object twice over), p1 stays.
  push(detail::command::kind::reg, "p0", "s");
  push(detail::command::kind::unreg, "p0", "s");
  push(detail::command::kind::reg, "p0", "s");
  push(detail::command::kind::unreg, "p0", "s");
  push(detail::command::kind::reg, "p1", "kept");
  run();
  CHECK(pods() == 1);
  CHECK(counters.referenced_objects.load() == 1);
  CHECK(started() == 1);
  CHECK(live() == 1);
  CHECK(action_log() == strings{"list ns/kept", "watch ns/kept"});
  CHECK(outcome(get("ns", "kept")) == "object");
  CHECK(outcome(get("ns", "s")) == not_registered_error("ns", "s").message);
  // Released in a later batch: stopped as always.
  push(detail::command::kind::unreg, "p1", "kept");
  run();
  CHECK(live() == 0);
  CHECK(counters.reflectors_stopped.load() == 1);
}
