#include "hollow/requests.hpp"

#include <utility>

namespace podref::cli::hollow {

request_window::request_window(wire::http_client& client, std::size_t width)
  : client_(client), width_(width == 0 ? 1 : width) {
  // nop
}

void request_window::send(const std::string& method, const std::string& path,
                          std::string body,
                          std::function<void(const wire::http_response&)> done,
                          const std::string& content_type) {
  {
    std::unique_lock<std::mutex> guard{*mtx_};
    cv_->wait(guard, [this] { return *in_flight_ < width_; });
    ++*in_flight_;
  }
  wire::http_client::handlers h;
  h.on_done = [mtx = mtx_, cv = cv_, n = in_flight_,
               done = std::move(done)](wire::http_response r) {
    if (done)
      done(r);
    std::lock_guard<std::mutex> guard{*mtx};
    --*n;
    cv->notify_all();
  };
  // Every request ends (the client's request timeout bounds it), so the
  // window always drains.
  if (method == "GET")
    client_.get(path, std::move(h));
  else
    client_.send(method, path, std::move(body), std::move(h), content_type);
}

void request_window::wait() {
  std::unique_lock<std::mutex> guard{*mtx_};
  cv_->wait(guard, [this] { return *in_flight_ == 0; });
}

} // namespace podref::cli::hollow
