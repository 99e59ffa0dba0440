// One HTTP/2 connection of the HTTP front: libnghttp2's server session fed
// by this connection's reads (nghttp2_session_mem_recv) and drained into
// its writes (nghttp2_session_mem_send), on the connection's strand; no
// thread of its own. Streams are requests for the shared dispatch
// (request_dispatch.hpp); replies are HEADERS + DATA; a watch's events are
// DATA frames, one event each, pulled by nghttp2 as flow control allows.
//
// Bounds, as on HTTP/1.1: header list size (431), body size (413, then
// RST_STREAM NO_ERROR), time to send a whole request (the stream is reset),
// an idle connection closes after the same time, events queued per watch,
// time per write; streams per connection are nghttp2's
// SETTINGS_MAX_CONCURRENT_STREAMS (refused past it).
#include "podref/wire/detail/http2_session.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/ssl.hpp>

#include <nghttp2/nghttp2.h>

#include <caf/actor.hpp>

#include "podref/wire/detail/api_bridge.hpp"
#include "podref/wire/detail/watch_hubs.hpp"
#include "podref/wire/detail/request_dispatch.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire::detail {

namespace net = boost::asio;
namespace beast = boost::beast;
using error_code = boost::system::error_code;
using steady = std::chrono::steady_clock;

namespace {

nghttp2_nv header(std::string_view name, std::string_view value) {
  // nghttp2 copies names and values (no NO_COPY flags) while submitting.
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
          name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

std::string_view view_of(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A response body's chunks waiting for nghttp2, in order: a vector with a
/// read position. Empty, it holds no memory (a std::deque allocates a
/// 512-byte block when constructed: 50 MB for 100k open watches).
class chunk_queue {
public:
  bool empty() const noexcept {
    return head_ == items_.size();
  }

  std::size_t size() const noexcept {
    return items_.size() - head_;
  }

  std::string& front() {
    return items_[head_];
  }

  void push_back(std::string x) {
    items_.push_back(std::move(x));
  }

  void pop_front() {
    std::string{}.swap(items_[head_++]);
    if (head_ == items_.size()) {
      head_ = 0;
      items_.clear();
      if (items_.capacity() > 16)
        std::vector<std::string>{}.swap(items_);
    } else if (head_ >= 32 && head_ * 2 >= items_.size()) {
      // A queue that never drains does not grow by what it sent.
      items_.erase(items_.begin(),
                   items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  /// Keeps the first `n` chunks, drops the others.
  void truncate(std::size_t n) {
    items_.resize(head_ + std::min(n, size()));
  }

private:
  std::vector<std::string> items_;
  std::size_t head_ = 0;
};

/// One request stream and, once answered, its response body.
struct h2_stream {
  std::int32_t id = 0;
  std::string method;
  std::string path;
  std::string accept;
  std::string content_type;
  std::string authorization;
  std::string user_agent;
  std::string body;
  /// HPACK-decoded size, counted as SETTINGS_MAX_HEADER_LIST_SIZE is.
  std::size_t header_bytes = 0;
  bool header_too_large = false;
  /// Answered before the request ended (431, 413): the rest is dropped
  /// and the stream reset with NO_ERROR once the answer is out.
  bool answered_early = false;
  bool request_done = false;
  bool responded = false;
  /// The sweep reset it (once).
  bool reset_sent = false;
  /// The request must be complete (or a finished watch drained) by then.
  steady::time_point deadline;
  // -- the response body --
  chunk_queue out;
  std::size_t out_offset = 0;
  /// No more body after `out`.
  bool eof = false;
  /// nghttp2 waits for resume_data.
  bool deferred = false;
  // -- a watch --
  bool watching = false;
  bool finishing = false;
  /// What /metrics counts this request as.
  request_class counted;
  std::shared_ptr<watch_session> session;
};

template <class Stream>
class http2_connection final
  : public served_connection,
    public std::enable_shared_from_this<http2_connection<Stream>> {
public:
  http2_connection(Stream stream, http_server::impl* core,
                   std::string received,
                   std::optional<user_info> certificate_user)
    : stream_(std::move(stream)), core_(core), received_(std::move(received)),
      certificate_user_(std::move(certificate_user)),
      sweep_(stream_.get_executor()) {
    nghttp2_session_callbacks* cbs = nullptr;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs,
                                                            &on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cbs, &on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, &on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs,
                                                              &on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_send_callback(cbs, &on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
                                                           &on_stream_close);
    // nghttp2 tears a connection down (GOAWAY INTERNAL_ERROR) past 1000
    // RST_STREAMs from the client, refilled at 33 a second (its rapid
    // reset guard). A kubelet-like client cancels watches by the hundred
    // (an update storm, a node draining): 8000 watches through an update
    // of every object lost connections that way, and their streams dialled
    // thousands of new ones. Here a client may reset every stream it can
    // hold once a second, eight times in a burst; what open streams cost
    // stays bounded by max_streams and max_watches.
    nghttp2_option* opt = nullptr;
    nghttp2_option_new(&opt);
    auto streams = static_cast<std::uint64_t>(core_->options.max_streams);
    nghttp2_option_set_stream_reset_rate_limit(
      opt, std::max<std::uint64_t>(1000, 8 * streams), streams);
    nghttp2_session_server_new2(&session_, cbs, this, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
  }

  // Destroyed without close_now() only when the I/O context goes first.
  ~http2_connection() override {
    for (auto& [id, st] : streams_)
      if (st->session)
        st->session->cancel();
    nghttp2_session_del(session_);
  }

  void start() override {
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      self->begin();
    });
  }

  void shut() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      self->close_now();
    });
  }

private:
  using self_ptr = std::shared_ptr<http2_connection>;

  static http2_connection& of(void* user_data) {
    return *static_cast<http2_connection*>(user_data);
  }

  /// As http_connection's: a callable for CAF threads that runs `f` on this
  /// connection's strand while the connection and the server's gate last.
  template <class F>
  auto from_outside(F f) {
    return [gate = core_->gate, weak = this->weak_from_this(),
            f = std::move(f)](auto... xs) {
      std::lock_guard<std::mutex> guard{gate->mtx};
      if (!gate->open)
        return;
      if (auto self = weak.lock()) {
        auto strand = self->stream_.get_executor();
        net::post(strand, [self = std::move(self), f,
                           args = std::make_tuple(std::move(xs)...)]() mutable {
          if (!self->closed_)
            std::apply([&](auto&... ys) { f(*self, std::move(ys)...); },
                       args);
        });
      }
    };
  }

  h2_stream* find(std::int32_t id) {
    auto i = streams_.find(id);
    return i == streams_.end() ? nullptr : i->second.get();
  }

  // -- driving the session -----------------------------------------------------

  void begin() {
    core_->metrics.connection_opened(protocol::http2);
    const auto& opts = core_->options;
    nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
       static_cast<uint32_t>(opts.max_streams)},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE,
       static_cast<uint32_t>(opts.max_header_bytes)},
    };
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings,
                            std::size(settings));
    idle_since_ = steady::now();
    arm_sweep();
    auto received = std::move(received_);
    if (!feed(reinterpret_cast<const uint8_t*>(received.data()),
              received.size()))
      return;
    flush();
    read_more();
  }

  /// Gives nghttp2 what the client sent; false (and closed) on a fatal
  /// error (a bad preface, a flood).
  bool feed(const uint8_t* data, std::size_t size) {
    in_recv_ = true;
    auto rv = nghttp2_session_mem_recv(session_, data, size);
    in_recv_ = false;
    if (rv < 0) {
      close_now();
      return false;
    }
    return true;
  }

  void read_more() {
    if (closed_)
      return;
    stream_.async_read_some(
      net::buffer(input_),
      [self = this->shared_from_this()](error_code ec, std::size_t n) {
        if (ec || self->closed_)
          return self->close_now();
        if (!self->feed(self->input_.data(), n))
          return;
        self->flush();
        self->read_more();
      });
  }

  /// Writes what nghttp2 has to send, one write at a time (nghttp2 pulls
  /// no more DATA while a write is out). Never from inside mem_recv.
  void flush() {
    if (writing_ || closed_ || in_recv_)
      return;
    output_.clear();
    while (output_.size() < max_write_bytes) {
      const uint8_t* data = nullptr;
      auto n = nghttp2_session_mem_send(session_, &data);
      if (n < 0)
        return close_now();
      if (n == 0)
        break;
      output_.append(reinterpret_cast<const char*>(data),
                     static_cast<std::size_t>(n));
    }
    if (output_.empty()) {
      // After a GOAWAY (ours or the client's) with nothing left to do.
      if (!nghttp2_session_want_read(session_)
          && !nghttp2_session_want_write(session_))
        close_now();
      return;
    }
    writing_ = true;
    write_started_ = steady::now();
    net::async_write(stream_, net::buffer(output_),
                     [self = this->shared_from_this()](error_code ec,
                                                       std::size_t) {
                       self->writing_ = false;
                       if (ec)
                         self->close_now();
                       else
                         self->flush();
                     });
  }

  void close_now() {
    if (closed_)
      return;
    closed_ = true;
    core_->metrics.connection_closed(protocol::http2);
    for (auto& [id, st] : streams_)
      drop_stream(*st);
    core_->metrics.streams_changed(-static_cast<std::int64_t>(streams_.size()));
    streams_.clear();
    sweep_.cancel();
    error_code ignored;
    auto& socket = beast::get_lowest_layer(stream_).socket();
    socket.shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
    core_->forget(this->shared_from_this());
  }

  /// Releases what a closing stream holds at the API server.
  void drop_stream(h2_stream& st) {
    if (st.session)
      st.session->cancel();
    if (st.watching) {
      core_->watches.fetch_sub(1);
      core_->metrics.watch_closed(st.counted);
    }
    st.watching = false;
  }

  // -- deadlines -----------------------------------------------------------------

  void arm_sweep() {
    const auto& opts = core_->options;
    auto every = std::min(opts.request_read_timeout, opts.write_timeout) / 4;
    every = std::clamp(every, std::chrono::milliseconds(10),
                       std::chrono::milliseconds(1000));
    sweep_.expires_after(every);
    sweep_.async_wait([self = this->shared_from_this()](error_code ec) {
      if (!ec && !self->closed_)
        self->sweep();
    });
  }

  /// Resets streams past their deadline, closes a connection idle (no
  /// stream) for the request read time or stuck in one write.
  void sweep() {
    auto now = steady::now();
    const auto& opts = core_->options;
    if (writing_ && now - write_started_ > opts.write_timeout)
      return close_now();
    if (streams_.empty() && now - idle_since_ > opts.request_read_timeout) {
      nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
      flush();
      if (closed_)
        return;
      // The GOAWAY goes out with the next write; nothing else will.
      idle_since_ = now;
    }
    for (auto& [id, st] : streams_) {
      bool late_request = !st->request_done && !st->responded;
      if ((late_request || st->finishing) && now > st->deadline
          && !st->reset_sent) {
        st->reset_sent = true;
        if (late_request)
          core_->metrics.refused(refusal::slow_request);
        nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id,
                                  NGHTTP2_CANCEL);
      }
    }
    flush();
    if (!closed_)
      arm_sweep();
  }

  // -- nghttp2 callbacks -----------------------------------------------------------

  static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame,
                              void* user_data) {
    if (frame->hd.type != NGHTTP2_HEADERS
        || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
      return 0;
    auto& c = of(user_data);
    auto st = std::make_unique<h2_stream>();
    st->id = frame->hd.stream_id;
    st->deadline = steady::now() + c.core_->options.request_read_timeout;
    c.streams_.emplace(st->id, std::move(st));
    c.core_->metrics.streams_changed(1);
    return 0;
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame,
                       const uint8_t* name, size_t namelen,
                       const uint8_t* value, size_t valuelen, uint8_t,
                       void* user_data) {
    auto& c = of(user_data);
    auto st = c.find(frame->hd.stream_id);
    if (!st || st->header_too_large)
      return 0;
    st->header_bytes += namelen + valuelen + 32;
    if (st->header_bytes > c.core_->options.max_header_bytes) {
      st->header_too_large = true;
      return 0;
    }
    auto n = view_of(name, namelen);
    auto v = std::string{view_of(value, valuelen)};
    if (n == ":method")
      st->method = std::move(v);
    else if (n == ":path")
      st->path = std::move(v);
    else if (n == "accept")
      st->accept = std::move(v);
    else if (n == "content-type")
      st->content_type = std::move(v);
    else if (n == "authorization")
      st->authorization = std::move(v);
    else if (n == "user-agent")
      st->user_agent = std::move(v);
    return 0;
  }

  static int on_data_chunk(nghttp2_session*, uint8_t, int32_t stream_id,
                           const uint8_t* data, size_t len, void* user_data) {
    auto& c = of(user_data);
    auto st = c.find(stream_id);
    if (!st || st->answered_early)
      return 0;
    auto limit = c.core_->options.max_body_bytes;
    if (st->body.size() + len > limit) {
      c.core_->metrics.refused(refusal::body_bytes);
      st->counted = unrouted_request(st->method);
      st->answered_early = true;
      st->body.clear();
      auto status = too_large_status(limit);
      c.respond(*st, status.code, "application/json", status.body);
      return 0;
    }
    st->body.append(reinterpret_cast<const char*>(data), len);
    return 0;
  }

  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame,
                           void* user_data) {
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
      return 0;
    auto& c = of(user_data);
    auto st = c.find(frame->hd.stream_id);
    if (!st)
      return 0;
    if (frame->hd.type == NGHTTP2_HEADERS && st->header_too_large
        && !st->responded) {
      c.core_->metrics.refused(refusal::header_bytes);
      st->counted = unrouted_request(st->method);
      st->answered_early = true;
      c.respond(*st, 431, "text/plain; charset=utf-8",
                "Request Header Fields Too Large");
    }
    if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
      st->request_done = true;
      if (!st->responded)
        c.handle(*st);
    }
    return 0;
  }

  static int on_frame_send(nghttp2_session* session, const nghttp2_frame* frame,
                           void* user_data) {
    if (frame->hd.type == NGHTTP2_RST_STREAM
        && frame->rst_stream.error_code == NGHTTP2_REFUSED_STREAM)
      of(user_data).core_->metrics.refused(refusal::streams);
    // An early answer is out: ask the client to stop sending the request
    // (RFC 9113 8.1).
    if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0)
      return 0;
    auto& c = of(user_data);
    auto st = c.find(frame->hd.stream_id);
    if (st && st->answered_early && !st->request_done)
      nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, st->id,
                                NGHTTP2_NO_ERROR);
    return 0;
  }

  static int on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t,
                             void* user_data) {
    auto& c = of(user_data);
    auto i = c.streams_.find(stream_id);
    if (i == c.streams_.end())
      return 0;
    // A client's RST_STREAM ends a watch here as well.
    c.drop_stream(*i->second);
    c.streams_.erase(i);
    c.core_->metrics.streams_changed(-1);
    if (c.streams_.empty())
      c.idle_since_ = steady::now();
    return 0;
  }

  static ssize_t read_body(nghttp2_session*, int32_t stream_id, uint8_t* buf,
                           size_t length, uint32_t* flags,
                           nghttp2_data_source*, void* user_data) {
    auto& c = of(user_data);
    auto st = c.find(stream_id);
    if (!st)
      return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    if (st->out.empty()) {
      if (st->eof) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        return 0;
      }
      st->deferred = true;
      return NGHTTP2_ERR_DEFERRED;
    }
    // One event (or body) per DATA frame, split only when larger.
    auto& front = st->out.front();
    auto n = std::min(length, front.size() - st->out_offset);
    std::copy_n(front.data() + st->out_offset, n, buf);
    st->out_offset += n;
    if (st->out_offset == front.size()) {
      st->out.pop_front();
      st->out_offset = 0;
    }
    if (st->out.empty() && st->eof)
      *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  // -- requests --------------------------------------------------------------------

  void handle(h2_stream& st) {
    request_view req{st.method,       st.path,          st.accept,
                     st.content_type, st.authorization, st.body,
                     st.user_agent};
    access_policy policy{std::is_same_v<Stream, tls_stream>,
                         core_->options.tokens.get(), core_->options.anonymous,
                         core_->options.node_authorizer};
    auto d = dispatch_request(
      req, core_->host + ":" + std::to_string(core_->port), policy,
      certificate_user_ ? &*certificate_user_ : nullptr,
      core_->options.namespace_lifecycle);
    // What the request was is not needed any more: a watch holds none of
    // it for its whole life.
    for (auto* x : {&st.path, &st.accept, &st.content_type,
                    &st.authorization, &st.body})
      std::string{}.swap(*x);
    st.counted = std::move(d.counted);
    if (d.metrics)
      return respond(st, 200, metrics_content_type, core_->metrics.text());
    if (d.reply)
      return respond(st, d.reply->status, d.reply->content_type,
                     std::move(d.reply->body), d.warnings);
    if (d.watch)
      return start_watch(st, std::move(d.call));
    call_api(*core_->sys, core_->source(), std::move(d.call),
             core_->options.api_timeout,
             from_outside([id = st.id, warnings = std::move(d.warnings)](
                            http2_connection& c, http_reply rep) {
               if (auto st = c.find(id)) {
                 rep.warnings.insert(rep.warnings.begin(), warnings.begin(),
                                     warnings.end());
                 c.respond(*st, rep.status, rep.content_type,
                           std::move(rep.body), rep.warnings);
                 c.flush();
               }
             }));
  }

  void submit_headers(h2_stream& st, int status,
                      const std::string& content_type,
                      const std::string* length,
                      const std::vector<std::string>& warnings = {}) {
    auto code = std::to_string(status);
    std::vector<nghttp2_nv> nva{header(":status", code),
                                header("content-type", content_type),
                                header("cache-control", "no-cache, private")};
    if (length)
      nva.push_back(header("content-length", *length));
    for (const auto& w : warnings)
      nva.push_back(header("warning", w));
    nghttp2_data_provider body;
    body.source.ptr = nullptr;
    body.read_callback = &read_body;
    nghttp2_submit_response(session_, st.id, nva.data(), nva.size(), &body);
  }

  void respond(h2_stream& st, int status, const std::string& content_type,
               std::string body,
               const std::vector<std::string>& warnings = {}) {
    if (st.responded)
      return;
    st.responded = true;
    core_->metrics.count_request(st.counted, status);
    auto length = std::to_string(body.size());
    if (st.method != "HEAD" && !body.empty())
      st.out.push_back(std::move(body));
    st.eof = true;
    submit_headers(st, status, content_type, &length, warnings);
  }

  // -- watches ---------------------------------------------------------------------

  void start_watch(h2_stream& st, api_call call) {
    const auto& opts = core_->options;
    if (core_->watches.fetch_add(1) >= opts.max_watches) {
      core_->watches.fetch_sub(1);
      core_->metrics.refused(refusal::watches);
      auto status = too_many_requests_status("too many open watches");
      return respond(st, status.code, "application/json", status.body);
    }
    st.watching = true;
    st.responded = true;
    core_->metrics.count_request(st.counted, 200);
    core_->metrics.watch_opened(st.counted);
    submit_headers(st, 200, "application/json", nullptr);
    auto id = st.id;
    auto out = from_outside(
      [id](http2_connection& c, std::optional<std::string> line) {
        if (line)
          c.push_event(id, std::move(*line));
        else
          c.finish_watch(id);
      });
    // The watch's hub ends it at timeoutSeconds.
    call.bookmarks = {core_->options.bookmark_interval,
                      core_->options.bookmark_lead};
    st.session = core_->hubs->start(core_->source(), std::move(call),
                                    std::move(out));
  }

  void push_event(std::int32_t id, std::string line) {
    auto st = find(id);
    if (!st || st->finishing)
      return;
    if (st->out.size() >= core_->options.max_queued_events) {
      // The client does not keep up (its window or its socket is full):
      // end the watch rather than buffer without bound; an event already
      // partly sent is finished first.
      core_->metrics.refused(refusal::slow_watcher);
      auto partly = st->out_offset > 0;
      st->out.truncate(partly ? 1 : 0);
      finish_watch(id);
      return;
    }
    core_->metrics.event_sent();
    st->out.push_back(std::move(line));
    resume(*st);
    flush();
  }

  void finish_watch(std::int32_t id) {
    auto st = find(id);
    if (!st || st->finishing)
      return;
    st->finishing = true;
    if (st->session)
      st->session->cancel();
    st->eof = true;
    // A client that never opens its window for the end gets a reset.
    st->deadline = steady::now() + core_->options.write_timeout;
    resume(*st);
    flush(); // may close the stream: `st` is not used after this
  }

  void resume(h2_stream& st) {
    if (st.deferred) {
      st.deferred = false;
      nghttp2_session_resume_data(session_, st.id);
    }
  }

  static constexpr std::size_t max_write_bytes = 64u << 10;

  Stream stream_;
  http_server::impl* core_;
  std::string received_;
  std::optional<user_info> certificate_user_;
  nghttp2_session* session_ = nullptr;
  net::steady_timer sweep_;
  std::map<std::int32_t, std::unique_ptr<h2_stream>> streams_;
  std::array<uint8_t, 16384> input_;
  std::string output_;
  steady::time_point write_started_;
  steady::time_point idle_since_;
  bool in_recv_ = false;
  bool writing_ = false;
  bool closed_ = false;
};

} // namespace

template <class Stream>
std::shared_ptr<served_connection>
make_http2_connection(Stream stream, http_server::impl* core,
                      std::string received,
                      std::optional<user_info> certificate_user) {
  return std::make_shared<http2_connection<Stream>>(
    std::move(stream), core, std::move(received), std::move(certificate_user));
}

template std::shared_ptr<served_connection>
make_http2_connection<beast::tcp_stream>(beast::tcp_stream, http_server::impl*,
                                         std::string,
                                         std::optional<user_info>);

template std::shared_ptr<served_connection>
make_http2_connection<tls_stream>(tls_stream, http_server::impl*, std::string,
                                  std::optional<user_info>);

} // namespace podref::wire::detail
