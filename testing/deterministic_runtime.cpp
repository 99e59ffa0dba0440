#include "podref/testing/deterministic_runtime.hpp"

#include <caf/actor_system.hpp>
#include <caf/scheduler/test_coordinator.hpp>

namespace podref::testing {

namespace {

caf::scheduler::test_coordinator& scheduler_of(runtime& rt) {
  return dynamic_cast<caf::scheduler::test_coordinator&>(
    rt.system().scheduler());
}

runtime_options deterministic_options() {
  runtime_options opts;
  opts.workers = 1;
  opts.policy = "testing";
  return opts;
}

/// Bounds the shutdown drive: timers re-arm themselves (the recycling pass)
/// only while their actors live.
constexpr std::size_t max_shutdown_timers = 100000;

} // namespace

deterministic_runtime::deterministic_runtime()
  : runtime(deterministic_options()) {
  // nop
}

deterministic_runtime::~deterministic_runtime() {
  auto& sched = scheduler_of(*this);
  sched.run();
  for (std::size_t i = 0; i < max_shutdown_timers && sched.has_pending_timeout();
       ++i) {
    sched.trigger_timeout();
    sched.run();
  }
}

std::size_t deterministic_runtime::run_until_idle() {
  return scheduler_of(*this).run();
}

std::size_t deterministic_runtime::advance(std::chrono::nanoseconds d) {
  auto& sched = scheduler_of(*this);
  auto& clock = sched.clock();
  const auto target = clock.current_time + d;
  auto ran = sched.run();
  while (clock.has_pending_timeout()
         && clock.schedule().begin()->first <= target) {
    sched.trigger_timeout();
    ran += sched.run();
  }
  clock.current_time = target;
  return ran;
}

deterministic_runtime::clock_type::time_point
deterministic_runtime::now() const {
  auto& self = const_cast<deterministic_runtime&>(*this);
  return scheduler_of(self).clock().current_time;
}

std::size_t deterministic_runtime::pending_timers() const {
  auto& self = const_cast<deterministic_runtime&>(*this);
  return scheduler_of(self).clock().schedule().size();
}

} // namespace podref::testing
