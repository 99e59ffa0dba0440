// The Cache (TTL) and Get strategies, against upstream's
// cache_based_manager_test.go (reference kubelet-manager.md 5.1 #1 to #10)
// and the secret / configmap package tests (5.3), with upstream's exact
// action counts; then the same strategies through the facade.
//
// The manager tests run on the deterministic scheduler: the in-memory API
// server's action log stands for client-go's fake clientset (each action
// records the resourceVersion asked for: "" live, "0" from the API server's
// cache), virtual time for the fake clock, a node_ttl_source for the node
// getter. "Concurrent" reads are requests all sent before the scheduler
// runs, so each cache entry sees them queued at once.
#include "podref/actors/manager.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/error.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "podref/actors/memory_api_server.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/read_side/read_side.hpp"
#include "podref/messages/node_ttl.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/messages/strategy.hpp"
#include "podref/runtime/typed_managers.hpp"
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

/// The podref error of a failed read.
error_info info_of(const caf::error& err) {
  return from_caf_error(err, error_info{errc::unavailable,
                                        "CAF error: " + caf::to_string(err)});
}

/// "verb ns/name rv=..." for every action, to compare logs in one line.
strings describe(const std::vector<source_action>& xs) {
  strings result;
  for (const auto& x : xs)
    result.push_back(std::string{to_string(x.verb)} + " "
                     + std::string{plural_name(x.res)} + " " + x.ns + "/"
                     + x.name + " rv=\"" + x.rv + "\"");
  return result;
}

node_ptr node_with_ttl(std::optional<std::string> value) {
  auto n = std::make_shared<node>();
  n->metadata.name = "node-1";
  if (value)
    n->metadata.annotations[std::string{node_ttl_annotation}] = *value;
  return n;
}

struct cache_fixture : podref::test::manager_fixture_base {
  std::shared_ptr<node_ttl_source> node_ttl
    = std::make_shared<node_ttl_source>();

  /// Spawns the manager under test with `default_ttl` and the node TTL of
  /// `node_ttl` (none until a test feeds it a node).
  void start_manager(caf::timespan default_ttl,
                     strategy s = strategy::cache,
                     resource r = resource::secrets) {
    res = r;
    auto cfg = config_for(r);
    cfg.strategy = s;
    cfg.node_ttl = node_ttl;
    cfg.default_ttl = default_ttl;
    spawn_manager(std::move(cfg));
  }

  // -- the API server --------------------------------------------------------

  /// Creates `names` in every namespace of `namespaces`.
  void create_all(const strings& namespaces, const strings& names) {
    for (const auto& ns : namespaces)
      for (const auto& name : names)
        create(res == resource::secrets ? make_secret(ns, name)
                                        : make_config_map(ns, name));
  }

  strings action_log() {
    return describe(actions());
  }

  /// The next `n` gets fail with `err` (upstream: a prepended reactor).
  void fail_gets(std::uint32_t n, const error_info& err) {
    self->send(server, fail_atom::value, source_verb::get, n, err);
    run();
  }

  // -- the manager -----------------------------------------------------------

  /// Sends one read per key without running the scheduler, then runs it:
  /// every read reaches its cache entry while the others are queued.
  std::vector<caf::expected<api_object>>
  concurrent_gets(const std::vector<std::pair<std::string, std::string>>&
                    keys) {
    std::vector<pending_reply<api_object>> pending;
    pending.reserve(keys.size());
    for (const auto& [ns, name] : keys)
      pending.emplace_back(sys, mgr, get_obj_atom::value, ns, name);
    run();
    std::vector<caf::expected<api_object>> result;
    for (auto& x : pending)
      result.push_back(x.take());
    return result;
  }

  /// checkObject: shouldExist => no error; otherwise the error is exactly
  /// `object "<ns>"/"<name>" not registered`.
  void check_object(const std::string& ns, const std::string& name,
                    bool should_exist) {
    INFO(ns << "/" << name << " should exist: " << should_exist);
    auto x = get(ns, name);
    if (should_exist) {
      if (!x)
        FAIL_CHECK(info_of(x.error()).message);
    } else {
      REQUIRE_FALSE(x);
      CHECK(info_of(x.error()) == not_registered_error(ns, name));
    }
  }

  /// A copy of what the object's entry published.
  std::optional<detail::object_snapshot> snapshot(const std::string& ns,
                                                  const std::string& name) {
    auto key = ns + '/' + name;
    auto guard = rs->domain.pin();
    auto* slot = rs->index.find(key, detail::hash_key(key));
    if (slot == nullptr)
      return std::nullopt;
    return *slot->load();
  }
};

} // namespace

// -- 5.1 cache_based_manager_test.go ------------------------------------------

TEST_CASE_METHOD(cache_fixture,
                 "TestSecretStore: references fetch nothing, reads fetch "
                 "registered objects only",
                 "[cache][5.1]") {
  start_manager(0s);
  create_all({"ns1", "ns2", "ns3", "ns4"}, {"name1", "name2", "name3",
                                            "name4"});
  clear_actions();
  add_ref("ns1", "name1", "pod1");
  add_ref("ns2", "name2", "pod2");
  add_ref("ns1", "name1", "pod3");
  add_ref("ns1", "name1", "pod4");
  del_ref("ns1", "name1", "pod1");
  del_ref("ns2", "name2", "pod2");
  add_ref("ns3", "name3", "pod5");
  CHECK(actions().empty());
  CHECK(get("ns1", "name1"));
  CHECK_FALSE(get("ns2", "name2"));
  CHECK(get("ns3", "name3"));
  CHECK(action_log()
        == strings{"get secrets ns1/name1 rv=\"\"",
                   "get secrets ns3/name3 rv=\"\""});
  check_object("ns1", "name1", true);
  check_object("ns2", "name2", false);
  check_object("ns3", "name3", true);
  check_object("ns4", "name4", false);
}

TEST_CASE_METHOD(cache_fixture,
                 "TestSecretStoreDeletingSecret: NotFound is cached together "
                 "with the empty object the API returned",
                 "[cache][5.1]") {
  start_manager(0s);
  auto stored = create(make_secret("ns", "name", {{"k", "v"}}));
  add_ref("ns", "name", "pod");
  auto x = get("ns", "name");
  REQUIRE(x);
  CHECK(*x == stored);
  auto snap = snapshot("ns", "name");
  REQUIRE(snap);
  CHECK(snap->cached_ok);
  CHECK(snap->object == stored);
  fail_gets(1, api_not_found_error(resource::secrets, "name"));
  auto y = get("ns", "name");
  REQUIRE_FALSE(y);
  CHECK(info_of(y.error())
        == error_info{errc::not_found, "secrets \"name\" not found"});
  snap = snapshot("ns", "name");
  REQUIRE(snap);
  CHECK_FALSE(snap->cached_ok);
  CHECK(snap->object == api_object{}); // replaced by the empty object
  // A cached NotFound is never fresh: the next read is live again.
  clear_actions();
  CHECK(get("ns", "name"));
  CHECK(action_log() == strings{"get secrets ns/name rv=\"\""});
}

TEST_CASE_METHOD(cache_fixture,
                 "TestSecretStoreGetAlwaysRefresh: with TTL 0, 100 "
                 "concurrent reads over 10 objects make 100 GETs",
                 "[cache][5.1]") {
  start_manager(0s);
  std::vector<std::pair<std::string, std::string>> keys;
  for (int i = 0; i < 10; ++i) {
    auto ns = "ns-" + std::to_string(i);
    auto name = "name-" + std::to_string(i);
    create(make_secret(ns, name));
    add_ref(ns, name, "pod-" + std::to_string(i));
  }
  clear_actions();
  for (int i = 0; i < 100; ++i)
    keys.emplace_back("ns-" + std::to_string(i % 10),
                      "name-" + std::to_string(i % 10));
  auto results = concurrent_gets(keys);
  for (auto& x : results)
    CHECK(x);
  auto log = actions();
  CHECK(log.size() == 100);
  for (auto& a : log)
    CHECK(a.verb == source_verb::get);
}

TEST_CASE_METHOD(cache_fixture,
                 "TestSecretStoreGetNeverRefresh: with TTL 1 min, 100 "
                 "concurrent reads over 10 objects make exactly 10 GETs",
                 "[cache][5.1]") {
  start_manager(1min);
  std::vector<std::pair<std::string, std::string>> keys;
  for (int i = 0; i < 10; ++i) {
    auto ns = "ns-" + std::to_string(i);
    auto name = "name-" + std::to_string(i);
    create(make_secret(ns, name));
    add_ref(ns, name, "pod-" + std::to_string(i));
  }
  clear_actions();
  for (int i = 0; i < 100; ++i)
    keys.emplace_back("ns-" + std::to_string(i % 10),
                      "name-" + std::to_string(i % 10));
  auto results = concurrent_gets(keys);
  for (std::size_t i = 0; i < results.size(); ++i) {
    REQUIRE(results[i]);
    CHECK(results[i]->meta().name == keys[i].second);
  }
  auto log = actions();
  CHECK(log.size() == 10);
  for (auto& a : log) {
    CHECK(a.verb == source_verb::get);
    CHECK(a.rv.empty()); // first fetches are live
  }
}

TEST_CASE_METHOD(cache_fixture,
                 "TestCustomTTL: the node's TTL is re-read on every check "
                 "and the default applies without it",
                 "[cache][5.1]") {
  start_manager(1min);
  create(make_secret("ns", "name"));
  add_ref("ns", "name", "pod");
  REQUIRE(get("ns", "name"));
  clear_actions();
  node_ttl->set_node(node_with_ttl("0"));
  REQUIRE(get("ns", "name"));
  CHECK(action_log() == strings{"get secrets ns/name rv=\"0\""});
  clear_actions();
  node_ttl->set_node(node_with_ttl("300"));
  REQUIRE(get("ns", "name"));
  CHECK(actions().empty());
  advance(4min);
  REQUIRE(get("ns", "name"));
  CHECK(actions().empty());
  advance(1min); // exactly last update + TTL: stale
  REQUIRE(get("ns", "name"));
  CHECK(action_log() == strings{"get secrets ns/name rv=\"0\""});
  clear_actions();
  node_ttl->set_node(node_with_ttl(std::nullopt)); // default: 1 min
  advance(55s);
  REQUIRE(get("ns", "name"));
  CHECK(actions().empty());
  advance(5s);
  REQUIRE(get("ns", "name"));
  CHECK(actions().size() == 1);
}

TEST_CASE_METHOD(cache_fixture,
                 "TestCacheInvalidation: new references, and only new ones, "
                 "make the next read fetch live",
                 "[cache][5.1]") {
  start_manager(1min);
  create_all({"ns1"}, {"s1", "s10", "s2", "s20", "s3"});
  clear_actions();
  // {s1, s10, s2}
  auto spec1 = [](const std::string& ns, const std::string& name) {
    return pod_with_secrets(ns, name, ns + "/" + name, {"s1"},
                            {{{"s1"}, {"s10"}}, {{"s2"}, {}}});
  };
  // {s1, s2, s20, s3}
  auto spec2 = [](const std::string& ns, const std::string& name) {
    return pod_with_secrets(ns, name, ns + "/" + name, {"s1"},
                            {{{"s1"}, {}}, {{"s2"}, {"s20"}}, {{"s3"}, {}}});
  };
  reg(spec1("ns1", "name1"));
  for (auto name : {"s1", "s10", "s2"})
    REQUIRE(get("ns1", name));
  CHECK(action_log()
        == strings{"get secrets ns1/s1 rv=\"\"", "get secrets ns1/s10 rv=\"\"",
                   "get secrets ns1/s2 rv=\"\""});
  clear_actions();
  // The update adds s20 and s3 only: s1 and s2 stay cached.
  reg(spec2("ns1", "name1"));
  for (auto name : {"s1", "s2", "s20", "s3"})
    REQUIRE(get("ns1", name));
  CHECK(action_log()
        == strings{"get secrets ns1/s20 rv=\"\"",
                   "get secrets ns1/s3 rv=\"\""});
  clear_actions();
  // A new pod invalidates s1 and s2 (and references s10 again).
  reg(spec1("ns1", "name2"));
  for (auto name : {"s1", "s10", "s2", "s20", "s3"})
    REQUIRE(get("ns1", name));
  CHECK(action_log()
        == strings{"get secrets ns1/s1 rv=\"\"", "get secrets ns1/s10 rv=\"\"",
                   "get secrets ns1/s2 rv=\"\""});
  clear_actions();
  // Not upstream's, but its rule: a TTL refresh of a good object reads
  // from the API server's cache.
  advance(1min);
  REQUIRE(get("ns1", "s1"));
  CHECK(action_log() == strings{"get secrets ns1/s1 rv=\"0\""});
  // An expired-resourceVersion error with nothing cached surfaces.
  reg(spec1("dummy-ns", "dummy-name"));
  fail_gets(1, error_info{errc::expired, "expired"});
  auto x = get("dummy-ns", "s2");
  REQUIRE_FALSE(x);
  CHECK(info_of(x.error()) == error_info{errc::expired, "expired"});
  // Nothing was cached: the next read retries (and finds nothing).
  auto y = get("dummy-ns", "s2");
  REQUIRE_FALSE(y);
  CHECK(info_of(y.error()).code == errc::not_found);
}

TEST_CASE_METHOD(cache_fixture,
                 "TestRegisterIdempotence: re-registering and "
                 "re-unregistering change no refcount",
                 "[cache][5.1]") {
  start_manager(1min);
  auto p = [](const std::string& name) {
    return pod_with_secrets("ns1", name, "ns1/" + name, {"s1"}, {});
  };
  reg(p("name1"));
  CHECK(refcount("ns1", "s1") == 1);
  reg(p("name1"));
  CHECK(refcount("ns1", "s1") == 1);
  reg(p("name2"));
  CHECK(refcount("ns1", "s1") == 2);
  unreg(p("name1"));
  CHECK(refcount("ns1", "s1") == 1);
  unreg(p("name1"));
  CHECK(refcount("ns1", "s1") == 1);
  unreg(p("name2"));
  CHECK(refcount("ns1", "s1") == 0);
}

TEST_CASE_METHOD(cache_fixture,
                 "TestCacheRefcounts: refcounts follow registrations, also "
                 "for interleaved pods of one name",
                 "[cache][5.1]") {
  start_manager(1min);
  using spec = std::pair<strings, std::vector<env_refs>>;
  auto s1 = spec{{"s1"}, {{{"s1"}, {"s10"}}, {{"s2"}, {}}, {{"s3"}, {}}}};
  auto s2 = spec{{"s2"}, {{{"s4"}, {}}, {{"s5"}, {"s50"}}}};
  auto s3 = spec{{"s1"}, {{{"s3"}, {"s30"}}, {{"s5"}, {}}}};
  auto s4 = spec{{"s3"}, {{{"s6"}, {}}, {{}, {"s60"}}}};
  auto s5 = spec{{}, {{{"s7"}, {}}, {{}, {"s70"}}}};
  auto p = [](const std::string& name, const spec& s) {
    return pod_with_secrets("ns1", name, "ns1/" + name, s.first, s.second);
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
  auto expected = std::map<std::string, int>{
    {"s1", 3}, {"s10", 1}, {"s2", 3},  {"s3", 3}, {"s30", 2}, {"s4", 2},
    {"s5", 4}, {"s50", 2}, {"s6", 0},  {"s60", 0}, {"s7", 1}, {"s70", 1}};
  for (const auto& [name, count] : expected) {
    INFO(name);
    CHECK(refcount("ns1", name) == count);
  }
  // Same pod name, different uids, interleaved.
  auto q = [](const std::string& uid, const std::string& secret) {
    return pod_with_secrets("nsinterleaved", "pod", uid, {},
                            {{{secret}, {}}});
  };
  CHECK(refcount("nsinterleaved", "secret1") == 0);
  CHECK(refcount("nsinterleaved", "secret2") == 0);
  reg(q("poduid1", "secret1"));
  CHECK(refcount("nsinterleaved", "secret1") == 1);
  CHECK(refcount("nsinterleaved", "secret2") == 0);
  reg(q("poduid2", "secret2"));
  CHECK(refcount("nsinterleaved", "secret1") == 1);
  CHECK(refcount("nsinterleaved", "secret2") == 1);
  unreg_bare("nsinterleaved", "pod", "poduid1");
  CHECK(refcount("nsinterleaved", "secret1") == 0);
  CHECK(refcount("nsinterleaved", "secret2") == 1);
  unreg_bare("nsinterleaved", "pod", "poduid2");
  CHECK(refcount("nsinterleaved", "secret1") == 0);
  CHECK(refcount("nsinterleaved", "secret2") == 0);
}

TEST_CASE_METHOD(cache_fixture,
                 "TestCacheBasedSecretManager: exactly the referenced "
                 "secrets of registered pods are served",
                 "[cache][5.1][5.3]") {
  start_manager(0s);
  auto names = strings{"s1", "s2", "s3", "s4", "s5", "s6", "s20", "s40",
                       "s50"};
  create_all({"ns1", "ns2", "ns3"}, names);
  auto s1 = [](const std::string& ns, const std::string& name) {
    return pod_with_secrets(ns, name, ns + "/" + name, {"s1"},
                            {{{"s1"}, {}}, {{"s2"}, {"s20"}}});
  };
  auto s2 = [](const std::string& ns, const std::string& name) {
    return pod_with_secrets(ns, name, ns + "/" + name, {"s1"},
                            {{{"s3"}, {}}, {{"s4"}, {"s40"}}});
  };
  auto s3 = [](const std::string& ns, const std::string& name) {
    return pod_with_secrets(ns, name, ns + "/" + name, {"s5"},
                            {{{"s6"}, {"s60"}}});
  };
  reg(s1("ns1", "name1"));
  reg(s2("ns1", "name1"));
  reg(s2("ns2", "name2"));
  reg(s3("ns3", "name"));
  unreg(s3("ns3", "name"));
  auto wanted = std::set<std::string>{"s1", "s3", "s4", "s40"};
  for (auto ns : {"ns1", "ns2", "ns3"})
    for (const auto& name : names)
      check_object(ns, name,
                   wanted.count(name) != 0 && std::string{ns} != "ns3");
}

// -- 5.3 secret / configmap packages ------------------------------------------

TEST_CASE_METHOD(cache_fixture,
                 "TestCacheBasedConfigMapManager: exactly the referenced "
                 "config maps of registered pods are served",
                 "[cache][5.3]") {
  start_manager(0s, strategy::cache, resource::config_maps);
  auto names = strings{"s1", "s2", "s3", "s4", "s5", "s6", "s20", "s40",
                       "s50"};
  create_all({"ns1", "ns2", "ns3"}, names);
  auto s1 = [](const std::string& ns, const std::string& name) {
    return pod_with_config_maps(ns, name, ns + "/" + name,
                                {{{"s1"}, {}}, {{}, {"s20"}}}, {"s2"});
  };
  auto s2 = [](const std::string& ns, const std::string& name) {
    return pod_with_config_maps(ns, name, ns + "/" + name,
                                {{{"s3", "s4"}, {"s40"}}});
  };
  auto s3 = [](const std::string& ns, const std::string& name) {
    return pod_with_config_maps(ns, name, ns + "/" + name,
                                {{{"s6"}, {"s60"}}});
  };
  reg(s1("ns1", "name1"));
  reg(s1("ns2", "name2"));
  reg(s2("ns2", "name2"));
  reg(s3("ns3", "name"));
  unreg(s3("ns3", "name"));
  auto wanted = std::map<std::string, std::set<std::string>>{
    {"ns1", {"s1", "s2", "s20"}}, {"ns2", {"s3", "s4", "s40"}}, {"ns3", {}}};
  for (const auto& [ns, registered] : wanted)
    for (const auto& name : names)
      check_object(ns, name, registered.count(name) != 0);
}

TEST_CASE_METHOD(cache_fixture,
                 "a cache entry keeps serving its object through API "
                 "errors and retries on the next read",
                 "[cache]") {
  start_manager(1min);
  auto v1 = create(make_secret("ns", "a", {{"k", "1"}}));
  add_ref("ns", "a", "pod");
  REQUIRE(get("ns", "a"));
  advance(1min);
  fail_gets(1, error_info{errc::unavailable, "etcd is down"});
  auto x = get("ns", "a");
  REQUIRE(x); // stale, but served without error
  CHECK(*x == v1);
  // The failed refresh left the timestamp alone: the next read retries.
  clear_actions();
  auto v2 = request<api_object>(server, caf::update_atom::value,
                                make_secret("ns", "a", {{"k", "2"}}));
  REQUIRE(v2);
  auto y = get("ns", "a");
  REQUIRE(y);
  CHECK(*y == *v2);
  CHECK(action_log() == strings{"get secrets ns/a rv=\"0\""});
}

TEST_CASE_METHOD(cache_fixture,
                 "a new reference voids the published snapshot before the "
                 "entry even hears of it",
                 "[cache]") {
  start_manager(1min);
  create(make_secret("ns", "a"));
  add_ref("ns", "a", "pod1");
  REQUIRE(get("ns", "a"));
  auto key = std::string{"ns/a"};
  auto fresh_snapshot = [&] {
    auto guard = rs->domain.pin();
    auto* slot = rs->index.find(key, detail::hash_key(key));
    REQUIRE(slot != nullptr);
    auto* snap = slot->load();
    return snap->cached_ok && snap->generation == slot->invalidations();
  };
  CHECK(fresh_snapshot());
  // Only the manager runs: the entry has not processed invalidate yet.
  self->send(mgr, add_ref_atom::value, std::string{"ns"}, std::string{"a"},
             std::string{"pod2"});
  sched.run_once();
  CHECK_FALSE(fresh_snapshot());
  run();
  clear_actions();
  REQUIRE(get("ns", "a"));
  CHECK(action_log() == strings{"get secrets ns/a rv=\"\""});
  CHECK(fresh_snapshot());
}

TEST_CASE_METHOD(cache_fixture,
                 "the Get strategy reads live every time and keeps no "
                 "registrations",
                 "[get][5.3]") {
  start_manager(1min, strategy::get);
  create(make_secret("ns1", "s1"));
  reg(pod_with_secrets("ns1", "pod", "ns1/pod", {"s1"}, {}));
  CHECK(refcount("ns1", "s1") == 0);
  clear_actions();
  for (int i = 0; i < 3; ++i)
    REQUIRE(get("ns1", "s1"));
  auto missing = get("ns2", "s1");
  REQUIRE_FALSE(missing);
  CHECK(info_of(missing.error())
        == error_info{errc::not_found, "secrets \"s1\" not found"});
  CHECK(action_log().size() == 4);
  for (auto& a : actions())
    CHECK(a.rv.empty());
  CHECK(rs->counters.gets.load() == 4);
}

// -- the facade ---------------------------------------------------------------

namespace {

/// The action log of `api`'s server.
std::vector<source_action> api_actions(runtime& rt, api_server& api) {
  std::vector<source_action> result;
  caf::scoped_actor self{rt.system()};
  self->request(api.actor(), caf::infinite, actions_atom::value)
    .receive([&](std::vector<source_action>& xs) { result = std::move(xs); },
             [](caf::error&) { FAIL("no action log"); });
  return result;
}

} // namespace

TEST_CASE("TestSimpleSecretManager and TestSimpleConfigMapManager: Get reads "
          "live and ignores registrations",
          "[get][facade][5.3]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("ns1", "s1", {{"k", "v"}})));
  REQUIRE(api.create(make_config_map("ns1", "cm1", {{"k", "v"}})));
  secret_manager sm{rt, api, strategy::get};
  configmap_manager cm{rt, api, strategy::get};
  CHECK(sm.manager().managed_strategy() == strategy::get);
  auto s = sm.get_secret("ns1", "s1");
  REQUIRE(s);
  CHECK((*s)->metadata.name == "s1");
  auto c = cm.get_configmap("ns1", "cm1");
  REQUIRE(c);
  CHECK((*c)->metadata.name == "cm1");
  auto s_missing = sm.get_secret("ns2", "s1");
  REQUIRE_FALSE(s_missing);
  CHECK(s_missing.error()
        == error_info{errc::not_found, "secrets \"s1\" not found"});
  auto c_missing = cm.get_configmap("ns2", "cm1");
  REQUIRE_FALSE(c_missing);
  CHECK(c_missing.error()
        == error_info{errc::not_found, "configmaps \"cm1\" not found"});
  auto p = pod_with_secrets("ns1", "pod", "uid", {"s1"}, {});
  sm.register_pod(p);
  sm.unregister_pod(p);
  REQUIRE(sm.manager().sync());
  REQUIRE(sm.get_secret("ns1", "s1"));
  CHECK(sm.manager().stats().registered_pods == 0);
  CHECK(sm.manager().stats().gets == 3);
  CHECK(api_actions(rt, api).size() == 5); // every read reached the server
  CHECK(sm.manager().wait_quiescent(1s));
}

TEST_CASE("TestCachingAndWatchingSecretManagers and ConfigMapManagers: "
          "unregistered objects are errors, not API reads",
          "[cache][facade][5.3]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("ns1", "s1")));
  REQUIRE(api.create(make_config_map("ns1", "s1")));
  for (auto s : {strategy::cache, strategy::watch}) {
    INFO(to_string(s));
    secret_manager sm{rt, api, s};
    configmap_manager cm{rt, api, s};
    auto x = sm.get_secret("ns1", "s1");
    REQUIRE_FALSE(x);
    CHECK(x.error() == not_registered_error("ns1", "s1"));
    auto y = cm.get_configmap("ns1", "s1");
    REQUIRE_FALSE(y);
    CHECK(y.error() == not_registered_error("ns1", "s1"));
  }
  CHECK(api_actions(rt, api).empty());
}

TEST_CASE("fresh Cache hits are served from snapshots, and a new reference "
          "makes the next read fetch, from any thread",
          "[cache][facade]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("default", "s1", {{"k", "v1"}})));
  manager_options opts;
  opts.strategy = strategy::cache;
  opts.default_ttl = 1h; // nothing expires during the test
  secret_manager sm{rt, api, opts};
  sm.register_pod(pod_with_secrets("default", "pod-a", "uid-a", {"s1"}, {}));
  REQUIRE(sm.manager().sync());
  auto first = sm.get_secret("default", "s1");
  REQUIRE(first);
  CHECK((*first)->data == std::map<std::string, std::string>{{"k", "v1"}});
  REQUIRE(sm.manager().wait_quiescent(5s));
  auto before = sm.manager().stats();
  auto actions_before = api_actions(rt, api).size();
  CHECK(before.gets == 1);
  for (int i = 0; i < 10; ++i)
    REQUIRE(sm.get_secret("default", "s1"));
  auto after = sm.manager().stats();
  CHECK(after.snapshot_reads == before.snapshot_reads + 10);
  CHECK(after.waited_reads == before.waited_reads);
  CHECK(after.gets == 1);
  CHECK(api_actions(rt, api).size() == actions_before);
  // The object changes; the cache still holds v1 until a new reference.
  REQUIRE(api.apply(make_secret("default", "s1", {{"k", "v2"}})));
  auto cached = sm.get_secret("default", "s1");
  REQUIRE(cached);
  CHECK((*cached)->data.at("k") == "v1");
  sm.register_pod(pod_with_secrets("default", "pod-b", "uid-b", {"s1"}, {}));
  REQUIRE(sm.manager().sync());
  std::optional<result<secret_ptr>> seen;
  std::thread reader{[&] { seen.emplace(sm.get_secret("default", "s1")); }};
  reader.join();
  REQUIRE(seen);
  REQUIRE(*seen);
  CHECK((**seen)->data.at("k") == "v2");
  CHECK(sm.manager().stats().gets == 2);
  auto log = api_actions(rt, api);
  REQUIRE(log.size() == actions_before + 1);
  CHECK(log.back().verb == source_verb::get);
  CHECK(log.back().rv.empty()); // a live read after the invalidation
}

TEST_CASE("the Cache facade honours the node's TTL on every read",
          "[cache][facade]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("default", "s1")));
  auto node_ttl = std::make_shared<node_ttl_source>();
  manager_options opts;
  opts.default_ttl = 1h;
  opts.node_ttl = node_ttl;
  secret_manager sm{rt, api, strategy::cache, opts};
  sm.register_pod(pod_with_secrets("default", "pod", "uid", {"s1"}, {}));
  REQUIRE(sm.manager().sync());
  REQUIRE(sm.get_secret("default", "s1"));
  REQUIRE(sm.get_secret("default", "s1"));
  CHECK(sm.manager().stats().gets == 1);
  node_ttl->set_node(node_with_ttl("0")); // always stale from now on
  REQUIRE(sm.get_secret("default", "s1"));
  REQUIRE(sm.get_secret("default", "s1"));
  CHECK(sm.manager().stats().gets == 3);
  auto log = api_actions(rt, api);
  REQUIRE(log.size() == 3);
  CHECK(log[1].rv == "0");
  CHECK(log[2].rv == "0");
}
