// The in-memory API server: reads, and the behavior that joins them with
// the watches (memory_api_watches.cpp), the writes (memory_api_writes.cpp)
// and the fault and test hooks (memory_api_hooks.cpp).
#include "podref/actors/memory_api_server.hpp"
#include "podref/actors/detail/memory_api_server_ops.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/atom.hpp>
#include <caf/message.hpp>
#include <caf/message_view.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>
#include <caf/type_erased_tuple.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace podref {

namespace {

using detail::drop_watch;
using detail::drop_watches_of;
using detail::end_closing;
using detail::key_of;
using detail::podref_error;
using detail::send_event;
using state_type = memory_api_server_state;
using object_key = state_type::object_key;
using server_pointer = detail::memory_api_server_pointer;
/// Releases held list `id`. The server sends it to itself through the actor
/// clock; it is not part of the typed interface, so the default handler
/// takes it.
using release_atom = caf::atom_constant<caf::atom("hold_end")>;

} // namespace

namespace detail {

caf::error record(server_pointer self, source_verb verb, resource res,
                  const std::string& ns, const std::string& name,
                  const std::string& rv) {
  auto& st = self->state;
  if (auto cap = st.action_log_capacity; cap != 0 && st.actions.size() >= cap) {
    auto half = static_cast<std::ptrdiff_t>(cap / 2);
    st.actions.erase(st.actions.begin(), st.actions.begin() + half);
    st.action_times.erase(st.action_times.begin(),
                          st.action_times.begin() + half);
  }
  st.action_counts.add(verb);
  st.actions.push_back(source_action{verb, res, ns, name, rv});
  st.action_times.push_back(self->clock().now().time_since_epoch());
  auto i = st.faults.find(verb);
  if (i == st.faults.end())
    return {};
  auto err = make_caf_error(i->second.err);
  if (--i->second.remaining == 0)
    st.faults.erase(i);
  return err;
}

} // namespace detail

namespace {

using detail::record;

/// The list's answer now: one object's, or with no name the namespace's
/// (list_ns).
list_result list_now(const state_type& st, resource res, const std::string& ns,
                     const std::string& name) {
  if (name.empty())
    return detail::namespace_now(st, res, ns);
  list_result result;
  auto i = st.store->objects.find(key_of(res, ns, name));
  if (i != st.store->objects.end())
    result.items.push_back(i->second);
  result.resource_version = std::to_string(st.store->version);
  return result;
}

void release_list(server_pointer self, std::uint64_t id) {
  auto& st = self->state;
  auto i = st.held.find(id);
  if (i == st.held.end())
    return;
  auto held = std::move(i->second);
  st.held.erase(i);
  if (held.failure)
    held.promise.deliver(std::move(held.failure));
  else
    held.promise.deliver(list_now(st, held.res, held.ns, held.name));
}

/// The state of a new incarnation over `cfg`'s store (or a new one), its
/// down handler (a watcher's end drops its watches) and the held lists'
/// release.
void init_server(server_pointer self, memory_api_server_config cfg) {
  auto& st = self->state;
  st.history_capacity = cfg.history_capacity;
  st.action_log_capacity = cfg.action_log_capacity;
  st.store = cfg.store ? std::move(cfg.store)
                       : std::make_shared<memory_api_server_store>();
  // A new incarnation has no history: every older version is compacted.
  st.compacted = st.store->version;
  self->set_down_handler(
    [self](caf::down_msg& dm) { drop_watches_of(self, dm.source); });
  self->set_default_handler(
    [self](caf::scheduled_actor*,
           caf::message_view& msg) -> caf::result<caf::message> {
      auto& xs = msg.content();
      if (xs.match_elements<release_atom, std::uint64_t>()) {
        release_list(self, xs.get_as<std::uint64_t>(1));
        return caf::message{};
      }
      return caf::sec::unexpected_message;
    });
}

caf::result<api_object> get_object(server_pointer self, resource res,
                                   const std::string& ns,
                                   const std::string& name,
                                   const std::string& rv) {
  // Memory is always current: "" and "0" read the same, only the action
  // log tells them apart.
  auto& st = self->state;
  if (auto err = record(self, source_verb::get, res, ns, name, rv))
    return err;
  auto i = st.store->objects.find(key_of(res, ns, name));
  if (i == st.store->objects.end())
    return make_caf_error(api_not_found_error(res, name));
  return i->second;
}

caf::result<list_result> list_objects(server_pointer self, resource res,
                                      const std::string& ns,
                                      const std::string& name,
                                      const std::string& rv) {
  // The requested resourceVersion does not matter: memory is current.
  auto err = record(self, source_verb::list, res, ns, name, rv);
  return detail::list_or_hold(self, res, ns, name, std::move(err));
}

} // namespace

caf::result<list_result>
detail::list_or_hold(server_pointer self, resource res, const std::string& ns,
                     const std::string& name, caf::error failure) {
  auto& st = self->state;
  if (st.hold <= caf::timespan{0}) {
    if (failure)
      return failure;
    return list_now(st, res, ns, name);
  }
  auto id = st.next_hold_id++;
  auto& held = st.held[id];
  held.promise = self->make_response_promise<list_result>();
  held.res = res;
  held.ns = ns;
  held.name = name;
  held.failure = std::move(failure);
  if (st.hold != caf::timespan::max())
    caf::delayed_anon_send(caf::actor_cast<caf::actor>(self), st.hold,
                           release_atom::value, id);
  return held.promise;
}

namespace {

caf::result<watch_id> watch_object(server_pointer self, resource res,
                                   const std::string& ns,
                                   const std::string& name,
                                   const std::string& from,
                                   const watcher_actor& watcher) {
  if (auto err = record(self, source_verb::watch, res, ns, name))
    return err;
  return detail::start_watch(self, key_of(res, ns, name), from, watcher);
}

} // namespace

std::size_t memory_api_server_state::object_key_hash::operator()(
  const object_key& x) const {
  std::hash<std::string> h;
  auto seed = h(std::get<1>(x));
  seed ^= h(std::get<2>(x)) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  return seed ^ static_cast<std::size_t>(std::get<0>(x));
}

std::vector<watch_id> memory_api_server_state::sorted_watch_ids() const {
  std::vector<watch_id> ids;
  ids.reserve(watches.size());
  for (const auto& kvp : watches)
    ids.push_back(kvp.first);
  std::sort(ids.begin(), ids.end());
  return ids;
}

memory_api_server_state::~memory_api_server_state() {
  // The server is exiting: tell everyone still waiting, since nobody else
  // will. Swallow failures, there is nothing left to report them to.
  try {
    auto err = make_caf_error(
      error_info{errc::shut_down, "the API server has shut down"});
    for (auto& [id, h] : held)
      if (h.promise.pending())
        h.promise.deliver(err);
    for (auto id : sorted_watch_ids())
      caf::anon_send(watches.at(id).watcher, w_end_atom::value, id, err);
  } catch (...) {
    // nop
  }
}

memory_api_server_actor::behavior_type memory_api_server(
  memory_api_server_actor::stateful_pointer<memory_api_server_state> self,
  memory_api_server_config cfg) {
  init_server(self, std::move(cfg));
  return {
    // -- object source ------------------------------------------------------
    [self](caf::get_atom, resource res, const std::string& ns,
           const std::string& name, const std::string& rv) {
      return get_object(self, res, ns, name, rv);
    },
    [self](list_atom, resource res, const std::string& ns,
           const std::string& name, const std::string& rv) {
      return list_objects(self, res, ns, name, rv);
    },
    [self](watch_atom, resource res, const std::string& ns,
           const std::string& name, const std::string& from,
           const watcher_actor& watcher) {
      return watch_object(self, res, ns, name, from, watcher);
    },
    [self](cancel_atom, watch_id id) {
      auto i = self->state.watches.find(id);
      if (i != self->state.watches.end())
        drop_watch(self, i);
    },
    // -- writes (memory_api_writes.cpp) -------------------------------------
    [self](create_atom, const api_object& obj) {
      return detail::create_object(self, obj);
    },
    [self](caf::update_atom, const api_object& obj) {
      return detail::update_object(self, obj);
    },
    [self](apply_atom, const api_object& obj) {
      return detail::apply_object(self, obj);
    },
    [self](caf::delete_atom, resource res, const std::string& ns,
           const std::string& name) {
      return detail::delete_object(self, res, ns, name);
    },
    // -- test hooks (memory_api_hooks.cpp) -----------------------------------
    [self](actions_atom) { return self->state.actions; },
    [self](clear_atom) { detail::clear_actions(self); },
    [self](act_counts_atom) { return self->state.action_counts; },
    [self](fail_atom, source_verb verb, std::uint32_t n,
           const error_info& err) { detail::set_fault(self, verb, n, err); },
    [self](hold_atom, caf::timespan d) { self->state.hold = d; },
    [self](unhold_atom) {
      self->state.hold = caf::timespan{0};
      while (!self->state.held.empty())
        release_list(self, self->state.held.begin()->first);
    },
    [self](close_atom) { detail::close_all_watches(self); },
    [self](expire_atom) { detail::expire_history(self); },
    [self](bookmark_atom) { detail::send_bookmarks(self); },
    [self](watches_atom) { return self->state.watches.size(); },
    [self](obj_watches_atom, resource res, const std::string& ns,
           const std::string& name) {
      auto& by_key = self->state.watches_by_key;
      auto i = by_key.find(key_of(res, ns, name));
      return i == by_key.end() ? std::size_t{0} : i->second.size();
    },
    [self](close_k_atom, std::uint32_t k) { self->state.close_every = k; },
    [self](times_atom) { return self->state.action_times; },
    [self](peek_atom, resource res, const std::string& ns,
           const std::string& name) {
      return detail::peek(self, res, ns, name);
    },
    // -- collections and preconditions (memory_api_collections.cpp) ----------
    [self](list_ns_atom, resource res, const std::string& ns,
           const std::string& rv) {
      return detail::list_namespace(self, res, ns, rv);
    },
    [self](watch_ns_atom, resource res, const std::string& ns,
           const std::string& from, const watcher_actor& watcher) {
      return detail::watch_namespace(self, res, ns, from, watcher);
    },
    [self](replace_atom, const api_object& obj) {
      return detail::replace_object(self, obj);
    },
    [self](list_at_atom, resource res, const std::string& ns,
           const std::string& name, const std::string& rv, bool exact) {
      return detail::list_at(self, res, ns, name, rv, exact);
    },
    [self](w_mark_atom, watch_id id, bool always) {
      detail::mark_watch(self, id, always);
    },
    [self](forbid_ns_atom, bool on) { self->state.forbid_namespaces = on; },
  };
}

memory_api_server_actor spawn_memory_api_server(caf::actor_system& sys,
                                                memory_api_server_config cfg) {
  return sys.spawn(memory_api_server, cfg);
}

result<std::size_t> load_objects(caf::actor_system& sys,
                                 const memory_api_server_actor& server,
                                 const std::vector<api_object>& objects) {
  if (!server)
    return error_info{errc::invalid_argument, "no API server to load into"};
  caf::scoped_actor self{sys};
  std::size_t stored = 0;
  std::optional<error_info> failure;
  for (const auto& obj : objects) {
    self->request(server, caf::infinite, apply_atom::value, obj)
      .receive([&](const api_object&) { ++stored; },
               [&](caf::error& err) {
                 failure = from_caf_error(
                   err, error_info{errc::unavailable,
                                   "the API server failed: "
                                     + caf::to_string(err)});
               });
    if (failure)
      return std::move(*failure);
  }
  return stored;
}

} // namespace podref
