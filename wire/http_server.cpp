// The HTTP/1.1 listener and connections (Boost.Beast on Asio): reading
// bounded requests, answering with Status bodies or the API server actor's
// replies, and streaming watches as chunked NDJSON. The only file of podref
// that includes Beast.
#include "podref/wire/http_server.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <caf/actor.hpp>

#include "podref/wire/codec.hpp"
#include "podref/wire/detail/api_bridge.hpp"
#include "podref/wire/discovery.hpp"
#include "podref/wire/router.hpp"
#include "podref/wire/status.hpp"
#include "podref/wire/table.hpp"

namespace podref::wire {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using error_code = beast::error_code;

class connection;

/// What the listener and its connections share. Connections hold it by
/// shared_ptr, so the io_context outlives every socket.
struct http_server::impl {
  caf::actor_system* sys = nullptr;
  source_function source;
  http_server_options options;
  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;
  std::string host; // as written in URLs
  std::uint16_t port = 0;
  std::atomic<std::size_t> watches{0};
  std::mutex mtx;
  std::condition_variable cv;
  std::set<std::shared_ptr<connection>> live; // guarded by mtx
  bool stopping = false;                      // guarded by mtx
  bool stopped = false;

  void accept_next(std::shared_ptr<impl> self);
  void forget(const std::shared_ptr<connection>& c);
};

namespace {

http::response<http::string_body> make_response(int status,
                                                std::string content_type,
                                                std::string body,
                                                unsigned version) {
  http::response<http::string_body> res{static_cast<http::status>(status),
                                        version};
  res.set(http::field::content_type, content_type);
  res.set(http::field::cache_control, "no-cache, private");
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

std::string_view view_of(beast::string_view x) {
  return {x.data(), x.size()};
}

std::string chunk_of(const std::string& data) {
  char size[24];
  auto n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out;
  out.reserve(data.size() + static_cast<std::size_t>(n) + 2);
  out.append(size, static_cast<std::size_t>(n));
  out += data;
  out += "\r\n";
  return out;
}

constexpr const char* watch_head = "HTTP/1.1 200 OK\r\n"
                                   "Cache-Control: no-cache, private\r\n"
                                   "Content-Type: application/json\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n";

} // namespace

/// One client connection: requests in order, one at a time; a watch takes
/// the connection until it ends, then the connection closes.
class connection : public std::enable_shared_from_this<connection> {
public:
  connection(tcp::socket socket, std::shared_ptr<http_server::impl> core)
    : stream_(std::move(socket)), core_(std::move(core)),
      timer_(stream_.get_executor()) {
    // nop
  }

  void start() {
    net::dispatch(stream_.get_executor(),
                  [self = shared_from_this()] { self->read_request(); });
  }

  /// Ends everything at once (server stop); any thread.
  void shut() {
    net::post(stream_.get_executor(),
              [self = shared_from_this()] { self->close_now(); });
  }

private:
  void read_request() {
    if (closed_)
      return;
    parser_.emplace();
    parser_->header_limit(
      static_cast<std::uint32_t>(core_->options.max_header_bytes));
    parser_->body_limit(core_->options.max_body_bytes);
    stream_.expires_after(core_->options.request_read_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, std::size_t) {
                       self->on_read(ec);
                     });
  }

  void on_read(error_code ec) {
    stream_.expires_never();
    if (ec == http::error::body_limit) {
      auto status = too_large_status(core_->options.max_body_bytes);
      reply(status.code, "application/json", status.body, false);
      return;
    }
    if (ec == http::error::header_limit) {
      reply(431, "text/plain; charset=utf-8",
            "Request Header Fields Too Large", false);
      return;
    }
    if (ec) {
      close_now();
      return;
    }
    request_ = parser_->release();
    handle();
  }

  void handle() {
    auto method = std::string{view_of(request_.method_string())};
    auto target = std::string{view_of(request_.target())};
    auto r = route_request(method, target);
    auto keep = request_.keep_alive();
    auto json_reply = [&](const std::string& body) {
      reply(200, "application/json", body, keep);
    };
    switch (r.kind) {
      case route_kind::version:
        return json_reply(version_document());
      case route_kind::healthz:
      case route_kind::readyz:
      case route_kind::livez:
        return reply(200, "text/plain; charset=utf-8", "ok", keep);
      case route_kind::api_versions:
        return json_reply(api_versions_document(
          core_->host + ":" + std::to_string(core_->port)));
      case route_kind::api_groups:
        return json_reply(api_groups_document());
      case route_kind::api_resources:
        return json_reply(api_resources_document());
      case route_kind::failure:
        return reply(r.failure.code, "application/json", r.failure.body,
                     keep);
      default:
        break;
    }
    detail::api_call call;
    call.table = wants_table(view_of(request_[http::field::accept]));
    if (r.kind == route_kind::create || r.kind == route_kind::update) {
      auto decoded = decode_request_body(
        r.res, view_of(request_[http::field::content_type]), request_.body(), r.ns,
        r.kind == route_kind::update ? r.name : std::string{});
      if (decoded.failure)
        return reply(decoded.failure->code, "application/json",
                     decoded.failure->body, keep);
      call.object = std::move(decoded.object);
      call.table = false;
    }
    call.r = std::move(r);
    if (call.r.kind == route_kind::watch)
      return start_watch(std::move(call));
    auto self = shared_from_this();
    detail::call_api(*core_->sys, core_->source(), std::move(call),
                     core_->options.api_timeout,
                     [self, keep](detail::http_reply rep) {
                       net::post(self->stream_.get_executor(),
                                 [self, keep, rep = std::move(rep)]() mutable {
                                   self->reply(rep.status, rep.content_type,
                                               std::move(rep.body), keep);
                                 });
                     });
  }

  void reply(int status, std::string content_type, std::string body,
             bool keep) {
    if (closed_)
      return;
    auto res = std::make_shared<http::response<http::string_body>>(
      make_response(status, std::move(content_type), std::move(body),
                    request_.version() == 0 ? 11 : request_.version()));
    res->keep_alive(keep);
    stream_.expires_after(core_->options.write_timeout);
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res,
                       keep](error_code ec, std::size_t) {
                        self->stream_.expires_never();
                        if (ec || !keep)
                          self->close_now();
                        else
                          self->read_request();
                      });
  }

  // -- watches ---------------------------------------------------------------

  void start_watch(detail::api_call call) {
    auto& opts = core_->options;
    if (core_->watches.fetch_add(1) >= opts.max_watches) {
      core_->watches.fetch_sub(1);
      auto status = too_many_requests_status("too many open watches");
      return reply(status.code, "application/json", status.body, false);
    }
    watching_ = true;
    queue_.emplace_back(watch_head);
    write_next();
    auto self = shared_from_this();
    auto strand = stream_.get_executor();
    detail::watch_callbacks cb;
    cb.on_line = [self, strand](std::string line) {
      net::post(strand, [self, line = std::move(line)]() mutable {
        self->push_event(std::move(line));
      });
    };
    cb.on_end = [self, strand] {
      net::post(strand, [self] { self->finish_watch(); });
    };
    auto timeout = call.r.timeout_seconds;
    session_ = detail::start_watch(*core_->sys, core_->source(),
                                   std::move(call), std::move(cb));
    if (timeout) {
      timer_.expires_after(std::chrono::seconds(*timeout));
      timer_.async_wait([self](error_code ec) {
        if (!ec)
          self->finish_watch();
      });
    }
    // A watch reads nothing more; a read completing means the client went.
    stream_.socket().async_read_some(
      net::buffer(probe_), [self](error_code, std::size_t) {
        if (!self->finishing_)
          self->close_now();
      });
  }

  void push_event(std::string line) {
    if (finishing_ || closed_)
      return;
    if (queue_.size() >= core_->options.max_queued_events) {
      // The client does not keep up: end the watch rather than buffer
      // without bound; it resumes from the last event it read.
      queue_.clear();
      finish_watch();
      return;
    }
    queue_.push_back(chunk_of(line));
    write_next();
  }

  void finish_watch() {
    if (finishing_ || closed_)
      return;
    finishing_ = true;
    if (session_)
      session_->cancel();
    timer_.cancel();
    queue_.emplace_back("0\r\n\r\n");
    write_next();
  }

  void write_next() {
    if (writing_ || closed_)
      return;
    if (queue_.empty()) {
      if (finishing_)
        close_now();
      return;
    }
    writing_ = true;
    current_ = std::move(queue_.front());
    queue_.pop_front();
    stream_.expires_after(core_->options.write_timeout);
    net::async_write(stream_, net::buffer(current_),
                     [self = shared_from_this()](error_code ec, std::size_t) {
                       self->writing_ = false;
                       self->stream_.expires_never();
                       if (ec)
                         self->close_now();
                       else
                         self->write_next();
                     });
  }

  void close_now() {
    if (closed_)
      return;
    closed_ = true;
    if (session_)
      session_->cancel();
    timer_.cancel();
    if (watching_)
      core_->watches.fetch_sub(1);
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
    core_->forget(shared_from_this());
  }

  beast::tcp_stream stream_;
  std::shared_ptr<http_server::impl> core_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  std::shared_ptr<detail::watch_session> session_;
  std::deque<std::string> queue_;
  std::string current_;
  char probe_[1];
  bool writing_ = false;
  bool watching_ = false;
  bool finishing_ = false;
  bool closed_ = false;
};

void http_server::impl::accept_next(std::shared_ptr<impl> self) {
  acceptor.async_accept(
    net::make_strand(ioc), [self](error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !self->acceptor.is_open())
        return;
      if (!ec) {
        std::shared_ptr<connection> c;
        {
          std::lock_guard<std::mutex> guard{self->mtx};
          if (!self->stopping
              && self->live.size() < self->options.max_connections) {
            c = std::make_shared<connection>(std::move(socket), self);
            self->live.insert(c);
          }
        }
        if (c)
          c->start();
        // else: the socket closes as it goes out of scope
      }
      self->accept_next(self);
    });
}

void http_server::impl::forget(const std::shared_ptr<connection>& c) {
  std::lock_guard<std::mutex> guard{mtx};
  live.erase(c);
  cv.notify_all();
}

result<std::unique_ptr<http_server>>
http_server::start(caf::actor_system& sys, source_function source,
                   const http_server_options& options) {
  error_code ec;
  auto addr = net::ip::make_address(options.address, ec);
  if (ec)
    return error_info{errc::invalid_argument,
                      "invalid listen address \"" + options.address + "\""};
  if (!addr.is_loopback())
    return error_info{errc::invalid_argument,
                      "cannot listen on " + options.address
                        + ": TLS and credentials are required beyond "
                          "loopback"};
  auto x = std::make_shared<impl>();
  x->sys = &sys;
  x->source = std::move(source);
  x->options = options;
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
  x->accept_next(x);
  auto n = options.io_threads == 0 ? 1 : options.io_threads;
  for (std::size_t i = 0; i < n; ++i)
    x->threads.emplace_back([core = x.get()] { core->ioc.run(); });
  return std::unique_ptr<http_server>{new http_server{std::move(x)}};
}

http_server::http_server(std::shared_ptr<impl> x) : impl_(std::move(x)) {
  // nop
}

http_server::~http_server() {
  stop();
}

std::uint16_t http_server::port() const noexcept {
  return impl_->port;
}

std::string http_server::url() const {
  return "http://" + impl_->host + ":" + std::to_string(impl_->port);
}

void http_server::stop() {
  auto& x = *impl_;
  if (x.stopped)
    return;
  x.stopped = true;
  std::vector<std::shared_ptr<connection>> open;
  {
    std::lock_guard<std::mutex> guard{x.mtx};
    x.stopping = true;
    open.assign(x.live.begin(), x.live.end());
  }
  net::post(x.ioc, [core = impl_] {
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
  x.work.reset();
  x.ioc.stop();
  for (auto& t : x.threads)
    t.join();
  x.threads.clear();
}

} // namespace podref::wire
