// updater: `podref hollow --create-pods --update-rate R`: R merge patches a
// second, round-robin over the objects the created pods reference (those
// that exist and are mutable), each announced to the propagation tracker.
// An object whose previous write is still in flight is skipped this round.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "hollow/propagation.hpp"
#include "hollow/workload.hpp"

namespace podref::wire {
class http_client;
} // namespace podref::wire

namespace podref::cli::hollow {

class updater {
public:
  /// Starts writing at once.
  updater(wire::http_client& client, const workload& w,
          propagation_tracker& tracker, double rate);

  /// stop(), if not done.
  ~updater();

  /// Stops writing and waits (at most 30 s) for the replies in flight.
  void stop();

  std::uint64_t sent() const noexcept {
    return sent_.load();
  }

  std::uint64_t skipped() const noexcept {
    return skipped_.load();
  }

private:
  void run();

  wire::http_client& client_;
  const workload& w_;
  propagation_tracker& tracker_;
  double rate_;
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> skipped_{0};
  std::shared_ptr<std::atomic<std::int64_t>> in_flight_
    = std::make_shared<std::atomic<std::int64_t>>(0);
  std::thread thread_;
};

} // namespace podref::cli::hollow
