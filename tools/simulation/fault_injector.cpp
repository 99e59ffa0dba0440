#include "simulation/fault_injector.hpp"

namespace podref::cli::sim {

fault_injector::fault_injector(world& w) : w_(w) {
  // nop
}

void fault_injector::run() {
  if (w_.config.fault_period.count() <= 0) {
    w_.stop.wait_until(sim_clock::time_point::max());
    return;
  }
  pacer ticks{1.0 / w_.config.fault_period.count()};
  const error_info injected{errc::unavailable, "injected by podref simulate"};
  for (std::uint64_t n = 0; ticks.wait(w_.stop); ++n) {
    switch (n % 5) {
      case 0:
        w_.api.fail_next(source_verb::list, 3, injected);
        break;
      case 1:
        w_.api.fail_next(source_verb::watch, 2, injected);
        break;
      case 2:
        w_.api.close_watches();
        break;
      case 3:
        w_.api.expire_history();
        break;
      default:
        if (auto res = w_.api.restart(); !res)
          messages.push_back("restarting the API server failed: "
                             + res.error().message);
    }
    injected_.fetch_add(1, std::memory_order_relaxed);
  }
}

} // namespace podref::cli::sim
