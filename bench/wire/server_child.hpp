// The API server of the wire benchmarks in a child process, so that what
// the client costs (CPU, RSS) is measured on its own: `podref apiserver`'s
// front over podref's in-memory API server holding N Secrets, reached over
// h2 with TLS (ALPN, a bearer token), h2c or HTTP/1.1. The parent drives
// the child's writes through a pipe and reads their times on the shared
// monotonic clock.
//
// Fork it while the calling process runs no other thread (the child goes
// on running this program's code, not exec).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <sys/types.h>

#include "podref/wire/kubeconfig.hpp"

namespace podref::bench {

struct server_child_options {
  std::size_t objects = 1000;
  /// Bytes of each Secret's one value.
  std::size_t bytes = 1024;
  /// "h2-tls", "h2c" or "http1".
  std::string transport = "h2-tls";
};

/// The times of one write, in steady_clock nanoseconds since its epoch:
/// before the server's update call and after it returned.
struct write_times {
  std::int64_t before_ns = 0;
  std::int64_t after_ns = 0;
};

class server_child {
public:
  /// Forks the child and waits until it serves; throws std::runtime_error
  /// when it cannot.
  explicit server_child(const server_child_options& opts);

  /// Tells the child to stop and reaps it.
  ~server_child();

  server_child(const server_child&) = delete;
  server_child& operator=(const server_child&) = delete;

  /// What a client connects with (server URL, CA and token for TLS).
  const wire::client_config& config() const noexcept {
    return config_;
  }

  /// Updates Secret `i` to the next write's number as its value, runs
  /// `meanwhile` (if set) while the server writes, and returns when the
  /// server has applied it.
  write_times update(std::size_t i,
                     const std::function<void()>& meanwhile = {});

  /// Updates every Secret `rounds` times (round robin, as fast as the
  /// server takes them); the child's CPU seconds spent on it.
  double update_all(std::size_t rounds);

  /// The child's CPU seconds so far.
  double cpu_seconds();

private:
  std::string call(const std::string& line);

  wire::client_config config_;
  std::string dir_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
};

/// Secret "s<i>" in namespace "default", what server_child serves.
std::string bench_secret_name(std::size_t i);

} // namespace podref::bench
