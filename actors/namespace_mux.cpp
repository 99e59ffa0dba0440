// The namespace multiplexer's behavior (namespace_mux.hpp; the design in
// docs/multiplexing.md).
#include "podref/actors/namespace_mux.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace podref {

namespace {

using mux_pointer
  = namespace_mux_actor::stateful_pointer<namespace_mux_state>;
using state_type = namespace_mux_state;

caf::error mux_error(errc code, std::string message) {
  return make_caf_error(error_info{code, std::move(message)});
}

/// A reflector's resourceVersion: "" is none (a live read), else a decimal.
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

/// Whether `err` refuses the namespace-wide calls: a 403, or a source that
/// does not speak them.
bool refusal(const caf::error& err) {
  if (err == caf::sec::unexpected_message)
    return true;
  auto info = from_caf_error(err, error_info{errc::unavailable, {}});
  return info.code == errc::forbidden;
}

void erase_id(std::vector<watch_id>& ids, watch_id id) {
  auto i = std::find(ids.begin(), ids.end(), id);
  if (i != ids.end())
    ids.erase(i);
}

/// Sends `ev` to sub-watch `id` if it is newer than what that watch saw.
void deliver(mux_pointer self, watch_id id, state_type::sub_watch& w,
             const watch_event& ev) {
  if (ev.resource_version <= w.after)
    return;
  w.after = ev.resource_version;
  self->send(w.watcher, w_event_atom::value, id, ev);
}

/// Takes `obj` (empty: absent) as `name`'s state at `version` if that is
/// newer than what is known, and tells the name's sub-watches.
void set_state(mux_pointer self, state_type::name_entry& n, api_object obj,
               std::uint64_t version) {
  if (n.known && version <= n.version) {
    ++self->state.stats.duplicate_events;
    return;
  }
  bool was = n.known && n.object;
  bool changed = !n.known || n.object != obj;
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

/// The list answer for `name` from the cache.
list_result cached(const state_type& st, const state_type::name_entry& n) {
  list_result res;
  if (n.object)
    res.items.push_back(n.object);
  res.resource_version = std::to_string(st.version);
  return res;
}

void refuse(mux_pointer self) {
  auto& st = self->state;
  if (st.refused)
    return;
  st.refused = true;
  if (auto mgr = caf::actor_cast<manager_actor>(st.cfg.manager))
    caf::anon_send(mgr, mux_forbid_atom::value, st.cfg.ns,
                   caf::actor_cast<caf::actor_addr>(self));
}

/// A per-object list at the upstream for `name` (live reads, names the
/// namespace list did not cover); its answer updates the cache.
void list_object(mux_pointer self,
                 caf::typed_response_promise<list_result> promise,
                 const std::string& name, std::string rv) {
  auto& st = self->state;
  ++st.stats.object_lists;
  auto gen = st.gen;
  self
    ->request(st.cfg.upstream, caf::infinite, list_atom::value, st.cfg.res,
              st.cfg.ns, name, std::move(rv))
    .then(
      [self, promise, name, gen](list_result& res) mutable {
        auto& st = self->state;
        if (gen == st.gen) {
          auto i = st.names.find(name);
          if (i != st.names.end())
            set_state(self, i->second,
                      res.items.empty() ? api_object{} : res.items.front(),
                      parse_resource_version(res.resource_version));
        }
        promise.deliver(std::move(res));
      },
      [promise](caf::error& err) mutable { promise.deliver(std::move(err)); });
}

/// Answers one list from the cache, or passes it on as a per-object list.
void answer_list(mux_pointer self, state_type::waiting_list& x) {
  auto& st = self->state;
  auto& n = st.names.try_emplace(x.name).first->second;
  auto rv = parse_rv(x.rv).value_or(0);
  if (st.valid && n.known && st.version >= rv && !x.rv.empty()) {
    ++st.stats.cached_lists;
    x.promise.deliver(cached(st, n));
  } else {
    // Live, not covered, or newer than the cache: a quorum read is never
    // older than what the watch stream sent before it.
    list_object(self, std::move(x.promise), x.name, std::string{});
  }
}

void start_ns_list(mux_pointer self);

/// Drops the cache: the stream broke, or nobody watches any more.
void invalidate(mux_pointer self) {
  auto& st = self->state;
  st.valid = false;
  ++st.gen;
  st.listing = false;
  for (auto& [name, n] : st.names) {
    n.known = false;
    n.object = api_object{};
    n.version = 0;
  }
}

/// Ends every sub-watch with `err` (the reflectors react as to their own
/// watch's end).
void end_subs(mux_pointer self, const caf::error& err) {
  auto& st = self->state;
  std::vector<watch_id> ids;
  for (auto& kvp : st.subs)
    ids.push_back(kvp.first);
  std::sort(ids.begin(), ids.end());
  for (auto id : ids)
    self->send(st.subs.at(id).watcher, w_end_atom::value, id, err);
  st.subs.clear();
  for (auto i = st.names.begin(); i != st.names.end();) {
    i->second.subs.clear();
    if (!i->second.referenced)
      i = st.names.erase(i);
    else
      ++i;
  }
}

void fail_watches(mux_pointer self, const caf::error& err) {
  auto waiting = std::move(self->state.watches);
  self->state.watches.clear();
  for (auto& w : waiting)
    w.promise.deliver(err);
}

void close_ns_watch(mux_pointer self) {
  auto& st = self->state;
  if (st.ns_watch)
    caf::anon_send(st.cfg.upstream, cancel_atom::value, *st.ns_watch);
  st.ns_watch.reset();
  st.phase = state_type::watch_phase::closed;
}

void start_ns_list(mux_pointer self) {
  auto& st = self->state;
  if (st.listing || st.refused)
    return;
  st.listing = true;
  ++st.stats.ns_lists;
  // The newest version any waiting list asks for ("" asks for live).
  std::string rv = "0";
  std::uint64_t newest = 0;
  for (auto& x : st.lists) {
    if (x.rv.empty()) {
      rv.clear();
      break;
    }
    auto v = parse_rv(x.rv).value_or(0);
    if (v > newest) {
      newest = v;
      rv = x.rv;
    }
  }
  auto gen = st.gen;
  self
    ->request(st.cfg.upstream, caf::infinite, list_ns_atom::value, st.cfg.res,
              st.cfg.ns, std::move(rv))
    .then(
      [self, gen](list_result& res) {
        auto& st = self->state;
        if (gen != st.gen)
          return;
        st.listing = false;
        auto version = parse_resource_version(res.resource_version);
        std::unordered_map<std::string, api_object> found;
        for (auto& obj : res.items)
          if (obj) {
            if (st.names.count(obj.meta().name) == 0)
              ++st.stats.foreign_events;
            else
              found.emplace(obj.meta().name, std::move(obj));
          }
        st.valid = true;
        st.version = std::max(st.version, version);
        for (auto& [name, n] : st.names) {
          auto i = found.find(name);
          set_state(self, n, i == found.end() ? api_object{} : i->second,
                    version);
        }
        auto waiting = std::move(st.lists);
        st.lists.clear();
        for (auto& x : waiting)
          answer_list(self, x);
      },
      [self, gen](caf::error& err) {
        auto& st = self->state;
        if (gen != st.gen)
          return;
        st.listing = false;
        if (refusal(err)) {
          refuse(self);
          return;
        }
        auto waiting = std::move(st.lists);
        st.lists.clear();
        for (auto& x : waiting)
          x.promise.deliver(err);
      });
}

/// Opens a sub-watch and sends what changed after its start.
watch_id open_sub(mux_pointer self, caf::typed_response_promise<watch_id>& p,
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
  return id;
}

void open_ns_watch(mux_pointer self) {
  auto& st = self->state;
  if (st.phase != state_type::watch_phase::closed || st.refused)
    return;
  st.phase = state_type::watch_phase::opening;
  ++st.stats.ns_watches;
  auto gen = st.gen;
  self
    ->request(st.cfg.upstream, caf::infinite, watch_ns_atom::value,
              st.cfg.res, st.cfg.ns, std::to_string(st.version),
              caf::actor_cast<watcher_actor>(self))
    .then(
      [self, gen](watch_id id) {
        auto& st = self->state;
        if (gen != st.gen || st.phase != state_type::watch_phase::opening) {
          caf::anon_send(st.cfg.upstream, cancel_atom::value, id);
          return;
        }
        st.ns_watch = id;
        st.phase = state_type::watch_phase::open;
        auto waiting = std::move(st.watches);
        st.watches.clear();
        for (auto& w : waiting)
          open_sub(self, w.promise, w.name, w.from, w.watcher);
        if (st.subs.empty())
          close_ns_watch(self);
      },
      [self, gen](caf::error& err) {
        auto& st = self->state;
        if (gen != st.gen)
          return;
        st.phase = state_type::watch_phase::closed;
        if (refusal(err)) {
          refuse(self);
          return;
        }
        auto info = from_caf_error(err, error_info{errc::unavailable, {}});
        if (info.code == errc::expired) {
          end_subs(self, err);
          invalidate(self);
        }
        fail_watches(self, err);
      });
}

void on_event(mux_pointer self, watch_id id, const watch_event& ev) {
  auto& st = self->state;
  if (!st.valid || !st.ns_watch || *st.ns_watch != id
      || caf::actor_cast<caf::actor_addr>(self->current_sender())
           != st.cfg.upstream.address())
    return;
  st.version = std::max(st.version, ev.resource_version);
  if (ev.type == watch_event_type::bookmark) {
    for (auto& [sid, w] : st.subs)
      deliver(self, sid, w, ev);
    return;
  }
  if (!ev.object)
    return;
  auto i = st.names.find(ev.object.meta().name);
  if (i == st.names.end()) {
    ++st.stats.foreign_events;
    return;
  }
  set_state(self, i->second,
            ev.type == watch_event_type::deleted ? api_object{} : ev.object,
            ev.resource_version);
}

void on_end(mux_pointer self, watch_id id, const caf::error& err) {
  auto& st = self->state;
  if (!st.ns_watch || *st.ns_watch != id)
    return;
  st.ns_watch.reset();
  st.phase = state_type::watch_phase::closed;
  if (!err) {
    // Closed normally: resume from what was seen; the reflectors' watches
    // stay open.
    if (!st.subs.empty() || !st.watches.empty())
      open_ns_watch(self);
    return;
  }
  end_subs(self, err);
  if (from_caf_error(err, error_info{errc::unavailable, {}}).code
      == errc::expired)
    invalidate(self);
}

void on_cancel(mux_pointer self, watch_id id) {
  auto& st = self->state;
  auto i = st.subs.find(id);
  if (i == st.subs.end())
    return;
  auto n = st.names.find(i->second.name);
  if (n != st.names.end()) {
    erase_id(n->second.subs, id);
    if (n->second.subs.empty() && !n->second.referenced)
      st.names.erase(n);
  }
  st.subs.erase(i);
  if (st.subs.empty() && st.watches.empty()
      && st.phase == state_type::watch_phase::open) {
    // Nobody watches: neither does the multiplexer, as the per-object
    // watches would all have been closed.
    close_ns_watch(self);
    invalidate(self);
  }
}

void on_new_upstream(mux_pointer self, const object_source_actor& src) {
  auto& st = self->state;
  if (src.address() == st.cfg.upstream.address())
    return;
  close_ns_watch(self);
  st.cfg.upstream = caf::actor_cast<namespace_source_actor>(src);
  auto expired = mux_error(errc::expired, "the API server was replaced");
  end_subs(self, expired);
  fail_watches(self, expired);
  invalidate(self);
  if (!st.lists.empty())
    start_ns_list(self);
}

} // namespace

namespace_mux_actor::behavior_type namespace_mux(
  namespace_mux_actor::stateful_pointer<namespace_mux_state> self,
  namespace_mux_config cfg) {
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
           const std::string& rv) -> caf::result<list_result> {
      auto& st = self->state;
      if (!parse_rv(rv))
        return mux_error(errc::invalid_argument,
                         "invalid resource version: \"" + rv + "\"");
      state_type::waiting_list x{self->make_response_promise<list_result>(),
                                 name, rv};
      auto promise = x.promise;
      if (st.refused || (!st.valid && !rv.empty())) {
        st.lists.push_back(std::move(x));
        start_ns_list(self);
      } else {
        answer_list(self, x);
      }
      return promise;
    },
    [self](watch_atom, resource, const std::string&, const std::string& name,
           const std::string& from,
           const watcher_actor& watcher) -> caf::result<watch_id> {
      auto& st = self->state;
      auto from_rv = parse_rv(from);
      if (!from_rv)
        return mux_error(errc::invalid_argument,
                         "invalid resource version: \"" + from + "\"");
      if (!watcher)
        return mux_error(errc::invalid_argument, "a watch needs a watcher");
      if (!st.refused && !st.valid)
        return mux_error(errc::expired,
                         "the namespace watch lost its history");
      auto promise = self->make_response_promise<watch_id>();
      if (!st.refused && st.phase == state_type::watch_phase::open) {
        open_sub(self, promise, name, *from_rv, watcher);
      } else {
        st.watches.push_back({promise, name, *from_rv, watcher});
        open_ns_watch(self);
      }
      return promise;
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
