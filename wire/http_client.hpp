// The wire client's HTTP transport: libcurl's multi interface driven by ONE
// dedicated I/O thread for every request and watch stream of a client.
//
// Callers (actors) never block: get(), send() and cancel() queue the change
// and wake the I/O thread; the thread adds or removes the easy handles, runs
// the transfers, and reports through the handlers, which run on the I/O
// thread and must not block either (they send messages). The thread is an
// io_loop (io_loop.hpp): the client's own, or one shared by many clients
// (http_client_options::loop), each keeping its own connections.
//
// Protocols: https negotiates HTTP/2 by ALPN (HTTP/1.1 otherwise); plain
// http is HTTP/1.1 unless h2c prior knowledge is configured. Transfers to
// one server share connections: HTTP/2 streams are multiplexed up to
// max_streams_per_connection (or the server's lower limit); past that one
// new connection is opened at a time while the other new transfers wait
// for it (a burst never dials once per request).
//
// Credentials come from the resolved client_config (wire/kubeconfig.hpp):
// the CA, the client certificate and key, a bearer token or a token file
// (re-read at most every token_file_reread, and after a 401), or an exec
// plugin (wire/exec_credential.hpp: run again when its credential expires
// or draws a 401). tls-server-name names the server for TLS. The resolver
// drops every credential for http:// servers; start() refuses one anyway.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "podref/messages/errors.hpp"
#include "podref/wire/exec_credential.hpp"
#include "podref/wire/kubeconfig.hpp"

namespace podref::wire {

class io_loop;

/// How a plain-http server is spoken to.
enum class plain_http_mode : std::uint8_t {
  http1_1,
  /// h2c with prior knowledge: only for servers known to speak it.
  h2_prior_knowledge,
};

struct http_client_options {
  plain_http_mode plain_http = plain_http_mode::http1_1;
  /// Bodies of non-streamed replies (lists, gets, errors) past this fail.
  std::size_t max_body_bytes = 64u << 20;
  /// Upper bound of HTTP/2 streams per connection (the server's
  /// MAX_CONCURRENT_STREAMS applies when lower).
  std::size_t max_streams_per_connection = 250;
  /// HTTP/2 connections per libcurl multi handle; past them the client
  /// opens another handle on the same I/O loop. libcurl 7.88 looks through
  /// a handle's connections for every transfer it starts: a few dozen per
  /// handle keep a start of 100k watches linear (see the .cpp).
  std::size_t connections_per_handle = 16;
  std::chrono::milliseconds connect_timeout{10000};
  /// Whole-transfer timeout of non-streamed requests.
  std::chrono::milliseconds request_timeout{60000};
  std::chrono::seconds token_file_reread{60};
  /// Bounds of an exec credential plugin's runs.
  exec_limits exec;
  std::string user_agent = "podref";
  /// The receive buffer of each watch stream (libcurl's CURLOPT_BUFFERSIZE,
  /// at least 1024); 0: libcurl's 16 KiB. A stream lives as long as its
  /// watch, so this is paid per open watch; a watch event larger than it
  /// arrives in more pieces.
  std::size_t stream_buffer_bytes = 0;
  /// The I/O thread to run on, shared with other clients; null: a loop of
  /// the client's own.
  std::shared_ptr<io_loop> loop;
};

/// The outcome of one request.
struct http_response {
  /// The HTTP status; 0 when no response arrived (see `error`).
  int status = 0;
  /// The body of a non-streamed reply, or of a stream's non-200 reply.
  std::string body;
  /// The Retry-After header, as sent.
  std::string retry_after;
  /// A transport failure (connection, TLS, timeout, a refused stream
  /// chunk): empty when the transfer completed.
  std::string error;
};

/// Counters of one client, readable from any thread.
struct http_client_stats {
  /// Finished requests by "VERB CODE"; code 0: the transfer failed (no
  /// reply, a timeout, a reset, a refused body), whatever status it had.
  std::map<std::string, std::uint64_t> requests;
  std::uint64_t bytes_received = 0;
  /// Watch streams in progress.
  std::uint64_t open_streams = 0;
  /// Transfers in progress (streams included).
  std::uint64_t in_flight = 0;
  /// Connections opened (TCP sockets, with TLS where https; a failed
  /// connect counts too): with HTTP/2 many transfers share one.
  std::uint64_t connects = 0;
  /// Replies that came over HTTP/2.
  std::uint64_t http2_responses = 0;
  /// libcurl multi handles the connections are spread over (see
  /// http_client_options::connections_per_handle).
  std::uint64_t multi_handles = 0;
  /// Exec credential plugin runs (the first one included), those that
  /// failed, and the last failure (naming the plugin, never its output).
  std::uint64_t exec_runs = 0;
  std::uint64_t exec_failures = 0;
  std::string exec_error;
};

class http_client {
public:
  using request_id = std::uint64_t;

  struct handlers {
    /// Set for a stream: the body bytes of a 200 reply, as they arrive.
    /// Returning false aborts the transfer (on_done then reports an error).
    std::function<bool(std::string_view chunk)> on_stream;
    /// Exactly once per transfer that was not cancelled.
    std::function<void(http_response)> on_done;
  };

  /// Runs the exec plugin once when there is one (its failure fails the
  /// start), then starts the I/O thread (or joins options.loop). Fails for
  /// configurations it cannot honour, naming the field: credentials for an
  /// http:// server.
  static result<std::unique_ptr<http_client>>
  start(const client_config& config, const http_client_options& options = {});

  /// Removes every transfer (still running ones report nothing) and lets
  /// go of the I/O loop, which stops with its last client. Never from a
  /// handler (the I/O thread).
  ~http_client();

  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  /// Queues a GET of `path_and_query` (starting with '/', appended to the
  /// server URL). Any thread. `timeout` bounds the whole transfer; zero
  /// means options.request_timeout for a request and none for a stream.
  request_id get(std::string path_and_query, handlers h,
                 std::chrono::milliseconds timeout = {});

  /// Queues a request of `method` (POST, DELETE, PATCH, ...) with a
  /// `body` of `content_type` (none when empty), within
  /// options.request_timeout. Any thread.
  request_id send(std::string method, std::string path_and_query,
                  std::string body, handlers h,
                  std::string content_type = "application/json");

  /// Removes a transfer; its handlers are not called after the I/O thread
  /// has processed this (one already running finishes first). Any thread.
  void cancel(request_id id);

  http_client_stats stats() const;

  const client_config& config() const noexcept;

  struct impl;

private:
  explicit http_client(std::unique_ptr<impl> x);
  std::unique_ptr<impl> impl_;
};

} // namespace podref::wire
