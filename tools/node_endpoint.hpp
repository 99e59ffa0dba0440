// The local HTTP endpoint of `podref node`: GET /metrics (Prometheus text
// format), /healthz and /readyz, HTTP/1.1, one request per connection, on
// one thread. Loopback by default; it serves nothing secret (counts only).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "podref/messages/errors.hpp"

namespace podref::cli {

class node_endpoint {
public:
  struct handlers {
    /// The /metrics body.
    std::function<std::string()> metrics;
    /// /readyz answers 200 "ok" while this holds, 503 otherwise.
    std::function<bool()> ready;
  };

  /// Listens on ADDRESS:PORT (port 0 picks one).
  static result<std::unique_ptr<node_endpoint>>
  start(const std::string& listen, handlers h);

  ~node_endpoint();

  /// http://ADDRESS:PORT
  std::string url() const;

  struct impl;

private:
  explicit node_endpoint(std::unique_ptr<impl> x);
  std::unique_ptr<impl> impl_;
};

} // namespace podref::cli
