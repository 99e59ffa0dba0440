// One HTTP/1.1 connection of the HTTP front (Boost.Beast), over TCP or TLS:
// bounded requests read in order, dispatched as HTTP/2 streams are
// (request_dispatch.hpp: credentials, routing, decoding), answered with
// Status bodies or the API server actor's replies, and watches streamed as
// chunked NDJSON. A connection that opens with HTTP/2's preface (plain
// HTTP) or chooses h2 by ALPN (TLS) is handed to an HTTP/2 session.
#include "podref/wire/detail/http_core.hpp"

#include <deque>
#include <optional>
#include <tuple>
#include <utility>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <caf/actor.hpp>

#include "podref/wire/detail/api_bridge.hpp"
#include "podref/wire/detail/watch_hubs.hpp"
#include "podref/wire/detail/http2_session.hpp"
#include "podref/wire/detail/request_dispatch.hpp"
#include "podref/wire/detail/tls_context.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire::detail {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using error_code = beast::error_code;

namespace {

http::response<http::string_body>
make_response(int status, std::string content_type, std::string body,
              unsigned version, const std::vector<std::string>& warnings) {
  http::response<http::string_body> res{static_cast<http::status>(status),
                                        version};
  res.set(http::field::content_type, content_type);
  res.set(http::field::cache_control, "no-cache, private");
  for (const auto& w : warnings)
    res.insert(http::field::warning, w);
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

namespace {

/// One client connection: requests in order, one at a time; a watch takes
/// the connection until it ends, then the connection closes. `Stream` is
/// beast::tcp_stream or tls_stream.
template <class Stream>
class connection_on final
  : public served_connection,
    public std::enable_shared_from_this<connection_on<Stream>> {
public:
  static constexpr bool is_tls = std::is_same_v<Stream, tls_stream>;

  template <class... Ts>
  connection_on(tcp::socket socket, http_server::impl* core, Ts&&... xs)
    : stream_(std::move(socket), std::forward<Ts>(xs)...), core_(core) {
    // nop
  }

  // Destroyed without close_now() only when the I/O context goes first.
  ~connection_on() override {
    if (session_)
      session_->cancel();
  }

  void start() override {
    // The handshake and the first request share one deadline: a client
    // cannot stretch the time to its first request by handshaking slowly.
    first_deadline_ = std::chrono::steady_clock::now()
                      + core_->options.request_read_timeout;
    core_->metrics.connection_opened(protocol::http1);
    net::dispatch(stream_.get_executor(), [self = self()] {
      if constexpr (is_tls)
        self->handshake();
      else
        self->sniff();
    });
  }

  void shut() override {
    net::post(stream_.get_executor(), [self = self()] { self->close_now(); });
  }

private:
  std::shared_ptr<connection_on> self() {
    return this->shared_from_this();
  }

  beast::tcp_stream& lowest() {
    return beast::get_lowest_layer(stream_);
  }

  void handshake() {
    lowest().expires_at(first_deadline_);
    stream_.async_handshake(
      net::ssl::stream_base::server, [self = self()](error_code ec) {
        self->lowest().expires_never();
        if (ec) {
          // Not TLS, a certificate OpenSSL refused, or too slow: this
          // connection ends, the server goes on.
          self->close_now();
          return;
        }
        self->certificate_user_
          = client_certificate_user(self->stream_.native_handle());
        if (chose_http2(self->stream_.native_handle()))
          return self->hand_to_http2({});
        self->read_request();
      });
  }

  /// The first bytes on plain HTTP: HTTP/2's client preface (h2c with prior
  /// knowledge) hands the socket to an HTTP/2 session, anything else is
  /// HTTP/1.1. Within the first request's deadline.
  void sniff() {
    auto want = http2_client_preface.size() - buffer_.size();
    lowest().expires_at(first_deadline_);
    stream_.async_read_some(
      buffer_.prepare(want), [self = self()](error_code ec, std::size_t n) {
        if (ec)
          return self->close_now();
        self->buffer_.commit(n);
        auto have = beast::buffers_to_string(self->buffer_.data());
        if (have != http2_client_preface.substr(0, have.size()))
          return self->read_request();
        if (have.size() < http2_client_preface.size())
          return self->sniff();
        self->hand_to_http2(std::move(have));
      });
  }

  /// The stream goes to an HTTP/2 session with what was already read of it;
  /// this connection ends without closing the socket.
  void hand_to_http2(std::string received) {
    lowest().expires_never();
    closed_ = true;
    core_->metrics.connection_closed(protocol::http1);
    auto next = make_http2_connection(std::move(stream_), core_,
                                      std::move(received),
                                      std::move(certificate_user_));
    if (core_->replace(this->shared_from_this(), next))
      next->start();
    else
      next->shut();
  }

  /// A callable for CAF threads: runs `f` on this connection's strand if
  /// the connection and the server's gate are still there, else drops it.
  template <class F>
  auto from_outside(F f) {
    // Holds nothing of the I/O context (not even the strand: its
    // destructor touches the context), as it may outlive it.
    return [gate = core_->gate, weak = this->weak_from_this(),
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
    if (first_request_)
      lowest().expires_at(first_deadline_);
    else
      lowest().expires_after(core_->options.request_read_timeout);
    first_request_ = false;
    http::async_read(stream_, buffer_, *parser_,
                     [self = self()](error_code ec, std::size_t) {
                       self->on_read(ec);
                     });
  }

  void on_read(error_code ec) {
    lowest().expires_never();
    if (ec == http::error::body_limit || ec == http::error::header_limit)
      counted_ = unrouted_request(view_of(parser_->get().method_string()));
    if (ec == http::error::body_limit) {
      core_->metrics.refused(refusal::body_bytes);
      auto status = too_large_status(core_->options.max_body_bytes);
      reply(status.code, "application/json", status.body, false);
      return;
    }
    if (ec == http::error::header_limit) {
      core_->metrics.refused(refusal::header_bytes);
      reply(431, "text/plain; charset=utf-8",
            "Request Header Fields Too Large", false);
      return;
    }
    if (ec) {
      if (ec == beast::error::timeout)
        core_->metrics.refused(refusal::slow_request);
      close_now();
      return;
    }
    request_ = parser_->release();
    handle();
  }

  void handle() {
    auto keep = request_.keep_alive();
    request_view req{view_of(request_.method_string()),
                     view_of(request_.target()),
                     view_of(request_[http::field::accept]),
                     view_of(request_[http::field::content_type]),
                     view_of(request_[http::field::authorization]),
                     request_.body(),
                     view_of(request_[http::field::user_agent])};
    access_policy policy{is_tls, core_->options.tokens.get(),
                         core_->options.anonymous,
                         core_->options.node_authorizer};
    auto d = dispatch_request(
      req, core_->host + ":" + std::to_string(core_->port), policy,
      certificate_user_ ? &*certificate_user_ : nullptr,
      core_->options.namespace_lifecycle);
    counted_ = std::move(d.counted);
    if (d.metrics)
      return reply(200, metrics_content_type, core_->metrics.text(), keep);
    if (d.reply)
      return reply(d.reply->status, std::move(d.reply->content_type),
                   std::move(d.reply->body), keep, d.warnings);
    if (d.watch)
      return start_watch(std::move(d.call));
    call_api(*core_->sys, core_->source(), std::move(d.call),
             core_->options.api_timeout,
             from_outside([keep, warnings = std::move(d.warnings)](
                            connection_on& c, http_reply rep) {
               rep.warnings.insert(rep.warnings.begin(), warnings.begin(),
                                   warnings.end());
               c.reply(rep.status, rep.content_type, std::move(rep.body),
                       keep, rep.warnings);
             }));
  }

  void reply(int status, std::string content_type, std::string body,
             bool keep, const std::vector<std::string>& warnings = {}) {
    if (closed_)
      return;
    core_->metrics.count_request(counted_, status);
    auto res = std::make_shared<http::response<http::string_body>>(
      make_response(status, std::move(content_type), std::move(body),
                    request_.version() == 0 ? 11 : request_.version(),
                    warnings));
    res->keep_alive(keep);
    lowest().expires_after(core_->options.write_timeout);
    http::async_write(stream_, *res,
                      [self = self(), res,
                       keep](error_code ec, std::size_t) {
                        self->lowest().expires_never();
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
      core_->metrics.refused(refusal::watches);
      auto status = too_many_requests_status("too many open watches");
      return reply(status.code, "application/json", status.body, false);
    }
    watching_ = true;
    core_->metrics.count_request(counted_, 200);
    core_->metrics.watch_opened(counted_);
    queue_.emplace_back(watch_head);
    write_next();
    auto self = this->self();
    auto out = from_outside(
      [](connection_on& c, std::optional<std::string> line) {
        if (line)
          c.push_event(std::move(*line));
        else
          c.finish_watch();
      });
    // The watch's hub ends it at timeoutSeconds.
    call.bookmarks = {core_->options.bookmark_interval,
                      core_->options.bookmark_lead};
    session_ = core_->hubs->start(core_->source(), std::move(call),
                                  std::move(out));
    // A watch reads nothing more; a read completing means the client went.
    // (Over TLS through the TLS layer, which allows one read beside the
    // writes; over TCP on the socket, out of reach of the write deadline.)
    auto on_probe = [self](error_code, std::size_t) {
      if (!self->finishing_)
        self->close_now();
    };
    if constexpr (is_tls)
      stream_.async_read_some(net::buffer(probe_), std::move(on_probe));
    else
      lowest().socket().async_read_some(net::buffer(probe_),
                                        std::move(on_probe));
  }

  void push_event(std::string line) {
    if (finishing_ || closed_)
      return;
    if (queue_.size() >= core_->options.max_queued_events) {
      // The client does not keep up: end the watch rather than buffer
      // without bound; it resumes from the last event it read.
      core_->metrics.refused(refusal::slow_watcher);
      queue_.clear();
      finish_watch();
      return;
    }
    core_->metrics.event_sent();
    queue_.push_back(chunk_of(line));
    write_next();
  }

  void finish_watch() {
    if (finishing_ || closed_)
      return;
    finishing_ = true;
    if (session_)
      session_->cancel();
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
    lowest().expires_after(core_->options.write_timeout);
    net::async_write(stream_, net::buffer(current_),
                     [self = self()](error_code ec, std::size_t) {
                       self->writing_ = false;
                       self->lowest().expires_never();
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
    if (watching_) {
      core_->watches.fetch_sub(1);
      core_->metrics.watch_closed(counted_);
    }
    core_->metrics.connection_closed(protocol::http1);
    error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().socket().close(ignored);
    core_->forget(this->shared_from_this());
  }

  Stream stream_;
  http_server::impl* core_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  std::shared_ptr<watch_session> session_;
  std::deque<std::string> queue_;
  std::string current_;
  char probe_[1];
  std::chrono::steady_clock::time_point first_deadline_;
  std::optional<user_info> certificate_user_;
  /// The request being answered, as /metrics counts it.
  request_class counted_;
  bool first_request_ = true;
  bool writing_ = false;
  bool watching_ = false;
  bool finishing_ = false;
  bool closed_ = false;
};

} // namespace

std::shared_ptr<served_connection>
make_connection(tcp::socket socket, http_server::impl* core) {
  if (core->tls)
    return std::make_shared<connection_on<tls_stream>>(std::move(socket), core,
                                                       *core->tls);
  return std::make_shared<connection_on<beast::tcp_stream>>(std::move(socket),
                                                            core);
}

} // namespace podref::wire::detail
