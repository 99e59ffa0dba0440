#include "hollow/fleet.hpp"

#include <set>

namespace podref::cli::hollow {

result<std::unique_ptr<fleet>>
fleet::start(runtime& rt, const fleet_options& options,
             fleet_observer observer, std::vector<std::size_t> expected_pods) {
  std::unique_ptr<fleet> f{new fleet()};
  f->loop_ = options.loop;
  if (!f->loop_) {
    auto loop = wire::io_loop::start();
    if (!loop)
      return loop.error();
    f->loop_ = std::move(loop).value();
  }
  f->pool_ = std::make_unique<work_pool>(options.threads, "podref-hollow");
  f->expected_ = std::move(expected_pods);
  f->expected_.resize(options.nodes, 0);
  cluster_options copts;
  copts.http.loop = f->loop_;
  copts.http.stream_buffer_bytes = options.stream_buffer_bytes;
  if (options.h2c)
    copts.http.plain_http = wire::plain_http_mode::h2_prior_knowledge;
  if (options.share_connections) {
    auto client = wire::http_client::start(options.config, copts.http);
    if (!client)
      return client.error();
    f->shared_client_ = std::move(client).value();
  }
  node_agent_options nopts;
  nopts.managers.strategy = options.strategy;
  // A node registers a few hundred pods at most: a 1k-slot command ring
  // (16 KB) instead of the 64k (1 MB) sized for a busy embedder.
  nopts.managers.max_unapplied = 1024;
  nopts.recheck = options.recheck;
  nopts.confirm_deletes = options.confirm_deletes;
  nopts.register_node = options.register_node;
  nopts.pool = f->pool_.get();
  f->names_.reserve(options.nodes);
  f->clusters_.reserve(options.nodes);
  f->agents_.reserve(options.nodes);
  for (std::size_t i = 0; i < options.nodes; ++i) {
    f->names_.push_back(options.prefix + std::to_string(i));
    std::unique_ptr<cluster> c;
    if (f->shared_client_) {
      c = cluster::connect(rt, f->shared_client_, copts);
    } else {
      auto made = cluster::connect(rt, options.config, copts);
      if (!made)
        return made.error();
      c = std::move(made).value();
    }
    auto o = nopts;
    o.node_name = f->names_.back();
    o.source.seed = i;
    o.managers.seed = i;
    if (observer && options.strategy == strategy::watch) {
      auto index = static_cast<std::uint32_t>(i);
      o.observer = [observer, index](resource res, const object_change& ch) {
        observer(index, res, ch);
      };
    }
    f->agents_.push_back(std::make_unique<node_agent>(rt, *c, o));
    f->clusters_.push_back(std::move(c));
  }
  return f;
}

fleet::~fleet() {
  agents_.clear();   // each stops its pod source and managers
  clusters_.clear(); // then the wire sources and the clients
  shared_client_.reset();
  pool_.reset();
}

bool fleet::synced(std::size_t i) const {
  auto st = agents_[i]->stats();
  return st.synced && !st.busy && st.waiting_checks == 0
         && st.registered_pods >= expected_[i];
}

fleet_counts fleet::counts() const {
  fleet_counts out;
  for (std::size_t i = 0; i < agents_.size(); ++i) {
    auto st = agents_[i]->stats();
    if (st.synced && !st.busy && st.waiting_checks == 0
        && st.registered_pods >= expected_[i])
      ++out.synced_nodes;
    out.registered_pods += st.registered_pods;
    out.pods_with_problems += st.pods_with_problems;
    out.waiting_checks += st.waiting_checks;
    out.reads += st.reads;
    out.reads_failed += st.reads_failed;
    out.rejected_pods += st.rejected_pods;
    out.source_failures += st.source_failures;
    out.referenced_objects += st.referenced_objects;
    out.open_watches += st.open_watches;
  }
  return out;
}

client_totals fleet::clients() const {
  client_totals out;
  std::set<const wire::http_client*> seen;
  for (const auto& c : clusters_) {
    auto st = c->stats();
    out.throttled += st.throttled;
    out.retried_429 += st.retried_429;
    if (!seen.insert(c->client().get()).second)
      continue; // a shared client counts once
    for (const auto& [key, n] : st.requests) {
      out.by_code[key] += n;
      out.by_verb[key.substr(0, key.find(' '))] += n;
    }
    out.open_streams += st.open_streams;
    out.connects += st.connects;
    out.bytes_received += st.bytes_received;
  }
  return out;
}

} // namespace podref::cli::hollow
