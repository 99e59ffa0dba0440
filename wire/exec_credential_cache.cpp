// exec_credential_cache.hpp has the contract.
#include "podref/wire/detail/exec_credential_cache.hpp"

#include <chrono>
#include <utility>

namespace podref::wire::detail {

exec_credential_cache::exec_credential_cache(client_config config,
                                             exec_limits limits,
                                             std::function<void()> on_refreshed)
  : config_(std::move(config)),
    limits_(limits),
    on_refreshed_(std::move(on_refreshed)) {
  // nop
}

exec_credential_cache::~exec_credential_cache() {
  cancel_ = true;
  std::thread runner;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    runner = std::move(runner_);
  }
  if (runner.joinable())
    runner.join();
}

result<void> exec_credential_cache::run_first() {
  ++runs_;
  auto cred = run_exec_plugin(config_, limits_, &cancel_);
  std::lock_guard<std::mutex> guard{mutex_};
  last_start_ = std::chrono::steady_clock::now();
  if (!cred) {
    ++failures_;
    last_error_ = cred.error().message;
    return cred.error();
  }
  current_.credential
    = std::make_shared<const exec_credential>(std::move(*cred));
  current_.generation = 1;
  return {};
}

exec_credential_cache::snapshot exec_credential_cache::current() {
  std::lock_guard<std::mutex> guard{mutex_};
  const auto& expires = current_.credential->expires;
  if (expires && *expires <= std::chrono::system_clock::now())
    refresh_locked();
  return current_;
}

void exec_credential_cache::unauthorized(std::uint64_t generation) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (generation == current_.generation)
    refresh_locked();
}

std::string exec_credential_cache::last_error() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return last_error_;
}

void exec_credential_cache::refresh_locked() {
  auto now = std::chrono::steady_clock::now();
  if (running_ || cancel_ || now - last_start_ < limits_.min_interval)
    return;
  last_start_ = now;
  // The last runner has ended (running_ is false): reclaim its thread.
  if (runner_.joinable())
    runner_.join();
  running_ = true;
  ++runs_;
  runner_ = std::thread{[this] {
    auto cred = run_exec_plugin(config_, limits_, &cancel_);
    {
      std::lock_guard<std::mutex> guard{mutex_};
      running_ = false;
      if (cred) {
        current_.credential
          = std::make_shared<const exec_credential>(std::move(*cred));
        ++current_.generation;
      } else {
        // Kept: the last credential. The next 401 or expiry runs it again.
        ++failures_;
        last_error_ = cred.error().message;
      }
    }
    if (on_refreshed_)
      on_refreshed_();
  }};
}

} // namespace podref::wire::detail
