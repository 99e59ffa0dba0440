// The namespace multiplexer's behavior and its reflectors' side: their
// lists, watches and cancels, served from the cache under its version rules
// (namespace_mux.hpp; the upstream's side is namespace_mux_upstream.cpp; the
// design in docs/multiplexing.md).
#include "podref/actors/namespace_mux.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "podref/actors/detail/namespace_mux_ops.hpp"

namespace podref::detail::mux {

namespace {

caf::error mux_error(errc code, std::string message) {
  return make_caf_error(error_info{code, std::move(message)});
}

void erase_id(std::vector<watch_id>& ids, watch_id id) {
  auto i = std::find(ids.begin(), ids.end(), id);
  if (i != ids.end())
    ids.erase(i);
}

/// The list answer for `name` from the cache.
list_result cached(const state_type& st, const state_type::name_entry& n) {
  list_result res;
  if (n.object)
    res.items.push_back(n.object);
  res.resource_version = std::to_string(st.version);
  return res;
}

void on_cancel(mux_pointer self, watch_id id) {
  auto& st = self->state;
  auto i = st.subs.find(id);
  if (i == st.subs.end())
    return;
  auto n = st.names.find(i->second.name);
  if (n != st.names.end()) {
    erase_id(n->second.subs, id);
    n->second.unwatched = n->second.subs.empty();
    if (n->second.subs.empty() && !n->second.referenced)
      st.names.erase(n);
  }
  st.subs.erase(i);
  recount(self);
  if (st.subs.empty() && st.watches.empty()
      && st.phase == state_type::watch_phase::open) {
    // Nobody watches: neither does the multiplexer, as the per-object
    // watches would all have been closed.
    close_ns_watch(self);
    invalidate(self);
  }
}

caf::result<list_result> on_list(mux_pointer self, const std::string& name,
                                 const std::string& rv) {
  auto& st = self->state;
  if (!parse_rv(rv))
    return mux_error(errc::invalid_argument,
                     "invalid resource version: \"" + rv + "\"");
  state_type::waiting_list x{self->make_response_promise<list_result>(), name,
                             rv};
  auto promise = x.promise;
  auto i = st.names.find(name);
  if (!st.refused && !st.valid && rv == "0" && i != st.names.end()
      && i->second.unwatched) {
    // An immutable recheck while nobody keeps the cache: one object's list
    // from the watch cache, not a namespace list.
    list_object(self, std::move(x.promise), name, rv);
  } else if (st.refused || (!st.valid && !rv.empty())) {
    st.lists.push_back(std::move(x));
    start_ns_list(self);
  } else {
    answer_list(self, x);
  }
  return promise;
}

caf::result<watch_id> on_watch(mux_pointer self, const std::string& name,
                               const std::string& from,
                               const watcher_actor& watcher) {
  auto& st = self->state;
  auto from_rv = parse_rv(from);
  if (!from_rv)
    return mux_error(errc::invalid_argument,
                     "invalid resource version: \"" + from + "\"");
  if (!watcher)
    return mux_error(errc::invalid_argument, "a watch needs a watcher");
  auto promise = self->make_response_promise<watch_id>();
  if (!st.refused && st.valid && st.phase == state_type::watch_phase::open) {
    open_sub(self, promise, name, *from_rv, watcher);
    return promise;
  }
  st.watches.push_back({promise, name, *from_rv, watcher});
  // An invalid cache (the stream broke, or nobody watched: an idle or
  // immutable reflector's list went per object) takes a namespace list
  // first; its answer opens the namespace watch, and the sub-watch gets
  // its name's state if it changed after `from`.
  if (!st.valid)
    start_ns_list(self);
  else
    open_ns_watch(self);
  return promise;
}

} // namespace

std::optional<std::uint64_t> parse_rv(const std::string& text) {
  std::uint64_t result = 0;
  if (text.empty())
    return result;
  auto last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, result);
  if (ec != std::errc{} || ptr != last)
    return std::nullopt;
  return result;
}

void recount(mux_pointer self) {
  auto& st = self->state;
  if (!st.cfg.counters)
    return;
  auto subs = static_cast<std::int64_t>(st.subs.size());
  std::int64_t ns = st.phase == state_type::watch_phase::open ? 1 : 0;
  st.cfg.counters->mux_sub_watches += subs - st.counted_subs;
  st.cfg.counters->mux_ns_watches += ns - st.counted_ns_watches;
  st.counted_subs = subs;
  st.counted_ns_watches = ns;
}

void deliver(mux_pointer self, watch_id id, state_type::sub_watch& w,
             const watch_event& ev) {
  if (ev.resource_version <= w.after)
    return;
  w.after = ev.resource_version;
  self->send(w.watcher, w_event_atom::value, id, ev);
}

void set_state(mux_pointer self, state_type::name_entry& n, api_object obj,
               std::uint64_t version) {
  if (n.known && version <= n.version) {
    ++self->state.stats.duplicate_events;
    return;
  }
  bool was = static_cast<bool>(n.object);
  bool changed = n.object != obj;
  n.known = true;
  n.version = version;
  n.object = std::move(obj);
  if (!changed)
    return;
  watch_event ev;
  ev.resource_version = version;
  if (n.object) {
    ev.type = was ? watch_event_type::modified : watch_event_type::added;
    ev.object = n.object;
  } else {
    ev.type = watch_event_type::deleted;
  }
  for (auto id : n.subs)
    deliver(self, id, self->state.subs.at(id), ev);
}

void answer_list(mux_pointer self, state_type::waiting_list& x) {
  auto& st = self->state;
  auto& n = st.names.try_emplace(x.name).first->second;
  auto rv = parse_rv(x.rv).value_or(0);
  // Until its watch opens here (or for good, if it never does).
  if (n.subs.empty())
    n.unwatched = true;
  if (st.valid && n.known && st.version >= rv && !x.rv.empty()) {
    ++st.stats.cached_lists;
    x.promise.deliver(cached(st, n));
  } else {
    // Live, not covered, or newer than the cache: a quorum read is never
    // older than what the watch stream sent before it.
    list_object(self, std::move(x.promise), x.name, std::string{});
  }
}

void open_sub(mux_pointer self, caf::typed_response_promise<watch_id>& p,
              const std::string& name, std::uint64_t from,
              const watcher_actor& watcher) {
  auto& st = self->state;
  auto id = st.next_sub++;
  auto& w = st.subs[id];
  w.name = name;
  w.watcher = watcher;
  w.after = from;
  auto& n = st.names.try_emplace(name).first->second;
  n.subs.push_back(id);
  n.unwatched = false;
  recount(self);
  // The id first: a reflector drops events of watches it does not know.
  p.deliver(id);
  if (n.known && n.version > from) {
    watch_event ev;
    ev.resource_version = n.version;
    if (n.object) {
      ev.type = watch_event_type::modified;
      ev.object = n.object;
    } else {
      ev.type = watch_event_type::deleted;
    }
    deliver(self, id, w, ev);
  }
}

void end_sub(mux_pointer self, watch_id id, const caf::error& err) {
  auto& st = self->state;
  auto i = st.subs.find(id);
  if (i == st.subs.end())
    return;
  self->send(i->second.watcher, w_end_atom::value, id, err);
  auto n = st.names.find(i->second.name);
  if (n != st.names.end()) {
    erase_id(n->second.subs, id);
    if (n->second.subs.empty() && !n->second.referenced)
      st.names.erase(n);
  }
  st.subs.erase(i);
  recount(self);
}

void end_subs(mux_pointer self, const caf::error& err) {
  auto& st = self->state;
  std::vector<watch_id> ids;
  for (auto& kvp : st.subs)
    ids.push_back(kvp.first);
  std::sort(ids.begin(), ids.end());
  for (auto id : ids)
    end_sub(self, id, err);
}

void fail_watches(mux_pointer self, const caf::error& err) {
  auto waiting = std::move(self->state.watches);
  self->state.watches.clear();
  for (auto& w : waiting)
    w.promise.deliver(err);
}

} // namespace podref::detail::mux

namespace podref {

namespace_mux_state::~namespace_mux_state() {
  if (cfg.counters) {
    cfg.counters->mux_sub_watches -= counted_subs;
    cfg.counters->mux_ns_watches -= counted_ns_watches;
  }
}

namespace_mux_actor::behavior_type namespace_mux(
  namespace_mux_actor::stateful_pointer<namespace_mux_state> self,
  namespace_mux_config cfg) {
  using namespace detail::mux;
  auto& st = self->state;
  st.cfg = std::move(cfg);
  for (auto& name : st.cfg.names)
    st.names.try_emplace(name);
  st.cfg.names.clear();
  return {
    [self](caf::get_atom, resource res, const std::string& ns,
           const std::string& name, const std::string& rv) {
      return self->delegate(self->state.cfg.upstream, caf::get_atom::value,
                            res, ns, name, rv);
    },
    [self](list_atom, resource, const std::string&, const std::string& name,
           const std::string& rv) { return on_list(self, name, rv); },
    [self](watch_atom, resource, const std::string&, const std::string& name,
           const std::string& from, const watcher_actor& watcher) {
      return on_watch(self, name, from, watcher);
    },
    [self](cancel_atom, watch_id id) { on_cancel(self, id); },
    [self](w_event_atom, watch_id id, const watch_event& ev) {
      on_event(self, id, ev);
    },
    [self](w_end_atom, watch_id id, const caf::error& err) {
      on_end(self, id, err);
    },
    [self](mux_track_atom, const std::string& name) {
      self->state.names.try_emplace(name).first->second.referenced = true;
    },
    [self](mux_untrack_atom, const std::string& name) {
      auto& names = self->state.names;
      auto i = names.find(name);
      if (i == names.end())
        return;
      if (i->second.subs.empty())
        names.erase(i);
      else
        i->second.referenced = false;
    },
    [self](new_src_atom, const object_source_actor& src) {
      on_new_upstream(self, src);
    },
    [self](mux_stats_atom) {
      auto res = self->state.stats;
      res.tracked = self->state.names.size();
      res.sub_watches = self->state.subs.size();
      return res;
    },
  };
}

} // namespace podref
