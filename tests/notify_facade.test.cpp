// Change notifications through the thread-safe facade on podref's own
// runtime (real scheduler, podref's notification thread or an embedder's
// executor): ordering, coalescing, the unsubscribe race, the last pod's
// unregistration, deletes and throwing callbacks (docs/notifications.md).
//
// Nothing sleeps to hide a race: the tests wait on conditions of other
// threads' progress (a condition variable the callbacks signal), each wait
// bounded by a deadline, and fail when the bound passes.
#include "podref/runtime/typed_managers.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "support/pod_builders.hpp"

using namespace podref;
using namespace std::chrono_literals;
using podref::test::make_secret;
using podref::test::pod_with_secrets;

namespace {

using strings = std::vector<std::string>;

struct seen {
  change_kind kind;
  std::uint64_t rv;
  std::uint64_t skipped;
  strings uids;
  std::thread::id thread;
};

/// Collects calls; waits, bounded, for a condition on them.
class recorder {
public:
  change_callback callback() {
    return [this](const object_change& c) {
      std::lock_guard<std::mutex> g{mtx_};
      calls_.push_back({c.kind, c.resource_version, c.skipped, c.pod_uids(),
                        std::this_thread::get_id()});
      cv_.notify_all();
    };
  }

  template <class Pred>
  bool wait_for(Pred pred, std::chrono::milliseconds limit = 5s) {
    std::unique_lock<std::mutex> g{mtx_};
    return cv_.wait_for(g, limit, [&] { return pred(calls_); });
  }

  /// Waits until a call with resourceVersion `rv` (or a kind `k`) came.
  bool wait_rv(std::uint64_t rv) {
    return wait_for([rv](const std::vector<seen>& xs) {
      return !xs.empty() && xs.back().rv >= rv;
    });
  }

  bool wait_kind(change_kind k) {
    return wait_for([k](const std::vector<seen>& xs) {
      return !xs.empty() && xs.back().kind == k;
    });
  }

  std::vector<seen> calls() {
    std::lock_guard<std::mutex> g{mtx_};
    return calls_;
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<seen> calls_;
};

pod pod_of(const std::string& name, const std::string& uid) {
  return pod_with_secrets("ns", name, uid, {"s"}, {});
}

std::uint64_t put(api_server& api, const std::string& v) {
  auto x = api.apply(make_secret("ns", "s", {{"k", v}}));
  REQUIRE(x);
  return x->resource_version();
}

/// A one-thread executor owned by the test: the embedder's thread.
class worker {
public:
  worker() : thread_([this] { run(); }) {
    // nop
  }

  ~worker() {
    {
      std::lock_guard<std::mutex> g{mtx_};
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  change_executor executor() {
    return [this](std::function<void()> f) {
      {
        std::lock_guard<std::mutex> g{mtx_};
        tasks_.push_back(std::move(f));
      }
      cv_.notify_all();
    };
  }

  std::thread::id id() const {
    return thread_.get_id();
  }

private:
  void run() {
    std::unique_lock<std::mutex> g{mtx_};
    for (;;) {
      cv_.wait(g, [this] { return done_ || !tasks_.empty(); });
      if (tasks_.empty())
        return;
      auto f = std::move(tasks_.front());
      tasks_.pop_front();
      g.unlock();
      f();
      g.lock();
    }
  }

  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool done_ = false;
  std::thread thread_;
};

} // namespace

TEST_CASE("facade: every version in order, with the pods' uids, on "
          "podref's notification thread",
          "[notify][facade]") {
  runtime rt;
  api_server api{rt};
  secret_manager secrets{rt, api};
  auto rv = put(api, "v0");
  REQUIRE(secrets.register_pod(pod_of("p1", "uid-1")));
  REQUIRE(secrets.register_pod(pod_of("p2", "uid-2")));
  recorder r;
  auto id = secrets.subscribe("ns", "s", r.callback());
  REQUIRE(id);
  REQUIRE(r.wait_rv(rv));
  std::vector<std::uint64_t> written{rv};
  for (int i = 1; i <= 20; ++i)
    written.push_back(put(api, "v" + std::to_string(i)));
  REQUIRE(r.wait_rv(written.back()));
  auto calls = r.calls();
  // Strictly increasing versions, none invented; skipped accounts for every
  // version written and not seen.
  std::uint64_t skipped = 0;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].kind == change_kind::updated);
    CHECK(calls[i].uids == strings{"uid-1", "uid-2"});
    CHECK(calls[i].thread != std::this_thread::get_id());
    if (i > 0)
      CHECK(calls[i].rv > calls[i - 1].rv);
    skipped += calls[i].skipped;
  }
  CHECK(calls.size() + skipped == written.size());
  CHECK(calls.back().rv == written.back());
  auto st = secrets.manager().stats();
  CHECK(st.subscriptions == 1);
  CHECK(st.notifications == calls.size());
  CHECK(st.notifications_skipped == skipped);
}

TEST_CASE("facade: a blocked subscriber skips to the latest, and never "
          "holds back another",
          "[notify][facade]") {
  runtime rt;
  api_server api{rt};
  // An executor with one thread per task: a blocked callback blocks only
  // its own task.
  std::vector<std::thread> threads;
  std::mutex threads_mtx;
  manager_options opts;
  opts.notify_executor = [&](std::function<void()> f) {
    std::lock_guard<std::mutex> g{threads_mtx};
    threads.emplace_back(std::move(f));
  };
  secret_manager secrets{rt, api, opts};
  put(api, "v0");
  REQUIRE(secrets.register_pod(pod_of("p1", "uid-1")));
  std::mutex gate_mtx;
  std::condition_variable gate_cv;
  bool open = false;
  std::atomic<int> slow_calls{0};
  recorder slow;
  auto slow_cb = slow.callback();
  auto a = secrets.subscribe("ns", "s", [&](const object_change& c) {
    slow_cb(c);
    // The first call blocks until the test opens the gate.
    if (slow_calls.fetch_add(1) == 0) {
      std::unique_lock<std::mutex> g{gate_mtx};
      gate_cv.wait_for(g, 10s, [&] { return open; });
    }
  });
  REQUIRE(a);
  REQUIRE(slow.wait_for([](const auto& xs) { return xs.size() == 1; }));
  recorder fast;
  REQUIRE(secrets.subscribe("ns", "s", fast.callback()));
  std::uint64_t last = 0;
  for (int i = 1; i <= 10; ++i) {
    last = put(api, "v" + std::to_string(i));
    // The fast subscriber keeps up while the slow one is blocked.
    REQUIRE(fast.wait_rv(last));
  }
  CHECK(slow.calls().size() == 1);
  {
    std::lock_guard<std::mutex> g{gate_mtx};
    open = true;
  }
  gate_cv.notify_all();
  REQUIRE(slow.wait_rv(last));
  auto calls = slow.calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[1].rv == last);
  CHECK(calls[1].skipped == 9);
  secrets.manager().shutdown();
  std::lock_guard<std::mutex> g{threads_mtx};
  for (auto& t : threads)
    t.join();
}

TEST_CASE("facade: no call after unsubscribe returns, under a stream of "
          "updates",
          "[notify][facade]") {
  runtime rt;
  api_server api{rt};
  worker w;
  manager_options opts;
  opts.notify_executor = w.executor();
  secret_manager secrets{rt, api, opts};
  put(api, "v0");
  REQUIRE(secrets.register_pod(pod_of("p1", "uid-1")));
  std::atomic<bool> writing{true};
  std::thread writer{[&] {
    int i = 0;
    while (writing.load())
      put(api, "w" + std::to_string(++i));
  }};
  for (int round = 0; round < 50; ++round) {
    std::atomic<bool> ended{false};
    std::atomic<int> late{0};
    std::atomic<int> calls{0};
    auto id = secrets.subscribe("ns", "s", [&](const object_change&) {
      if (ended.load())
        late.fetch_add(1);
      calls.fetch_add(1);
    });
    REQUIRE(id);
    secrets.unsubscribe(*id);
    ended.store(true);
    // Let the executor drain what was queued before: nothing may run.
    std::atomic<bool> flushed{false};
    w.executor()([&] { flushed.store(true); });
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!flushed.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    REQUIRE(flushed.load());
    CHECK(late.load() == 0);
  }
  writing.store(false);
  writer.join();
}

TEST_CASE("facade: unsubscribe from inside the callback returns at once",
          "[notify][facade]") {
  runtime rt;
  api_server api{rt};
  secret_manager secrets{rt, api};
  put(api, "v0");
  REQUIRE(secrets.register_pod(pod_of("p1", "uid-1")));
  std::atomic<subscription_id> self_id{0};
  std::atomic<int> calls{0};
  std::mutex mtx;
  std::condition_variable cv;
  auto id = secrets.subscribe("ns", "s", [&](const object_change&) {
    calls.fetch_add(1);
    while (self_id.load() == 0)
      std::this_thread::yield();
    secrets.unsubscribe(self_id.load());
    cv.notify_all();
  });
  REQUIRE(id);
  self_id.store(*id);
  {
    std::unique_lock<std::mutex> g{mtx};
    REQUIRE(cv.wait_for(g, 5s, [&] { return calls.load() > 0; }));
  }
  recorder other;
  REQUIRE(secrets.subscribe("ns", "s", other.callback()));
  auto last = put(api, "v1");
  REQUIRE(other.wait_rv(last));
  CHECK(calls.load() == 1);
}

TEST_CASE("facade: unregistering the last pod ends the subscription; a "
          "delete is delivered as a delete",
          "[notify][facade]") {
  runtime rt;
  api_server api{rt};
  secret_manager secrets{rt, api};
  put(api, "v0");
  REQUIRE(secrets.register_pod(pod_of("p1", "uid-1")));
  REQUIRE(secrets.register_pod(pod_of("p2", "uid-2")));
  recorder r;
  REQUIRE(secrets.subscribe("ns", "s", r.callback()));
  REQUIRE(r.wait_for([](const auto& xs) { return !xs.empty(); }));
  REQUIRE(api.remove(resource::secrets, "ns", "s"));
  REQUIRE(r.wait_kind(change_kind::deleted));
  REQUIRE(secrets.unregister_pod_and_wait(pod_of("p1", "uid-1")));
  auto rv = put(api, "back");
  REQUIRE(r.wait_rv(rv));
  CHECK(r.calls().back().uids == strings{"uid-2"});
  REQUIRE(secrets.unregister_pod(pod_of("p2", "uid-2")));
  REQUIRE(r.wait_kind(change_kind::ended));
  auto n = r.calls().size();
  // Nothing after ended: a write after a sync, then a round trip through
  // another subscription on a new registration of the same object.
  REQUIRE(secrets.register_pod(pod_of("p3", "uid-3")));
  recorder other;
  REQUIRE(secrets.subscribe("ns", "s", other.callback()));
  auto later = put(api, "later");
  REQUIRE(other.wait_rv(later));
  CHECK(r.calls().size() == n);
  CHECK(secrets.manager().stats().subscriptions == 1);
}

TEST_CASE("facade: a throwing callback is reported and others get every "
          "change",
          "[notify][facade]") {
  runtime rt;
  api_server api{rt};
  std::mutex mtx;
  strings reported;
  manager_options opts;
  opts.notify_errors = [&](const object_change& c, std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      std::lock_guard<std::mutex> g{mtx};
      reported.push_back(c.name + ": " + x.what());
    }
  };
  secret_manager secrets{rt, api, opts};
  put(api, "v0");
  REQUIRE(secrets.register_pod(pod_of("p1", "uid-1")));
  REQUIRE(secrets.subscribe("ns", "s", [](const object_change&) {
    throw std::runtime_error("bad subscriber");
  }));
  // Bounded waits for the thrower's reports: its first call must be over
  // before the next version, or the two would coalesce into one call.
  auto errors_reach = [&](std::uint64_t n) {
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (secrets.manager().stats().callback_errors < n
           && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    return secrets.manager().stats().callback_errors >= n;
  };
  REQUIRE(errors_reach(1));
  recorder good;
  REQUIRE(secrets.subscribe("ns", "s", good.callback()));
  auto rv = put(api, "v1");
  REQUIRE(good.wait_rv(rv));
  REQUIRE(errors_reach(2));
  CHECK(secrets.manager().stats().callback_errors == 2);
  std::lock_guard<std::mutex> g{mtx};
  CHECK(reported == strings{"s: bad subscriber", "s: bad subscriber"});
}

TEST_CASE("facade: subscribe's errors", "[notify][facade]") {
  runtime rt;
  api_server api{rt};
  secret_manager secrets{rt, api};
  auto none = secrets.subscribe("ns", "s", [](const object_change&) {});
  REQUIRE(!none);
  CHECK(none.error().code == errc::not_registered);
  secret_manager cached{rt, api, strategy::cache};
  REQUIRE(cached.register_pod_and_wait(pod_of("p1", "uid-1")));
  auto other = cached.subscribe("ns", "s", [](const object_change&) {});
  REQUIRE(!other);
  CHECK(other.error().code == errc::invalid_argument);
  secrets.manager().shutdown();
  auto late = secrets.subscribe("ns", "s", [](const object_change&) {});
  REQUIRE(!late);
  CHECK(late.error().code == errc::shut_down);
  secrets.unsubscribe(1); // a no-op after shutdown
}
