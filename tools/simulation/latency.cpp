#include "simulation/latency.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "bench/histogram.hpp"

namespace podref::cli::sim {

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
  bench::histogram us;
  for (const auto& w : writes) {
    auto i = first.find({w.object, w.rv});
    if (i == first.end()) {
      ++result.unobserved;
      continue;
    }
    auto d = std::chrono::duration_cast<std::chrono::microseconds>(i->second
                                                                   - w.at);
    us.record(static_cast<std::uint64_t>(std::max<std::int64_t>(d.count(), 0)));
  }
  auto at = [&us](double percentile) {
    return static_cast<std::int64_t>(us.value_at_percentile(percentile));
  };
  result.samples = us.count();
  result.p50_us = at(50);
  result.p99_us = at(99);
  result.p999_us = at(99.9);
  result.max_us = static_cast<std::int64_t>(us.max());
  return result;
}

} // namespace podref::cli::sim
