#include "podref/runtime/api_server.hpp"

#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/make_message.hpp>
#include <caf/message_id.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>

#include "podref/actors/memory_api_server.hpp"
#include "podref/runtime/detail/drive.hpp"
#include "podref/runtime/runtime.hpp"

namespace podref {

/// Where the current server actor is. Shared with the getters handed out by
/// current_actor(), so it outlives the facade.
struct api_server::holder {
  mutable std::mutex mtx;
  memory_api_server_actor current;

  memory_api_server_actor get() const {
    std::lock_guard<std::mutex> guard{mtx};
    return current;
  }

  void set(memory_api_server_actor x) {
    std::lock_guard<std::mutex> guard{mtx};
    current = std::move(x);
  }
};

struct api_server::impl {
  explicit impl(caf::actor_system& sys) : sys(sys) {
    // nop
  }

  caf::actor_system& sys;
  /// Shared by every incarnation: the same store.
  memory_api_server_config cfg;
  std::shared_ptr<holder> server = std::make_shared<holder>();
  /// Serialises restarts.
  std::mutex restart_mtx;

  /// One blocking request; CAF errors map to errc::unavailable.
  template <class T, class... Ts>
  result<T> call(Ts&&... xs) {
    caf::scoped_actor self{sys};
    return ask<T>(self, std::forward<Ts>(xs)...);
  }

  /// Sends a hook and returns once the server applied it: the request that
  /// follows from the same sender is answered after it.
  template <class... Ts>
  void hook(Ts&&... xs) {
    caf::scoped_actor self{sys};
    auto dest = server->get();
    self->send(dest, std::forward<Ts>(xs)...);
    ask<source_action_counts>(self, act_counts_atom::value);
  }

  template <class T, class... Ts>
  result<T> ask(caf::scoped_actor& self, Ts&&... xs) {
    auto reply = self->request(server->get(), caf::infinite,
                               std::forward<Ts>(xs)...);
    // The in-memory server answers at once: on the deterministic scheduler
    // only a lost actor lets this much virtual time pass.
    if (!detail::drive_until(
          sys, [&] { return !self->mailbox().empty(); },
          std::chrono::seconds(60)))
      return error_info{errc::unavailable, "API server unavailable"};
    std::optional<result<T>> answer;
    reply.receive([&](T& x) { answer.emplace(std::move(x)); },
                  [&](caf::error& err) {
                    answer.emplace(from_caf_error(
                      err, {errc::unavailable, "API server unavailable"}));
                  });
    return std::move(*answer);
  }
};

api_server::api_server(runtime& rt, std::size_t history_capacity) {
  auto& sys = rt.system();
  impl_ = std::make_unique<impl>(sys);
  impl_->cfg.history_capacity = history_capacity;
  impl_->cfg.store = std::make_shared<memory_api_server_store>();
  impl_->server->set(spawn_memory_api_server(sys, impl_->cfg));
}

api_server::~api_server() {
  auto last = impl_->server->get();
  // Getters handed out see no server from now on.
  impl_->server->set(memory_api_server_actor{});
  caf::anon_send_exit(last, caf::exit_reason::user_shutdown);
}

result<bool> api_server::restart() {
  std::lock_guard<std::mutex> guard{impl_->restart_mtx};
  auto old = impl_->server->get();
  // The new actor must not touch the store before the old one is done with
  // it, so wait for the old one's termination (its current message at most).
  auto down = std::make_shared<std::promise<void>>();
  auto gone = down->get_future();
  old->attach_functor([down](const caf::error&) { down->set_value(); });
  // An error reason (anon_send_exit takes exit_reason codes only): what
  // monitors of the server see, as if it had crashed.
  auto reason = make_caf_error(
    error_info{errc::unavailable, "the API server restarted"});
  old->enqueue(nullptr, caf::make_message_id(),
               caf::make_message(caf::exit_msg{old.address(), reason}),
               nullptr);
  auto is_gone = [&] {
    return gone.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  };
  if (!detail::drive_until(impl_->sys, is_gone, std::chrono::seconds(10))
      || gone.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
    return error_info{errc::unavailable,
                      "the API server did not stop within 10 s"};
  impl_->server->set(spawn_memory_api_server(impl_->sys, impl_->cfg));
  return true;
}

result<api_object> api_server::create(const api_object& x) {
  return impl_->call<api_object>(create_atom::value, x);
}

result<api_object> api_server::update(const api_object& x) {
  return impl_->call<api_object>(caf::update_atom::value, x);
}

result<api_object> api_server::apply(const api_object& x) {
  return impl_->call<api_object>(apply_atom::value, x);
}

result<bool> api_server::remove(resource res, const std::string& ns,
                                const std::string& name) {
  auto r = impl_->call<caf::ok_atom>(caf::delete_atom::value, res, ns, name);
  if (!r)
    return r.error();
  return true;
}

result<api_object> api_server::get(resource res, const std::string& ns,
                                   const std::string& name) {
  return impl_->call<api_object>(caf::get_atom::value, res, ns, name,
                                 std::string{});
}

std::size_t api_server::load(const manifest_result& manifests) {
  std::size_t stored = 0;
  for (auto& obj : manifests.objects) {
    api_object x;
    if (auto* s = std::get_if<secret_ptr>(&obj.object))
      x = *s;
    else if (auto* c = std::get_if<config_map_ptr>(&obj.object))
      x = *c;
    if (x && apply(x))
      ++stored;
  }
  return stored;
}

void api_server::fail_next(source_verb verb, std::uint32_t n,
                           const error_info& err) {
  impl_->hook(fail_atom::value, verb, n, err);
}

result<source_action_counts> api_server::action_counts() const {
  return impl_->call<source_action_counts>(act_counts_atom::value);
}

result<std::vector<source_action>> api_server::actions() const {
  return impl_->call<std::vector<source_action>>(actions_atom::value);
}

void api_server::clear_actions() {
  impl_->hook(clear_atom::value);
}

void api_server::hold_lists() {
  impl_->hook(hold_atom::value, caf::timespan::max());
}

void api_server::delay_lists(std::chrono::nanoseconds d) {
  impl_->hook(hold_atom::value, caf::timespan{d});
}

void api_server::release_lists() {
  impl_->hook(unhold_atom::value);
}

result<std::size_t> api_server::open_watches() const {
  return impl_->call<std::size_t>(watches_atom::value);
}

result<std::size_t> api_server::open_watches(resource res,
                                             const std::string& ns,
                                             const std::string& name) const {
  return impl_->call<std::size_t>(obj_watches_atom::value, res, ns, name);
}

void api_server::close_watches() {
  impl_->hook(close_atom::value);
}

void api_server::expire_history() {
  impl_->hook(expire_atom::value);
}

caf::actor api_server::actor() const {
  return caf::actor_cast<caf::actor>(impl_->server->get());
}

std::function<caf::actor()> api_server::current_actor() const {
  return [server = impl_->server] {
    return caf::actor_cast<caf::actor>(server->get());
  };
}

} // namespace podref
