// The baseline reflector actor: list, then watch from the list's version;
// re-watch when a watch closes, re-list when its version expired, retry
// failed calls after upstream's initial backoff.
#include "bench/baseline/reflector.hpp"

#include <chrono>
#include <string>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/spawn_options.hpp>
#include <caf/stateful_actor.hpp>

#include "podref/messages/actor_types.hpp"

namespace podref::bench::baseline {

namespace {

using relist_atom = caf::atom_constant<caf::atom("b_relist")>;
using start_atom = caf::atom_constant<caf::atom("b_start")>;

constexpr auto retry_delay = std::chrono::milliseconds(800);

struct reflector_state {
  caf::actor server;
  std::string obj_ns;
  std::string obj_name;
  std::shared_ptr<cache_store> store;
  std::string last_rv;
  watch_id current = 0;

  static constexpr const char* name = "podref.bench.reflector";
};

using reflector_self = caf::stateful_actor<reflector_state>*;

void list_and_watch(reflector_self self);

void watch(reflector_self self) {
  auto& st = self->state;
  auto watcher = caf::actor_cast<watcher_actor>(self);
  self
    ->request(st.server, caf::infinite, watch_atom::value, resource::secrets,
              st.obj_ns, st.obj_name, st.last_rv, watcher)
    .then([self](watch_id id) { self->state.current = id; },
          [self](caf::error&) {
            self->delayed_send(self, retry_delay, relist_atom::value);
          });
}

void list_and_watch(reflector_self self) {
  auto& st = self->state;
  self
    ->request(st.server, caf::infinite, list_atom::value, resource::secrets,
              st.obj_ns, st.obj_name, std::string{})
    .then(
      [self](list_result& res) {
        self->state.store->replace(res.items);
        self->state.last_rv = res.resource_version;
        watch(self);
      },
      [self](caf::error&) {
        self->delayed_send(self, retry_delay, relist_atom::value);
      });
}

caf::behavior reflector(reflector_self self, caf::actor server,
                        std::string ns, std::string name,
                        std::shared_ptr<cache_store> store, live_counter live,
                        std::shared_ptr<std::atomic<bool>> stop_ch) {
  self->attach_functor([live] { live->fetch_sub(1); });
  if (stop_ch->load()) {
    self->quit();
    return {};
  }
  auto& st = self->state;
  st.server = std::move(server);
  st.obj_ns = std::move(ns);
  st.obj_name = std::move(name);
  st.store = std::move(store);
  list_and_watch(self);
  return {
    [self](w_event_atom, watch_id id, watch_event& ev) {
      if (id != self->state.current)
        return;
      self->state.store->apply(ev);
      self->state.last_rv = std::to_string(ev.resource_version);
    },
    [self](w_end_atom, watch_id id, caf::error& err) {
      if (id != self->state.current)
        return;
      self->state.current = 0;
      if (!err)
        watch(self);
      else
        list_and_watch(self);
    },
    [self](relist_atom) { list_and_watch(self); },
    [](start_atom) {
      // nop: it only made the actor run (and initialise) for the first time
    },
  };
}

} // namespace

reflector_handle start_reflector(caf::actor_system& sys,
                                 const caf::actor& server,
                                 const std::string& ns,
                                 const std::string& name,
                                 std::shared_ptr<cache_store> store,
                                 live_counter live) {
  live->fetch_add(1);
  auto stop_ch = std::make_shared<std::atomic<bool>>(false);
  // Lazily initialised and then scheduled, as a goroutine is: a stop that
  // comes before the actor first runs finds it before its first list.
  auto hdl = sys.spawn<caf::lazy_init>(reflector, server, ns, name,
                                       std::move(store), std::move(live),
                                       stop_ch);
  caf::anon_send(hdl, start_atom::value);
  return {std::move(hdl), std::move(stop_ch)};
}

void stop_reflector(const reflector_handle& reflector) {
  reflector.stop_ch->store(true);
  caf::anon_send_exit(reflector.actor, caf::exit_reason::user_shutdown);
}

} // namespace podref::bench::baseline
