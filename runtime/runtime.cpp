#include "podref/runtime/runtime.hpp"

#include <chrono>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <caf/thread_hook.hpp>

#include "podref/actors/command_inbox.hpp"
#include "podref/runtime/detail/sharing_policy.hpp"

namespace podref {

namespace {

/// Marks the scheduler's workers: a back-pressured registration made on one
/// of them must not wait for the manager it may be needed to run.
class worker_marker : public caf::thread_hook {
public:
  void init(caf::actor_system&) override {
    // nop
  }

  void thread_started() override {
    detail::command_inbox::never_wait_on_this_thread();
  }

  void thread_terminates() override {
    // nop
  }
};

} // namespace

namespace detail {

sharing_policy::coordinator_data::coordinator_data(
  caf::scheduler::abstract_coordinator* parent) {
  auto* cfg = dynamic_cast<const sharing_config*>(&parent->system().config());
  if (cfg)
    idle_spin = cfg->idle_spin;
}

void sharing_policy::spin(const coordinator_data& x) noexcept {
  auto until = std::chrono::steady_clock::now() + x.idle_spin;
  while (x.queued.load(std::memory_order_relaxed) == 0
         && std::chrono::steady_clock::now() < until) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

} // namespace detail

struct runtime::owned {
  detail::sharing_config cfg;
  caf::actor_system sys;

  static caf::actor_system_config& prepare(detail::sharing_config& cfg,
                                           const runtime_options& opts) {
    cfg.idle_spin = std::chrono::microseconds{opts.idle_spin_us};
    // "sharing" is podref's own policy (CAF loads a scheduler given as a
    // module instead of the one scheduler.policy names).
    if (opts.policy == "sharing")
      cfg.load<caf::scheduler::coordinator<detail::sharing_policy>>();
    else
      cfg.set("scheduler.policy", caf::atom_from_string(opts.policy));
    cfg.set("scheduler.max-threads", opts.workers);
    cfg.add_thread_hook<worker_marker>();
    return cfg;
  }

  explicit owned(const runtime_options& opts) : sys(prepare(cfg, opts)) {
    // nop
  }
};

runtime::runtime(const runtime_options& opts)
  : owned_(std::make_unique<owned>(opts)), sys_(&owned_->sys) {
  // nop
}

runtime::runtime(caf::actor_system& sys) noexcept : sys_(&sys) {
  // nop
}

runtime::~runtime() = default;

} // namespace podref
