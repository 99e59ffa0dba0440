// The wire source actor (wire_source.hpp has the contract). Replies and
// stream lines come from the client's I/O thread as messages to this actor
// (by a weak address: a dead source gets none); events go to the watchers
// as this actor's messages, in stream order.
#include "podref/wire/wire_source.hpp"

#include <algorithm>
#include <cctype>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/wire/detail/namespace_requests.hpp"
#include "podref/wire/detail/request_rules.hpp"
#include "podref/wire/detail/source_state.hpp"
#include "podref/wire/detail/watch_stream.hpp"
#include "podref/wire/http_client.hpp"
#include "podref/wire/wire_decode.hpp"

namespace podref::wire::detail {

std::string what(resource res, const std::string& ns, const std::string& name) {
  if (name.empty())
    return std::string{plural_name(res)} + " in namespace " + ns;
  return std::string{plural_name(res)} + " " + ns + "/" + name;
}

namespace {

std::string list_path(const pending_call& c) {
  auto q = collection_path(c.res, c.ns) + "?";
  if (!c.continue_token.empty())
    q += "continue=" + escape(c.continue_token) + "&";
  q += "fieldSelector=metadata.name%3D" + escape(c.name);
  // As client-go's pager: limit=500 unless a known version lets the watch
  // cache answer (then paging is off).
  if (c.rv.empty() || c.rv == "0")
    q += "&limit=500";
  if (!c.rv.empty())
    q += "&resourceVersion=" + escape(c.rv);
  return q;
}

std::string get_path(const pending_call& c) {
  auto q = collection_path(c.res, c.ns) + "/" + escape(c.name);
  if (!c.rv.empty())
    q += "?resourceVersion=" + escape(c.rv);
  return q;
}

std::string watch_path(const open_watch& w, std::uint64_t timeout_s) {
  if (w.name.empty())
    return ns_watch_path(w.res, w.ns, w.rv, timeout_s);
  return collection_path(w.res, w.ns)
         + "?allowWatchBookmarks=true&fieldSelector=metadata.name%3D"
         + escape(w.name) + "&resourceVersion=" + escape(w.rv)
         + "&timeoutSeconds=" + std::to_string(timeout_s) + "&watch=true";
}

void send_call(source_actor* self, std::uint64_t key) {
  auto& st = self->state;
  auto i = st.calls.find(key);
  if (i == st.calls.end())
    return;
  const auto& c = i->second;
  auto path = c.kind == call_kind::get       ? get_path(c)
              : c.kind == call_kind::list_ns ? ns_list_path(c.res, c.ns, c.rv,
                                                            c.continue_token,
                                                            c.whole)
                                             : list_path(c);
  caf::actor_addr addr = self->address();
  http_client::handlers h;
  h.on_done = [addr, key](http_response r) {
    if (auto a = caf::actor_cast<caf::actor>(addr))
      caf::anon_send(a, req_done_atom::value, key, std::move(r));
  };
  st.client->get(std::move(path), std::move(h));
}

void send_watch(source_actor* self, watch_id id) {
  auto& st = self->state;
  auto i = st.watches.find(id);
  if (i == st.watches.end())
    return;
  auto timeout_s = draw_watch_timeout(st);
  i->second.http = open_stream(self, watch_path(i->second, timeout_s),
                               i->second.res, id, false, timeout_s);
}

} // namespace

std::uint64_t draw_watch_timeout(source_state& st) {
  auto min_s = static_cast<std::uint64_t>(st.options.min_watch_timeout.count());
  std::uniform_int_distribution<std::uint64_t> draw{min_s, 2 * min_s - 1};
  return draw(st.rng);
}

http_client::request_id open_stream(source_actor* self, std::string path,
                                    resource res, std::uint64_t key,
                                    bool list_stream,
                                    std::uint64_t timeout_s) {
  auto& st = self->state;
  auto stream = std::make_shared<detail::watch_stream>(
    st.options.max_event_bytes);
  caf::actor_addr addr = self->address();
  http_client::handlers h;
  h.on_stream = [addr, key, stream, res, list_stream](std::string_view chunk) {
    auto a = caf::actor_cast<caf::actor>(addr);
    if (!a)
      return false;
    return stream->feed(
      chunk,
      [res](std::string_view line) { return decode_watch_line(res, line); },
      [&](wire_watch_line ev) {
        if (list_stream)
          caf::anon_send(a, wl_line_atom::value, key, std::move(ev));
        else
          caf::anon_send(a, line_atom::value, key, std::move(ev));
      });
  };
  h.on_done = [addr, key, stream, list_stream](http_response r) {
    stream->finish(r);
    auto a = caf::actor_cast<caf::actor>(addr);
    if (!a)
      return;
    if (list_stream)
      caf::anon_send(a, wl_done_atom::value, key, std::move(r));
    else
      caf::anon_send(a, stream_done_atom::value, key, std::move(r));
  };
  // The server ends the stream at timeoutSeconds; one that goes silent
  // (a peer gone without a reset) is ended here a grace period later.
  auto deadline = std::chrono::seconds(timeout_s) + st.options.watch_grace;
  return st.client->get(
    std::move(path), std::move(h),
    std::chrono::duration_cast<std::chrono::milliseconds>(deadline));
}

namespace {

/// Sends paced request `key` of `kind`.
void run_paced(source_actor* self, call_kind kind, std::uint64_t key) {
  switch (kind) {
    case call_kind::watch:
      send_watch(self, key);
      return;
    case call_kind::watch_list:
      send_watch_list(self, key);
      return;
    default:
      send_call(self, key);
  }
}

} // namespace

void pace(source_actor* self, call_kind kind, std::uint64_t key,
          caf::timespan extra) {
  auto wait = self->state.reserve() + extra;
  if (wait.count() > 0) {
    self->delayed_send(self, wait, run_atom::value,
                       static_cast<std::uint8_t>(kind), key);
    return;
  }
  run_paced(self, kind, key);
}

namespace {

void end_watch(source_actor* self, watch_id id, const error_info* why) {
  auto& st = self->state;
  auto i = st.watches.find(id);
  if (i == st.watches.end())
    return;
  auto w = std::move(i->second);
  st.watches.erase(i);
  if (w.http != 0)
    st.client->cancel(w.http);
  forget_watch_list(self, w);
  self->send(w.watcher, w_end_atom::value, id,
             why ? make_caf_error(*why) : caf::error{});
}

void on_call_done(source_actor* self, std::uint64_t key, http_response& r) {
  auto& st = self->state;
  auto i = st.calls.find(key);
  if (i == st.calls.end())
    return;
  auto& c = i->second;
  auto subject = (c.kind == call_kind::get ? "get " : "list ")
                 + what(c.res, c.ns, c.name);
  if (r.status == 429 && c.throttle_retries < st.options.max_throttle_retries) {
    ++c.throttle_retries;
    ++st.counters->retried_429;
    pace(self, c.kind, key,
         detail::retry_after(r, st.options.max_retry_after));
    return;
  }
  if (r.status == 410 && c.kind == call_kind::list_ns
      && !c.continue_token.empty()) {
    // The continue token expired mid-way: as client-go's pager, the whole
    // list again in one request.
    c.whole = true;
    c.continue_token.clear();
    c.items.clear();
    pace(self, c.kind, key);
    return;
  }
  if (r.status != 200 || !r.error.empty()) {
    auto err = r.status == 200 ? error_info{errc::unavailable,
                                            subject + ": " + r.error}
                               : error_for(r, subject, c.name);
    c.promise.deliver(make_caf_error(err));
    st.calls.erase(i);
    return;
  }
  if (c.kind == call_kind::get) {
    auto obj = decode_object(c.res, r.body);
    if (obj)
      c.promise.deliver(std::move(obj).value());
    else
      c.promise.deliver(make_caf_error(
        {errc::unavailable, subject + ": " + obj.error().message}));
    st.calls.erase(i);
    return;
  }
  auto page = decode_list(c.res, r.body);
  if (!page) {
    c.promise.deliver(make_caf_error(
      {errc::unavailable, subject + ": " + page.error().message}));
    st.calls.erase(i);
    return;
  }
  auto& p = page.value();
  for (auto& item : std::move(p.items))
    c.items.push_back(std::move(item));
  ++c.pages;
  if (c.kind == call_kind::list_ns
      && c.items.size() + c.pages > st.options.max_namespace_items) {
    // Refused as a 403 would be: the namespace stays per object.
    c.promise.deliver(make_caf_error(error_info{
      errc::forbidden, subject + ": more than "
                         + std::to_string(st.options.max_namespace_items)
                         + " items, too many to multiplex"}));
    st.calls.erase(i);
    return;
  }
  // A consistent read (rv "") pages, and a namespace list at any version;
  // follow it to the end.
  if (!p.continue_token.empty()
      && (c.rv.empty() || c.kind == call_kind::list_ns)) {
    c.continue_token = std::move(p.continue_token);
    pace(self, c.kind, key);
    return;
  }
  c.promise.deliver(list_result{std::move(c.items), std::move(p.resource_version)});
  st.calls.erase(i);
}

caf::behavior wire_source(source_actor* self,
                          std::shared_ptr<http_client> client,
                          wire_source_options options,
                          std::shared_ptr<wire_source_counters> counters) {
  auto& st = self->state;
  st.client = std::move(client);
  st.options = options;
  st.counters = std::move(counters);
  st.bucket = detail::token_bucket{options.qps, options.burst};
  auto start_call = [self](call_kind kind, resource res, std::string& ns,
                           std::string& name, std::string& rv) {
    auto& s = self->state;
    auto key = s.next_call++;
    auto& c = s.calls[key];
    c.kind = kind;
    c.promise = self->make_response_promise();
    c.res = res;
    c.ns = std::move(ns);
    c.name = std::move(name);
    c.rv = std::move(rv);
    auto promise = c.promise;
    pace(self, streams_list(self, c) ? call_kind::watch_list : kind, key);
    return promise;
  };
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& s = self->state;
    s.ns_watchers.erase(dm.source);
    for (auto i = s.watches.begin(); i != s.watches.end();) {
      if (i->second.name.empty() && i->second.watcher.address() == dm.source) {
        if (i->second.http != 0)
          s.client->cancel(i->second.http);
        i = s.watches.erase(i);
      } else {
        ++i;
      }
    }
  });
  auto start_watch = [self](resource res, std::string& ns, std::string& name,
                            std::string& rv, watcher_actor& watcher) {
    auto& s = self->state;
    auto id = s.next_watch++;
    auto& w = s.watches[id];
    w.watcher = std::move(watcher);
    w.res = res;
    w.ns = std::move(ns);
    w.name = std::move(name);
    w.rv = std::move(rv);
    // After a streaming list, its stream goes on as this watch (per
    // object only: a namespace list is never streamed).
    if (w.name.empty() || !adopt_watch_list(self, id))
      pace(self, call_kind::watch, id);
    return id;
  };
  return {
    [start_call](caf::get_atom, resource res, std::string& ns,
                 std::string& name, std::string& rv) {
      return start_call(call_kind::get, res, ns, name, rv);
    },
    [start_call](list_atom, resource res, std::string& ns,
                 std::string& name, std::string& rv) {
      return start_call(call_kind::list, res, ns, name, rv);
    },
    [start_watch](watch_atom, resource res, std::string& ns,
                  std::string& name, std::string& rv,
                  watcher_actor& watcher) {
      return start_watch(res, ns, name, rv, watcher);
    },
    [start_call](list_ns_atom, resource res, std::string& ns,
                 std::string& rv) {
      std::string name;
      return start_call(call_kind::list_ns, res, ns, name, rv);
    },
    [self, start_watch](watch_ns_atom, resource res, std::string& ns,
                        std::string& rv, watcher_actor& watcher) {
      if (self->state.ns_watchers.insert(watcher.address()).second)
        self->monitor(watcher);
      std::string name;
      return start_watch(res, ns, name, rv, watcher);
    },
    [self](cancel_atom, watch_id id) {
      auto& s = self->state;
      auto i = s.watches.find(id);
      if (i == s.watches.end())
        return;
      if (i->second.http != 0)
        s.client->cancel(i->second.http);
      forget_watch_list(self, i->second);
      s.watches.erase(i);
    },
    [self](run_atom, std::uint8_t kind, std::uint64_t key) {
      run_paced(self, static_cast<call_kind>(kind), key);
    },
    [self](req_done_atom, std::uint64_t key, http_response& r) {
      on_call_done(self, key, r);
    },
    [self](line_atom, watch_id id, wire_watch_line& line) {
      on_watch_line(self, id, line);
    },
    [self](stream_done_atom, watch_id id, http_response& r) {
      on_watch_done(self, id, r);
    },
    [self](wl_line_atom, std::uint64_t key, wire_watch_line& line) {
      on_list_stream_line(self, key, line);
    },
    [self](wl_done_atom, std::uint64_t key, http_response& r) {
      on_list_stream_done(self, key, r);
    },
    [self](wl_timeout_atom, std::uint64_t key, std::uint8_t armed_in) {
      on_list_stream_timeout(self, key, armed_in);
    },
  };
}

} // namespace

void on_watch_line(source_actor* self, watch_id id, wire_watch_line& line) {
  auto& s = self->state;
  auto i = s.watches.find(id);
  if (i == s.watches.end())
    return;
  if (line.is_error) {
    auto why = watch_error_of(
      line.status, "watch " + what(i->second.res, i->second.ns, i->second.name));
    // A namespace watch refused (the node authorizer) is forbidden, as its
    // list would be: the multiplexer falls back per object.
    if (line.status.code == 403 && i->second.name.empty())
      why.code = errc::forbidden;
    end_watch(self, id, &why);
    return;
  }
  self->send(i->second.watcher, w_event_atom::value, id, std::move(line.event));
}

void on_watch_done(source_actor* self, watch_id id, http_response& r) {
  auto& s = self->state;
  auto i = s.watches.find(id);
  if (i == s.watches.end())
    return;
  i->second.http = 0; // finished at the client
  auto subject = "watch " + what(i->second.res, i->second.ns, i->second.name);
  if (r.status == 200 && r.error.empty()) {
    end_watch(self, id, nullptr);
    return;
  }
  // Throttled before the stream began: the same watch again after the
  // server's Retry-After, not the reflector's error backoff.
  if (r.status == 429
      && i->second.throttle_retries < s.options.max_throttle_retries) {
    ++i->second.throttle_retries;
    ++s.counters->retried_429;
    pace(self, call_kind::watch, id,
         retry_after(r, s.options.max_retry_after));
    return;
  }
  error_info why = r.status == 200
                     ? error_info{errc::unavailable, subject + ": " + r.error}
                     : error_for(r, subject, i->second.name);
  if (r.status == 200)
    ++s.counters->bad_streams;
  end_watch(self, id, &why);
}

} // namespace podref::wire::detail

namespace podref::wire {

caf::actor spawn_wire_source(caf::actor_system& sys,
                             std::shared_ptr<http_client> client,
                             const wire_source_options& options,
                             std::shared_ptr<wire_source_counters> counters) {
  if (!counters)
    counters = std::make_shared<wire_source_counters>();
  return sys.spawn(detail::wire_source, std::move(client), options,
                   std::move(counters));
}

} // namespace podref::wire
