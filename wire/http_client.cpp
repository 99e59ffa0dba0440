// libcurl multi on an I/O loop (http_client.hpp has the contract).
#include "podref/wire/http_client.hpp"

#include "podref/wire/detail/http_client_impl.hpp"
#include "podref/wire/detail/http_client_shard.hpp"

#include <atomic>
#include <cctype>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include <curl/curl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace podref::wire {

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size())
    return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i]))
        != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty()
         && (s.back() == '\r' || s.back() == '\n' || s.back() == ' '))
    s.remove_suffix(1);
  return std::string{s};
}

/// An https URL's authority as written, its host (an IPv6 literal keeps
/// its brackets), its port (443 when absent) and the rest (a path prefix).
struct https_url {
  std::string authority;
  std::string host;
  std::string port;
  std::string rest;
};

std::optional<https_url> split_https(std::string_view url) {
  constexpr std::string_view scheme = "https://";
  if (!starts_with_nocase(url, scheme))
    return std::nullopt;
  url.remove_prefix(scheme.size());
  https_url out;
  auto slash = url.find('/');
  out.authority = std::string{url.substr(0, slash)};
  out.rest = slash == std::string_view::npos ? "" : std::string{url.substr(slash)};
  std::string_view a = out.authority;
  auto host_end = a.front() == '[' ? a.find(']') : a.find(':');
  if (a.empty() || (a.front() == '[' && host_end == std::string_view::npos))
    return std::nullopt;
  if (a.front() == '[')
    ++host_end;
  out.host = std::string{a.substr(0, host_end)};
  if (host_end < a.size()) {
    if (a[host_end] != ':' || host_end + 1 == a.size())
      return std::nullopt;
    out.port = std::string{a.substr(host_end + 1)};
  } else {
    out.port = "443";
  }
  return out;
}

} // namespace

size_t http_client::impl::on_header(char* data, size_t size, size_t n,
                                  void* user) {
  auto* t = static_cast<transfer*>(user);
  std::string_view line{data, size * n};
  if (starts_with_nocase(line, "HTTP/")) {
    t->res.retry_after.clear(); // a new response (after a 100 Continue)
    // A response on an opener's connection: the server's SETTINGS came
    // before it, so curl now knows the connection's stream limit.
    t->home->opener_settled(*t);
  } else if (starts_with_nocase(line, "retry-after:")) {
    t->res.retry_after = trim(line.substr(12));
  } else if (line == "\r\n" || line == "\n") {
    // The end of a header block: a stream is open once its 200 arrived,
    // before any event (a quiet watch sends none for minutes).
    long code = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    if (code == 200 && t->h.on_stream && !t->counted_stream) {
      t->counted_stream = true;
      ++t->owner->open_streams;
    }
    if (code >= 200 && !t->counted_response) {
      t->counted_response = true;
      long version = 0;
      curl_easy_getinfo(t->easy, CURLINFO_HTTP_VERSION, &version);
      if (version == CURL_HTTP_VERSION_2_0)
        ++t->owner->http2_responses;
    }
  }
  return size * n;
}

const std::string& http_client::impl::current_token() {
  if (!config.token.empty() || config.token_file.empty())
    return config.token;
  auto now = std::chrono::steady_clock::now();
  if (token_stale || now - token_read_at >= options.token_file_reread) {
    std::ifstream in{config.token_file, std::ios::binary};
    std::ostringstream buf;
    buf << in.rdbuf();
    // An unreadable file keeps the last token (the server will say 401).
    if (in)
      token = trim(buf.str());
    token_read_at = now;
    token_stale = false;
  }
  return token;
}

http_client::impl::~impl() {
  stop();
  shards.clear(); // their handles, before the list they use
  curl_slist_free_all(connect_to);
}

void http_client::impl::stop() {
  // Its runner wakes the loop for this client: it ends first.
  exec.reset();
  if (!loop)
    return;
  // The front first: only its wake-ups add handles (drain_queue), so once
  // it is detached the loop thread no longer touches `shards`.
  loop->detach(*front);
  for (auto& s : shards)
    if (s.get() != front)
      loop->detach(*s);
  loop.reset();
}

result<http_client::impl::shard*> http_client::impl::add_shard() {
  auto s = std::make_unique<shard>(*this);
  s->multi = curl_multi_init();
  if (!s->multi)
    return error_info{errc::unavailable, "curl_multi_init failed"};
  curl_multi_setopt(s->multi, CURLMOPT_PIPELINING,
                    static_cast<long>(CURLPIPE_MULTIPLEX));
  curl_multi_setopt(s->multi, CURLMOPT_MAX_CONCURRENT_STREAMS,
                    static_cast<long>(options.max_streams_per_connection));
  if (loop)
    loop->attach(*s);
  shards.push_back(std::move(s));
  ++multi_handles;
  return shards.back().get();
}

http_client::impl::shard& http_client::impl::place() {
  // Fill the first handles first, so that streams that end make room
  // where new transfers look first.
  for (auto& s : shards)
    if (s->room())
      return *s;
  for (auto& s : shards)
    if (s->may_wait() || s->may_open())
      return *s;
  if (auto made = add_shard())
    return **made;
  return *shards.back(); // no handle to be had: crowd the last one
}

void http_client::impl::add(queued_request q) {
  auto t = std::make_unique<transfer>();
  t->id = q.id;
  t->h = std::move(q.h);
  t->owner = this;
  t->max_body = options.max_body_bytes;
  t->easy = curl_easy_init();
  auto* e = t->easy;
  auto url = url_base + q.path;
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->detail);
  t->method = std::move(q.method);
  t->body = std::move(q.body);
  if (t->method == "GET") {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  } else if (t->method == "POST") {
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(t->body.size()));
  } else {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, t->method.c_str());
    if (!t->body.empty()) {
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body.data());
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(t->body.size()));
    }
  }
  curl_easy_setopt(e, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &impl::on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &impl::on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
  curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options.connect_timeout.count()));
  auto timeout = q.timeout.count() > 0 ? q.timeout
                 : t->h.on_stream     ? std::chrono::milliseconds{0}
                                      : options.request_timeout;
  if (timeout.count() > 0)
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(timeout.count()));
  // libcurl gives every transfer a receive buffer of this size (16 KiB
  // by default) for its whole life: most of an idle watch's memory.
  // Events are small and arrive a few at a time. (Replies keep the
  // default: with 4 KiB, libcurl 7.88 cut some HTTP/2 replies short,
  // "transfer closed with outstanding read data remaining".)
  if (t->h.on_stream)
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 1024L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  if (t->h.on_stream && options.stream_buffer_bytes > 0)
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE,
                     static_cast<long>(options.stream_buffer_bytes));
  t->mux = multiplexed();
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &shard::on_open_socket);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, t.get());
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, &shard::on_close_socket);
  // With an exec plugin, its credential is the only one sent.
  std::shared_ptr<const exec_credential> cred;
  if (exec) {
    auto snap = exec->current();
    cred = std::move(snap.credential);
    t->exec_generation = snap.generation;
  }
  if (config.plain_http()) {
    // h2c's version is set by start().
    if (!t->mux)
      curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  } else {
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
    if (config.insecure_skip_tls_verify) {
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (!config.ca_pem.empty()) {
      curl_blob blob{const_cast<char*>(config.ca_pem.data()),
                     config.ca_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
    }
    const auto& cert_pem = cred ? cred->client_cert_pem
                                : config.client_cert_pem;
    const auto& key_pem = cred ? cred->client_key_pem
                               : config.client_key_pem;
    if (!cert_pem.empty()) {
      curl_blob cert{const_cast<char*>(cert_pem.data()), cert_pem.size(),
                     CURL_BLOB_COPY};
      curl_blob key{const_cast<char*>(key_pem.data()), key_pem.size(),
                    CURL_BLOB_COPY};
      curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
      curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
      curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
    }
    if (connect_to) {
      curl_easy_setopt(e, CURLOPT_CONNECT_TO, connect_to);
      t->headers = curl_slist_append(t->headers, host_header.c_str());
    }
  }
  t->headers = curl_slist_append(t->headers, "Accept: application/json");
  if (!t->body.empty())
    t->headers = curl_slist_append(
      t->headers, ("Content-Type: " + q.content_type).c_str());
  // Never over plain http (start() refuses such a config; this keeps it
  // true however the config was built).
  if (!config.plain_http()) {
    const auto& tok = cred ? cred->token : current_token();
    if (!tok.empty())
      t->headers = curl_slist_append(
        t->headers, ("Authorization: Bearer " + tok).c_str());
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
  ++in_flight;
  auto& home = t->mux ? place() : *front;
  home.admit(std::move(t));
}

void http_client::impl::cancel_now(request_id id) {
  for (auto& s : shards)
    if (s->cancel_now(id))
      return;
}

void http_client::impl::report(std::unique_ptr<transfer> t, CURLcode code) {
  long status = 0;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
  t->res.status = static_cast<int>(status);
  if (code != CURLE_OK)
    t->res.error = !t->refused.empty() ? t->refused
                   : t->detail[0] != '\0'
                     ? std::string{t->detail}
                     : std::string{curl_easy_strerror(code)};
  if (t->res.status == 401) {
    token_stale = true;
    if (exec)
      exec->unauthorized(t->exec_generation);
  }
  {
    // A transfer that failed (even after its status line) counts as 0.
    auto code_seen = t->res.error.empty() ? t->res.status : 0;
    std::lock_guard<std::mutex> guard{stats_mutex};
    ++requests[t->method + " " + std::to_string(code_seen)];
  }
  if (t->h.on_done)
    t->h.on_done(std::move(t->res));
}

void http_client::impl::drain_queue() {
  std::vector<queued_request> adds;
  std::vector<request_id> cancels;
  {
    std::lock_guard<std::mutex> guard{queue_mutex};
    adds.swap(to_add);
    cancels.swap(to_cancel);
  }
  for (auto& q : adds)
    add(std::move(q));
  for (auto id : cancels)
    cancel_now(id);
}

http_client::http_client(std::unique_ptr<impl> x) : impl_(std::move(x)) {
  // nop
}

http_client::~http_client() {
  // Released in a handler (on the loop's thread): the loop cannot wait for
  // itself, so it detaches and frees the client after this callback.
  if (impl_->loop && impl_->loop->on_loop_thread()) {
    auto loop = impl_->loop;
    loop->defer([x = std::shared_ptr<impl>{std::move(impl_)}]() mutable {
      x.reset(); // detaches at once: the top of the loop's round
    });
    return;
  }
  impl_->stop();
}

result<std::unique_ptr<http_client>>
http_client::start(const client_config& config,
                   const http_client_options& options) {
  auto where = config.origin.empty() ? std::string{"client config"}
                                     : config.origin;
  if (config.plain_http()
      && (!config.token.empty() || !config.token_file.empty()
          || !config.client_cert_pem.empty() || config.exec))
    return error_info{errc::invalid_argument,
                      where + ": server " + config.server
                        + ": credentials are never sent over plain http"};
  if (config.server.empty())
    return error_info{errc::invalid_argument, where + ": server: Required value"};
  global_init();
  auto x = std::make_unique<impl>();
  x->config = config;
  x->options = options;
  x->url_base = config.server;
  if (!config.tls_server_name.empty() && !config.plain_http()) {
    // curl verifies and names (SNI) the URL's host: the URL names
    // tls-server-name, CONNECT_TO dials the real host, and Host stays the
    // server's, as client-go sends it.
    auto url = split_https(config.server);
    if (!url)
      return error_info{errc::invalid_argument,
                        where + ": server " + config.server
                          + ": not a URL tls-server-name can apply to"};
    auto name = config.tls_server_name.find(':') == std::string::npos
                  ? config.tls_server_name
                  : "[" + config.tls_server_name + "]";
    x->url_base = "https://" + name + ":" + url->port + url->rest;
    x->connect_to = curl_slist_append(
      nullptr, (name + ":" + url->port + ":" + url->host + ":" + url->port)
                 .c_str());
    x->host_header = "Host: " + url->authority;
  }
  auto first = x->add_shard(); // not attached yet: the loop comes below
  if (!first)
    return first.error();
  x->front = *first;
  if (config.exec) {
    // Background runs start on the loop thread, after the attach below.
    x->exec = std::make_unique<detail::exec_credential_cache>(
      config, options.exec,
      [self = x.get()] { self->loop->wake(*self->front); });
    if (auto ran = x->exec->run_first(); !ran)
      return ran.error();
  }
  // curl #10634, fixed in 8.0.0 (Debian 12 ships 7.88.1).
  x->h2c_workaround = options.plain_http == plain_http_mode::h2_prior_knowledge
                      && curl_version_info(CURLVERSION_NOW)->version_num
                           < 0x080000;
  if (options.loop) {
    x->loop = options.loop;
  } else {
    auto own = io_loop::start();
    if (!own)
      return own.error();
    x->loop = std::move(own).value();
  }
  x->options.loop.reset(); // held once, in x->loop
  x->loop->attach(*x->front);
  return std::unique_ptr<http_client>{new http_client(std::move(x))};
}

http_client::request_id http_client::get(std::string path_and_query,
                                         handlers h,
                                         std::chrono::milliseconds timeout) {
  auto id = impl_->next_id++;
  {
    std::lock_guard<std::mutex> guard{impl_->queue_mutex};
    impl_->to_add.push_back(
      {id, std::move(path_and_query), std::move(h), timeout, "GET", {}});
  }
  impl_->loop->wake(*impl_->front);
  return id;
}

http_client::request_id http_client::send(std::string method,
                                          std::string path_and_query,
                                          std::string body, handlers h,
                                          std::string content_type) {
  auto id = impl_->next_id++;
  {
    std::lock_guard<std::mutex> guard{impl_->queue_mutex};
    impl_->to_add.push_back({id, std::move(path_and_query), std::move(h),
                             std::chrono::milliseconds{0}, std::move(method),
                             std::move(body), std::move(content_type)});
  }
  impl_->loop->wake(*impl_->front);
  return id;
}

void http_client::cancel(request_id id) {
  {
    std::lock_guard<std::mutex> guard{impl_->queue_mutex};
    impl_->to_cancel.push_back(id);
  }
  impl_->loop->wake(*impl_->front);
}

http_client_stats http_client::stats() const {
  http_client_stats out;
  {
    std::lock_guard<std::mutex> guard{impl_->stats_mutex};
    out.requests = impl_->requests;
  }
  out.bytes_received = impl_->bytes_received.load();
  out.open_streams = impl_->open_streams.load();
  out.in_flight = impl_->in_flight.load();
  out.connects = impl_->connects.load();
  out.http2_responses = impl_->http2_responses.load();
  out.multi_handles = impl_->multi_handles.load();
  if (impl_->exec) {
    out.exec_runs = impl_->exec->runs();
    out.exec_failures = impl_->exec->failures();
    out.exec_error = impl_->exec->last_error();
  }
  return out;
}

const client_config& http_client::config() const noexcept {
  return impl_->config;
}

} // namespace podref::wire
