// The credential of an exec plugin, shared by the transfers of one client:
// run once at start (the caller waits, as for kubectl's first request),
// then again in the background when it expires or when the server answers
// 401 to it, at most once per exec_limits::min_interval. Transfers never wait for a
// run: until it ends they carry the last credential the plugin gave.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "podref/wire/exec_credential.hpp"

namespace podref::wire::detail {

class exec_credential_cache {
public:
  struct snapshot {
    std::shared_ptr<const exec_credential> credential;
    /// Which run gave it (1 for the first).
    std::uint64_t generation = 0;
  };

  /// `on_refreshed` runs on the refreshing thread after every background
  /// run (the client wakes its I/O thread).
  exec_credential_cache(client_config config, exec_limits limits,
                        std::function<void()> on_refreshed);

  /// Kills a run in progress and waits for its thread.
  ~exec_credential_cache();

  exec_credential_cache(const exec_credential_cache&) = delete;
  exec_credential_cache& operator=(const exec_credential_cache&) = delete;

  /// The first run; the client does not start when it fails.
  result<void> run_first();

  /// The credential to send now; starts a background run when it has
  /// expired.
  snapshot current();

  /// The server refused the credential of `generation`: runs the plugin
  /// again unless a later run has replaced it (or one is running).
  void unauthorized(std::uint64_t generation);

  /// Plugin runs started, and those that failed.
  std::uint64_t runs() const noexcept {
    return runs_.load();
  }
  std::uint64_t failures() const noexcept {
    return failures_.load();
  }

  /// The last failed run's error ("" before any): it names the plugin and
  /// what went wrong, never its output.
  std::string last_error() const;

private:
  void refresh_locked();

  const client_config config_;
  const exec_limits limits_;
  std::function<void()> on_refreshed_;
  mutable std::mutex mutex_;
  snapshot current_;
  std::chrono::steady_clock::time_point last_start_{};
  std::string last_error_;
  bool running_ = false;
  std::thread runner_;
  std::atomic<bool> cancel_{false};
  std::atomic<std::uint64_t> runs_{0};
  std::atomic<std::uint64_t> failures_{0};
};

} // namespace podref::wire::detail
