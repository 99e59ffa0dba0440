#include "podref/runtime/api_server.hpp"

#include <optional>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "podref/actors/memory_api_server.hpp"
#include "podref/runtime/runtime.hpp"

namespace podref {

struct api_server::impl {
  caf::actor_system& sys;
  memory_api_server_actor server;

  /// One blocking request; CAF errors map to errc::unavailable.
  template <class T, class... Ts>
  result<T> call(Ts&&... xs) {
    std::optional<result<T>> answer;
    caf::scoped_actor self{sys};
    self->request(server, caf::infinite, std::forward<Ts>(xs)...)
      .receive([&](T& x) { answer.emplace(std::move(x)); },
               [&](caf::error& err) {
                 answer.emplace(from_caf_error(
                   err, {errc::unavailable, "API server unavailable"}));
               });
    return std::move(*answer);
  }
};

api_server::api_server(runtime& rt, std::size_t history_capacity) {
  memory_api_server_config cfg;
  cfg.history_capacity = history_capacity;
  auto& sys = rt.system();
  impl_.reset(new impl{sys, spawn_memory_api_server(sys, cfg)});
}

api_server::~api_server() {
  caf::anon_send_exit(impl_->server, caf::exit_reason::user_shutdown);
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

caf::actor api_server::actor() const {
  return caf::actor_cast<caf::actor>(impl_->server);
}

} // namespace podref
