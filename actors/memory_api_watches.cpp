// The in-memory API server's watches: opening one (with its catch-up
// events), the fan-out bookkeeping (by object and by watcher), sending an
// event, and ending or dropping watches (memory_api_server.hpp has the
// protocol).
#include "podref/actors/detail/memory_api_server_ops.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace podref::detail {

namespace {

using state_type = memory_api_server_state;
using object_key = state_type::object_key;
using server_pointer = memory_api_server_pointer;

/// Removes `id` from a short id list, keeping the order.
void erase_id(std::vector<watch_id>& ids, watch_id id) {
  auto i = std::find(ids.begin(), ids.end(), id);
  if (i != ids.end())
    ids.erase(i);
}

/// Parses a watch's resourceVersion: "" is 0, anything else must be an
/// unsigned 64-bit decimal.
std::optional<std::uint64_t> parse_version(const std::string& text) {
  std::uint64_t result = 0;
  if (text.empty())
    return result;
  auto last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, result);
  if (ec != std::errc{} || ptr != last)
    return std::nullopt;
  return result;
}

/// Empty entries of watches_by_key below which no sweep runs.
constexpr std::size_t sweep_floor = 1024;

/// Erases the empty entries of watches_by_key once they are over half of
/// them: amortised O(1) per dropped watch, one pass in node order instead
/// of a hash lookup per cancel.
void sweep_watch_keys(state_type& st) {
  if (st.empty_watch_keys <= sweep_floor
      || st.empty_watch_keys <= st.watches_by_key.size() / 2)
    return;
  for (auto k = st.watches_by_key.begin(); k != st.watches_by_key.end();)
    k = k->second.empty() ? st.watches_by_key.erase(k) : std::next(k);
  st.empty_watch_keys = 0;
}

/// Records that `watcher` opened watch `id`, monitoring it from its first
/// watch on (see watcher_entry for the pruning of its list).
void add_watch_of(server_pointer self, const watcher_actor& watcher,
                  watch_id id) {
  auto& st = self->state;
  auto [w, fresh] = st.watchers.try_emplace(watcher.address());
  auto& entry = w->second;
  if (fresh)
    self->monitor(watcher);
  if (entry.ids.size() >= entry.prune_at) {
    auto& ids = entry.ids;
    entry.pruned_over += ids.size();
    ids.erase(std::remove_if(ids.begin(), ids.end(),
                             [&st](watch_id x) {
                               return st.watches.count(x) == 0;
                             }),
              ids.end());
    entry.prune_at = std::max<std::size_t>(4, 2 * ids.size());
  }
  entry.ids.push_back(id);
}

} // namespace

void send_event(memory_api_server_pointer self, watch_id id,
                memory_api_server_state::watch_entry& w,
                const watch_event& ev) {
  w.after = std::max(w.after, ev.resource_version);
  self->send(w.watcher, w_event_atom::value, id, ev);
  auto& st = self->state;
  if (st.close_every != 0 && ++w.delivered >= st.close_every) {
    w.closing = true;
    st.closing.push_back(id);
  }
}

/// Forgets a watch (its watcher's list keeps the id; see watchers).
void drop_watch(server_pointer self, watch_iterator i) {
  auto& st = self->state;
  auto& ids = i->second.listed->second;
  erase_id(ids, i->first);
  st.watches.erase(i);
  if (ids.empty()) {
    ++st.empty_watch_keys;
    sweep_watch_keys(st);
  }
}

void drop_watches_of(server_pointer self, const caf::actor_addr& watcher) {
  auto& st = self->state;
  auto w = st.watchers.find(watcher);
  if (w == st.watchers.end())
    return;
  auto ids = std::move(w->second.ids);
  st.watchers.erase(w);
  for (auto id : ids)
    if (auto i = st.watches.find(id); i != st.watches.end())
      drop_watch(self, i);
}

caf::result<watch_id> start_watch(server_pointer self, const object_key& key,
                                  const std::string& from,
                                  const watcher_actor& watcher) {
  auto& st = self->state;
  if (!watcher)
    return podref_error(errc::invalid_argument, "a watch needs a watcher");
  auto from_rv = parse_version(from);
  if (!from_rv)
    return podref_error(errc::invalid_argument,
                        "invalid resource version: \"" + from + "\"");
  if (*from_rv != 0 && *from_rv < st.compacted)
    return podref_error(errc::expired,
                        "too old resource version: " + std::to_string(*from_rv)
                          + " (" + std::to_string(st.compacted) + ")");
  return open_watch(self, key, *from_rv, watcher);
}

caf::result<watch_id> open_watch(server_pointer self, const object_key& key,
                                 std::uint64_t from_rv,
                                 const watcher_actor& watcher) {
  auto& st = self->state;
  auto id = st.next_watch_id++;
  auto& w = st.watches[id];
  auto [listed, fresh] = st.watches_by_key.try_emplace(key);
  auto& by_key = *listed;
  if (!fresh && by_key.second.empty())
    --st.empty_watch_keys; // an emptied entry in use again
  w.listed = &by_key;
  w.watcher = watcher;
  w.after = from_rv;
  by_key.second.push_back(id); // ids grow: stays sorted
  add_watch_of(self, watcher, id);
  auto promise = self->make_response_promise<watch_id>();
  promise.deliver(id);
  if (from_rv == 0) {
    // Start now: the current state, as the API server's watch cache does.
    auto& objects = st.store->objects;
    for (auto i = objects.lower_bound(key);
         i != objects.end() && in_scope(key, i->first) && !w.closing; ++i)
      send_event(self, id, w,
                 watch_event{watch_event_type::added, i->second,
                             i->second.resource_version()});
  } else {
    auto first = std::upper_bound(
      st.history.begin(), st.history.end(), from_rv,
      [](std::uint64_t rv, const state_type::history_entry& x) {
        return rv < x.event.resource_version;
      });
    for (auto i = first; i != st.history.end() && !w.closing; ++i)
      if (in_scope(key, i->key))
        send_event(self, id, w, i->event);
  }
  // Live events only from here; covers a from_rv ahead of the server, too.
  // A watch that closes now is re-opened from the last event it sent.
  if (!w.closing)
    w.after = std::max(w.after, st.store->version);
  end_closing(self);
  return promise;
}

void end_closing(memory_api_server_pointer self) {
  auto& st = self->state;
  auto ids = std::move(st.closing);
  st.closing.clear();
  for (auto id : ids) {
    auto i = st.watches.find(id);
    if (i == st.watches.end())
      continue;
    self->send(i->second.watcher, w_end_atom::value, id, caf::error{});
    drop_watch(self, i);
  }
}

} // namespace podref::detail
