// Micro-benchmarks (Google Benchmark) of the steps under podref's load
// workloads: reference extraction from a decoded pod, the caller's share of
// a registration and an unregistration, one register +
// unregister step through the manager actor, and a snapshot read through
// object_manager::get.
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>
#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

#include "bench/fixture.hpp"
#include "podref/messages/actor_types.hpp"
#include "podref/messages/pod_references.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/messages/validation.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/object_manager.hpp"
#include "podref/runtime/runtime.hpp"

namespace {

using namespace podref;
using podref::bench::bench_namespace;

constexpr std::size_t pool = 1000;

/// One engine for every benchmark: 1000 secrets, each referenced by an
/// anchor pod and synced.
struct engine_fixture {
  runtime rt;
  api_server server{rt};
  object_manager mgr{rt, server, resource::secrets};
  std::vector<std::string> names;

  engine_fixture() {
    for (std::size_t i = 0; i < pool; ++i) {
      server.apply(bench::make_pool_secret(i));
      names.push_back(bench::secret_name(i));
    }
    for (const auto& p : bench::pool_pods("anchor", 0, pool, pool))
      mgr.register_pod(p);
    mgr.wait_quiescent(std::chrono::seconds(60));
  }

  /// The engine, made on first use.
  static engine_fixture& instance() {
    auto& x = holder();
    if (!x)
      x = std::make_unique<engine_fixture>();
    return *x;
  }

  /// Stops the engine. main() calls this before returning: an actor system
  /// destroyed by the exit handlers, after the main thread's thread-locals,
  /// corrupts the heap (CAF 0.17).
  static void release() {
    holder().reset();
  }

private:
  static std::unique_ptr<engine_fixture>& holder() {
    static std::unique_ptr<engine_fixture> x;
    return x;
  }
};

void reference_extraction(benchmark::State& state) {
  auto p = bench::make_bench_pod("pod", 1, "s-1", "s-2", "s-3");
  for (auto _ : state)
    benchmark::DoNotOptimize(make_registration(p, resource::secrets));
}
BENCHMARK(reference_extraction);

/// The caller's share of register_pod without the inbox: validation and
/// the registration, in one walk. The block is freed on this thread here,
/// not on the manager's, so allocation is cheaper than under load.
void register_caller_side(benchmark::State& state) {
  auto p = bench::make_bench_pod("pod", 1, "s-1", "s-2", "s-3");
  for (auto _ : state)
    benchmark::DoNotOptimize(make_checked_registration(p, resource::secrets));
}
BENCHMARK(register_caller_side);

/// The caller's share of unregister_pod without the inbox: the pod's key.
void unregister_caller_side(benchmark::State& state) {
  auto p = bench::make_bench_pod("pod", 1, "s-1", "s-2", "s-3");
  const auto& m = p.metadata;
  for (auto _ : state)
    benchmark::DoNotOptimize(make_registration(m.ns, m.name, m.uid));
}
BENCHMARK(unregister_caller_side);

void register_step_actor(benchmark::State& state) {
  auto& f = engine_fixture::instance();
  auto mgr = caf::actor_cast<manager_actor>(f.mgr.actor());
  std::vector<pod_registration_ptr> regs;
  for (const auto& p : bench::pool_pods("micro", 0, 4096, pool))
    regs.push_back(make_registration(p, resource::secrets));
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& r = regs[i++ % regs.size()];
    caf::anon_send(mgr, reg_pod_atom::value, r);
    caf::anon_send(mgr, unreg_pod_atom::value, r);
    if (i % 4096 == 0)
      f.mgr.sync();
  }
  // Count the time until the manager applied every step.
  f.mgr.sync();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(register_step_actor)->UseRealTime();

/// The same step through the facade: validation, reference extraction and
/// the command inbox (one manager message per batch, not per call).
void register_step_facade(benchmark::State& state) {
  auto& f = engine_fixture::instance();
  auto pods = bench::pool_pods("facade", 0, 4096, pool);
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& p = pods[i++ % pods.size()];
    f.mgr.register_pod(p);
    f.mgr.unregister_pod(p);
    if (i % 4096 == 0)
      f.mgr.sync();
  }
  f.mgr.sync();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(register_step_facade)->UseRealTime();

void snapshot_read(benchmark::State& state) {
  auto& f = engine_fixture::instance();
  std::size_t i = static_cast<std::size_t>(state.thread_index()) * 7919;
  for (auto _ : state) {
    auto x = f.mgr.get(bench_namespace, f.names[i++ % pool]);
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(snapshot_read)->Threads(1)->Threads(2)->UseRealTime();

/// Every thread reads the same object: the case where threads sharing one
/// reference count would serialise on its cache line.
void snapshot_read_hot(benchmark::State& state) {
  auto& f = engine_fixture::instance();
  const auto& name = f.names[0];
  for (auto _ : state) {
    auto x = f.mgr.get(bench_namespace, name);
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(snapshot_read_hot)->Threads(1)->Threads(2)->UseRealTime();

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  engine_fixture::release();
  return 0;
}
