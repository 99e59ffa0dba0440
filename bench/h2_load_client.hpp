// h2_load_client: the client side of `podref bench -w apiserver`: nghttp2
// client sessions over a few plain-HTTP (h2c, prior knowledge) loopback
// sockets, driven by poll() on the calling thread. Holds many streams at
// once (watches) and counts their events (one NDJSON line per DATA frame
// or more), or runs one request at a time for latencies. No threads, no
// Boost, no CAF: it runs in a child process of its own, so that the
// server's memory is measured without it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nghttp2/nghttp2.h>

namespace podref::bench {

class h2_load_client {
public:
  /// Opens `connections` sockets to 127.0.0.1:`port`; throws
  /// std::runtime_error when one cannot connect.
  h2_load_client(std::uint16_t port, std::size_t connections);
  ~h2_load_client();

  h2_load_client(const h2_load_client&) = delete;
  h2_load_client& operator=(const h2_load_client&) = delete;

  /// Opens one stream per path, spread over the connections in turn.
  void open_streams(const std::vector<std::string>& paths);

  /// Drives the sockets until `done()` or `limit`; false on a timeout or
  /// when the server closed a connection.
  template <class Pred>
  bool run_until(Pred done, std::chrono::milliseconds limit) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > until || failed_)
        return false;
      poll_once(10);
    }
    return true;
  }

  /// One request on the first connection, answered whole: the status (0
  /// when the stream was reset or the connection failed).
  int request(const std::string& method, const std::string& path,
              const std::string& body = {},
              const std::string& content_type = "application/json");

  /// Streams that got a 200 HEADERS.
  std::size_t ok_streams() const noexcept {
    return ok_streams_;
  }

  /// Streams that got another status or closed.
  std::size_t failed_streams() const noexcept {
    return failed_streams_;
  }

  /// NDJSON lines received on every stream so far.
  std::uint64_t lines() const noexcept {
    return lines_;
  }

  /// When the last line arrived.
  std::chrono::steady_clock::time_point last_line_at() const noexcept {
    return last_line_;
  }

  struct connection;

private:
  void poll_once(int timeout_ms);
  void flush(connection& c);
  void on_status(int status);
  void on_close(std::int32_t id, connection& c);

  std::vector<connection*> conns_;
  std::size_t next_ = 0;
  std::size_t ok_streams_ = 0;
  std::size_t failed_streams_ = 0;
  std::uint64_t lines_ = 0;
  std::chrono::steady_clock::time_point last_line_;
  bool failed_ = false;
  // The one request of request(), on connection 0.
  std::int32_t request_id_ = 0;
  int request_status_ = 0;
  bool request_done_ = false;
  std::string upload_;

  friend struct h2_callbacks;
};

} // namespace podref::bench
