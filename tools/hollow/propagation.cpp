#include "hollow/propagation.hpp"

#include <algorithm>

namespace podref::cli::hollow {

namespace {

std::uint64_t ns_between(steady::time_point a, steady::time_point b) {
  return b <= a ? 0
                : static_cast<std::uint64_t>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(b - a)
                      .count());
}

} // namespace

propagation_tracker::propagation_tracker(steady::time_point start)
  : start_(start) {
  // nop
}

void propagation_tracker::set_watchers(const std::string& key,
                                       std::vector<std::uint32_t> nodes) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto& o = objects_[key];
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  o.nodes = std::move(nodes);
}

bool propagation_tracker::begin_write(const std::string& key,
                                      steady::time_point t0) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto& o = objects_[key];
  if (o.in_flight)
    return false;
  o.in_flight = t0;
  o.early.clear();
  return true;
}

bool propagation_tracker::reach(write& w, steady::time_point at) {
  out_.per_node.record(ns_between(w.t0, at));
  if (--w.remaining > 0)
    return false;
  auto latency = ns_between(w.t0, at);
  out_.every_node.record(latency);
  ++out_.complete;
  out_.samples.push_back(
    {std::chrono::duration<double>(w.t0 - start_).count(),
     static_cast<double>(latency) / 1e6});
  return true;
}

void propagation_tracker::end_write(const std::string& key,
                                    std::optional<std::uint64_t> rv,
                                    bool conflict, const std::string& why) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto& o = objects_[key];
  if (!o.in_flight)
    return;
  auto t0 = *o.in_flight;
  o.in_flight.reset();
  auto early = std::move(o.early);
  o.early.clear();
  ++out_.writes;
  if (!rv) {
    if (conflict) {
      ++out_.conflicts;
    } else {
      ++out_.failed_writes;
      if (out_.errors.size() < 3)
        out_.errors.push_back(why);
    }
    return;
  }
  write w{*rv, t0, o.nodes.size()};
  if (w.remaining == 0)
    return; // nobody watches it: nothing to measure
  // Nodes that saw this version (or a later one) before the reply: when
  // they first did, from what they saw meanwhile.
  for (auto node : o.nodes) {
    auto last = o.last.find(node);
    if (last == o.last.end() || last->second.first < *rv)
      continue;
    auto at = last->second.second;
    for (const auto& s : early)
      if (s.node == node && s.rv >= *rv) {
        at = s.at;
        break;
      }
    if (reach(w, at))
      return;
  }
  o.pending.push_back(w);
  if (o.pending.size() > max_pending) {
    o.pending.pop_front();
    ++out_.incomplete;
  }
}

void propagation_tracker::seen(std::uint32_t node, const std::string& key,
                               std::uint64_t rv, steady::time_point at) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = objects_.find(key);
  if (i == objects_.end())
    return;
  auto& o = i->second;
  auto& last = o.last[node];
  if (rv <= last.first)
    return;
  auto before = last.first;
  last = {rv, at};
  if (o.in_flight)
    o.early.push_back({node, rv, at});
  if (!std::binary_search(o.nodes.begin(), o.nodes.end(), node))
    return;
  for (auto w = o.pending.begin(); w != o.pending.end();) {
    if (w->rv > rv)
      break;
    if (w->rv > before && reach(*w, at)) {
      w = o.pending.erase(w);
      continue;
    }
    ++w;
  }
}

propagation_result propagation_tracker::result() const {
  std::lock_guard<std::mutex> guard{mtx_};
  auto out = out_;
  for (const auto& [key, o] : objects_)
    out.incomplete += o.pending.size() + (o.in_flight ? 1 : 0);
  return out;
}

} // namespace podref::cli::hollow
