// The workloads of podref's load benchmark and the loop that runs them for
// both implementations.
#include "bench/engine.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "bench/baseline/manager.hpp"
#include "bench/baseline/ttl_store.hpp"
#include "bench/baseline/watch_store.hpp"
#include "bench/closed_loop.hpp"
#include "bench/fixture.hpp"
#include "bench/podref_subject.hpp"
#include "bench/process_stats.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"

#include <caf/actor.hpp>

namespace podref::bench {

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// Pods of the churn rings, as in the Go anchors.
constexpr std::size_t ring_size = 100000;

/// The read workloads time one read in this many per thread.
constexpr std::uint32_t read_sample_every = 16;

/// register and churn time one op in this many per thread, for both
/// implementations: a clock read (20-60 ns here) is a tenth of a podref
/// registration, and timing every op slowed the callers by as much.
constexpr std::uint32_t write_sample_every = 16;

/// Bound of every wait for the engines to settle.
constexpr auto settle_timeout = std::chrono::milliseconds(300000);

/// Cores the process kept busy on average since its CPU time was
/// `cpu_start`, over `seconds` of wall time.
double cores_busy(double cpu_start, double seconds) {
  return seconds > 0 ? (process_cpu_seconds() - cpu_start) / seconds : 0;
}

double since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

/// A per-thread xorshift generator on its own cache line.
struct alignas(64) thread_rng {
  std::uint64_t state;
  std::uint64_t errors = 0;

  std::uint64_t next() noexcept {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

std::vector<thread_rng> make_rngs(std::size_t n) {
  std::vector<thread_rng> res;
  for (std::size_t i = 0; i < n; ++i)
    res.push_back(thread_rng{0x9e3779b97f4a7c15ULL * (i + 1), 0});
  return res;
}

/// Pending write of the propagate workload, per object.
struct alignas(64) pending_write {
  std::atomic<std::uint64_t> version{0};
  std::atomic<std::int64_t> written_ns{0};
};

/// The propagate workload's readers read one of the last few written
/// objects every other read, as a kubelet syncs the pods whose objects just
/// changed: with only random reads over a large pool, the figure would be
/// the wait for a random read to hit the object (at 100k objects, a third
/// of a second), not the engine's propagation.
constexpr std::size_t recent_writes = 4;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           clock_type::now().time_since_epoch())
    .count();
}

bool contains(const std::vector<std::string>& xs, const std::string& x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

} // namespace

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names{
    "register", "churn-warm", "churn-cold", "get", "propagate", "scale"};
  return names;
}

struct engine::impl_state {
  bench_options opts;
  runtime rt;
  api_server server;
  std::vector<std::string> pool_names;
  std::vector<pod> anchors;
  std::vector<pod> register_pods;
  std::vector<pod> warm_ring;
  std::vector<pod> cold_ring;
  std::vector<pod> scale_pods;

  explicit impl_state(const bench_options& o)
    : opts(o), rt(runtime_options{}), server(rt) {
    // nop
  }

  std::unique_ptr<subject> make_subject(const std::string& impl) {
    if (impl == "podref") {
      if (opts.strategy != "watch")
        throw std::invalid_argument("podref's facade offers only the watch "
                                    "strategy, not "
                                    + opts.strategy);
      return std::make_unique<podref_subject>(rt, server, opts.coalesce,
                                              opts.max_unapplied_releases);
    }
    if (impl != "baseline")
      throw std::invalid_argument("unknown implementation: " + impl);
    std::unique_ptr<baseline::object_store> store;
    if (opts.strategy == "watch")
      store = std::make_unique<baseline::watch_store>(rt.system(),
                                                      server.actor());
    else if (opts.strategy == "cache")
      store = std::make_unique<baseline::ttl_store>(
        server, std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::duration<double>(opts.ttl_seconds)));
    else
      throw std::invalid_argument("unknown strategy: " + opts.strategy);
    return std::make_unique<baseline::manager>(std::move(store));
  }

  /// Stores secrets s-0 .. s-(n-1) with two writer threads.
  void load_secrets(std::size_t n) {
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    auto work = [&] {
      for (auto i = next++; i < n; i = next++)
        if (!server.apply(make_pool_secret(i)))
          failed = true;
    };
    std::thread helper{work};
    work();
    helper.join();
    if (failed)
      throw std::runtime_error("the API server refused a secret");
  }

  /// Registers the anchor pods and waits until every reflector is synced.
  void register_anchors(subject& s) {
    for (const auto& p : anchors)
      s.register_pod(p);
    s.sync();
    if (!s.wait_quiescent(settle_timeout))
      throw std::runtime_error("the anchors did not sync");
  }

  loop_spec spec(std::size_t threads, std::uint64_t ops, double seconds,
                 const std::string& label) {
    loop_spec res;
    res.threads = threads;
    res.ops = ops;
    res.seconds = seconds;
    if (opts.progress)
      res.progress = [this, label](double elapsed, std::uint64_t done) {
        char buf[160];
        std::snprintf(buf, sizeof(buf), "%s  %.1fs  %llu ops", label.c_str(),
                      elapsed, static_cast<unsigned long long>(done));
        opts.progress(buf);
      };
    return res;
  }

  /// The timed loop of the read workloads: a read costs about as much as a
  /// clock read, so only every 16th read per thread is timed (both
  /// implementations alike; see closed_loop.hpp).
  loop_spec read_spec(std::size_t threads, const std::string& label) {
    auto res = spec(threads, 0, opts.seconds, label);
    res.sample_every = read_sample_every;
    return res;
  }

  /// What the API server has answered so far.
  source_action_counts api_counts() {
    auto x = server.action_counts();
    if (!x)
      throw std::runtime_error("the API server did not report its actions: "
                               + x.error().message);
    return *x;
  }

  void fill(bench_result& r, const histogram& h) {
    r.p50_ns = h.value_at_percentile(50);
    r.p99_ns = h.value_at_percentile(99);
    r.p999_ns = h.value_at_percentile(99.9);
    r.max_ns = h.max();
    r.ops_per_sec = r.seconds > 0 ? static_cast<double>(r.ops) / r.seconds
                                  : 0;
  }

  void run_register(subject& s, bench_result& r, const std::string& label) {
    register_anchors(s);
    if (register_pods.size() != opts.register_ops)
      register_pods = pool_pods("pod", 0, opts.register_ops, opts.pool);
    auto plan = spec(r.threads, opts.register_ops, 0, label);
    plan.sample_every = write_sample_every;
    auto cpu = process_cpu_seconds();
    auto api0 = api_counts();
    auto loop = run_closed_loop(
      plan,
      [&](std::size_t, std::uint64_t i) { s.register_pod(register_pods[i]); });
    auto t = clock_type::now();
    s.sync();
    r.api_actions = api_counts() - api0;
    r.extra["latency_sample_every"] = write_sample_every;
    r.extra["loop_s"] = loop.seconds;
    r.extra["sync_s"] = since(t);
    r.ops = loop.ops;
    r.seconds = loop.seconds + r.extra["sync_s"];
    r.extra["cpu_cores"] = cores_busy(cpu, r.seconds);
    r.extra["caller_yields"] = static_cast<double>(s.stats().caller_yields);
    fill(r, loop.latency);
  }

  void run_churn(subject& s, bench_result& r, const std::string& label,
                 bool warm) {
    auto& ring = warm ? warm_ring : cold_ring;
    if (ring.empty())
      ring = warm ? pool_pods("warm", 0, ring_size, opts.pool)
                  : disjoint_pods("cold", ring_size, opts.pool);
    if (warm)
      register_anchors(s);
    auto plan = spec(r.threads, 0, opts.seconds, label);
    plan.sample_every = write_sample_every;
    auto cpu = process_cpu_seconds();
    auto api0 = api_counts();
    auto loop = run_closed_loop(plan,
                                [&](std::size_t, std::uint64_t i) {
                                  const auto& p = ring[i % ring.size()];
                                  s.register_pod(p);
                                  s.unregister_pod(p);
                                });
    // An op is done when what it started has stopped: the time runs until
    // every command is applied (sync) and every reflector the ops started is
    // gone (quiescent), for both implementations. Both stop reflectors
    // asynchronously, so the loop alone would count work left behind.
    auto t = clock_type::now();
    s.sync();
    r.extra["latency_sample_every"] = write_sample_every;
    r.extra["loop_s"] = loop.seconds;
    r.extra["sync_s"] = since(t);
    t = clock_type::now();
    if (!s.wait_quiescent(settle_timeout))
      r.extra["quiescent_timeout"] = 1;
    r.extra["quiesce_s"] = since(t);
    r.api_actions = api_counts() - api0;
    r.ops = loop.ops;
    r.seconds = loop.seconds + r.extra["sync_s"] + r.extra["quiesce_s"];
    r.extra["cpu_cores"] = cores_busy(cpu, r.seconds);
    r.extra["caller_yields"] = static_cast<double>(s.stats().caller_yields);
    fill(r, loop.latency);
  }

  void run_get(subject& s, bench_result& r, const std::string& label) {
    register_anchors(s);
    for (const auto& name : pool_names)
      if (!s.get(bench_namespace, name))
        ++r.errors;
    auto rngs = make_rngs(r.threads);
    auto n = pool_names.size();
    auto api0 = api_counts();
    auto loop = run_closed_loop(read_spec(r.threads, label),
                                [&](std::size_t t, std::uint64_t) {
                                  auto& g = rngs[t];
                                  const auto& name = pool_names[g.next() % n];
                                  if (!s.get(bench_namespace, name))
                                    ++g.errors;
                                });
    r.api_actions = api_counts() - api0;
    for (auto& g : rngs)
      r.errors += g.errors;
    r.ops = loop.ops;
    r.seconds = loop.seconds;
    fill(r, loop.latency);
    r.extra["latency_sample_every"] = read_sample_every;
  }

  void run_propagate(subject& s, bench_result& r, const std::string& label) {
    register_anchors(s);
    auto n = pool_names.size();
    std::vector<pending_write> pending(n);
    std::vector<std::unique_ptr<histogram>> seen;
    for (std::size_t i = 0; i < r.threads; ++i)
      seen.push_back(std::make_unique<histogram>());
    std::atomic<bool> stop{false};
    std::uint64_t writes = 0;
    std::array<std::atomic<std::size_t>, recent_writes> recent{};
    auto api0 = api_counts();
    std::thread writer{[&] {
      auto period = std::chrono::duration_cast<clock_type::duration>(
        std::chrono::duration<double>(1.0 / std::max(opts.write_rate, 1.0)));
      auto tick = clock_type::now();
      // The writer is the only one writing, so the server's next version
      // is the last one plus 1: published before the write, the
      // expectation does not wait for the writer to get the CPU back after
      // the server's reply (with busy readers on every core that wait was
      // a scheduler slice, measured for both implementations alike).
      std::uint64_t last_version = 0;
      while (!stop.load()) {
        auto k = writes % n;
        auto& w = pending[k];
        auto t0 = now_ns();
        // Readers look for `version` of object k, written at t0.
        auto expect = [&](std::uint64_t version) {
          w.written_ns.store(t0, std::memory_order_relaxed);
          w.version.store(version, std::memory_order_release);
          recent[writes % recent_writes].store(k, std::memory_order_relaxed);
        };
        if (last_version != 0)
          expect(last_version + 1);
        auto stored = server.update(
          make_pool_secret(k, "update-" + std::to_string(writes)));
        // First write (or someone else wrote): publish what was stored.
        if (stored && stored->resource_version() != last_version + 1)
          expect(stored->resource_version());
        if (stored)
          last_version = stored->resource_version();
        else
          w.version.store(0, std::memory_order_relaxed); // nothing to see
        ++writes;
        tick += period;
        std::this_thread::sleep_until(tick);
      }
    }};
    auto rngs = make_rngs(r.threads);
    auto loop = run_closed_loop(
      read_spec(r.threads, label),
      [&](std::size_t t, std::uint64_t) {
        auto& g = rngs[t];
        auto dice = g.next();
        auto k = dice % 2 == 0
                   ? recent[(dice >> 1) % recent_writes].load(
                     std::memory_order_relaxed)
                   : g.next() % n;
        auto x = s.get(bench_namespace, pool_names[k]);
        if (!x) {
          ++g.errors;
          return;
        }
        auto& w = pending[k];
        auto expected = w.version.load(std::memory_order_acquire);
        if (expected != 0 && x->resource_version() >= expected
            && w.version.compare_exchange_strong(expected, 0)) {
          auto d = now_ns() - w.written_ns.load(std::memory_order_relaxed);
          seen[t]->record(static_cast<std::uint64_t>(std::max<std::int64_t>(
            d, 0)));
        }
      });
    stop = true;
    writer.join();
    r.api_actions = api_counts() - api0;
    histogram prop;
    for (auto& h : seen)
      prop.merge(*h);
    for (auto& g : rngs)
      r.errors += g.errors;
    r.latency = "propagation";
    r.ops = loop.ops;
    r.seconds = loop.seconds;
    fill(r, prop);
    r.extra["writes"] = static_cast<double>(writes);
    r.extra["propagated"] = static_cast<double>(prop.count());
    r.extra["read_p50_ns"]
      = static_cast<double>(loop.latency.value_at_percentile(50));
    r.extra["latency_sample_every"] = read_sample_every;
  }

  void run_scale(subject& s, bench_result& r, const std::string& label) {
    auto n = opts.scale_pods;
    if (scale_pods.size() != n)
      scale_pods = distinct_pods("scale", n);
    trim_heap();
    auto rss0 = rss_bytes();
    auto heap0 = heap_bytes();
    auto start = clock_type::now();
    auto api0 = api_counts();
    auto reg = run_closed_loop(
      spec(r.threads, n, 0, label + " register"),
      [&](std::size_t, std::uint64_t i) { s.register_pod(scale_pods[i]); });
    s.sync();
    if (!s.wait_quiescent(settle_timeout))
      r.extra["quiescent_timeout"] = 1;
    r.seconds = since(start);
    // Memory the allocator keeps free (the commands and buffers of the
    // registration burst) is not the reflectors': release it, as before
    // rss0, so that the RSS delta counts what is held.
    trim_heap();
    auto rss1 = rss_bytes();
    auto heap1 = heap_bytes();
    auto live = s.stats().live_reflectors;
    auto per = [n](std::uint64_t before, std::uint64_t after) {
      return after > before ? static_cast<double>(after - before)
                                / static_cast<double>(n)
                            : 0.0;
    };
    r.extra["register_loop_s"] = reg.seconds;
    r.extra["synced_s"] = r.seconds;
    r.extra["live_reflectors_peak"] = static_cast<double>(live);
    r.extra["rss_bytes_per_reflector"] = per(rss0, rss1);
    r.extra["heap_bytes_per_reflector"] = per(heap0, heap1);
    auto unreg_start = clock_type::now();
    auto unreg_cpu = process_cpu_seconds();
    auto unreg = run_closed_loop(
      spec(r.threads, n, 0, label + " unregister"),
      [&](std::size_t, std::uint64_t i) { s.unregister_pod(scale_pods[i]); });
    auto last_unreg = clock_type::now();
    s.sync();
    // What the teardown waits on: the manager applying what the callers
    // pushed (sync), then the reflectors stopping.
    r.extra["teardown_sync_s"] = since(last_unreg);
    auto deadline = clock_type::now() + settle_timeout;
    while (s.stats().live_reflectors > 0 && clock_type::now() < deadline)
      std::this_thread::sleep_for(1ms);
    r.extra["unregister_loop_s"] = unreg.seconds;
    r.extra["teardown_s"] = since(unreg_start);
    r.extra["teardown_after_last_unregister_s"] = since(last_unreg);
    // The process's CPU over the teardown (every thread, the 1 ms polling
    // above included): steadier than the wall time on a shared machine.
    r.extra["teardown_cpu_s"] = process_cpu_seconds() - unreg_cpu;
    r.api_actions = api_counts() - api0;
    r.ops = n;
    fill(r, reg.latency);
  }
};

engine::engine(const bench_options& opts)
  : impl_(std::make_unique<impl_state>(opts)) {
  auto& st = *impl_;
  for (const auto& w : opts.workloads)
    if (!contains(workload_names(), w))
      throw std::invalid_argument("unknown workload: " + w);
  if (opts.pool < 3)
    throw std::invalid_argument("the pool needs at least 3 objects");
  std::size_t needed = opts.pool;
  if (contains(opts.workloads, "scale"))
    needed = std::max(needed, opts.scale_pods);
  st.load_secrets(needed);
  for (std::size_t i = 0; i < opts.pool; ++i)
    st.pool_names.push_back(secret_name(i));
  st.anchors = pool_pods("anchor", 0, opts.pool, opts.pool);
}

engine::~engine() = default;

std::vector<bench_result> engine::run_all() {
  std::vector<bench_result> res;
  for (const auto& w : impl_->opts.workloads)
    for (auto t : impl_->opts.threads)
      for (const auto& i : impl_->opts.impls)
        res.push_back(run(w, i, t));
  return res;
}

bench_result engine::run(const std::string& workload, const std::string& impl,
                         std::size_t threads) {
  auto& st = *impl_;
  bench_result r;
  r.workload = workload;
  r.impl = impl;
  r.strategy = st.opts.strategy;
  r.threads = std::max<std::size_t>(threads, 1);
  auto label = workload + " " + impl + " t=" + std::to_string(r.threads);
  trim_heap();
  reset_peak_rss();
  auto s = st.make_subject(impl);
  if (workload == "register")
    st.run_register(*s, r, label);
  else if (workload == "churn-warm")
    st.run_churn(*s, r, label, true);
  else if (workload == "churn-cold")
    st.run_churn(*s, r, label, false);
  else if (workload == "get")
    st.run_get(*s, r, label);
  else if (workload == "propagate")
    st.run_propagate(*s, r, label);
  else if (workload == "scale")
    st.run_scale(*s, r, label);
  else
    throw std::invalid_argument("unknown workload: " + workload);
  r.live_reflectors_after = s->stats().live_reflectors;
  r.peak_rss_bytes = peak_rss_bytes();
  if (st.opts.measured)
    st.opts.measured(r);
  auto t = clock_type::now();
  s.reset();
  r.extra["shutdown_s"] = since(t);
  return r;
}

} // namespace podref::bench
