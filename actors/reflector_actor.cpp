// The reflector as a lean actor: the checked dispatch of its messages to
// reflector_state (reflector.hpp), and spawning one.
#include "podref/actors/reflector.hpp"

#include "podref/actors/lean_dispatch.hpp"
#include "podref/actors/reflector_binding.hpp"

#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/message.hpp>
#include <caf/message_view.hpp>
#include <caf/type_erased_tuple.hpp>

namespace podref {

// -- the actor ----------------------------------------------------------------

namespace {

/// The reflector's own timers: only the reflector sends them, to itself, so
/// they are not part of reflector_actor.
using reflector_timers = lean_messages<
  caf::reacts_to<retry_atom, std::uint64_t>,
  caf::reacts_to<sync_to_atom, std::uint64_t>>;

/// The pool's park and reuse (reflector_pool.hpp), sent through caf::actor.
using reflector_pool_messages = lean_messages<
  caf::reacts_to<r_park_atom>,
  caf::reacts_to<r_reuse_atom, reflector_activation>>;

/// The reflector as a lean actor: its state plus the dispatch of the
/// reflector_actor interface, its timers and the pool's messages, matched
/// in place instead of through a heap-allocated CAF behavior.
class reflector_impl final : public lean_actor {
public:
  reflector_impl(caf::actor_config& cfg, reflector_config rc)
    : lean_actor(cfg) {
    state_.init(this, std::move(rc));
  }

  const char* name() const override {
    return reflector_state::name;
  }

protected:
  void on_start() override {
    state_.launch();
  }

  bool handle(caf::type_erased_tuple& xs) override {
    auto& st = state_;
    // The most frequent messages first.
    return lean_dispatch<reflector_actor, reflector_timers,
                         reflector_pool_messages>(
      *this, xs,
      [&](w_event_atom, watch_id id, const watch_event& ev) {
        st.on_event(id, ev);
      },
      // Delegated while not synced: the read is parked with its promise.
      [&](get_obj_atom) { return st.get_obj(); },
      [&](inspect_atom, ref_map& refs) -> caf::result<object_status> {
        return st.inspect(std::move(refs));
      },
      [&](retry_atom, std::uint64_t gen) { st.on_retry(gen); },
      [&](sync_to_atom, std::uint64_t read_id) {
        st.on_sync_timeout(read_id);
      },
      [&](r_reuse_atom, reflector_activation& x) {
        st.activate(std::move(x), true);
      },
      [&](r_park_atom) { st.park(); },
      [&](r_stop_atom) { st.r_stop(); },
      [&](recheck_atom, bool live) { st.recheck(live); },
      [&](notify_atom, subscription_id id) { st.on_subscribed(id); },
      [&](idle_atom, caf::timespan max_idle) { st.idle_chk(max_idle); },
      [&](immut_atom) { st.immut_read(); },
      [&](new_src_atom, const object_source_actor& src) {
        st.on_new_source(src);
      },
      [&](w_end_atom, watch_id id, const caf::error& err) {
        st.on_watch_end(id, err);
      });
  }

  void on_exit() override {
    state_.teardown();
  }

private:
  reflector_state state_;
};

} // namespace

reflector_actor spawn_reflector_actor(caf::actor_system& sys,
                                      reflector_config cfg,
                                      caf::execution_unit* host, bool lazy) {
  auto hdl = lean_actor::spawn<reflector_impl>(sys, host, lazy,
                                               std::move(cfg));
  return caf::actor_cast<reflector_actor>(std::move(hdl));
}

} // namespace podref
