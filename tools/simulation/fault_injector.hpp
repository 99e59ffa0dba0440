// The fault thread: one API server fault per period, cycling through every
// kind: three lists fail, two watches fail, every watch is closed, the event
// history expires, the server actor dies and is replaced.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "simulation/world.hpp"

namespace podref::cli::sim {

class fault_injector {
public:
  explicit fault_injector(world& w);

  /// Until the stop signal; only waits when the run injects no faults.
  void run();

  std::uint64_t injected() const {
    return injected_.load();
  }

  std::vector<std::string> messages;

private:
  world& w_;
  std::atomic<std::uint64_t> injected_{0};
};

} // namespace podref::cli::sim
