// One HTTP/1.1 connection of the HTTP front (Boost.Beast): bounded requests
// read in order, answered with Status bodies or the API server actor's
// replies, and watches streamed as chunked NDJSON. The only file of the
// library that includes Beast.
#include "podref/wire/detail/http_core.hpp"

#include <deque>
#include <tuple>
#include <utility>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <caf/actor.hpp>

#include "podref/wire/codec.hpp"
#include "podref/wire/detail/api_bridge.hpp"
#include "podref/wire/discovery.hpp"
#include "podref/wire/openapi_v2.hpp"
#include "podref/wire/router.hpp"
#include "podref/wire/status.hpp"
#include "podref/wire/table.hpp"

namespace podref::wire::detail {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using error_code = beast::error_code;

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
class http_connection
  : public std::enable_shared_from_this<http_connection> {
public:
  http_connection(tcp::socket socket, http_server::impl* core)
    : stream_(std::move(socket)), core_(core),
      timer_(stream_.get_executor()) {
    // nop
  }

  // Destroyed without close_now() only when the I/O context goes first.
  ~http_connection() {
    if (session_)
      session_->cancel();
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
  /// A callable for CAF threads: runs `f` on this connection's strand if
  /// the connection and the server's gate are still there, else drops it.
  template <class F>
  auto from_outside(F f) {
    // Holds nothing of the I/O context (not even the strand: its
    // destructor touches the context), as it may outlive it.
    return [gate = core_->gate, weak = weak_from_this(),
            f = std::move(f)](auto... xs) {
      std::lock_guard<std::mutex> guard{gate->mtx};
      if (!gate->open)
        return;
      if (auto self = weak.lock()) {
        auto strand = self->stream_.get_executor();
        net::post(strand, [self = std::move(self), f,
                           args = std::make_tuple(std::move(xs)...)]() mutable {
          std::apply([&](auto&... ys) { f(*self, std::move(ys)...); }, args);
        });
      }
    };
  }

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
      case route_kind::openapi_index:
        return json_reply(openapi_index_document());
      case route_kind::openapi_v1:
        return json_reply(openapi_v1_document());
      case route_kind::openapi_v2:
        if (view_of(request_[http::field::accept])
              .find(openapi_v2_protobuf_type)
            != std::string_view::npos)
          return reply(200, std::string{openapi_v2_protobuf_content_type},
                       openapi_v2_protobuf(), keep);
        return reply(200, "text/plain; charset=utf-8", openapi_v2_json(),
                     keep);
      case route_kind::failure:
        return reply(r.failure.code, "application/json", r.failure.body,
                     keep);
      default:
        break;
    }
    api_call call;
    call.table = wants_table(view_of(request_[http::field::accept]));
    call.namespace_lifecycle = core_->options.namespace_lifecycle;
    if (r.kind == route_kind::remove && !r.grace_period_seconds)
      r.grace_period_seconds = delete_grace_period(request_.body());
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
    call_api(*core_->sys, core_->source(), std::move(call),
             core_->options.api_timeout,
             from_outside([keep](http_connection& c, http_reply rep) {
               c.reply(rep.status, rep.content_type, std::move(rep.body),
                       keep);
             }));
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

  void start_watch(api_call call) {
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
    watch_callbacks cb;
    cb.on_line = from_outside([](http_connection& c, std::string line) {
      c.push_event(std::move(line));
    });
    cb.on_end = from_outside([](http_connection& c) { c.finish_watch(); });
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
  http_server::impl* core_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  std::shared_ptr<watch_session> session_;
  std::deque<std::string> queue_;
  std::string current_;
  char probe_[1];
  bool writing_ = false;
  bool watching_ = false;
  bool finishing_ = false;
  bool closed_ = false;
};

std::shared_ptr<http_connection>
make_connection(tcp::socket socket, http_server::impl* core) {
  return std::make_shared<http_connection>(std::move(socket), core);
}

void start_connection(const std::shared_ptr<http_connection>& c) {
  c->start();
}

void shut_connection(const std::shared_ptr<http_connection>& c) {
  c->shut();
}

} // namespace podref::wire::detail
