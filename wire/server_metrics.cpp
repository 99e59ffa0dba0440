// The HTTP front's counters and their Prometheus exposition.
#include "podref/wire/detail/server_metrics.hpp"

#include <set>
#include <utility>
#include <vector>

#include <prometheus/text_serializer.h>

#include "podref/messages/resource_kinds.hpp"
#include "podref/wire/metric_family.hpp"

namespace podref::wire::detail {

namespace {

std::string verb_of(std::string_view method, route_kind kind) {
  switch (kind) {
    case route_kind::get:
      return "GET";
    case route_kind::list:
      return "LIST";
    case route_kind::watch:
      return "WATCH";
    case route_kind::create:
      return "POST";
    case route_kind::update:
      return "PUT";
    case route_kind::patch:
      return "PATCH";
    case route_kind::remove:
      return "DELETE";
    case route_kind::remove_collection:
      return "DELETECOLLECTION";
    default:
      break;
  }
  // Other paths: the method itself, bounded to the ones HTTP defines (a
  // client cannot mint label values).
  for (std::string_view m : {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
                             "OPTIONS"})
    if (method == m)
      return std::string{m};
  return "other";
}

bool names_resource(route_kind kind) {
  switch (kind) {
    case route_kind::get:
    case route_kind::list:
    case route_kind::watch:
    case route_kind::create:
    case route_kind::update:
    case route_kind::patch:
    case route_kind::remove:
    case route_kind::remove_collection:
      return true;
    default:
      return false;
  }
}

const char* scope_name(request_class::scope_kind s) {
  switch (s) {
    case request_class::scope_kind::resource:
      return "resource";
    case request_class::scope_kind::ns:
      return "namespace";
    case request_class::scope_kind::cluster:
      return "cluster";
    default:
      return "";
  }
}

const char* refusal_name(std::size_t i) {
  static constexpr const char* names[refusal_kinds] = {
    "connections",  "watches",      "streams",     "body_bytes",
    "header_bytes", "slow_watcher", "slow_request"};
  return names[i];
}

/// kube-apiserver's dry_run label of `values` (cleanDryRun).
std::string dry_run_label(const std::vector<std::string>& values) {
  std::set<std::string> sorted;
  for (const auto& v : values) {
    if (v != "All")
      return "invalid";
    sorted.insert(v);
  }
  std::string out;
  for (const auto& v : sorted)
    out += (out.empty() ? "" : ",") + v;
  return out;
}

/// kube-apiserver's label set of a request (subresource is always empty
/// here: podref serves none).
std::vector<prometheus::ClientMetric::Label>
request_labels(const request_key& k, const std::string& dry_run = {}) {
  const auto& [verb, group, version, res, scope] = k;
  return {{"component", "apiserver"},
          {"dry_run", dry_run},
          {"group", group},
          {"resource", res},
          {"scope", scope_name(scope)},
          {"subresource", ""},
          {"verb", verb},
          {"version", version}};
}

} // namespace

request_class classify_request(std::string_view method, const route& r,
                               std::string_view content_type) {
  request_class c;
  c.verb = verb_of(method, r.kind);
  // As kube-apiserver: a server-side apply counts as APPLY (its exact
  // Content-Type, as upstream compares it).
  if (r.kind == route_kind::patch
      && content_type == "application/apply-patch+yaml")
    c.verb = "APPLY";
  if (!names_resource(r.kind))
    return c;
  const auto& row = kind_of(r.res);
  c.group = std::string{row.group};
  c.version = std::string{row.version};
  c.resource_name = std::string{row.plural};
  c.dry_run = dry_run_label(r.dry_run);
  if (!r.name.empty())
    c.scope = request_class::scope_kind::resource;
  else if (!r.ns.empty())
    c.scope = request_class::scope_kind::ns;
  else
    c.scope = request_class::scope_kind::cluster;
  return c;
}

request_class unrouted_request(std::string_view method) {
  request_class c;
  c.verb = verb_of(method, route_kind::failure);
  return c;
}

void server_metrics::count_request(const request_class& c, int code) {
  std::lock_guard<std::mutex> guard{mtx_};
  ++requests_[{c.key(), c.dry_run, code}];
}

void server_metrics::watch_opened(const request_class& c) {
  std::lock_guard<std::mutex> guard{mtx_};
  ++watches_[c.key()];
}

void server_metrics::watch_closed(const request_class& c) {
  std::lock_guard<std::mutex> guard{mtx_};
  --watches_[c.key()];
}

std::string server_metrics::text() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  out.push_back(wire::metric_family("apiserver_request_total",
                       "Counter of apiserver requests broken out for each "
                       "verb, dry run value, group, version, resource, "
                       "scope, component, and HTTP response code.",
                       MetricType::Counter));
  out.push_back(wire::metric_family("apiserver_longrunning_requests",
                       "Gauge of all active long-running apiserver requests "
                       "broken out by verb, group, version, resource, scope "
                       "and component. Not all requests are tracked this "
                       "way.",
                       MetricType::Gauge));
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (const auto& [k, n] : requests_) {
      const auto& [rk, dry_run, code] = k;
      auto labels = request_labels(rk, dry_run);
      labels.insert(labels.begin(), {"code", std::to_string(code)});
      wire::add_sample(out[0], static_cast<double>(n), std::move(labels));
    }
    for (const auto& [k, n] : watches_)
      wire::add_sample(out[1], static_cast<double>(n), request_labels(k));
  }
  auto counter = [&](const char* name, const char* help, double v) {
    out.push_back(wire::metric_family(name, help, MetricType::Counter));
    wire::add_sample(out.back(), v);
  };
  counter("podref_apiserver_watch_events_total",
          "Watch events queued to watchers' connections.",
          static_cast<double>(events_.load(std::memory_order_relaxed)));
  out.push_back(wire::metric_family("podref_apiserver_open_connections",
                       "Client connections open, by protocol.",
                       MetricType::Gauge));
  wire::add_sample(out.back(),
      static_cast<double>(connections_[0].load(std::memory_order_relaxed)),
      {{"protocol", "http/1.1"}});
  wire::add_sample(out.back(),
      static_cast<double>(connections_[1].load(std::memory_order_relaxed)),
      {{"protocol", "h2"}});
  out.push_back(wire::metric_family("podref_apiserver_http2_open_streams",
                       "HTTP/2 streams (requests and watches) open.",
                       MetricType::Gauge));
  wire::add_sample(out.back(),
      static_cast<double>(streams_.load(std::memory_order_relaxed)));
  out.push_back(wire::metric_family("podref_apiserver_refusals_total",
                       "Requests, streams, connections and watches refused "
                       "or ended at one of the server's bounds.",
                       MetricType::Counter));
  for (std::size_t i = 0; i < refusal_kinds; ++i)
    wire::add_sample(out.back(),
        static_cast<double>(refusals_[i].load(std::memory_order_relaxed)),
        {{"limit", refusal_name(i)}});
  return prometheus::TextSerializer{}.Serialize(out);
}

} // namespace podref::wire::detail
