// The HTTP front's listener: binds the address (a loopback one without
// TLS), accepts within the connection bound, runs the I/O threads, and
// stops them with every connection closed.
#include "podref/wire/detail/http_core.hpp"

#include "podref/wire/detail/watch_hubs.hpp"
#include "podref/wire/detail/tls_context.hpp"

#include <chrono>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

namespace podref::wire {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

namespace {

/// Hub actors carrying the watches (see detail::watch_hubs): a few, so
/// that encoding events spreads over CAF's workers.
constexpr std::size_t watch_hub_count = 4;

} // namespace

void http_server::impl::accept_next() {
  acceptor.async_accept(
    net::make_strand(ioc), [self = this](error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !self->acceptor.is_open())
        return;
      if (!ec) {
        // Every reply is written whole (a frame batch, a TLS flight): Nagle
        // would hold the next small write until the peer's delayed ACK (40
        // ms per TLS handshake and per watch opened on a new connection).
        error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        std::shared_ptr<detail::served_connection> c;
        {
          std::lock_guard<std::mutex> guard{self->mtx};
          if (!self->stopping
              && self->live.size() < self->options.max_connections) {
            c = detail::make_connection(std::move(socket), self);
            self->live.insert(c);
          } else if (!self->stopping) {
            self->metrics.refused(detail::refusal::connections);
          }
        }
        if (c)
          c->start();
        // else: the socket closes as it goes out of scope
      }
      self->accept_next();
    });
}

void http_server::impl::forget(
  const std::shared_ptr<detail::served_connection>& c) {
  std::lock_guard<std::mutex> guard{mtx};
  live.erase(c);
  cv.notify_all();
}

bool http_server::impl::replace(
  const std::shared_ptr<detail::served_connection>& old,
  std::shared_ptr<detail::served_connection> next) {
  std::lock_guard<std::mutex> guard{mtx};
  live.erase(old);
  // stop() takes its copy of `live` under this lock: `next` is either in
  // that copy or refused here.
  if (!stopping)
    live.insert(std::move(next));
  cv.notify_all();
  return !stopping;
}

result<std::unique_ptr<http_server>>
http_server::start(caf::actor_system& sys, source_function source,
                   const http_server_options& options) {
  error_code ec;
  auto addr = net::ip::make_address(options.address, ec);
  if (ec)
    return error_info{errc::invalid_argument,
                      "invalid listen address \"" + options.address + "\""};
  if (!addr.is_loopback() && !options.tls)
    return error_info{errc::invalid_argument,
                      "cannot listen on " + options.address
                        + ": TLS and credentials are required beyond "
                          "loopback"};
  if (!options.tls
      && (options.tokens || options.anonymous || options.node_authorizer))
    return error_info{errc::invalid_argument,
                      "tokens, anonymous access and the node authorizer "
                      "need TLS: plain HTTP is not authenticated"};
  auto x = std::make_unique<impl>();
  if (options.tls) {
    auto ctx = detail::make_server_tls_context(*options.tls);
    if (!ctx)
      return ctx.error();
    x->tls = std::move(ctx).value();
  }
  x->sys = &sys;
  x->source = std::move(source);
  x->options = options;
  x->hubs = std::make_unique<detail::watch_hubs>(sys, watch_hub_count);
  tcp::endpoint ep{addr, options.port};
  x->acceptor.open(ep.protocol(), ec);
  if (!ec)
    x->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec)
    x->acceptor.bind(ep, ec);
  if (!ec)
    x->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return error_info{errc::unavailable, "cannot listen on "
                                           + options.address + ":"
                                           + std::to_string(options.port)
                                           + ": " + ec.message()};
  x->port = x->acceptor.local_endpoint().port();
  x->host = addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string();
  x->work.emplace(x->ioc.get_executor());
  x->accept_next();
  auto n = options.io_threads == 0 ? 1 : options.io_threads;
  for (std::size_t i = 0; i < n; ++i)
    x->threads.emplace_back([core = x.get()] { core->ioc.run(); });
  return std::unique_ptr<http_server>{new http_server{std::move(x)}};
}

http_server::http_server(std::unique_ptr<impl> x) : impl_(std::move(x)) {
  // nop
}

http_server::~http_server() {
  stop();
}

std::uint16_t http_server::port() const noexcept {
  return impl_->port;
}

std::string http_server::url() const {
  return (impl_->tls ? "https://" : "http://") + impl_->host + ":" + std::to_string(impl_->port);
}

std::string http_server::metrics_text() const {
  return impl_->metrics.text();
}

void http_server::stop() {
  auto& x = *impl_;
  if (x.stopped)
    return;
  x.stopped = true;
  std::vector<std::shared_ptr<detail::served_connection>> open;
  {
    std::lock_guard<std::mutex> guard{x.mtx};
    x.stopping = true;
    open.assign(x.live.begin(), x.live.end());
  }
  net::post(x.acceptor.get_executor(), [core = impl_.get()] {
    error_code ignored;
    core->acceptor.close(ignored);
  });
  for (auto& c : open)
    c->shut();
  open.clear();
  {
    // Closing is quick; the deadline only guards against a stuck peer.
    std::unique_lock<std::mutex> guard{x.mtx};
    x.cv.wait_for(guard, std::chrono::seconds(5),
                  [&] { return x.live.empty(); });
  }
  {
    std::lock_guard<std::mutex> guard{x.gate->mtx};
    x.gate->open = false;
  }
  x.work.reset();
  x.ioc.stop();
  for (auto& t : x.threads)
    t.join();
  x.threads.clear();
  x.hubs.reset(); // after the connections cancelled their watches
}

} // namespace podref::wire
