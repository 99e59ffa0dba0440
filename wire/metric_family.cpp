// Metric families for a Prometheus exposition (metric_family.hpp).
#include "podref/wire/metric_family.hpp"

#include <utility>

namespace podref::wire {

prometheus::MetricFamily metric_family(std::string name, std::string help,
                                       prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void add_sample(prometheus::MetricFamily& f, double value,
                std::vector<prometheus::ClientMetric::Label> labels) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (f.type == prometheus::MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

} // namespace podref::wire
