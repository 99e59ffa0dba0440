// Building the metric families of a Prometheus exposition (prometheus-cpp's
// MetricFamily, serialized with its TextSerializer): the HTTP front's
// /metrics (server_metrics.cpp) and `podref node`'s.
#pragma once

#include <string>
#include <vector>

#include <prometheus/metric_family.h>

namespace podref::wire {

/// An empty family: `type` Counter or Gauge.
prometheus::MetricFamily metric_family(std::string name, std::string help,
                                       prometheus::MetricType type);

/// Adds one sample with `labels` (a counter's or a gauge's value, by the
/// family's type).
void add_sample(prometheus::MetricFamily& f, double value,
                std::vector<prometheus::ClientMetric::Label> labels = {});

} // namespace podref::wire
