// manager_fixture_base: what the actor-level manager tests share: the
// deterministic system, an in-memory API server, one read side and the
// manager under test, spawned from a config over both; and the steps a test
// takes on them, each run until idle so that counts are exact.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_cast.hpp>
#include <catch2/catch.hpp>

#include "podref/actors/manager.hpp"
#include "podref/actors/memory_api_server.hpp"
#include "podref/messages/pod_registration.hpp"
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

  // -- the API server's test hooks ---------------------------------------------

  /// The action log (client-go's fake clientset actions).
  std::vector<source_action> actions() {
    auto xs = request<std::vector<source_action>>(server,
                                                  actions_atom::value);
    REQUIRE(xs);
    return *xs;
  }

  void clear_actions() {
    self->send(server, clear_atom::value);
    run();
  }

  std::size_t server_watches() {
    auto n = request<std::size_t>(server, watches_atom::value);
    REQUIRE(n);
    return *n;
  }

  /// Lists stay unanswered for `d` of virtual time.
  void hold_lists(caf::timespan d) {
    self->send(server, hold_atom::value, d);
    run();
  }

  // -- the manager (of `res`) --------------------------------------------------

  void add_ref(const std::string& ns, const std::string& name,
               const std::string& uid) {
    self->send(mgr, add_ref_atom::value, ns, name, uid);
    run();
  }

  void del_ref(const std::string& ns, const std::string& name,
               const std::string& uid) {
    self->send(mgr, del_ref_atom::value, ns, name, uid);
    run();
  }

  void reg(const pod& p) {
    self->send(mgr, reg_pod_atom::value, make_registration(p, res));
    run();
  }

  void unreg(const pod& p) {
    self->send(mgr, unreg_pod_atom::value, make_registration(p, res));
    run();
  }

  /// Unregisters with no names at all: only the identity counts.
  void unreg_bare(const std::string& ns, const std::string& name,
                  const std::string& uid) {
    self->send(mgr, unreg_pod_atom::value,
               make_registration(ns, name, uid, {}));
    run();
  }

  caf::expected<api_object> get(const std::string& ns,
                                const std::string& name) {
    return request<api_object>(mgr, get_obj_atom::value, ns, name);
  }

  ref_map refs(const std::string& ns, const std::string& name) {
    auto x = request<ref_map>(mgr, refs_atom::value, ns, name);
    REQUIRE(x);
    return *x;
  }

  /// Upstream's refcount of the TTL store: the sum over the referencing uids.
  int refcount(const std::string& ns, const std::string& name) {
    int result = 0;
    for (const auto& kvp : refs(ns, name))
      result += kvp.second;
    return result;
  }

  /// The resource of the manager under test.
  resource res = resource::secrets;
};

} // namespace podref::test
