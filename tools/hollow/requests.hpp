// request_window: the hollow command's own requests (creating, updating,
// reading back), on an http_client of the fleet's I/O loop, with a bounded
// number in flight (one request waited for: wire/http_call.hpp).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "podref/wire/http_client.hpp"

namespace podref::cli::hollow {

/// Sends requests with at most `width` in flight; wait() blocks until every
/// reply came. Replies go to each request's `done`, on the I/O thread.
class request_window {
public:
  request_window(wire::http_client& client, std::size_t width);

  /// Waits (bounded by the client's request timeout per request) for room.
  void send(const std::string& method, const std::string& path,
            std::string body,
            std::function<void(const wire::http_response&)> done,
            const std::string& content_type = "application/json");

  /// Waits until nothing is in flight.
  void wait();

private:
  wire::http_client& client_;
  std::size_t width_;
  std::shared_ptr<std::mutex> mtx_ = std::make_shared<std::mutex>();
  std::shared_ptr<std::condition_variable> cv_
    = std::make_shared<std::condition_variable>();
  std::shared_ptr<std::size_t> in_flight_ = std::make_shared<std::size_t>(0);
};

} // namespace podref::cli::hollow
