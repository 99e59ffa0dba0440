#include "simulation/checks.hpp"

#include <thread>

#include "podref/messages/pod_registration.hpp"

namespace podref::cli::sim {

namespace {

/// How long the checks wait for the engine to settle.
constexpr auto quiescence_timeout = std::chrono::seconds(5);

/// How long the freshness check waits for the last updates to reach reads.
constexpr auto propagation_timeout = std::chrono::seconds(2);

testing::invariant_options options_for(resource res,
                                       const simulation_config& config,
                                       std::chrono::nanoseconds limit) {
  testing::invariant_options opts;
  opts.res = res;
  // Cache keeps cache entries instead of reflectors, Get keeps no books.
  opts.expect_reflectors = config.strategy == strategy::watch;
  opts.keeps_references = config.strategy != strategy::get;
  // check_freshness checks reads as the readers make them.
  opts.check_reads = false;
  // Both managers watch the one API server.
  opts.exclusive_server = false;
  opts.settle_limit = limit;
  opts.step = std::chrono::milliseconds(20);
  return opts;
}

/// Adds `who`'s mismatches to `failures`, one sentence each.
void add(std::vector<std::string>& failures, const char* who,
         const std::vector<std::string>& mismatches) {
  for (const auto& x : mismatches)
    failures.push_back(std::string{who} + ": " + x);
}

} // namespace

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

engine_checks::engine_checks(runtime& rt, world& w)
  : w_(w),
    // After a fault, reflectors may sit in their retry backoff (at most
    // upstream's 30 s cap) before they list again.
    settle_limit_(std::chrono::duration_cast<std::chrono::milliseconds>(
      w.config.fault_period.count() > 0
        ? quiescence_timeout + manager_options{}.backoff_cap
        : std::chrono::nanoseconds{quiescence_timeout})),
    secrets_(rt.system(), w.secrets.manager().actor(), w.api.actor(),
             testing::counts_of(w.secrets.manager()),
             options_for(resource::secrets, w.config, settle_limit_)),
    configmaps_(rt.system(), w.configmaps.manager().actor(), w.api.actor(),
                testing::counts_of(w.configmaps.manager()),
                options_for(resource::config_maps, w.config, settle_limit_)),
    actors_(rt.system(), w.secrets.manager().actor(), w.api.actor(), {},
            options_for(resource::secrets, w.config, settle_limit_)) {
  actors_.record_baseline();
}

void engine_checks::settle(std::vector<std::string>& failures) {
  for (auto [m, who] :
       {std::make_pair(&w_.secrets.manager(), "the secret manager"),
        std::make_pair(&w_.configmaps.manager(), "the configmap manager")})
    if (!m->wait_quiescent(settle_limit_))
      failures.push_back(std::string{who} + " did not settle within "
                         + std::to_string(settle_limit_.count() / 1000)
                         + " s");
}

void engine_checks::while_live(const std::vector<arrivals::live_pod>& pods,
                               std::vector<std::string>& failures) {
  // The API server may have been replaced by a fault.
  secrets_.set_server(w_.api.actor());
  configmaps_.set_server(w_.api.actor());
  std::vector<pod_registration_ptr> secret_regs;
  std::vector<pod_registration_ptr> configmap_regs;
  for (const auto& lp : pods) {
    secret_regs.push_back(make_registration(lp.p, resource::secrets));
    configmap_regs.push_back(make_registration(lp.p, resource::config_maps));
  }
  add(failures, "secret manager", secrets_.check(secret_regs));
  add(failures, "configmap manager", configmaps_.check(configmap_regs));
}

void engine_checks::after_drain(std::vector<std::string>& failures) {
  settle(failures);
  add(failures, "configmap manager", configmaps_.drained());
  add(failures, "secret manager", secrets_.drained());
  add(failures, "the engine", actors_.drained());
}

} // namespace podref::cli::sim
