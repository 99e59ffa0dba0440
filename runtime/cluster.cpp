// cluster: the HTTP client plus the wire source (cluster.hpp).
#include "podref/runtime/cluster.hpp"

#include <chrono>
#include <future>

#include <caf/actor.hpp>
#include <caf/send.hpp>

#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"

namespace podref {

struct cluster::impl {
  std::shared_ptr<wire::http_client> client;
  std::shared_ptr<wire::wire_source_counters> counters;
  caf::actor source;
};

cluster::cluster(std::unique_ptr<impl> x) : impl_(std::move(x)) {
  // nop
}

cluster::~cluster() {
  // The actor's state cancels its transfers; replies that arrive after it
  // died find no actor. The client (shared with the actor) stops its I/O
  // thread when the last owner lets go.
  // Waits (bounded) for the actor to end, so that the client stops on this
  // thread rather than on the actor's.
  auto ended = std::make_shared<std::promise<void>>();
  auto done = ended->get_future();
  impl_->source->attach_functor([ended] { ended->set_value(); });
  caf::anon_send_exit(impl_->source, caf::exit_reason::user_shutdown);
  impl_->source = caf::actor{};
  done.wait_for(std::chrono::seconds(10));
}

result<std::unique_ptr<cluster>>
cluster::connect(runtime& rt, const wire::client_config& config,
                 const cluster_options& options) {
  auto client = wire::http_client::start(config, options.http);
  if (!client)
    return client.error();
  return connect(rt,
                 std::shared_ptr<wire::http_client>{std::move(client).value()},
                 options);
}

std::unique_ptr<cluster>
cluster::connect(runtime& rt, std::shared_ptr<wire::http_client> client,
                 const cluster_options& options) {
  auto x = std::make_unique<impl>();
  x->client = std::move(client);
  x->counters = std::make_shared<wire::wire_source_counters>();
  x->source = wire::spawn_wire_source(rt.system(), x->client, options.source,
                                      x->counters);
  return std::unique_ptr<cluster>{new cluster(std::move(x))};
}

const caf::actor& cluster::actor() const noexcept {
  return impl_->source;
}

const std::shared_ptr<wire::http_client>& cluster::client() const noexcept {
  return impl_->client;
}

cluster_stats cluster::stats() const {
  cluster_stats out;
  auto http = impl_->client->stats();
  out.requests = std::move(http.requests);
  out.bytes_received = http.bytes_received;
  out.open_streams = http.open_streams;
  out.connects = http.connects;
  out.exec_runs = http.exec_runs;
  out.exec_failures = http.exec_failures;
  out.http2_responses = http.http2_responses;
  out.throttled = impl_->counters->throttled.load();
  out.throttled_wait_ns = impl_->counters->throttled_wait_ns.load();
  out.retried_429 = impl_->counters->retried_429.load();
  out.bad_streams = impl_->counters->bad_streams.load();
  out.watch_list_fallbacks = impl_->counters->watch_list_fallbacks.load();
  out.watch_list_adopted = impl_->counters->watch_list_adopted.load();
  return out;
}

namespace detail {

const caf::actor& source_of(cluster& c) {
  return c.actor();
}

} // namespace detail

} // namespace podref
