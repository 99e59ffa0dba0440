#include "podref/wire/http_call.hpp"

#include <future>
#include <memory>
#include <utility>

namespace podref::wire {

http_response call_and_wait(http_client& client, const std::string& method,
                            const std::string& path, std::string body,
                            const std::string& content_type,
                            std::chrono::seconds limit) {
  auto done = std::make_shared<std::promise<http_response>>();
  auto reply = done->get_future();
  http_client::handlers h;
  h.on_done = [done](http_response r) { done->set_value(std::move(r)); };
  auto id = method == "GET" ? client.get(path, std::move(h))
                            : client.send(method, path, std::move(body),
                                          std::move(h), content_type);
  if (reply.wait_for(limit) != std::future_status::ready) {
    client.cancel(id);
    http_response none;
    none.error = "no reply";
    return none;
  }
  return reply.get();
}

} // namespace podref::wire
