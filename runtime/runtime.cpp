#include "podref/runtime/runtime.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

namespace podref {

struct runtime::owned {
  caf::actor_system_config cfg;
  caf::actor_system sys;

  static caf::actor_system_config& prepare(caf::actor_system_config& cfg,
                                           const runtime_options& opts) {
    cfg.set("scheduler.policy", caf::atom_from_string(opts.policy));
    cfg.set("scheduler.max-threads", opts.workers);
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
