// The wire source's streaming list (wire_source_options::watch_list;
// client-go's WatchList, KEP-3157). A list call is sent as
//   GET .../RES?allowWatchBookmarks=true&fieldSelector=metadata.name%3DNAME
//       [&resourceVersion=RV]&resourceVersionMatch=NotOlderThan
//       &sendInitialEvents=true&timeoutSeconds=T&watch=true
// Its initial events, up to the BOOKMARK annotated
// `k8s.io/initial-events-end: "true"`, are the list's items and the
// bookmark's version the list's; the stream is then parked until the
// reflector's watch of that object from that version takes it over (the
// events meanwhile are kept, bounded), so that a sync costs one request
// instead of a list and a watch. Anything else before the end bookmark (a
// refusal, an ERROR event, the stream's end, no end bookmark within
// watch_list_timeout) falls back to the plain list; after a 422 (an API
// server without WatchList) the source lists and watches from then on.
#include <string>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

#include "podref/wire/detail/source_state.hpp"

namespace podref::wire::detail {

namespace {

/// Events kept for a parked stream before it is given up (its watch then
/// opens a stream of its own from the same version: nothing is lost).
constexpr std::size_t max_parked_events = 1024;

std::string watch_list_path(const list_stream& s, const std::string& rv,
                            std::uint64_t timeout_s) {
  auto q = collection_path(s.res, s.ns)
           + "?allowWatchBookmarks=true&fieldSelector=metadata.name%3D"
           + escape(s.name);
  if (!rv.empty())
    q += "&resourceVersion=" + escape(rv);
  return q + "&resourceVersionMatch=NotOlderThan&sendInitialEvents=true"
         + "&timeoutSeconds=" + std::to_string(timeout_s) + "&watch=true";
}

/// Gives the stream up: cancels its transfer and forgets it.
void drop(source_actor* self, std::uint64_t key) {
  auto& st = self->state;
  auto i = st.streams.find(key);
  if (i == st.streams.end())
    return;
  if (i->second.http != 0)
    st.client->cancel(i->second.http);
  st.streams.erase(i);
}

/// The stream could not list: its call goes as a plain list.
void fall_back(source_actor* self, std::uint64_t key) {
  drop(self, key);
  ++self->state.counters->watch_list_fallbacks;
  if (self->state.calls.count(key) != 0)
    pace(self, call_kind::list, key);
}

void keep_item(list_stream& s, wire_watch_line& line) {
  const auto& name = line.event.object.meta().name;
  for (auto i = s.items.begin(); i != s.items.end(); ++i) {
    if (i->meta().name == name) {
      if (line.event.type == watch_event_type::deleted)
        s.items.erase(i);
      else
        *i = std::move(line.event.object);
      return;
    }
  }
  if (line.event.type != watch_event_type::deleted)
    s.items.push_back(std::move(line.event.object));
}

} // namespace

bool streams_list(source_actor* self, const pending_call& c) {
  auto& st = self->state;
  // Only a list from the start (rv "0" or ""): a paged relist goes on as
  // it began.
  return st.options.watch_list && !st.watch_list_refused
         && c.kind == call_kind::list && c.continue_token.empty()
         && (c.rv.empty() || c.rv == "0");
}

void send_watch_list(source_actor* self, std::uint64_t key) {
  auto& st = self->state;
  auto c = st.calls.find(key);
  if (c == st.calls.end())
    return;
  auto& s = st.streams[key];
  s.call = key;
  s.res = c->second.res;
  s.ns = c->second.ns;
  s.name = c->second.name;
  auto timeout_s = draw_watch_timeout(st);
  s.http = open_stream(self, watch_list_path(s, c->second.rv, timeout_s),
                       s.res, key, true, timeout_s);
  self->delayed_send(self, st.options.watch_list_timeout,
                     wl_timeout_atom::value, key,
                     static_cast<std::uint8_t>(list_stream::phase::collecting));
}

bool adopt_watch_list(source_actor* self, watch_id id) {
  auto& st = self->state;
  auto w = st.watches.find(id);
  if (w == st.watches.end())
    return false;
  for (auto& [key, s] : st.streams) {
    if (s.at != list_stream::phase::parked || s.res != w->second.res
        || s.ns != w->second.ns || s.name != w->second.name
        || s.rv != w->second.rv)
      continue;
    s.at = list_stream::phase::adopted;
    s.watch = id;
    w->second.http = s.http;
    w->second.stream = key;
    ++st.counters->watch_list_adopted;
    // The events since the end bookmark, in order; an ERROR among them
    // ends the watch, and with it the stream.
    auto pending = std::move(s.pending);
    for (auto& line : pending) {
      if (st.watches.count(id) == 0)
        break;
      on_watch_line(self, id, line);
    }
    return true;
  }
  return false;
}

void forget_watch_list(source_actor* self, const open_watch& w) {
  if (w.stream != 0)
    self->state.streams.erase(w.stream);
}

void on_list_stream_line(source_actor* self, std::uint64_t key,
                         wire_watch_line& line) {
  auto& st = self->state;
  auto i = st.streams.find(key);
  if (i == st.streams.end())
    return;
  auto& s = i->second;
  switch (s.at) {
    case list_stream::phase::adopted:
      on_watch_line(self, s.watch, line);
      return;
    case list_stream::phase::parked:
      if (s.pending.size() >= max_parked_events)
        drop(self, key);
      else
        s.pending.push_back(std::move(line));
      return;
    case list_stream::phase::collecting:
      break;
  }
  if (line.is_error) {
    fall_back(self, key);
    return;
  }
  if (line.event.type != watch_event_type::bookmark) {
    keep_item(s, line);
    return;
  }
  if (!line.initial_events_end)
    return;
  auto c = st.calls.find(key);
  if (c == st.calls.end()) { // nobody waits for this list any more
    drop(self, key);
    return;
  }
  s.rv = std::to_string(line.event.resource_version);
  s.at = list_stream::phase::parked;
  c->second.promise.deliver(list_result{std::move(s.items), s.rv});
  st.calls.erase(c);
  // Not taken over by then (the reflector went away): given up.
  self->delayed_send(self, st.options.watch_list_timeout,
                     wl_timeout_atom::value, key,
                     static_cast<std::uint8_t>(list_stream::phase::parked));
}

void on_list_stream_done(source_actor* self, std::uint64_t key,
                         http_response& r) {
  auto& st = self->state;
  auto i = st.streams.find(key);
  if (i == st.streams.end())
    return;
  auto& s = i->second;
  s.http = 0; // finished at the client
  switch (s.at) {
    case list_stream::phase::adopted:
      on_watch_done(self, s.watch, r);
      return;
    case list_stream::phase::parked:
      // Its watch opens a stream of its own from the same version.
      st.streams.erase(i);
      return;
    case list_stream::phase::collecting:
      break;
  }
  // A server without WatchList refuses the parameters with 422
  // (kube-apiserver-transcripts/watch/*-sendinitialevents*.json).
  if (r.status == 422)
    st.watch_list_refused = true;
  fall_back(self, key);
}

void on_list_stream_timeout(source_actor* self, std::uint64_t key,
                            std::uint8_t armed_in) {
  auto i = self->state.streams.find(key);
  // A timer of an earlier phase (the list was answered in time) is void.
  if (i == self->state.streams.end()
      || static_cast<std::uint8_t>(i->second.at) != armed_in)
    return;
  if (i->second.at == list_stream::phase::collecting)
    fall_back(self, key);
  else if (i->second.at == list_stream::phase::parked)
    drop(self, key);
}

} // namespace podref::wire::detail
