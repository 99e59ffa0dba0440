#include "simulation.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <utility>

#include "podref/messages/pod_references.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"

namespace podref::cli {

namespace {

using sim_clock = std::chrono::steady_clock;

/// How long the checks wait for the engine to settle.
constexpr auto quiescence_timeout = std::chrono::seconds(5);

/// How long the final check waits for the last updates to reach the reads.
constexpr auto propagation_timeout = std::chrono::seconds(2);

/// How many failure messages one thread keeps (the rest are only counted).
constexpr std::size_t max_messages = 3;

/// The data key the updater rewrites.
constexpr const char* revision_key = "podref-sim-revision";

sim_clock::duration to_clock(std::chrono::duration<double> d) {
  return std::chrono::duration_cast<sim_clock::duration>(d);
}

std::int64_t to_us(sim_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

/// A Secret or ConfigMap some template references or the input holds.
struct object_info {
  resource res = resource::secrets;
  std::string ns;
  std::string name;
  /// False for a referenced object that the input lacks: reads must then
  /// answer "not found".
  bool exists = false;
  bool immutable = false;

  std::string display() const {
    return std::string{singular_name(res)} + " " + ns + "/" + name;
  }
};

/// The live pods as readers and the updater see them: replaced on every
/// arrival and departure, never changed once published.
struct node_view {
  /// (pod id, template index), ids ascending.
  std::vector<std::pair<std::uint64_t, std::size_t>> pods;
  /// Distinct object indices the pods reference, ascending.
  std::vector<std::size_t> referenced;
  /// The subset the updater may change.
  std::vector<std::size_t> mutable_referenced;

  bool has_pod(std::uint64_t id) const {
    auto i = std::lower_bound(pods.begin(), pods.end(),
                              std::make_pair(id, std::size_t{0}));
    return i != pods.end() && i->first == id;
  }
};

using view_ptr = std::shared_ptr<const node_view>;

/// Ends every harness thread's waits at once.
class stop_signal {
public:
  void stop() {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      stopped_ = true;
    }
    cv_.notify_all();
  }

  /// Waits until `t` or the stop; true iff stopped.
  bool wait_until(sim_clock::time_point t) {
    std::unique_lock<std::mutex> guard{mtx_};
    return cv_.wait_until(guard, t, [this] { return stopped_; });
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

/// Evenly spaced ticks at `rate` per second; a thread that fell far behind
/// skips the missed ticks instead of bursting through them.
class pacer {
public:
  explicit pacer(double rate)
    : interval_(to_clock(std::chrono::duration<double>(1.0 / rate))),
      next_(sim_clock::now()) {
    // nop
  }

  /// Waits for the next tick; false once stopped.
  bool wait(stop_signal& stop) {
    next_ += interval_;
    auto now = sim_clock::now();
    if (next_ + std::chrono::milliseconds(100) < now)
      next_ = now;
    return !stop.wait_until(next_);
  }

private:
  sim_clock::duration interval_;
  sim_clock::time_point next_;
};

/// The published node_view, swapped under a mutex.
class view_board {
public:
  view_board() : view_(std::make_shared<node_view>()) {
    // nop
  }

  view_ptr current() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return view_;
  }

  void publish(view_ptr x) {
    std::lock_guard<std::mutex> guard{mtx_};
    view_ = std::move(x);
  }

private:
  mutable std::mutex mtx_;
  view_ptr view_;
};

/// Everything the threads share: the engine, the object table and the
/// template references (both constant during the run), the view.
struct world {
  const simulation_config& config;
  std::vector<object_info> objects;
  std::vector<pod_ptr> templates;
  /// Object indices each template references.
  std::vector<std::vector<std::size_t>> template_refs;
  api_server& api;
  secret_manager& secrets;
  configmap_manager& configmaps;
  view_board board;
  stop_signal stop;

  /// Reads one object through its typed manager.
  result<api_object> read(std::size_t idx) {
    const auto& o = objects[idx];
    if (o.res == resource::secrets) {
      auto x = secrets.get_secret(o.ns, o.name);
      if (!x)
        return x.error();
      return api_object{*x};
    }
    auto x = configmaps.get_configmap(o.ns, o.name);
    if (!x)
      return x.error();
    return api_object{*x};
  }
};

std::uint64_t thread_seed(std::uint64_t seed, std::uint64_t k) {
  return seed ^ (0x9e3779b97f4a7c15ULL * (k + 1));
}

// -- arrivals and departures --------------------------------------------------

/// The arrival/departure thread's state; the main thread takes it over
/// after joining.
class node {
public:
  explicit node(world& w) : w_(w), rng_(thread_seed(w.config.seed, 0)) {
    // nop
  }

  struct live_pod {
    std::uint64_t id;
    std::size_t tmpl;
    pod p;
    sim_clock::time_point leaves;
  };

  void run() {
    auto next_arrival = sim_clock::now();
    auto interval = to_clock(
      std::chrono::duration<double>(1.0 / w_.config.pod_rate));
    for (;;) {
      auto wake = next_arrival;
      for (const auto& lp : live_)
        wake = std::min(wake, lp.leaves);
      if (w_.stop.wait_until(wake))
        return;
      auto now = sim_clock::now();
      depart_due(now);
      if (next_arrival <= now) {
        next_arrival = std::max(next_arrival + interval,
                                now - std::chrono::milliseconds(100));
        if (live_.size() < w_.config.max_pods)
          arrive(now);
        else
          ++refused_;
      }
    }
  }

  /// Removes every pod: first from the readers' view, then from the
  /// managers.
  void depart_all() {
    auto leaving = std::move(live_);
    live_.clear();
    publish();
    for (auto& lp : leaving)
      unregister(lp);
  }

  const std::vector<live_pod>& live() const {
    return live_;
  }

  std::atomic<std::uint64_t> arrived{0};
  std::atomic<std::uint64_t> left{0};
  std::atomic<std::size_t> live_count{0};

  std::uint64_t refused() const {
    return refused_;
  }

  std::size_t peak() const {
    return peak_;
  }

  /// Distinct objects any pod referenced so far.
  std::size_t ever_referenced() const {
    return static_cast<std::size_t>(
      std::count(ever_.begin(), ever_.end(), true));
  }

private:
  void arrive(sim_clock::time_point now) {
    std::uniform_int_distribution<std::size_t> pick{0,
                                                    w_.templates.size() - 1};
    std::uniform_real_distribution<double> span{0.5, 1.5};
    auto n = ++serial_;
    live_pod lp{n, pick(rng_), {}, {}};
    lp.p = *w_.templates[lp.tmpl];
    lp.p.metadata.name += "-" + std::to_string(n);
    lp.p.metadata.uid = "sim-" + std::to_string(n);
    lp.leaves = now + to_clock(w_.config.pod_lifetime * span(rng_));
    w_.secrets.register_pod(lp.p);
    w_.configmaps.register_pod(lp.p);
    // Readers see the pod only once both managers applied it, so that any
    // "not registered" answer for a pod in the view is an engine fault.
    w_.secrets.manager().sync();
    w_.configmaps.manager().sync();
    live_.push_back(std::move(lp));
    publish();
    arrived.fetch_add(1, std::memory_order_relaxed);
    peak_ = std::max(peak_, live_.size());
  }

  void depart_due(sim_clock::time_point now) {
    auto due = [now](const live_pod& lp) { return lp.leaves <= now; };
    auto first = std::stable_partition(live_.begin(), live_.end(),
                                       [&](const live_pod& lp) {
                                         return !due(lp);
                                       });
    if (first == live_.end())
      return;
    std::vector<live_pod> leaving(std::make_move_iterator(first),
                                  std::make_move_iterator(live_.end()));
    live_.erase(first, live_.end());
    publish();
    for (auto& lp : leaving)
      unregister(lp);
  }

  void unregister(const live_pod& lp) {
    w_.secrets.unregister_pod(lp.p);
    w_.configmaps.unregister_pod(lp.p);
    left.fetch_add(1, std::memory_order_relaxed);
  }

  void publish() {
    auto v = std::make_shared<node_view>();
    std::vector<bool> used(w_.objects.size(), false);
    for (const auto& lp : live_) {
      v->pods.emplace_back(lp.id, lp.tmpl);
      for (auto idx : w_.template_refs[lp.tmpl])
        used[idx] = true;
    }
    ever_.resize(used.size(), false);
    for (std::size_t idx = 0; idx < used.size(); ++idx) {
      if (!used[idx])
        continue;
      ever_[idx] = true;
      v->referenced.push_back(idx);
      if (w_.objects[idx].exists && !w_.objects[idx].immutable)
        v->mutable_referenced.push_back(idx);
    }
    live_count.store(live_.size(), std::memory_order_relaxed);
    w_.board.publish(std::move(v));
  }

  world& w_;
  std::mt19937_64 rng_;
  /// Arrival order, so ids ascend.
  std::vector<live_pod> live_;
  std::uint64_t serial_ = 0;
  std::uint64_t refused_ = 0;
  std::size_t peak_ = 0;
  std::vector<bool> ever_;
};

// -- updates ------------------------------------------------------------------

/// One write the updater made: `object` got resourceVersion `rv`; the call
/// started at `at`.
struct write_record {
  std::size_t object;
  std::uint64_t rv;
  sim_clock::time_point at;
  /// When the call returned.
  sim_clock::time_point done;
};

/// `x` with the revision data value set to `n`.
api_object with_revision(const api_object& x, std::uint64_t n) {
  if (auto s = x.as_secret()) {
    auto copy = std::make_shared<secret>(*s);
    copy->data[revision_key] = std::to_string(n);
    return secret_ptr{std::move(copy)};
  }
  auto copy = std::make_shared<config_map>(*x.as_config_map());
  copy->data[revision_key] = std::to_string(n);
  return config_map_ptr{std::move(copy)};
}

class updater {
public:
  updater(world& w, std::vector<api_object> latest)
    : w_(w), latest_(std::move(latest)),
      rng_(thread_seed(w.config.seed, 1)) {
    // nop
  }

  void run() {
    if (w_.config.update_rate <= 0) {
      w_.stop.wait_until(sim_clock::time_point::max());
      return;
    }
    pacer ticks{w_.config.update_rate};
    while (ticks.wait(w_.stop)) {
      auto v = w_.board.current();
      if (v->mutable_referenced.empty())
        continue;
      std::uniform_int_distribution<std::size_t> pick{
        0, v->mutable_referenced.size() - 1};
      auto idx = v->mutable_referenced[pick(rng_)];
      auto next = with_revision(latest_[idx], ++revision_);
      auto at = sim_clock::now();
      auto stored = w_.api.update(next);
      if (!stored && faulty(stored.error())) {
        fault_errors.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (!stored) {
        ++errors_;
        if (messages.size() < max_messages)
          messages.push_back("updating " + w_.objects[idx].display()
                             + " failed: " + stored.error().message);
        continue;
      }
      latest_[idx] = *stored;
      writes.push_back(
        {idx, stored->resource_version(), at, sim_clock::now()});
      updates.fetch_add(1, std::memory_order_relaxed);
    }
  }

  std::uint64_t errors() const {
    return errors_;
  }

  std::vector<write_record> writes;
  std::vector<std::string> messages;
  std::atomic<std::uint64_t> updates{0};
  std::atomic<std::uint64_t> fault_errors{0};

private:
  /// A write the server refused while it restarted.
  bool faulty(const error_info& err) const {
    return w_.config.fault_period.count() > 0
           && err.code == errc::unavailable;
  }

  world& w_;
  /// What the API server stored last, per object index.
  std::vector<api_object> latest_;
  std::mt19937_64 rng_;
  std::uint64_t revision_ = 0;
  std::uint64_t errors_ = 0;
};

// -- reads --------------------------------------------------------------------

/// A reader saw resourceVersion `rv` of `object` for the first time at `at`.
struct observation {
  std::size_t object;
  std::uint64_t rv;
  sim_clock::time_point at;
};

class reader {
public:
  reader(world& w, std::size_t index)
    : w_(w), index_(index), rng_(thread_seed(w.config.seed, 2 + index)),
      last_rv_(w.objects.size(), 0) {
    // nop
  }

  /// Syncs a random live pod's objects the way the kubelet does, one read
  /// per tick.
  void run() {
    pacer ticks{w_.config.read_rate};
    for (;;) {
      auto v = w_.board.current();
      if (v->pods.empty()) {
        if (!ticks.wait(w_.stop))
          return;
        continue;
      }
      std::uniform_int_distribution<std::size_t> pick{0, v->pods.size() - 1};
      auto [id, tmpl] = v->pods[pick(rng_)];
      const auto& refs = w_.template_refs[tmpl];
      if (refs.empty() && !ticks.wait(w_.stop))
        return;
      for (auto idx : refs) {
        read_one(id, idx);
        if (!ticks.wait(w_.stop))
          return;
      }
    }
  }

  std::vector<observation> seen;
  std::vector<std::string> messages;
  std::atomic<std::uint64_t> reads{0};
  std::uint64_t errors = 0;
  std::uint64_t benign_errors = 0;
  std::uint64_t fault_errors = 0;
  std::uint64_t faults = 0;

private:
  void read_one(std::uint64_t pod_id, std::size_t idx) {
    const auto& o = w_.objects[idx];
    auto x = w_.read(idx);
    auto now = sim_clock::now();
    reads.fetch_add(1, std::memory_order_relaxed);
    if (x) {
      auto rv = x->resource_version();
      if (rv > last_rv_[idx]) {
        last_rv_[idx] = rv;
        seen.push_back({idx, rv, now});
      } else if (rv < last_rv_[idx]) {
        fault(o.display() + " went back from resourceVersion "
              + std::to_string(last_rv_[idx]) + " to " + std::to_string(rv));
      }
      return;
    }
    const auto& err = x.error();
    if (err.code == errc::not_found && !o.exists)
      return;
    ++errors;
    // The pod left the view before its unregistration was sent, so a pod
    // still in the view is still registered.
    if (err.code == errc::not_registered
        && !w_.board.current()->has_pod(pod_id)) {
      ++benign_errors;
      return;
    }
    // While lists fail or the server restarts, an object not synced yet
    // answers upstream's sync timeout: an answer, not a fault.
    if (w_.config.fault_period.count() > 0
        && (err.code == errc::sync_timeout || err.code == errc::unavailable)) {
      ++fault_errors;
      return;
    }
    fault("reading " + o.display() + " failed: " + err.message);
  }

  void fault(std::string what) {
    ++faults;
    if (messages.size() < max_messages)
      messages.push_back("reader " + std::to_string(index_) + ": "
                         + std::move(what));
  }

  world& w_;
  std::size_t index_;
  std::mt19937_64 rng_;
  /// Newest resourceVersion this reader saw, per object index.
  std::vector<std::uint64_t> last_rv_;
};

// -- faults -------------------------------------------------------------------

/// Injects one API server fault per period, cycling through every kind.
class fault_injector {
public:
  explicit fault_injector(world& w) : w_(w) {
    // nop
  }

  void run() {
    if (w_.config.fault_period.count() <= 0) {
      w_.stop.wait_until(sim_clock::time_point::max());
      return;
    }
    pacer ticks{1.0 / w_.config.fault_period.count()};
    const error_info injected{errc::unavailable, "injected by podref simulate"};
    for (std::uint64_t n = 0; ticks.wait(w_.stop); ++n) {
      switch (n % 5) {
        case 0:
          w_.api.fail_next(source_verb::list, 3, injected);
          break;
        case 1:
          w_.api.fail_next(source_verb::watch, 2, injected);
          break;
        case 2:
          w_.api.close_watches();
          break;
        case 3:
          w_.api.expire_history();
          break;
        default:
          if (auto res = w_.api.restart(); !res)
            messages.push_back("restarting the API server failed: "
                               + res.error().message);
      }
      injected_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  std::uint64_t injected() const {
    return injected_.load();
  }

  std::vector<std::string> messages;

private:
  world& w_;
  std::atomic<std::uint64_t> injected_{0};
};

// -- summary ------------------------------------------------------------------

/// The nearest-rank percentile `per_mille`/1000 of ascending `xs`.
std::int64_t nearest_rank(const std::vector<std::int64_t>& xs,
                          std::size_t per_mille) {
  if (xs.empty())
    return 0;
  auto rank = (per_mille * xs.size() + 999) / 1000;
  return xs[std::max<std::size_t>(rank, 1) - 1];
}

latency_summary
measure_latency(const std::vector<write_record>& writes,
                const std::vector<std::unique_ptr<reader>>& readers) {
  std::map<std::pair<std::size_t, std::uint64_t>, sim_clock::time_point> first;
  for (const auto& r : readers)
    for (const auto& obs : r->seen) {
      auto [i, added] = first.emplace(std::make_pair(obs.object, obs.rv),
                                      obs.at);
      if (!added)
        i->second = std::min(i->second, obs.at);
    }
  latency_summary result;
  std::vector<std::int64_t> samples;
  for (const auto& w : writes) {
    auto i = first.find({w.object, w.rv});
    if (i == first.end())
      ++result.unobserved;
    else
      samples.push_back(std::max<std::int64_t>(to_us(i->second - w.at), 0));
  }
  std::sort(samples.begin(), samples.end());
  result.samples = samples.size();
  result.p50_us = nearest_rank(samples, 500);
  result.p99_us = nearest_rank(samples, 990);
  result.p999_us = nearest_rank(samples, 999);
  result.max_us = samples.empty() ? 0 : samples.back();
  return result;
}

/// Adds a failure for every counter of `st` that differs from expected.
void expect_counts(std::vector<std::string>& failures, const char* who,
                   const char* when, const manager_stats& st,
                   std::int64_t pods, std::int64_t objects,
                   std::int64_t reflectors) {
  auto check = [&](const char* what, std::int64_t got, std::int64_t want) {
    if (got != want)
      failures.push_back(std::string{who} + " " + when + ": " + what + " "
                         + std::to_string(got) + ", expected "
                         + std::to_string(want));
  };
  check("registered pods", st.registered_pods, pods);
  check("referenced objects", st.referenced_objects, objects);
  check("live reflectors", st.live_reflectors, reflectors);
}

/// Checks that every referenced object reads as the API server's latest
/// version, waiting up to propagation_timeout in all for stragglers. Under
/// Cache a version the API server replaced less than a TTL ago passes too.
void check_freshness(world& w, const node_view& v,
                     const std::vector<write_record>& writes,
                     std::vector<std::string>& failures) {
  auto deadline = sim_clock::now() + propagation_timeout;
  const auto ttl = manager_options{}.default_ttl;
  for (auto idx : v.referenced) {
    const auto& o = w.objects[idx];
    auto want = w.api.get(o.res, o.ns, o.name);
    auto cached = [&](const result<api_object>& got) {
      if (w.config.strategy != strategy::cache || !got || !want)
        return false;
      // The write that replaced the version read (writes are in order).
      auto rv = got->resource_version();
      for (const auto& wr : writes)
        if (wr.object == idx && wr.rv > rv)
          return sim_clock::now() - wr.done < ttl;
      return false;
    };
    auto matches = [&](const result<api_object>& got) {
      if (!want)
        return !got && got.error().code == want.error().code;
      return (got && *got == *want) || cached(got);
    };
    auto got = w.read(idx);
    auto pause = std::chrono::microseconds(100);
    // Waiting for the watch event to arrive, bounded by the deadline.
    while (!matches(got) && sim_clock::now() < deadline) {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2,
                       decltype(pause){std::chrono::milliseconds(10)});
      got = w.read(idx);
    }
    if (matches(got))
      continue;
    auto describe = [](const result<api_object>& x) {
      return x ? "resourceVersion " + std::to_string(x->resource_version())
               : "error \"" + x.error().message + "\"";
    };
    failures.push_back(o.display() + " reads " + describe(got)
                       + " but the API server has " + describe(want));
  }
}

} // namespace

simulation_summary run_simulation(const simulation_config& config,
                                  const simulation_input& input,
                                  const progress_callback& progress) {
  auto start = sim_clock::now();
  simulation_summary sum;
  sum.config = config;
  sum.templates = input.templates.size();
  // Destroyed in reverse: managers, API server, then the actor system.
  runtime rt;
  api_server api{rt};
  secret_manager secrets{rt, api, config.strategy};
  configmap_manager configmaps{rt, api, config.strategy};
  world w{config, {}, input.templates, {}, api, secrets, configmaps, {}, {}};

  // The object table: stored objects first, then references to missing
  // ones; `latest` is what the API server holds, per index.
  using key = std::tuple<resource, std::string, std::string>;
  std::map<key, std::size_t> index;
  std::vector<api_object> latest;
  auto intern = [&](resource res, const std::string& ns,
                    const std::string& name) {
    auto [i, added] = index.emplace(key{res, ns, name}, w.objects.size());
    if (added) {
      w.objects.push_back({res, ns, name, false, false});
      latest.emplace_back();
    }
    return i->second;
  };
  for (const auto& x : input.objects) {
    auto stored = api.apply(x);
    if (!stored) {
      sum.failures.push_back("loading " + x.meta().name
                             + " failed: " + stored.error().message);
      continue;
    }
    auto idx = intern(x.kind(), stored->meta().ns, stored->meta().name);
    w.objects[idx].exists = true;
    w.objects[idx].immutable = stored->is_immutable();
    latest[idx] = *stored;
  }
  sum.objects_loaded = w.objects.size();
  for (const auto& t : w.templates) {
    std::vector<std::size_t> refs;
    for (const auto& name : secret_names(*t))
      refs.push_back(intern(resource::secrets, t->metadata.ns, name));
    for (const auto& name : config_map_names(*t))
      refs.push_back(intern(resource::config_maps, t->metadata.ns, name));
    w.template_refs.push_back(std::move(refs));
  }

  // The busy phase.
  node n{w};
  updater upd{w, std::move(latest)};
  fault_injector faults_in{w};
  std::vector<std::unique_ptr<reader>> readers;
  for (std::size_t i = 0; i < config.readers; ++i)
    readers.push_back(std::make_unique<reader>(w, i));
  std::vector<std::thread> threads;
  threads.emplace_back([&n] { n.run(); });
  threads.emplace_back([&upd] { upd.run(); });
  threads.emplace_back([&faults_in] { faults_in.run(); });
  for (auto& r : readers)
    threads.emplace_back([&r] { r->run(); });
  auto end = start + to_clock(config.duration);
  auto report = [&](sim_clock::time_point now) {
    if (!progress)
      return;
    simulation_progress p;
    p.elapsed = now - start;
    p.duration = config.duration;
    p.live_pods = n.live_count.load(std::memory_order_relaxed);
    p.pods_arrived = n.arrived.load(std::memory_order_relaxed);
    p.pods_left = n.left.load(std::memory_order_relaxed);
    p.updates = upd.updates.load(std::memory_order_relaxed);
    for (const auto& r : readers)
      p.reads += r->reads.load(std::memory_order_relaxed);
    progress(p);
  };
  for (auto now = sim_clock::now(); now < end; now = sim_clock::now()) {
    report(now);
    std::this_thread::sleep_until(
      std::min(end, now + std::chrono::milliseconds(250)));
  }
  report(end);
  w.stop.stop();
  for (auto& t : threads)
    t.join();
  sum.secrets_at_stop = secrets.manager().stats();
  sum.configmaps_at_stop = configmaps.manager().stats();

  // The checks while the last pods are still there.
  auto& failures = sum.failures;
  // After a fault, reflectors may sit in their retry backoff (at most
  // 30 s, upstream's cap) before they list again.
  auto settle_limit = config.fault_period.count() > 0
                        ? quiescence_timeout + manager_options{}.backoff_cap
                        : std::chrono::nanoseconds{quiescence_timeout};
  auto settle = [&](object_manager& m, const char* who) {
    auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(
      settle_limit);
    if (!m.wait_quiescent(limit))
      failures.push_back(std::string{who} + " did not settle within "
                         + std::to_string(limit.count() / 1000) + " s");
  };
  settle(secrets.manager(), "the secret manager");
  settle(configmaps.manager(), "the configmap manager");
  auto v = w.board.current();
  check_freshness(w, *v, upd.writes, failures);
  std::int64_t live_secrets = 0;
  for (auto idx : v->referenced)
    if (w.objects[idx].res == resource::secrets)
      ++live_secrets;
  auto live_configmaps = static_cast<std::int64_t>(v->referenced.size())
                         - live_secrets;
  auto pods = static_cast<std::int64_t>(n.live().size());
  sum.live_at_end = n.live().size();
  // Get keeps no books; Cache keeps cache entries instead of reflectors.
  const bool books = config.strategy != strategy::get;
  const bool reflects = config.strategy == strategy::watch;
  expect_counts(failures, "secret manager", "before the drain",
                secrets.manager().stats(), books ? pods : 0,
                books ? live_secrets : 0, reflects ? live_secrets : 0);
  expect_counts(failures, "configmap manager", "before the drain",
                configmaps.manager().stats(), books ? pods : 0,
                books ? live_configmaps : 0, reflects ? live_configmaps : 0);

  // The drain: nothing may be left behind.
  n.depart_all();
  settle(secrets.manager(), "the secret manager");
  settle(configmaps.manager(), "the configmap manager");
  sum.secrets_final = secrets.manager().stats();
  sum.configmaps_final = configmaps.manager().stats();
  for (auto [st, who] : {std::make_pair(&sum.secrets_final, "secret manager"),
                         std::make_pair(&sum.configmaps_final,
                                        "configmap manager")}) {
    expect_counts(failures, who, "after the drain", *st, 0, 0, 0);
    if (st->open_watches != 0)
      failures.push_back(std::string{who} + " after the drain: "
                         + std::to_string(st->open_watches)
                         + " watches still open");
    if (st->reflectors_started != st->reflectors_stopped)
      failures.push_back(std::string{who} + " after the drain: "
                         + std::to_string(st->reflectors_started)
                         + " reflectors started but "
                         + std::to_string(st->reflectors_stopped)
                         + " stopped");
  }

  // What the threads measured.
  sum.objects_referenced = n.ever_referenced();
  sum.pods_arrived = n.arrived.load();
  sum.pods_left = n.left.load();
  sum.pods_refused = n.refused();
  sum.peak_live_pods = n.peak();
  sum.updates = upd.updates.load();
  sum.update_errors = upd.errors();
  failures.insert(failures.end(), upd.messages.begin(), upd.messages.end());
  failures.insert(failures.end(), faults_in.messages.begin(),
                  faults_in.messages.end());
  sum.faults_injected = faults_in.injected();
  sum.fault_errors = upd.fault_errors.load();
  std::uint64_t faults = 0;
  for (const auto& r : readers) {
    sum.reads += r->reads.load();
    sum.read_errors += r->errors;
    sum.benign_read_errors += r->benign_errors;
    sum.fault_errors += r->fault_errors;
    faults += r->faults;
    failures.insert(failures.end(), r->messages.begin(), r->messages.end());
  }
  if (faults > 0)
    failures.push_back(std::to_string(faults)
                       + " reads failed or went back in time in all");
  sum.latency = measure_latency(upd.writes, readers);
  sum.elapsed = sim_clock::now() - start;
  return sum;
}

} // namespace podref::cli
