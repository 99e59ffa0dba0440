// Upstream's TTL-based manager tests (reference kubelet-manager.md, 5.1),
// written as an embedder would: the public facades on the test kit's
// deterministic runtime, no CAF and no internal header. The TTL runs on the
// virtual clock, so minutes pass in microseconds and exactly.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "podref/messages/node_ttl.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "podref/testing/deterministic_runtime.hpp"
#include "support/pod_builders.hpp"
#include "kit_steps.hpp"

using namespace std::chrono_literals;
using podref::testing::deterministic_runtime;
using podref::test::env_refs;
using podref::test::make_secret;
using podref::test::pod_with_secrets;

namespace podref::kit_test {

namespace {

/// The deterministic runtime, its API server and one Cache manager whose
/// TTL comes from a node the test changes.
struct cache_kit {
  deterministic_runtime rt;
  api_server api{rt};
  std::shared_ptr<node_ttl_source> node_ttl
    = std::make_shared<node_ttl_source>();
  std::optional<secret_manager> mgr;

  explicit cache_kit(std::chrono::nanoseconds default_ttl) {
    manager_options opts;
    opts.default_ttl = default_ttl;
    opts.node_ttl = node_ttl;
    mgr.emplace(rt, api, strategy::cache, opts);
  }

  void create(const std::string& ns, const std::string& name) {
    REQUIRE(api.create(make_secret(ns, name)));
  }

  void reg(const pod& p) {
    REQUIRE(mgr->register_pod_and_wait(p));
  }

  void unreg(const pod& p) {
    REQUIRE(mgr->unregister_pod_and_wait(p));
  }

  bool get(const std::string& ns, const std::string& name) {
    return static_cast<bool>(mgr->get_secret(ns, name));
  }

  int refcount(const std::string& ns, const std::string& name) {
    auto st = mgr->status(ns, name);
    REQUIRE(st);
    return reference_count(*st);
  }

  void set_node_ttl(std::optional<std::string> annotation) {
    auto n = std::make_shared<node>();
    n->metadata.name = "node-1";
    if (annotation)
      n->metadata.annotations[std::string{node_ttl_annotation}] = *annotation;
    node_ttl->set_node(n);
  }
};

pod user(const std::string& ns, const std::string& name,
         const std::vector<std::string>& pull,
         const std::vector<env_refs>& containers = {}) {
  return pod_with_secrets(ns, name, ns + "/" + name, pull, containers);
}

} // namespace

TEST_CASE("kit: TestSecretStore: registrations fetch nothing, reads fetch "
          "registered objects only",
          "[kit][5.1]") {
  cache_kit k{0s};
  for (auto i : {"1", "2", "3"})
    k.create(std::string{"ns"} + i, std::string{"name"} + i);
  k.api.clear_actions();
  auto p1 = user("ns1", "pod1", {"name1"});
  auto p2 = user("ns2", "pod2", {"name2"});
  k.reg(p1);
  k.reg(p2);
  k.reg(user("ns1", "pod3", {"name1"}));
  k.unreg(p1);
  k.unreg(p2);
  k.reg(user("ns3", "pod5", {"name3"}));
  CHECK(action_log(k.api).empty());
  CHECK(k.get("ns1", "name1"));
  auto unregistered = k.mgr->get_secret("ns2", "name2");
  REQUIRE_FALSE(unregistered);
  CHECK(unregistered.error().message
        == "object \"ns2\"/\"name2\" not registered");
  CHECK(k.get("ns3", "name3"));
  CHECK(action_log(k.api)
        == strings{"get secrets ns1/name1 rv=\"\"",
                   "get secrets ns3/name3 rv=\"\""});
  CHECK_FALSE(k.get("ns4", "name4"));
}

TEST_CASE("kit: TestSecretStoreDeletingSecret: a NotFound replaces the "
          "cached object",
          "[kit][5.1]") {
  cache_kit k{0s};
  k.create("ns", "name");
  k.reg(user("ns", "pod", {"name"}));
  auto x = k.mgr->get_secret("ns", "name");
  REQUIRE(x);
  CHECK((*x)->metadata.name == "name");
  k.api.fail_next(source_verb::get, 1,
                  error_info{errc::not_found, "secrets \"name\" not found"});
  auto y = k.mgr->get_secret("ns", "name");
  REQUIRE_FALSE(y);
  CHECK(y.error().code == errc::not_found);
  auto st = k.mgr->status("ns", "name");
  REQUIRE(st);
  CHECK(st->phase == object_phase::synced);
  CHECK_FALSE(st->found);
}

TEST_CASE("kit: TestSecretStoreGetAlwaysRefresh and GetNeverRefresh: TTL 0 "
          "fetches on every read, a minute's TTL once per object",
          "[kit][5.1]") {
  auto [ttl, expected] = GENERATE(std::make_pair(0ns, std::size_t{100}),
                                  std::make_pair(std::chrono::nanoseconds{1min},
                                                 std::size_t{10}));
  cache_kit k{ttl};
  for (int i = 0; i < 10; ++i) {
    auto id = std::to_string(i);
    k.create("ns-" + id, "name-" + id);
    k.reg(pod_with_secrets("ns-" + id, "pod-" + id, "pod-" + id,
                           {"name-" + id}, {}));
  }
  k.api.clear_actions();
  for (int i = 0; i < 100; ++i) {
    auto id = std::to_string(i % 10);
    auto x = k.mgr->get_secret("ns-" + id, "name-" + id);
    REQUIRE(x);
    CHECK((*x)->metadata.name == "name-" + id);
  }
  auto log = k.api.actions();
  REQUIRE(log);
  CHECK(log->size() == expected);
  for (const auto& a : *log)
    CHECK(a.verb == source_verb::get);
}

TEST_CASE("kit: TestCustomTTL: the node's TTL is read on every check, and "
          "the default applies without it",
          "[kit][5.1]") {
  cache_kit k{1min};
  k.create("ns", "name");
  k.reg(user("ns", "pod", {"name"}));
  REQUIRE(k.get("ns", "name"));
  k.api.clear_actions();
  auto fetches = [&] {
    auto n = k.api.actions();
    REQUIRE(n);
    k.api.clear_actions();
    return n->size();
  };
  k.set_node_ttl("0");
  REQUIRE(k.get("ns", "name"));
  CHECK(fetches() == 1);
  k.set_node_ttl("300");
  REQUIRE(k.get("ns", "name"));
  CHECK(fetches() == 0);
  k.rt.advance(4min);
  REQUIRE(k.get("ns", "name"));
  CHECK(fetches() == 0);
  k.rt.advance(1min);
  REQUIRE(k.get("ns", "name"));
  CHECK(fetches() == 1);
  k.set_node_ttl(std::nullopt); // the default: one minute
  k.rt.advance(55s);
  REQUIRE(k.get("ns", "name"));
  CHECK(fetches() == 0);
  k.rt.advance(5s);
  REQUIRE(k.get("ns", "name"));
  CHECK(fetches() == 1);
}

TEST_CASE("kit: TestCacheInvalidation: new references, and only new ones, "
          "make the next read fetch",
          "[kit][5.1]") {
  cache_kit k{1min};
  for (auto name : {"s1", "s10", "s2", "s20", "s3"})
    k.create("ns1", name);
  k.api.clear_actions();
  auto spec1 = [](const std::string& name) { // {s1, s10, s2}
    return user("ns1", name, {"s1"}, {{{"s1"}, {"s10"}}, {{"s2"}, {}}});
  };
  auto spec2 = [](const std::string& name) { // {s1, s2, s20, s3}
    return user("ns1", name, {"s1"},
                {{{"s1"}, {}}, {{"s2"}, {"s20"}}, {{"s3"}, {}}});
  };
  auto fetched = [&](std::vector<const char*> names) {
    for (auto name : names)
      REQUIRE(k.get("ns1", name));
    auto log = action_log(k.api);
    k.api.clear_actions();
    return log;
  };
  k.reg(spec1("name1"));
  CHECK(fetched({"s1", "s10", "s2"})
        == strings{"get secrets ns1/s1 rv=\"\"", "get secrets ns1/s10 rv=\"\"",
                   "get secrets ns1/s2 rv=\"\""});
  k.reg(spec2("name1")); // the update adds s20 and s3 only
  CHECK(fetched({"s1", "s2", "s20", "s3"})
        == strings{"get secrets ns1/s20 rv=\"\"",
                   "get secrets ns1/s3 rv=\"\""});
  k.reg(spec1("name2")); // a new pod invalidates s1, s10 and s2
  CHECK(fetched({"s1", "s10", "s2", "s20", "s3"})
        == strings{"get secrets ns1/s1 rv=\"\"", "get secrets ns1/s10 rv=\"\"",
                   "get secrets ns1/s2 rv=\"\""});
  k.reg(user("dummy-ns", "dummy-name", {"s1"}, {{{"s2"}, {}}}));
  k.api.fail_next(source_verb::get, 1, error_info{errc::expired, "expired"});
  auto x = k.mgr->get_secret("dummy-ns", "s2");
  REQUIRE_FALSE(x);
  CHECK(x.error() == error_info{errc::expired, "expired"});
  auto st = k.mgr->status("dummy-ns", "s2");
  REQUIRE(st);
  CHECK(st->phase == object_phase::failing);
  REQUIRE(st->failure);
  CHECK(st->failure->code == errc::expired);
}

TEST_CASE("kit: TestRegisterIdempotence: registering and unregistering "
          "again change no count",
          "[kit][5.1]") {
  cache_kit k{1min};
  auto p = [](const std::string& name) { return user("ns1", name, {"s1"}); };
  k.reg(p("name1"));
  CHECK(k.refcount("ns1", "s1") == 1);
  k.reg(p("name1"));
  CHECK(k.refcount("ns1", "s1") == 1);
  k.reg(p("name2"));
  CHECK(k.refcount("ns1", "s1") == 2);
  k.unreg(p("name1"));
  CHECK(k.refcount("ns1", "s1") == 1);
  k.unreg(p("name1"));
  CHECK(k.refcount("ns1", "s1") == 1);
  k.unreg(p("name2"));
  CHECK(k.refcount("ns1", "s1") == 0);
}

TEST_CASE("kit: TestCacheRefcounts: counts follow registrations, also for "
          "interleaved pods of one name",
          "[kit][5.1]") {
  cache_kit k{1min};
  using spec = std::pair<std::vector<std::string>, std::vector<env_refs>>;
  auto s1 = spec{{"s1"}, {{{"s1"}, {"s10"}}, {{"s2"}, {}}, {{"s3"}, {}}}};
  auto s2 = spec{{"s2"}, {{{"s4"}, {}}, {{"s5"}, {"s50"}}}};
  auto s3 = spec{{"s1"}, {{{"s3"}, {"s30"}}, {{"s5"}, {}}}};
  auto s4 = spec{{"s3"}, {{{"s6"}, {}}, {{}, {"s60"}}}};
  auto s5 = spec{{}, {{{"s7"}, {}}, {{}, {"s70"}}}};
  auto p = [](const std::string& name, const spec& s) {
    return user("ns1", name, s.first, s.second);
  };
  k.reg(p("name1", s1));
  k.reg(p("name2", s1));
  k.reg(p("name2", s2));
  k.reg(p("name3", s2));
  k.reg(p("name4", s2));
  k.unreg(p("name3", s2));
  k.reg(p("name5", s3));
  k.reg(p("name6", s3));
  k.reg(p("name7", s4));
  k.unreg(p("name7", s4));
  k.reg(p("other-name", s1));
  k.reg(p("other-name", s2));
  k.unreg(p("other-name", s2));
  k.reg(p("noop-pod", s5));
  k.reg(p("noop-pod", s5));
  auto expected = std::map<std::string, int>{
    {"s1", 3}, {"s10", 1}, {"s2", 3},  {"s3", 3}, {"s30", 2}, {"s4", 2},
    {"s5", 4}, {"s50", 2}, {"s6", 0},  {"s60", 0}, {"s7", 1}, {"s70", 1}};
  for (const auto& [name, count] : expected) {
    INFO(name);
    CHECK(k.refcount("ns1", name) == count);
  }
  auto q = [](const std::string& uid, const std::string& secret) {
    return pod_with_secrets("nsinterleaved", "pod", uid, {}, {{{secret}, {}}});
  };
  k.reg(q("poduid1", "secret1"));
  k.reg(q("poduid2", "secret2"));
  CHECK(k.refcount("nsinterleaved", "secret1") == 1);
  CHECK(k.refcount("nsinterleaved", "secret2") == 1);
  k.unreg(q("poduid1", "secret1"));
  CHECK(k.refcount("nsinterleaved", "secret1") == 0);
  CHECK(k.refcount("nsinterleaved", "secret2") == 1);
  k.unreg(q("poduid2", "secret2"));
  CHECK(k.refcount("nsinterleaved", "secret2") == 0);
}

} // namespace podref::kit_test
