// wire-sync and wire-propagate (workloads.hpp), against the API server in a
// child process (server_child.hpp), and the workload dispatch.
#include "bench/wire/workloads.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include "bench/histogram.hpp"
#include "bench/process_stats.hpp"
#include "bench/wire/server_child.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"

namespace podref::bench {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// The server child, a cluster over it and a Watch manager of one pod per
/// Secret, registered and synced with every watch open.
struct watched_set {
  server_child srv;
  runtime rt;
  std::unique_ptr<cluster> cl;
  std::optional<secret_manager> mgr;
  /// The child's writes so far (each value is its write's number).
  std::size_t writes = 0;
  double synced_s = 0;
  /// 0 when not every watch opened within the bound.
  double watching_s = 0;
  std::uint64_t open_at_end = 0;
  double sync_cpu_s = 0;
  std::uint64_t rss_before = 0;
  std::uint64_t heap_before = 0;

  explicit watched_set(const wire_bench_options& o)
    : srv({o.objects, o.bytes, o.transport}) {
    cluster_options copts;
    copts.source.qps = o.qps;
    copts.source.burst = static_cast<std::uint32_t>(o.burst);
    if (o.transport == "h2c")
      copts.http.plain_http = wire::plain_http_mode::h2_prior_knowledge;
    auto connected = cluster::connect(rt, srv.config(), copts);
    if (!connected)
      throw std::runtime_error(connected.error().message);
    cl = std::move(connected).value();
    manager_options mo;
    mo.sync_timeout = std::chrono::seconds(600);
    mgr.emplace(rt, *cl, strategy::watch, mo);
    trim_heap();
    rss_before = rss_bytes();
    heap_before = heap_bytes();
    auto cpu0 = process_cpu_seconds();
    auto t0 = clock_type::now();
    for (std::size_t i = 0; i < o.objects; ++i)
      mgr->register_pod(bench_pod(i));
    for (std::size_t i = 0; i < o.objects; ++i)
      if (!mgr->get_secret("default", bench_secret_name(i)))
        throw std::runtime_error(bench_secret_name(i) + " did not sync");
    synced_s = seconds_since(t0);
    // Bounded: past it the row says how many were open (watching_s 0).
    auto deadline = clock_type::now() + std::chrono::seconds(300);
    while ((open_at_end = cl->stats().open_streams) < o.objects) {
      if (clock_type::now() > deadline)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (open_at_end >= o.objects)
      watching_s = seconds_since(t0);
    sync_cpu_s = process_cpu_seconds() - cpu0;
  }

  ~watched_set() {
    mgr.reset();
    cl.reset();
  }

  /// Waits until s<i> reads as the child's write number `write`: spinning
  /// (a latency sample), or polling every 200 us (its CPU counts).
  void wait_for(std::size_t i, std::size_t write, bool spin) {
    auto want = std::to_string(write);
    for (;;) {
      auto s = mgr->get_secret("default", bench_secret_name(i));
      if (s && (*s)->data.at("k") == want)
        return;
      if (spin)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
};

bench_result row(const char* workload, const wire_bench_options& o) {
  bench_result r;
  r.workload = workload;
  r.impl = "podref";
  r.strategy = "watch";
  r.threads = 1;
  r.extra["objects"] = static_cast<double>(o.objects);
  return r;
}

} // namespace

pod bench_pod(std::size_t i) {
  pod p;
  p.metadata.ns = "default";
  p.metadata.name = "p" + std::to_string(i);
  p.metadata.uid = "uid-" + std::to_string(i);
  p.spec.image_pull_secrets.push_back(
    local_object_reference{bench_secret_name(i)});
  return p;
}

bool is_wire_workload(const std::string& name) {
  return name == "wire-replay" || name == "wire-sync"
         || name == "wire-propagate";
}

bench_result run_wire_sync(const wire_bench_options& o) {
  watched_set w{o};
  auto r = row("wire-sync", o);
  auto st = w.cl->stats();
  std::uint64_t requests = st.open_streams;
  for (const auto& [k, n] : st.requests)
    requests += n;
  r.ops = o.objects;
  r.seconds = w.synced_s;
  r.ops_per_sec = static_cast<double>(o.objects) / w.synced_s;
  r.peak_rss_bytes = peak_rss_bytes();
  auto per_object = [&](std::uint64_t after, std::uint64_t before) {
    return (static_cast<double>(after) - static_cast<double>(before))
           / static_cast<double>(o.objects);
  };
  r.extra["synced_s"] = w.synced_s;
  r.extra["watching_s"] = w.watching_s;
  r.extra["open_streams"] = static_cast<double>(w.open_at_end);
  r.extra["cpu_s"] = w.sync_cpu_s;
  r.extra["qps"] = o.qps;
  r.extra["requests"] = static_cast<double>(requests);
  r.extra["connections"] = static_cast<double>(st.connects);
  r.extra["multi_handles"] =
    static_cast<double>(w.cl->client()->stats().multi_handles);
  r.extra["throttled"] = static_cast<double>(st.throttled);
  // What a watched object keeps: the start's transient buffers (replies
  // in flight) are given back first, as bench -w apiserver does.
  trim_heap();
  r.extra["rss_bytes_per_object"] = per_object(rss_bytes(), w.rss_before);
  r.extra["heap_bytes_per_object"] = per_object(heap_bytes(), w.heap_before);
  return r;
}

bench_result run_wire_propagate(const wire_bench_options& o) {
  watched_set w{o};
  auto r = row("wire-propagate", o);
  // CPU per event applied, end to end: every object updated `events` times
  // by the server, until each reads as its last version.
  auto cpu0 = process_cpu_seconds();
  auto t0 = clock_type::now();
  auto server_cpu = w.srv.update_all(o.events);
  auto base = w.writes + (o.events - 1) * o.objects;
  w.writes += o.events * o.objects;
  for (std::size_t i = 0; i < o.objects; ++i)
    w.wait_for(i, base + i + 1, false);
  auto cpu = process_cpu_seconds() - cpu0;
  auto events = static_cast<double>(o.events * o.objects);
  r.extra["cpu_us_per_event"] = cpu * 1e6 / events;
  r.extra["server_cpu_us_per_event"] = server_cpu * 1e6 / events;
  r.extra["events_per_s"] = events / seconds_since(t0);
  // Write to visible: one write at a time; the clock starts when the
  // server's update returned (its own write latency apart).
  histogram added;
  histogram server_write;
  std::minstd_rand rng{42};
  std::uint64_t before_ack = 0;
  auto t1 = clock_type::now();
  for (std::size_t s = 0; s < o.samples; ++s) {
    auto i = std::uniform_int_distribution<std::size_t>{0, o.objects - 1}(rng);
    auto write = ++w.writes;
    std::int64_t visible_ns = 0;
    auto times = w.srv.update(i, [&] {
      w.wait_for(i, write, true);
      visible_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     clock_type::now().time_since_epoch())
                     .count();
    });
    server_write.record(
      static_cast<std::uint64_t>(times.after_ns - times.before_ns));
    if (visible_ns < times.after_ns)
      ++before_ack;
    added.record(visible_ns > times.after_ns
                   ? static_cast<std::uint64_t>(visible_ns - times.after_ns)
                   : 0);
  }
  r.ops = o.samples;
  r.seconds = seconds_since(t1);
  r.ops_per_sec = static_cast<double>(o.samples) / r.seconds;
  r.latency = "propagation";
  r.p50_ns = added.value_at_percentile(50);
  r.p99_ns = added.value_at_percentile(99);
  r.p999_ns = added.value_at_percentile(99.9);
  r.max_ns = added.max();
  r.extra["server_write_p50_us"]
    = static_cast<double>(server_write.value_at_percentile(50)) / 1e3;
  r.extra["server_write_p99_us"]
    = static_cast<double>(server_write.value_at_percentile(99)) / 1e3;
  r.extra["visible_before_ack"] = static_cast<double>(before_ack);
  r.peak_rss_bytes = peak_rss_bytes();
  return r;
}

std::vector<bench_result> run_wire_workloads(const wire_bench_options& o) {
  std::vector<bench_result> out;
  for (const auto& name : o.workloads) {
    if (o.progress)
      o.progress(name + " over " + std::to_string(o.objects) + " objects");
    if (name == "wire-replay")
      out.push_back(run_wire_replay(o));
    else if (name == "wire-sync")
      out.push_back(run_wire_sync(o));
    else if (name == "wire-propagate")
      out.push_back(run_wire_propagate(o));
    else
      continue;
    if (o.measured)
      o.measured(out.back());
  }
  return out;
}

} // namespace podref::bench
