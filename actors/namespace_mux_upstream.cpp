// The namespace multiplexer's side facing its upstream: the namespace list
// and watch, their events and ends, the refusal, and how a broken stream is
// mended (detail/namespace_mux_ops.hpp; the design in
// docs/multiplexing.md).
#include <algorithm>
#include <unordered_map>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "podref/actors/detail/namespace_mux_ops.hpp"

namespace podref::detail::mux {

namespace {

errc code_of(const caf::error& err) {
  return from_caf_error(err, error_info{errc::unavailable, {}}).code;
}

/// Whether `err` refuses the namespace-wide calls: a 403, or a source that
/// does not speak them.
bool refusal(const caf::error& err) {
  return err == caf::sec::unexpected_message
         || code_of(err) == errc::forbidden;
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

/// An object nobody references came with the namespace list or watch.
void count_foreign(mux_pointer self) {
  auto& st = self->state;
  ++st.stats.foreign_events;
  if (st.cfg.counters)
    st.cfg.counters->mux_foreign_events.fetch_add(1,
                                                  std::memory_order_relaxed);
}

/// The version the namespace list asks for: "" (a consistent read) after
/// the history expired or for a waiting live list; else the newest one a
/// waiting list or watch or a sub-watch has seen, so that the answer is
/// never older than what a reflector has (an upstream that went back
/// answers "too large", and the list is taken live), "0" when none has
/// seen any.
std::string list_version(const state_type& st) {
  if (st.relist_live)
    return {};
  std::uint64_t newest = 0;
  for (const auto& x : st.lists) {
    if (x.rv.empty())
      return {};
    newest = std::max(newest, parse_rv(x.rv).value_or(0));
  }
  for (const auto& w : st.watches)
    newest = std::max(newest, w.from);
  for (const auto& kvp : st.subs)
    newest = std::max(newest, kvp.second.after);
  return std::to_string(newest);
}

/// The stream broke in a way a new namespace list mends (its history
/// expired, or the upstream was replaced): the cache is listed again behind
/// the sub-watches, which stay open and get what changed meanwhile, as an
/// informer relists; what waits is served by the same list.
void relist(mux_pointer self, bool live) {
  auto& st = self->state;
  close_ns_watch(self);
  invalidate(self);
  st.relist_live = live;
  if (!st.subs.empty() || !st.lists.empty() || !st.watches.empty())
    start_ns_list(self);
}

void on_ns_list(mux_pointer self, list_result& res) {
  auto& st = self->state;
  st.listing = false;
  st.relist_live = false;
  auto version = parse_resource_version(res.resource_version);
  std::unordered_map<std::string, api_object> found;
  for (auto& obj : res.items)
    if (obj) {
      if (st.names.count(obj.meta().name) == 0)
        count_foreign(self);
      else
        found.emplace(obj.meta().name, std::move(obj));
    }
  st.valid = true;
  st.version = version;
  for (auto& [name, n] : st.names) {
    auto i = found.find(name);
    set_state(self, n, i == found.end() ? api_object{} : i->second, version);
  }
  // A sub-watch ahead of the list (an upstream whose versions went back)
  // cannot be brought to it by events: its reflector relists.
  std::vector<watch_id> ahead;
  for (const auto& [id, w] : st.subs)
    if (w.after > version)
      ahead.push_back(id);
  for (auto id : ahead)
    end_sub(self, id,
            make_caf_error(error_info{errc::expired,
                                      "the namespace list of " + st.cfg.ns
                                        + " is older than this watch"}));
  auto waiting = std::move(st.lists);
  st.lists.clear();
  for (auto& x : waiting)
    answer_list(self, x);
  if (!st.subs.empty() || !st.watches.empty())
    open_ns_watch(self);
}

void on_ns_list_failed(mux_pointer self, const caf::error& err) {
  auto& st = self->state;
  st.listing = false;
  if (refusal(err)) {
    refuse(self);
    return;
  }
  if (code_of(err) == errc::expired && !st.relist_live) {
    // A version the upstream has not reached (or no longer serves).
    st.relist_live = true;
    start_ns_list(self);
    return;
  }
  auto waiting = std::move(st.lists);
  st.lists.clear();
  for (auto& x : waiting)
    x.promise.deliver(err);
  fail_watches(self, err);
  // No stream behind them: each reflector backs off and lists again.
  end_subs(self, err);
}

} // namespace

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

void invalidate(mux_pointer self) {
  auto& st = self->state;
  st.valid = false;
  ++st.gen;
  st.listing = false;
  for (auto& kvp : st.names) {
    kvp.second.known = false;
    kvp.second.version = 0;
  }
}

void close_ns_watch(mux_pointer self) {
  auto& st = self->state;
  if (st.ns_watch)
    caf::anon_send(st.cfg.upstream, cancel_atom::value, *st.ns_watch);
  st.ns_watch.reset();
  st.phase = state_type::watch_phase::closed;
  recount(self);
}

void start_ns_list(mux_pointer self) {
  auto& st = self->state;
  if (st.listing || st.refused)
    return;
  st.listing = true;
  ++st.stats.ns_lists;
  auto gen = st.gen;
  self
    ->request(st.cfg.upstream, caf::infinite, list_ns_atom::value, st.cfg.res,
              st.cfg.ns, list_version(st))
    .then(
      [self, gen](list_result& res) {
        if (gen == self->state.gen)
          on_ns_list(self, res);
      },
      [self, gen](caf::error& err) {
        if (gen == self->state.gen)
          on_ns_list_failed(self, err);
      });
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
      [self, gen, src = st.cfg.upstream](watch_id id) {
        auto& st = self->state;
        if (gen != st.gen || st.phase != state_type::watch_phase::opening) {
          // Given up meanwhile: closed where it was opened.
          caf::anon_send(src, cancel_atom::value, id);
          return;
        }
        st.ns_watch = id;
        st.phase = state_type::watch_phase::open;
        recount(self);
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
        if (code_of(err) == errc::expired) {
          relist(self, true);
          return;
        }
        fail_watches(self, err);
        end_subs(self, err);
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
    count_foreign(self);
    return;
  }
  set_state(self, i->second,
            ev.type == watch_event_type::deleted ? api_object{} : ev.object,
            ev.resource_version);
}

void on_end(mux_pointer self, watch_id id, const caf::error& err) {
  auto& st = self->state;
  // Watch ids are per upstream: the end of a replaced one's watch is not
  // ours (a dying upstream ends its watches anonymously, before new_src).
  const auto& sender = self->current_sender();
  if (!st.ns_watch || *st.ns_watch != id
      || (sender
          && caf::actor_cast<caf::actor_addr>(sender)
               != st.cfg.upstream.address()))
    return;
  st.ns_watch.reset();
  st.phase = state_type::watch_phase::closed;
  recount(self);
  if (!err) {
    // Closed normally: resume from what was seen; the reflectors' watches
    // stay open.
    if (!st.subs.empty() || !st.watches.empty())
      open_ns_watch(self);
  } else if (refusal(err)) {
    // A source may refuse once the watch's id was given (the wire's 403
    // comes as the stream's end): the sub-watches wait for the manager to
    // move their reflectors.
    refuse(self);
  } else if (code_of(err) == errc::expired) {
    relist(self, true);
  } else {
    end_subs(self, err);
  }
}

void on_new_upstream(mux_pointer self, const object_source_actor& src) {
  auto& st = self->state;
  if (src.address() == st.cfg.upstream.address())
    return;
  close_ns_watch(self); // a no-op at a dead upstream
  st.cfg.upstream = caf::actor_cast<namespace_source_actor>(src);
  relist(self, false);
}

} // namespace podref::detail::mux
