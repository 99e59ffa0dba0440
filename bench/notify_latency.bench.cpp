// podref_notify_bench: write-to-callback latency of change notifications
// (docs/notifications.md), in-process over the embedded API server, or with
// --wire over the wire source: a cluster (h2c, no client-side rate limit)
// against the API server's HTTP front in process, on loopback; --mux K
// multiplexes the watches (docs/multiplexing.md; all objects share one
// namespace); --spin-us U lets busy scheduler workers poll U microseconds
// before they sleep (runtime_options::idle_spin_us); --pause-us P waits P
// microseconds after each write's callbacks (a trickle of writes).
//
// Registers --objects pods, each referencing its own Secret (all watched),
// subscribes --subscribers callbacks spread evenly over the first
// --subscribed objects, then writes --writes updates one at a time (closed
// loop: the next write waits until every subscriber of the written object
// saw this one) and records, per callback, the time from just before the
// write to the callback's start. Prints p50 / p99 / max in microseconds and
// the setup times. Timings from a loaded machine are not figures; run it on
// a quiet one (docs/benchmarks.md).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/fixture.hpp"
#include "bench/h2c_cluster.hpp"
#include "bench/histogram.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/object_manager.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/http_server.hpp"

namespace {

using namespace podref;
using clock_type = std::chrono::steady_clock;

struct options {
  std::size_t objects = 100000;
  std::size_t subscribers = 1000;
  std::size_t subscribed = 0; // 0: min(subscribers, objects)
  std::size_t writes = 2000;
  bool wire = false;
  std::size_t mux = 0;
  /// runtime_options::idle_spin_us (unset: the runtime's default).
  std::optional<std::size_t> spin_us;
  /// Pause after each write's callbacks, in microseconds (a trickle).
  std::size_t pause_us = 0;
};

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::size_t& out) {
      if (i + 1 >= argc)
        return false;
      char* end = nullptr;
      auto x = std::strtoull(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0')
        return false;
      out = static_cast<std::size_t>(x);
      return true;
    };
    bool ok = false;
    if (arg == "--wire")
      ok = o.wire = true;
    else if (arg == "--mux")
      ok = value(o.mux);
    else if (arg == "--spin-us") {
      std::size_t x = 0;
      ok = value(x);
      o.spin_us = x;
    }
    else if (arg == "--pause-us")
      ok = value(o.pause_us);
    else if (arg == "--objects")
      ok = value(o.objects);
    else if (arg == "--subscribers")
      ok = value(o.subscribers);
    else if (arg == "--subscribed")
      ok = value(o.subscribed);
    else if (arg == "--writes")
      ok = value(o.writes);
    if (!ok) {
      std::fprintf(stderr,
                   "usage: podref_notify_bench [--objects N] [--subscribers "
                   "S] [--subscribed M] [--writes W] [--wire] [--mux K] "
                   "[--spin-us U] [--pause-us P]\n"
                   "bad or unknown "
                   "argument: %s\n",
                   arg.c_str());
      return false;
    }
  }
  if (o.subscribed == 0)
    o.subscribed = std::min(o.subscribers, o.objects);
  if (o.objects == 0 || o.subscribed == 0 || o.subscribed > o.objects) {
    std::fprintf(stderr, "--subscribed must be in [1, --objects]\n");
    return false;
  }
  return true;
}

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

/// What the callbacks and the writer share.
struct probe {
  std::mutex mtx;
  std::condition_variable cv;
  bench::histogram latency;
  /// The version being waited for, and when its write started.
  std::uint64_t target = std::numeric_limits<std::uint64_t>::max();
  clock_type::time_point t0;
  std::size_t seen = 0;
  /// Callbacks the version needs; the writer is woken by the last one only.
  std::size_t expect = 0;

  void on_change(const object_change& c) {
    auto now = clock_type::now();
    std::lock_guard<std::mutex> g{mtx};
    if (c.resource_version != target)
      return;
    latency.record(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - t0).count()));
    if (++seen == expect)
      cv.notify_all();
  }
};

/// The source the manager reads: the API server itself, or a cluster over
/// its HTTP front (h2c on loopback).
struct source_under_test {
  std::unique_ptr<wire::http_server> front;
  std::unique_ptr<cluster> cl;

  bool start(runtime& rt, api_server& api, const options& o) {
    if (!o.wire)
      return true;
    wire::http_server_options sopts;
    sopts.max_watches = o.objects + 64;
    auto started = wire::http_server::start(rt.system(), api.current_actor(),
                                            sopts);
    if (!started) {
      std::fprintf(stderr, "%s\n", started.error().message.c_str());
      return false;
    }
    front = std::move(started).value();
    cl = bench::connect_h2c(rt, front->url(), "podref_notify_bench");
    return cl != nullptr;
  }

  ~source_under_test() {
    cl.reset();
    if (front)
      front->stop();
  }
};

int run(const options& o) {
  runtime_options ro;
  if (o.spin_us)
    ro.idle_spin_us = *o.spin_us;
  runtime rt{ro};
  api_server api{rt};
  source_under_test src;
  if (!src.start(rt, api, o))
    return 1;
  manager_options mo;
  mo.mux_threshold = o.mux;
  mo.sync_timeout = std::chrono::seconds(60);
  auto mgr_ptr = src.cl ? std::make_unique<object_manager>(
                            rt, src.cl->actor(), resource::secrets, mo)
                        : std::make_unique<object_manager>(
                            rt, api, resource::secrets, mo);
  auto& mgr = *mgr_ptr;
  auto t = clock_type::now();
  for (std::size_t i = 0; i < o.objects; ++i)
    api.apply(bench::make_pool_secret(i));
  for (const auto& p : bench::distinct_pods("p", o.objects))
    mgr.register_pod(p);
  if (!mgr.wait_quiescent(std::chrono::minutes(10))) {
    std::fprintf(stderr, "the objects did not sync within 10 minutes\n");
    return 1;
  }
  auto sync_s = seconds_since(t);
  probe pr;
  t = clock_type::now();
  for (std::size_t i = 0; i < o.subscribers; ++i) {
    auto id = mgr.subscribe(bench::bench_namespace,
                            bench::secret_name(i % o.subscribed),
                            [&pr](const object_change& c) { pr.on_change(c); });
    if (!id) {
      std::fprintf(stderr, "subscribe: %s\n", id.error().message.c_str());
      return 1;
    }
  }
  auto sub_s = seconds_since(t);
  std::size_t per_object = o.subscribers / o.subscribed;
  for (std::size_t w = 0; w < o.writes; ++w) {
    auto i = w % o.subscribed;
    // Objects below subscribers % subscribed have one subscriber more.
    auto expect = per_object + (i < o.subscribers % o.subscribed ? 1 : 0);
    auto obj = bench::make_pool_secret(i, "w-" + std::to_string(w));
    std::unique_lock<std::mutex> g{pr.mtx};
    pr.seen = 0;
    pr.expect = expect;
    pr.t0 = clock_type::now();
    // The version is known only once apply returns: callbacks that come
    // first wait on the lock, then compare.
    auto stored = api.apply(obj);
    if (!stored) {
      std::fprintf(stderr, "apply: %s\n", stored.error().message.c_str());
      return 1;
    }
    pr.target = stored->resource_version();
    if (!pr.cv.wait_for(g, std::chrono::seconds(30),
                        [&] { return pr.seen >= expect; })) {
      std::fprintf(stderr, "write %zu: %zu of %zu callbacks in 30 s\n", w,
                   pr.seen, expect);
      return 1;
    }
    if (o.pause_us > 0) {
      g.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(o.pause_us));
    }
  }
  auto st = mgr.stats();
  auto us = [&](double p) {
    return static_cast<double>(pr.latency.value_at_percentile(p)) / 1000.0;
  };
  std::printf("source %s mux %zu\n", o.wire ? "wire-h2c" : "in-process",
              o.mux);
  std::printf("objects %zu subscribers %zu subscribed_objects %zu writes %zu\n"
              "sync_s %.2f subscribe_s %.2f\n"
              "callbacks %llu p50_us %.1f p99_us %.1f max_us %.1f\n"
              "notifications %llu skipped %llu callback_errors %llu\n",
              o.objects, o.subscribers, o.subscribed, o.writes, sync_s, sub_s,
              static_cast<unsigned long long>(pr.latency.count()), us(50),
              us(99), static_cast<double>(pr.latency.max()) / 1000.0,
              static_cast<unsigned long long>(st.notifications),
              static_cast<unsigned long long>(st.notifications_skipped),
              static_cast<unsigned long long>(st.callback_errors));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o))
    return 2;
  return run(o);
}
