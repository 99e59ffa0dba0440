// The in-memory API server's fault and test hooks: failures on demand,
// closed watches, expired history, bookmarks and reads that leave no trace
// (memory_api_server.hpp has the protocol).
#include "podref/actors/detail/memory_api_server_ops.hpp"

#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace podref::detail {

void set_fault(memory_api_server_pointer self, source_verb verb,
               std::uint32_t n, const error_info& err) {
  if (n == 0)
    self->state.faults.erase(verb);
  else
    self->state.faults[verb] = memory_api_server_state::fault{n, err};
}

void clear_actions(memory_api_server_pointer self) {
  self->state.actions.clear();
  self->state.action_times.clear();
}

void close_all_watches(memory_api_server_pointer self) {
  auto& st = self->state;
  for (auto id : st.sorted_watch_ids())
    self->send(st.watches.at(id).watcher, w_end_atom::value, id,
               caf::error{});
  for (auto& [addr, entry] : st.watchers)
    self->demonitor(addr);
  st.watches.clear();
  st.watches_by_key.clear();
  st.empty_watch_keys = 0;
  st.watchers.clear();
}

void expire_history(memory_api_server_pointer self) {
  auto& st = self->state;
  st.history.clear();
  st.compacted = st.store->version;
}

void send_bookmarks(memory_api_server_pointer self) {
  auto& st = self->state;
  for (auto id : st.sorted_watch_ids())
    if (auto& w = st.watches.at(id); !w.closing)
      send_event(self, id, w,
                 watch_event{watch_event_type::bookmark, api_object{},
                             st.store->version});
  end_closing(self);
}

void mark_watch(memory_api_server_pointer self, watch_id id, bool always) {
  auto& st = self->state;
  auto i = st.watches.find(id);
  if (i == st.watches.end() || i->second.closing)
    return;
  if (!always && st.store->version <= i->second.after)
    return;
  send_event(self, id, i->second,
             watch_event{watch_event_type::bookmark, api_object{},
                         st.store->version});
  end_closing(self);
}

caf::result<api_object> peek(memory_api_server_pointer self, resource res,
                             const std::string& ns, const std::string& name) {
  auto& objects = self->state.store->objects;
  auto i = objects.find(key_of(res, ns, name));
  if (i == objects.end())
    return make_caf_error(api_not_found_error(res, name));
  return i->second;
}

} // namespace podref::detail
