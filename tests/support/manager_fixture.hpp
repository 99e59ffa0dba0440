// manager_fixture_base: what the actor-level manager tests share: the
// deterministic system, an in-memory API server, one read side and the
// manager under test, spawned from a config over both.
#pragma once

#include <memory>
#include <utility>

#include <caf/actor_cast.hpp>
#include <catch2/catch.hpp>

#include "podref/actors/manager.hpp"
#include "podref/actors/memory_api_server.hpp"
#include "podref/read_side/read_side.hpp"
#include "support/deterministic_fixture.hpp"

namespace podref::test {

struct manager_fixture_base : deterministic_fixture {
  detail::read_side_ptr rs = std::make_shared<detail::read_side>();
  memory_api_server_actor server;
  manager_actor mgr;

  manager_fixture_base() {
    server = spawn_memory_api_server(sys);
    run();
  }

  ~manager_fixture_base() {
    if (mgr)
      stop(mgr);
    stop(server);
  }

  /// A config of a manager of `r` over `server`, publishing to `rs`; the
  /// test sets what else it needs.
  manager_config config_for(resource r) const {
    manager_config cfg;
    cfg.res = r;
    cfg.source = caf::actor_cast<object_source_actor>(server);
    cfg.read_side = rs;
    return cfg;
  }

  /// Spawns the manager under test and runs until it is idle.
  void spawn_manager(manager_config cfg) {
    mgr = sys.spawn(manager, std::move(cfg));
    run();
  }

  /// Stores `x` in the API server; the stored version.
  api_object create(const api_object& x) {
    auto stored = request<api_object>(server, create_atom::value, x);
    REQUIRE(stored);
    return *stored;
  }
};

} // namespace podref::test
