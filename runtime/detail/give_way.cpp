#include "podref/runtime/detail/give_way.hpp"

#include <sched.h>

#include <caf/actor_system.hpp>
#include <caf/scheduler/coordinator.hpp>

#include "podref/runtime/detail/sharing_policy.hpp"

namespace podref::detail {

const pending_jobs* pending_jobs_of(caf::actor_system& sys) noexcept {
  using coordinator = caf::scheduler::coordinator<sharing_policy>;
  auto* ours = dynamic_cast<coordinator*>(&sys.scheduler());
  return ours == nullptr ? nullptr : &ours->data().pending;
}

void yield_cpu() noexcept {
  sched_yield();
}

} // namespace podref::detail
