// h2c_cluster: the wire benchmarks' client, a cluster over h2c (HTTP/2
// without TLS, on loopback) with no client-side rate limit, so that what is
// timed is the wire and the engine, not the token bucket. Header-only: only
// the benchmarks that link podref::wire include it.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"

namespace podref::bench {

/// A cluster on `rt` for the server at `url`; null (the reason printed to
/// stderr) if the client cannot start.
inline std::unique_ptr<cluster>
connect_h2c(runtime& rt, const std::string& url, const std::string& origin) {
  wire::client_config cfg;
  cfg.server = url;
  cfg.origin = origin;
  cluster_options copts;
  copts.source.qps = 0;
  copts.http.plain_http = wire::plain_http_mode::h2_prior_knowledge;
  auto connected = cluster::connect(rt, cfg, copts);
  if (!connected) {
    std::fprintf(stderr, "%s\n", connected.error().message.c_str());
    return nullptr;
  }
  return std::move(connected).value();
}

} // namespace podref::bench
