// Stress: caller threads register, re-register, unregister and read while
// the API server churns (updates, injected list and watch failures, closed
// watches, expired history, restarts of the server actor). The run is
// bounded by PODREF_STRESS_SECONDS (default 2); it ends with the engine's
// invariant check on the pods left registered, then with every pod gone.
// CI runs it in the release build and under ASan + UBSan.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "podref/messages/pod_references.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/object_manager.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/testing/invariant_checker.hpp"
#include "support/pod_builders.hpp"

using namespace podref;
using namespace std::chrono_literals;
using podref::test::make_secret;
using podref::test::pod_with_secrets;

namespace {

constexpr int num_secrets = 40;
constexpr int num_callers = 4;
constexpr int pods_per_caller = 12;

std::string secret_name(int i) {
  return "s-" + std::to_string(i);
}

std::chrono::duration<double> stress_duration() {
  if (const char* env = std::getenv("PODREF_STRESS_SECONDS"))
    return std::chrono::duration<double>{std::atof(env)};
  return 2s;
}

/// A caller's view of one pod it owns.
struct caller_pod {
  pod spec;
  bool registered = false;
};

/// One caller thread's work and what it leaves registered.
class caller {
public:
  caller(int id, object_manager& mgr) : id_(id), mgr_(mgr), rng_(100 + id) {
    // nop
  }

  /// Runs until `stop`; returns the reads that broke the contract.
  std::vector<std::string> run(const std::atomic<bool>& stop) {
    std::vector<std::string> bad;
    while (!stop.load(std::memory_order_relaxed)) {
      auto dice = pick(10);
      auto k = pick(pods_per_caller);
      if (dice < 4) {
        pods_[k].spec = make_pod(k);
        if (auto res = mgr_.register_pod(pods_[k].spec); !res)
          bad.push_back("register: " + res.error().message);
        pods_[k].registered = true;
      } else if (dice < 6) {
        if (auto res = mgr_.unregister_pod(pods_[k].spec); !res)
          bad.push_back("unregister: " + res.error().message);
        pods_[k].registered = false;
      } else {
        read_one(bad);
      }
    }
    return bad;
  }

  /// The pods left registered.
  void collect(std::map<std::string, pod_registration_ptr>& out) const {
    for (const auto& p : pods_)
      if (p.registered)
        out.emplace(p.spec.metadata.name,
                    make_registration(p.spec, resource::secrets));
  }

  /// Unregisters what is left.
  void unregister_all() {
    for (auto& p : pods_)
      if (std::exchange(p.registered, false))
        mgr_.unregister_pod(p.spec);
  }

private:
  int pick(int n) {
    return std::uniform_int_distribution<int>{0, n - 1}(rng_);
  }

  pod make_pod(int k) {
    std::vector<std::string> pull;
    std::vector<test::env_refs> containers(1);
    for (int n = 1 + pick(4); n > 0; --n) {
      auto name = secret_name(pick(num_secrets));
      if (pick(2) == 0)
        pull.push_back(name);
      else
        containers[0].env.push_back(name);
    }
    auto name = "c" + std::to_string(id_) + "-p" + std::to_string(k);
    return pod_with_secrets("default", name, "uid-" + name, pull, containers);
  }

  void read_one(std::vector<std::string>& bad) {
    auto name = secret_name(pick(num_secrets));
    auto x = mgr_.get("default", name);
    if (x) {
      if (x->meta().name != name)
        bad.push_back("read " + name + " returned " + x->meta().name);
      return;
    }
    // Reads race with registrations and faults: "not registered" and
    // "failed to sync" are answers, anything else is not.
    auto code = x.error().code;
    if (code != errc::not_registered && code != errc::sync_timeout)
      bad.push_back("read " + name + ": " + x.error().message);
  }

  int id_;
  object_manager& mgr_;
  std::mt19937 rng_;
  caller_pod pods_[pods_per_caller];
};

/// Churns the API server until `stop`: updates, faults and restarts;
/// counts the restarts.
std::vector<std::string> churn(api_server& api, const std::atomic<bool>& stop,
                               int& restarts) {
  std::vector<std::string> bad;
  std::mt19937 rng(7);
  auto pick = [&](int n) {
    return std::uniform_int_distribution<int>{0, n - 1}(rng);
  };
  const error_info injected{errc::unavailable, "injected by the stress test"};
  for (int round = 1; !stop.load(std::memory_order_relaxed); ++round) {
    auto name = secret_name(pick(num_secrets));
    if (!api.update(make_secret("default", name,
                                {{"v", std::to_string(round)}})))
      bad.push_back("update of " + name + " failed");
    switch (round % 50) {
      case 10:
        api.fail_next(source_verb::list, 3, injected);
        break;
      case 20:
        api.fail_next(source_verb::watch, 2, injected);
        break;
      case 30:
        api.close_watches();
        break;
      case 40:
        api.expire_history();
        break;
      case 49:
        if (round % 200 == 49) {
          if (api.restart())
            ++restarts;
          else
            bad.push_back("restart failed");
        }
        break;
      default:
        break;
    }
    std::this_thread::yield();
  }
  return bad;
}

} // namespace

TEST_CASE("callers and API server churn leave exactly the registered state",
          "[stress]") {
  runtime rt;
  api_server api{rt};
  for (int i = 0; i < num_secrets; ++i)
    REQUIRE(api.create(make_secret("default", secret_name(i), {{"v", "0"}})));
  manager_options opts;
  // Faults must clear within the check's bound: short backoff and waits.
  opts.backoff_initial = 20ms;
  opts.backoff_cap = 500ms;
  opts.sync_timeout = 200ms;
  object_manager mgr{rt, api, resource::secrets, opts};
  testing::invariant_options iopts;
  iopts.settle_limit = 30s;
  iopts.step = 20ms;
  testing::invariant_checker checker{rt.system(), mgr.actor(), api.actor(),
                                  testing::counts_of(mgr), iopts};
  checker.record_baseline();

  std::vector<std::unique_ptr<caller>> callers;
  for (int i = 0; i < num_callers; ++i)
    callers.push_back(std::make_unique<caller>(i, mgr));
  std::atomic<bool> stop{false};
  std::vector<std::vector<std::string>> bad(num_callers + 1);
  std::vector<std::thread> threads;
  for (int i = 0; i < num_callers; ++i)
    threads.emplace_back([&, i] { bad[i] = callers[i]->run(stop); });
  int restarts = 0;
  threads.emplace_back(
    [&] { bad[num_callers] = churn(api, stop, restarts); });
  std::this_thread::sleep_for(stress_duration()); // the run's length
  stop = true;
  for (auto& t : threads)
    t.join();
  for (const auto& b : bad) {
    INFO(testing::describe(b));
    CHECK(b.empty());
  }
  CHECK(restarts > 0); // the run was long enough to see every fault
  auto st = mgr.stats();
  CHECK(st.snapshot_reads + st.waited_reads > 0);
  CHECK(st.reflectors_started > 0);

  // The faults have cleared: the engine converges on what is registered.
  REQUIRE(mgr.sync());
  checker.set_server(api.actor());
  std::map<std::string, pod_registration_ptr> left;
  for (const auto& c : callers)
    c->collect(left);
  auto mismatches = checker.check(left);
  INFO(testing::describe(mismatches));
  CHECK(mismatches.empty());

  for (auto& c : callers)
    c->unregister_all();
  REQUIRE(mgr.sync());
  auto leftovers = checker.drained();
  INFO(testing::describe(leftovers));
  CHECK(leftovers.empty());
}
