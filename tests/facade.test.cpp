// The thread-safe facade (object_manager, secret_manager, configmap_manager)
// on podref's own runtime with its real scheduler, over the embedded API
// server: upstream's texts, snapshot reads, propagation of updates, shutdown
// and a bounded multi-threaded run.
//
// Nothing here sleeps to hide a race. Waiting happens only on conditions of
// other threads' progress, always bounded by a deadline: wait_quiescent, and
// polls for a watch event to arrive.
#include "podref/runtime/typed_managers.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/send.hpp>
#include <caf/timespan.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/messages/pod_references.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "support/pod_builders.hpp"

using namespace podref;
using namespace std::chrono_literals;
using podref::test::bare_pod;
using podref::test::make_config_map;
using podref::test::make_secret;
using podref::test::pod_with_config_maps;
using podref::test::pod_with_secrets;

namespace {

using clock_type = std::chrono::steady_clock;
using data_map = std::map<std::string, std::string>;

/// Polls `get` until `done` holds for its result or `limit` passes; returns
/// the last result. Waits on the propagation of a watch event.
template <class Get, class Done>
auto poll_until(Get get, Done done, std::chrono::milliseconds limit = 5s) {
  auto deadline = clock_type::now() + limit;
  auto x = get();
  while (!done(x) && clock_type::now() < deadline) {
    std::this_thread::yield();
    x = get();
  }
  return x;
}

/// The stored secret of `api`; requires it to exist.
secret_ptr stored_secret(api_server& api, const std::string& ns,
                         const std::string& name) {
  auto x = api.get(resource::secrets, ns, name);
  REQUIRE(x);
  return x->as_secret();
}

} // namespace

// -- reads -------------------------------------------------------------------

TEST_CASE("a registered secret is served from its snapshot without actor "
          "round trips",
          "[facade]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("default", "s1", {{"k", "v1"}})));
  REQUIRE(api.create(make_secret("default", "s2", {{"k", "v2"}})));
  secret_manager sm{rt, api};
  sm.register_pod(
    pod_with_secrets("default", "pod", "uid-1", {"s1"}, {{{"s2"}, {}}}));
  REQUIRE(sm.manager().wait_quiescent(5s));
  auto s1 = sm.get_secret("default", "s1");
  REQUIRE(s1);
  CHECK((*s1)->data == data_map{{"k", "v1"}});
  CHECK((*s1)->metadata.name == "s1");
  CHECK((*s1)->metadata.ns == "default");
  REQUIRE(sm.get_secret("default", "s2"));
  // Both synced now: from here on, reads never wait.
  auto before = sm.manager().stats();
  CHECK(before.registered_pods == 1);
  CHECK(before.referenced_objects == 2);
  CHECK(before.live_reflectors == 2);
  for (int i = 0; i < 10; ++i) {
    auto s2 = sm.get_secret("default", "s2");
    REQUIRE(s2);
    CHECK((*s2)->data == data_map{{"k", "v2"}});
  }
  auto after = sm.manager().stats();
  CHECK(after.snapshot_reads == before.snapshot_reads + 10);
  CHECK(after.waited_reads == before.waited_reads);
  // Reads never reach the API server.
  CHECK(after.gets == 0);
  CHECK(after.lists == before.lists);
}

TEST_CASE("wait_quiescent returns once every reflector has listed and "
          "opened its watch",
          "[facade]") {
  constexpr int n = 10;
  runtime rt;
  api_server api{rt};
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    names.push_back("s" + std::to_string(i));
    REQUIRE(api.create(make_secret("default", names.back())));
  }
  secret_manager sm{rt, api};
  sm.register_pod(pod_with_secrets("default", "pod", "uid", names, {}));
  REQUIRE(sm.manager().wait_quiescent(5s));
  auto st = sm.manager().stats();
  CHECK(st.live_reflectors == n);
  CHECK(st.lists == n);
  CHECK(st.watches == n);
  CHECK(st.open_watches == n);
  for (auto& name : names)
    CHECK(sm.get_secret("default", name));
  st = sm.manager().stats();
  CHECK(st.snapshot_reads == n);
  CHECK(st.waited_reads == 0);
}

TEST_CASE("unregistered and missing objects fail with upstream's texts",
          "[facade]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_config_map("default", "c2", {{"a", "b"}})));
  secret_manager sm{rt, api};
  configmap_manager cm{rt, api};
  SECTION("an object no registered pod references") {
    auto s = sm.get_secret("default", "x");
    REQUIRE_FALSE(s);
    CHECK(s.error().code == errc::not_registered);
    CHECK(s.error().message == "object \"default\"/\"x\" not registered");
    auto c = cm.get_configmap("default", "x");
    REQUIRE_FALSE(c);
    CHECK(c.error().message == "object \"default\"/\"x\" not registered");
  }
  SECTION("a referenced secret that does not exist") {
    sm.register_pod(pod_with_secrets("default", "pod", "uid", {"x"}, {}));
    REQUIRE(sm.manager().wait_quiescent(5s));
    auto s = sm.get_secret("default", "x");
    REQUIRE_FALSE(s);
    CHECK(s.error().code == errc::not_found);
    CHECK(s.error().message == "secret \"x\" not found");
    // NotFound is a synced state too: served from the snapshot.
    auto before = sm.manager().stats();
    CHECK(sm.get_secret("default", "x").error().code == errc::not_found);
    auto after = sm.manager().stats();
    CHECK(after.snapshot_reads == before.snapshot_reads + 1);
    CHECK(after.waited_reads == before.waited_reads);
  }
  SECTION("a referenced config map that does not exist, and one that does") {
    cm.register_pod(
      pod_with_config_maps("default", "pod", "uid", {{{"x"}, {}}}, {"c2"}));
    REQUIRE(cm.manager().wait_quiescent(5s));
    auto c = cm.get_configmap("default", "x");
    REQUIRE_FALSE(c);
    CHECK(c.error().code == errc::not_found);
    CHECK(c.error().message == "configmap \"x\" not found");
    auto c2 = cm.get_configmap("default", "c2");
    REQUIRE(c2);
    CHECK((*c2)->data == data_map{{"a", "b"}});
    // The secret manager knows nothing of config map references.
    CHECK(sm.get_secret("default", "c2").error().code
          == errc::not_registered);
  }
  SECTION("a pod's references go with its unregistration") {
    REQUIRE(api.create(make_secret("default", "s", {{"k", "v"}})));
    auto p = pod_with_secrets("default", "pod", "uid", {"s"}, {});
    sm.register_pod(p);
    REQUIRE(sm.manager().wait_quiescent(5s));
    REQUIRE(sm.get_secret("default", "s"));
    sm.unregister_pod(bare_pod("default", "pod", "uid"));
    REQUIRE(sm.manager().wait_quiescent(5s));
    auto s = sm.get_secret("default", "s");
    REQUIRE_FALSE(s);
    CHECK(s.error().message == "object \"default\"/\"s\" not registered");
    CHECK(sm.manager().stats().live_reflectors == 0);
  }
}

TEST_CASE("an update in the API server becomes visible through get",
          "[facade]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("default", "s", {{"k", "v1"}})));
  secret_manager sm{rt, api};
  sm.register_pod(pod_with_secrets("default", "pod", "uid", {"s"}, {}));
  REQUIRE(sm.manager().wait_quiescent(5s));
  auto first = sm.get_secret("default", "s");
  REQUIRE(first);
  CHECK((*first)->data == data_map{{"k", "v1"}});
  auto waited = sm.manager().stats().waited_reads;
  auto updated = api.update(make_secret("default", "s", {{"k", "v2"}}));
  REQUIRE(updated);
  auto seen = poll_until([&] { return sm.get_secret("default", "s"); },
                         [](const result<secret_ptr>& x) {
                           return x && (*x)->data.at("k") == "v2";
                         });
  REQUIRE(seen);
  CHECK(**seen == *updated->as_secret());
  CHECK((*seen)->metadata.resource_version
        == updated->meta().resource_version);
  // A deletion too: the watch store's NotFound.
  REQUIRE(api.remove(resource::secrets, "default", "s"));
  auto gone = poll_until([&] { return sm.get_secret("default", "s"); },
                         [](const result<secret_ptr>& x) { return !x; });
  REQUIRE_FALSE(gone);
  CHECK(gone.error().message == "secret \"s\" not found");
  // The watch updated the snapshot in place: no read had to wait.
  CHECK(sm.manager().stats().waited_reads == waited);
}

// -- shutdown ----------------------------------------------------------------

TEST_CASE("after shutdown every call fails with shut_down", "[facade]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("default", "s", {{"k", "v"}})));
  secret_manager sm{rt, api};
  auto p = pod_with_secrets("default", "pod", "uid", {"s"}, {});
  sm.register_pod(p);
  REQUIRE(sm.manager().wait_quiescent(5s));
  REQUIRE(sm.get_secret("default", "s"));
  sm.manager().shutdown();
  auto s = sm.get_secret("default", "s");
  REQUIRE_FALSE(s);
  CHECK(s.error().code == errc::shut_down);
  s = sm.get_secret("default", "unknown");
  REQUIRE_FALSE(s);
  CHECK(s.error().code == errc::shut_down);
  auto reg = sm.register_pod(p);
  REQUIRE_FALSE(reg);
  CHECK(reg.error().code == errc::shut_down);
  CHECK(reg.error().message == "podref manager is shut down");
  auto unreg = sm.unregister_pod(p);
  REQUIRE_FALSE(unreg);
  CHECK(unreg.error().code == errc::shut_down);
  CHECK_FALSE(sm.manager().sync());
  CHECK_FALSE(sm.manager().wait_quiescent(100ms));
  // Idempotent.
  sm.manager().shutdown();
  CHECK(sm.get_secret("default", "s").error().code == errc::shut_down);
  // The reflectors die with the manager (they get its exit a moment later).
  auto st = poll_until([&] { return sm.manager().stats(); },
                       [](const manager_stats& x) {
                         return x.live_reflectors == 0;
                       });
  CHECK(st.live_reflectors == 0);
  CHECK(st.open_watches == 0);
}

TEST_CASE("destroying managers without shutdown does not hang", "[facade]") {
  auto started = clock_type::now();
  {
    runtime rt;
    api_server api{rt};
    for (auto name : {"a", "b", "c"})
      REQUIRE(api.create(make_secret("default", name)));
    secret_manager sm{rt, api};
    configmap_manager cm{rt, api};
    sm.register_pod(
      pod_with_secrets("default", "pod", "uid", {"a"}, {{{"b"}, {"c"}}}));
    cm.register_pod(
      pod_with_config_maps("default", "pod", "uid", {{{"m"}, {}}}));
    REQUIRE(sm.manager().wait_quiescent(5s));
    REQUIRE(sm.get_secret("default", "a"));
    // Registered, watching, never shut down: the destructors do it.
  }
  CHECK(clock_type::now() - started < 10s);
}

TEST_CASE("a read waiting for a first sync fails promptly on shutdown",
          "[facade]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("default", "s", {{"k", "v"}})));
  // Lists take 10 s, reads give up after 5 s: only shutdown ends one early.
  caf::anon_send(caf::actor_cast<memory_api_server_actor>(api.actor()),
                 hold_atom::value, caf::timespan{10s});
  watch_options opts;
  opts.sync_timeout = 5s;
  secret_manager sm{rt, api, opts};
  sm.register_pod(pod_with_secrets("default", "pod", "uid", {"s"}, {}));
  REQUIRE(sm.manager().sync());
  auto reader = std::async(std::launch::async,
                           [&] { return sm.get_secret("default", "s"); });
  // Wait until the reader has gone to the actors (bounded).
  auto deadline = clock_type::now() + 5s;
  while (sm.manager().stats().waited_reads == 0
         && clock_type::now() < deadline)
    std::this_thread::yield();
  REQUIRE(sm.manager().stats().waited_reads == 1);
  CHECK(reader.wait_for(0s) == std::future_status::timeout);
  auto shutdown_at = clock_type::now();
  sm.manager().shutdown();
  REQUIRE(reader.wait_for(3s) == std::future_status::ready);
  CHECK(clock_type::now() - shutdown_at < 3s);
  auto s = reader.get();
  REQUIRE_FALSE(s);
  CHECK(s.error().code == errc::shut_down);
}

// -- many threads ------------------------------------------------------------

TEST_CASE("concurrent registrations, reads and updates leave exactly the "
          "final references behind",
          "[facade][stress]") {
  constexpr int num_secrets = 50;
  constexpr int num_threads = 4;
  constexpr int ops_per_thread = 2000;
  constexpr int pods_per_thread = 10;
  constexpr int final_pods = 2;
  auto secret_name = [](int i) { return "s" + std::to_string(i); };
  runtime rt;
  api_server api{rt};
  for (int i = 0; i < num_secrets; ++i)
    REQUIRE(api.create(make_secret("default", secret_name(i), {{"v", "0"}})));
  secret_manager sm{rt, api};
  struct final_pod {
    std::string name;
    std::string uid;
    std::vector<std::string> secrets;
  };
  struct thread_report {
    /// The pods left registered, with the secret names they reference.
    std::vector<final_pod> final_set;
    /// Reads that broke the contract, described.
    std::vector<std::string> bad_reads;
    std::size_t good_reads = 0;
  };
  std::vector<thread_report> reports(num_threads);
  std::atomic<int> running{num_threads};
  auto worker = [&](int t) {
    auto& report = reports[t];
    std::mt19937 rng(static_cast<std::uint32_t>(1000 + t));
    auto pick = [&](int n) {
      return std::uniform_int_distribution<int>{0, n - 1}(rng);
    };
    auto pod_name = [t](int k) {
      return "t" + std::to_string(t) + "-p" + std::to_string(k);
    };
    auto uid = [t](int k) {
      return "uid-" + std::to_string(t) + "-" + std::to_string(k);
    };
    auto random_refs = [&] {
      std::vector<std::string> pull;
      std::vector<podref::test::env_refs> containers(1);
      auto n = 1 + pick(5);
      for (int i = 0; i < n; ++i) {
        auto name = secret_name(pick(num_secrets));
        switch (pick(3)) {
          case 0:
            pull.push_back(name);
            break;
          case 1:
            containers[0].env.push_back(name);
            break;
          default:
            containers[0].env_from.push_back(name);
        }
      }
      return std::make_pair(pull, containers);
    };
    std::map<int, std::vector<std::string>> registered;
    for (int op = 0; op < ops_per_thread; ++op) {
      auto dice = pick(10);
      if (dice < 4) {
        auto k = pick(pods_per_thread);
        auto [pull, containers] = random_refs();
        auto p = pod_with_secrets("default", pod_name(k), uid(k), pull,
                                  containers);
        sm.register_pod(p);
        registered[k] = secret_names(p);
      } else if (dice < 6) {
        auto k = pick(pods_per_thread);
        sm.unregister_pod(bare_pod("default", pod_name(k), uid(k)));
        registered.erase(k);
      } else {
        // Mostly names this thread references, some it may not.
        std::string name;
        if (!registered.empty() && dice < 9) {
          auto i = registered.begin();
          std::advance(i, pick(static_cast<int>(registered.size())));
          if (!i->second.empty())
            name = i->second[pick(static_cast<int>(i->second.size()))];
        }
        if (name.empty())
          name = secret_name(pick(num_secrets));
        auto s = sm.get_secret("default", name);
        if (s) {
          if ((*s)->metadata.name != name || (*s)->metadata.ns != "default"
              || (*s)->data.count("v") != 1)
            report.bad_reads.push_back("wrong object for " + name);
          else
            ++report.good_reads;
        } else if (s.error().code != errc::not_registered
                   && s.error().code != errc::sync_timeout) {
          report.bad_reads.push_back(name + ": " + s.error().message);
        }
      }
    }
    // The known final set: pods 0 and 1 with fresh references; every other
    // pod this thread registered goes.
    for (int k = 0; k < final_pods; ++k) {
      auto [pull, containers] = random_refs();
      auto p = pod_with_secrets("default", pod_name(k), uid(k), pull,
                                containers);
      sm.register_pod(p);
      report.final_set.push_back(final_pod{pod_name(k), uid(k),
                                           secret_names(p)});
    }
    for (auto& [k, names] : registered)
      if (k >= final_pods)
        sm.unregister_pod(bare_pod("default", pod_name(k), uid(k)));
    --running;
  };
  auto updater = [&] {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> pick{0, num_secrets - 1};
    for (int i = 1; i <= 2000 && running.load() > 0; ++i) {
      auto name = secret_name(pick(rng));
      if (!api.update(make_secret("default", name,
                                  {{"v", std::to_string(i)}})))
        return false;
    }
    return true;
  };
  auto updates = std::async(std::launch::async, updater);
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t)
    threads.emplace_back(worker, t);
  for (auto& th : threads)
    th.join();
  CHECK(updates.get());
  // The expectation, computed from what the threads did.
  std::set<std::string> expected_objects;
  std::size_t expected_pods = 0;
  std::size_t good_reads = 0;
  for (auto& r : reports) {
    CHECK(r.bad_reads.empty());
    for (auto& what : r.bad_reads)
      UNSCOPED_INFO(what);
    good_reads += r.good_reads;
    for (auto& p : r.final_set) {
      ++expected_pods;
      expected_objects.insert(p.secrets.begin(), p.secrets.end());
    }
  }
  CHECK(good_reads > 0);
  REQUIRE(sm.manager().wait_quiescent(30s));
  auto st = sm.manager().stats();
  CHECK(st.registered_pods == static_cast<std::int64_t>(expected_pods));
  CHECK(st.referenced_objects
        == static_cast<std::int64_t>(expected_objects.size()));
  CHECK(st.live_reflectors
        == static_cast<std::int64_t>(expected_objects.size()));
  // Every final object converges to the API server's latest version.
  for (auto& name : expected_objects) {
    INFO("secret " << name);
    auto latest = stored_secret(api, "default", name);
    auto seen = poll_until([&] { return sm.get_secret("default", name); },
                           [&](const result<secret_ptr>& x) {
                             return x && **x == *latest;
                           });
    REQUIRE(seen);
    CHECK(**seen == *latest);
  }
  // Everything else is not registered.
  for (int i = 0; i < num_secrets; ++i) {
    auto name = secret_name(i);
    if (expected_objects.count(name) == 0)
      CHECK(sm.get_secret("default", name).error().code
            == errc::not_registered);
  }
  for (auto& r : reports)
    for (auto& p : r.final_set)
      sm.unregister_pod(bare_pod("default", p.name, p.uid));
  REQUIRE(sm.manager().wait_quiescent(30s));
  st = sm.manager().stats();
  CHECK(st.registered_pods == 0);
  CHECK(st.referenced_objects == 0);
  CHECK(st.live_reflectors == 0);
  CHECK(st.open_watches == 0);
  CHECK(st.reflectors_started == st.reflectors_stopped);
}

TEST_CASE("a bounded backlog makes callers wait and loses nothing",
          "[facade][backpressure]") {
  constexpr int num_threads = 4;
  constexpr int pods_per_thread = 500;
  runtime rt;
  api_server api{rt};
  for (int i = 0; i < 20; ++i)
    REQUIRE(api.create(make_secret("default", "s" + std::to_string(i), {})));
  manager_options opts;
  opts.max_unapplied = 4;
  secret_manager sm{rt, api, opts};
  auto pod_of = [](int t, int k) {
    auto id = std::to_string(t) + "-" + std::to_string(k);
    return pod_with_secrets("default", "p" + id, "uid-" + id,
                            {"s" + std::to_string(k % 20)}, {});
  };
  // Catch2's assertions are not thread-safe: threads count failures.
  std::atomic<int> failed_calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < pods_per_thread; ++k)
        if (!sm.register_pod(pod_of(t, k)))
          ++failed_calls;
      // Keep the pods of the first ten secrets, drop the others.
      for (int k = 0; k < pods_per_thread; ++k)
        if (k % 20 >= 10 && !sm.unregister_pod(pod_of(t, k)))
          ++failed_calls;
    });
  for (auto& th : threads)
    th.join();
  CHECK(failed_calls == 0);
  REQUIRE(sm.manager().sync());
  auto st = sm.manager().stats();
  INFO("calls that waited for room: " << st.backlog_waits);
  CHECK(st.unapplied_commands == 0);
  CHECK(st.registered_pods == num_threads * pods_per_thread / 2);
  CHECK(st.referenced_objects == 10);
  REQUIRE(sm.manager().wait_quiescent(10s));
  CHECK(sm.manager().stats().live_reflectors == 10);
  CHECK(sm.get_secret("default", "s3"));
  CHECK(sm.get_secret("default", "s13").error().code == errc::not_registered);
}
