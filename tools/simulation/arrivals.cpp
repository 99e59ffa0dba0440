#include "simulation/arrivals.hpp"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

namespace podref::cli::sim {

arrivals::arrivals(world& w) : w_(w), rng_(thread_seed(w.config.seed, 0)) {
  // nop
}

void arrivals::run() {
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

void arrivals::depart_all() {
  auto leaving = std::move(live_);
  live_.clear();
  publish();
  for (auto& lp : leaving)
    unregister(lp);
}

std::size_t arrivals::ever_referenced() const {
  return static_cast<std::size_t>(
    std::count(ever_.begin(), ever_.end(), true));
}

void arrivals::arrive(sim_clock::time_point now) {
  std::uniform_int_distribution<std::size_t> pick{0, w_.templates.size() - 1};
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

void arrivals::depart_due(sim_clock::time_point now) {
  auto first = std::stable_partition(live_.begin(), live_.end(),
                                     [now](const live_pod& lp) {
                                       return lp.leaves > now;
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

void arrivals::unregister(const live_pod& lp) {
  w_.secrets.unregister_pod(lp.p);
  w_.configmaps.unregister_pod(lp.p);
  left.fetch_add(1, std::memory_order_relaxed);
}

void arrivals::publish() {
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

} // namespace podref::cli::sim
