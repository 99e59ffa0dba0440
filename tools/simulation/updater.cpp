#include "simulation/updater.hpp"

#include <memory>
#include <utility>

namespace podref::cli::sim {

namespace {

/// The data key the updater rewrites.
constexpr const char* revision_key = "podref-sim-revision";

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

} // namespace

updater::updater(world& w, std::vector<api_object> latest)
  : w_(w), latest_(std::move(latest)), rng_(thread_seed(w.config.seed, 1)) {
  // nop
}

void updater::run() {
  if (w_.config.update_rate <= 0) {
    w_.stop.wait_until(sim_clock::time_point::max());
    return;
  }
  pacer ticks{w_.config.update_rate};
  while (ticks.wait(w_.stop)) {
    auto v = w_.board.current();
    if (v->mutable_referenced.empty()) {
      ++idle_ticks;
      continue;
    }
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
    writes.push_back({idx, stored->resource_version(), at, sim_clock::now()});
    updates.fetch_add(1, std::memory_order_relaxed);
  }
}

bool updater::faulty(const error_info& err) const {
  return w_.config.fault_period.count() > 0 && err.code == errc::unavailable;
}

} // namespace podref::cli::sim
