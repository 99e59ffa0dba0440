#include "podref/runtime/detail/drive.hpp"

#include <caf/actor_system.hpp>
#include <caf/scheduler/test_coordinator.hpp>

namespace podref::detail {

namespace {

caf::scheduler::test_coordinator* test_scheduler(caf::actor_system& sys) {
  return dynamic_cast<caf::scheduler::test_coordinator*>(&sys.scheduler());
}

} // namespace

bool is_deterministic(caf::actor_system& sys) noexcept {
  return test_scheduler(sys) != nullptr;
}

bool drive_until(caf::actor_system& sys, const std::function<bool()>& ready,
                 std::chrono::nanoseconds budget) {
  auto* sched = test_scheduler(sys);
  if (sched == nullptr)
    return true;
  auto& clock = sched->clock();
  const auto deadline = clock.current_time + budget;
  for (;;) {
    if (ready())
      return true;
    if (sched->try_run_once())
      continue;
    const auto& timers = clock.schedule();
    if (timers.empty() || timers.begin()->first > deadline)
      return ready();
    sched->trigger_timeout();
  }
}

} // namespace podref::detail
