#include "simulation/reader.hpp"

#include <utility>

namespace podref::cli::sim {

reader::reader(world& w, std::size_t index)
  : w_(w), index_(index), rng_(thread_seed(w.config.seed, 2 + index)),
    last_rv_(w.objects.size(), 0) {
  // nop
}

void reader::run() {
  pacer ticks{w_.config.read_rate};
  for (;;) {
    auto v = w_.board.current();
    if (v->pods.empty()) {
      ++idle_ticks;
      if (!ticks.wait(w_.stop))
        return;
      continue;
    }
    std::uniform_int_distribution<std::size_t> pick{0, v->pods.size() - 1};
    auto [id, tmpl] = v->pods[pick(rng_)];
    const auto& refs = w_.template_refs[tmpl];
    if (refs.empty()) {
      ++idle_ticks;
      if (!ticks.wait(w_.stop))
        return;
    }
    for (auto idx : refs) {
      read_one(id, idx);
      if (!ticks.wait(w_.stop))
        return;
    }
  }
}

void reader::read_one(std::uint64_t pod_id, std::size_t idx) {
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

void reader::fault(std::string what) {
  ++faults;
  if (messages.size() < max_messages)
    messages.push_back("reader " + std::to_string(index_) + ": "
                       + std::move(what));
}

} // namespace podref::cli::sim
