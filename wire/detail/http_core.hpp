// What the HTTP front's listener (http_server.cpp) and its connections
// (http_connection.cpp) share. Private to wire/; includes Asio.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>

#include "podref/wire/detail/server_metrics.hpp"
#include "podref/wire/http_server.hpp"

namespace podref::wire {

namespace detail {

class watch_hubs;

/// A connection as the listener sees it: registered with the server while
/// open (HTTP/1.1 in http_connection.cpp, HTTP/2 in http2_session.cpp).
class served_connection {
public:
  virtual ~served_connection() = default;

  /// Starts serving; the connection unregisters itself when it closes.
  virtual void start() = 0;

  /// Closes at once (server stop); any thread.
  virtual void shut() = 0;
};

/// An accepted socket's connection: HTTP/1.1, or HTTP/2 when the client
/// opens with its preface.
std::shared_ptr<served_connection>
make_connection(boost::asio::ip::tcp::socket socket, http_server::impl* core);

/// The way in for threads outside the I/O context (CAF's): work is posted
/// to a connection's strand only while the gate is open. stop() closes it
/// before the I/O context goes, so no handler is queued after that and no
/// outside thread keeps a connection (and its socket) past its context.
struct io_gate {
  std::mutex mtx;
  bool open = true; // guarded by mtx
};

} // namespace detail

/// What the listener and its connections share. The server owns it alone;
/// connections live only in handlers of `ioc` and in `live`, so they never
/// outlive it (destroying `ioc` destroys the handlers still queued).
struct http_server::impl {
  caf::actor_system* sys = nullptr;
  source_function source;
  http_server_options options;
  /// Before ioc: the connections that count in it go first.
  detail::server_metrics metrics;
  /// Set when serving HTTPS; shared by every connection.
  std::unique_ptr<boost::asio::ssl::context> tls;
  boost::asio::io_context ioc;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  // On a strand of its own: accepting and stop() never run at once.
  boost::asio::ip::tcp::acceptor acceptor{boost::asio::make_strand(ioc)};
  std::vector<std::thread> threads;
  std::string host; // as written in URLs
  std::uint16_t port = 0;
  std::atomic<std::size_t> watches{0};
  /// The server's watchers for every connection's watches (watch_hubs.hpp).
  std::unique_ptr<detail::watch_hubs> hubs;
  std::shared_ptr<detail::io_gate> gate = std::make_shared<detail::io_gate>();
  std::mutex mtx;
  std::condition_variable cv;
  std::set<std::shared_ptr<detail::served_connection>> live; // guarded by mtx
  bool stopping = false;                      // guarded by mtx
  bool stopped = false;

  void accept_next();
  void forget(const std::shared_ptr<detail::served_connection>& c);
  /// `old` hands its socket to `next` (a protocol switch). False once the
  /// server is stopping: `next` is not registered and must close.
  bool replace(const std::shared_ptr<detail::served_connection>& old,
               std::shared_ptr<detail::served_connection> next);
};

} // namespace podref::wire
