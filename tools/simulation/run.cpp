// run_simulation: load the objects, run the busy phase, check the engine
// with the last pods live, drain, check again, and summarize.
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>

#include "podref/messages/pod_references.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "simulation/arrivals.hpp"
#include "simulation/checks.hpp"
#include "simulation/delivery.hpp"
#include "simulation/fault_injector.hpp"
#include "simulation/latency.hpp"
#include "simulation/reader.hpp"
#include "simulation/simulation.hpp"
#include "simulation/updater.hpp"
#include "simulation/world.hpp"

namespace podref::cli {

namespace {

using namespace sim;

/// Stores the input's objects in the API server and builds the object
/// table: stored objects first, then references to missing ones. Returns
/// what the API server holds, per index.
std::vector<api_object> load_objects(world& w, const simulation_input& input,
                                     simulation_summary& sum) {
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
    auto stored = w.api.apply(x);
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
  return latest;
}

/// The harness threads of the busy phase.
struct harness {
  harness(world& w, std::vector<api_object> latest)
    : pods(w), upd(w, std::move(latest)), faults(w) {
    for (std::size_t i = 0; i < w.config.readers; ++i)
      readers.push_back(std::make_unique<reader>(w, i));
  }

  /// Runs every thread until `config.duration` after `start`, reporting
  /// progress a few times per second, then stops and joins them.
  void busy_phase(world& w, sim_clock::time_point start,
                  const progress_callback& progress) {
    std::vector<std::thread> threads;
    threads.emplace_back([this] { pods.run(); });
    threads.emplace_back([this] { upd.run(); });
    threads.emplace_back([this] { faults.run(); });
    for (auto& r : readers)
      threads.emplace_back([&r] { r->run(); });
    auto end = start + to_clock(w.config.duration);
    for (auto now = sim_clock::now(); now < end; now = sim_clock::now()) {
      report(w, start, now, progress);
      std::this_thread::sleep_until(
        std::min(end, now + std::chrono::milliseconds(250)));
    }
    report(w, start, end, progress);
    w.stop.stop();
    for (auto& t : threads)
      t.join();
  }

  void report(const world& w, sim_clock::time_point start,
              sim_clock::time_point now,
              const progress_callback& progress) const {
    if (!progress)
      return;
    simulation_progress p;
    p.elapsed = now - start;
    p.duration = w.config.duration;
    p.live_pods = pods.live_count.load(std::memory_order_relaxed);
    p.pods_arrived = pods.arrived.load(std::memory_order_relaxed);
    p.pods_left = pods.left.load(std::memory_order_relaxed);
    p.updates = upd.updates.load(std::memory_order_relaxed);
    for (const auto& r : readers)
      p.reads += r->reads.load(std::memory_order_relaxed);
    progress(p);
  }

  /// What the threads counted and the faults they saw.
  void summarize(simulation_summary& sum) const {
    auto& failures = sum.failures;
    sum.objects_referenced = pods.ever_referenced();
    sum.pods_arrived = pods.arrived.load();
    sum.pods_left = pods.left.load();
    sum.pods_refused = pods.refused();
    sum.peak_live_pods = pods.peak();
    sum.updates = upd.updates.load();
    sum.update_errors = upd.errors();
    failures.insert(failures.end(), upd.messages.begin(), upd.messages.end());
    failures.insert(failures.end(), faults.messages.begin(),
                    faults.messages.end());
    sum.faults_injected = faults.injected();
    sum.fault_errors = upd.fault_errors.load();
    std::uint64_t reader_faults = 0;
    delivery_counts counts;
    counts.arrivals = sum.pods_arrived + sum.pods_refused;
    counts.updates = sum.updates + sum.update_errors + upd.fault_errors.load();
    counts.idle_update_ticks = upd.idle_ticks;
    for (const auto& r : readers) {
      counts.idle_read_ticks += r->idle_ticks;
      sum.reads += r->reads.load();
      sum.read_errors += r->errors;
      sum.benign_read_errors += r->benign_errors;
      sum.fault_errors += r->fault_errors;
      reader_faults += r->faults;
      failures.insert(failures.end(), r->messages.begin(), r->messages.end());
    }
    if (reader_faults > 0)
      failures.push_back(std::to_string(reader_faults)
                         + " reads failed or went back in time in all");
    counts.reads = sum.reads;
    measure_delivery(counts, sum);
    sum.latency = measure_latency(upd.writes, readers);
  }

  arrivals pods;
  updater upd;
  fault_injector faults;
  std::vector<std::unique_ptr<reader>> readers;
};

} // namespace

simulation_summary run_simulation(const simulation_config& config,
                                  const simulation_input& input,
                                  const progress_callback& progress,
                                  const serve_hook& serve) {
  auto start = sim_clock::now();
  simulation_summary sum;
  sum.config = config;
  sum.templates = input.templates.size();
  // Destroyed in reverse: managers, API server, then the actor system.
  runtime rt;
  api_server api{rt};
  secret_manager secrets{rt, api, config.strategy};
  configmap_manager configmaps{rt, api, config.strategy};
  world w{config, api, secrets, configmaps, {}, input.templates, {}, {}, {}};
  auto latest = load_objects(w, input, sum);
  // Served from here to the end of the run (destroyed before `api`).
  std::shared_ptr<void> served;
  if (serve) {
    auto started = serve(rt, api);
    if (!started) {
      sum.aborted = started.error().message;
      sum.failures.push_back(sum.aborted);
      return sum;
    }
    served = std::move(started).value();
  }
  engine_checks checks{rt, w};
  harness h{w, std::move(latest)};

  h.busy_phase(w, start, progress);
  sum.secrets_at_stop = secrets.manager().stats();
  sum.configmaps_at_stop = configmaps.manager().stats();

  // The checks while the last pods are still there.
  checks.settle(sum.failures);
  check_freshness(w, *w.board.current(), h.upd.writes, sum.failures);
  checks.while_live(h.pods.live(), sum.failures);
  sum.live_at_end = h.pods.live().size();

  // The drain: nothing may be left behind.
  h.pods.depart_all();
  checks.after_drain(sum.failures);
  sum.secrets_final = secrets.manager().stats();
  sum.configmaps_final = configmaps.manager().stats();

  h.summarize(sum);
  sum.elapsed = sim_clock::now() - start;
  return sum;
}

} // namespace podref::cli
