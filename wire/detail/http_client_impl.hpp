// http_client's implementation (wire/http_client.cpp): the queue the
// client's callers fill, the transfers in flight, the libcurl multi handles
// they run on (http_client_shard.hpp), credentials and stats. Private to
// wire/'s http_client*.cpp; it pulls in libcurl.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <curl/curl.h>

#include "podref/wire/detail/exec_credential_cache.hpp"
#include "podref/wire/http_client.hpp"
#include "podref/wire/io_loop.hpp"

namespace podref::wire {

struct http_client::impl {
  struct shard;

  struct transfer {
    request_id id = 0;
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    handlers h;
    http_response res;
    std::size_t max_body = 0;
    bool counted_stream = false;
    bool counted_response = false;
    /// Multiplexed (HTTP/2): counted in its shard's mux_transfers once
    /// started.
    bool mux = false;
    /// Opens a connection of its own (see shard::admit()); its socket.
    bool opener = false;
    int opened_fd = -1;
    /// Waiting in its shard's `deferred` for room on a connection.
    bool deferred = false;
    std::string refused; // why a write callback stopped the transfer
    // curl's detail of a failure ("SSL certificate problem: ...").
    char detail[CURL_ERROR_SIZE] = {};
    impl* owner = nullptr;
    /// The multi handle the transfer runs on.
    shard* home = nullptr;
    std::string method = "GET";
    std::string body; // sent by POST (libcurl reads it in place)
    /// The exec plugin's run whose credential this carries (0: none).
    std::uint64_t exec_generation = 0;

    ~transfer() {
      if (easy)
        curl_easy_cleanup(easy);
      if (headers)
        curl_slist_free_all(headers);
    }
  };

  struct queued_request {
    request_id id;
    std::string path;
    handlers h;
    std::chrono::milliseconds timeout;
    std::string method = "GET";
    std::string body;
    std::string content_type = "application/json";
  };

  client_config config;
  http_client_options options;
  /// Set while attached to the loop.
  std::shared_ptr<io_loop> loop;
  std::atomic<request_id> next_id{1};

  // Guarded by queue_mutex: what the I/O thread drains.
  std::mutex queue_mutex;
  std::vector<queued_request> to_add;
  std::vector<request_id> to_cancel;

  // The multi handles (see shard). The first is made by start() and takes
  // the queue's wake-ups (`front`, never moved: any thread wakes it); the
  // I/O thread adds more (in drain_queue only) when a burst needs
  // connections opened side by side or the handles are full.
  std::vector<std::unique_ptr<shard>> shards;
  shard* front = nullptr;

  // I/O thread only.
  std::string token;
  std::chrono::steady_clock::time_point token_read_at{};
  bool token_stale = true;
  /// Set when the config has an exec plugin.
  std::unique_ptr<detail::exec_credential_cache> exec;
  /// The server URL, its host replaced by tls-server-name when that is
  /// set, and then how curl reaches the real host and what Host it sends.
  std::string url_base;
  curl_slist* connect_to = nullptr;
  std::string host_header;
  // h2c on libcurl < 8.0.0 (curl #10634, Debian 12's 7.88.1): a transfer
  // asking for prior knowledge on a connection it reuses stacks a second
  // HTTP/2 layer on it and breaks it for every later transfer. There only
  // openers ask for prior knowledge; the others ask for plain HTTP/2,
  // which reuses an HTTP/2 connection as it is.
  bool h2c_workaround = false;

  // Stats.
  mutable std::mutex stats_mutex;
  std::map<std::string, std::uint64_t> requests;
  std::atomic<std::uint64_t> bytes_received{0};
  std::atomic<std::uint64_t> open_streams{0};
  std::atomic<std::uint64_t> in_flight{0};
  std::atomic<std::uint64_t> connects{0};
  std::atomic<std::uint64_t> http2_responses{0};
  std::atomic<std::uint64_t> multi_handles{0};

  ~impl();
  void stop();
  /// A new multi handle, attached to the loop when the client is.
  result<shard*> add_shard();
  /// The shard a new multiplexed transfer goes to (see shard).
  shard& place();
  void drain_queue();
  void add(queued_request q);
  void cancel_now(request_id id);
  /// Counts a finished transfer and calls its on_done.
  void report(std::unique_ptr<transfer> t, CURLcode code);

  /// The bearer token for the next request: the configured one, or the
  /// token file's content, re-read when stale.
  const std::string& current_token();

  static size_t on_write(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<transfer*>(user);
    auto len = size * n;
    t->owner->bytes_received += len;
    if (t->res.status == 0) {
      long code = 0;
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
      t->res.status = static_cast<int>(code);
    }
    if (t->h.on_stream && t->res.status == 200) {
      if (!t->counted_stream) {
        t->counted_stream = true;
        ++t->owner->open_streams;
      }
      if (!t->h.on_stream(std::string_view{data, len})) {
        t->refused = "the stream's consumer refused its data";
        return 0;
      }
      return len;
    }
    if (t->res.body.size() + len > t->max_body) {
      t->refused = "reply body over " + std::to_string(t->max_body) + " bytes";
      return 0;
    }
    t->res.body.append(data, len);
    return len;
  }

  static size_t on_header(char* data, size_t size, size_t n, void* user);

  bool multiplexed() const {
    return !config.plain_http()
           || options.plain_http == plain_http_mode::h2_prior_knowledge;
  }
};

} // namespace podref::wire
