// The bridge's reads and writes (one short-lived actor per request) and its
// watch sessions (one actor per watch).
#include "podref/wire/detail/api_bridge.hpp"
#include "podref/wire/detail/api_bridge_kinds.hpp"
#include "podref/wire/detail/opaque_kinds.hpp"

#include <atomic>
#include <charconv>
#include <optional>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/detail/patch_call.hpp"
#include "podref/wire/continue_token.hpp"
#include "podref/wire/status.hpp"
#include "podref/wire/table.hpp"

namespace podref::wire::detail {

namespace {

using clock_type = std::chrono::system_clock;

/// A field of `obj` a field selector names (router.cpp's selectable()).
std::string field_of(const api_object& obj, const std::string& field) {
  if (field == "metadata.name")
    return obj.meta().name;
  if (field == "metadata.namespace")
    return obj.meta().ns;
  if (auto s = obj.as_secret(); s && field == "type")
    return s->type;
  if (obj.kind() == resource::pods && field == "spec.nodeName")
    return pod_node_name(obj);
  return {};
}

bool keep(const route& r, const api_object& obj) {
  for (const auto& f : r.fields)
    if ((field_of(obj, f.field) == f.value) != f.equal)
      return false;
  return matches_labels(r.labels, obj);
}

/// A decimal resourceVersion; nullopt for "" and for what is not one (the
/// server answers that with its 400).
std::optional<std::uint64_t> number_of(const std::string& text) {
  std::uint64_t n = 0;
  auto last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, n);
  if (text.empty() || ec != std::errc{} || ptr != last)
    return std::nullopt;
  return n;
}

/// An item's key below the list's prefix, as continue tokens carry it:
/// NAME in a namespace's list, NS/NAME in a list across namespaces.
std::string page_key(const route& r, const api_object& obj) {
  if (!r.ns.empty())
    return obj.meta().name;
  return obj.meta().ns + "/" + obj.meta().name;
}

/// Whether `obj` comes after the start of a continued page, in the
/// server's (namespace, name) order. A start ending in NUL is exclusive.
bool after_start(const route& r, const std::string& start,
                 const api_object& obj) {
  auto key = start;
  bool exclusive = !key.empty() && key.back() == '\0';
  if (exclusive)
    key.pop_back();
  std::string ns = r.ns;
  std::string name = key;
  if (r.ns.empty()) {
    auto slash = key.find('/');
    ns = key.substr(0, slash);
    name = slash == std::string::npos ? std::string{} : key.substr(slash + 1);
  }
  auto item = std::tie(obj.meta().ns, obj.meta().name);
  auto from = std::tie(ns, name);
  return exclusive ? item > from : item >= from;
}

/// Adds continue and remainingItemCount to an encoded list's (or Table's)
/// metadata, which both encoders write first as {"resourceVersion":RV}.
std::string with_page(std::string body, const std::string& rv,
                      const std::string& token,
                      std::optional<std::uint64_t> remaining) {
  auto head = "\"metadata\":{\"resourceVersion\":\"" + rv + "\"";
  auto at = body.find(head);
  if (at == std::string::npos)
    return body;
  std::string extra = ",\"continue\":\"" + token + "\"";
  if (remaining)
    extra += ",\"remainingItemCount\":" + std::to_string(*remaining);
  body.insert(at + head.size(), extra);
  return body;
}

/// What one list request reads: a continued page's snapshot, or the
/// version its resourceVersion and resourceVersionMatch ask for.
struct list_plan {
  std::optional<continue_token> cont;
  bool paged = false;
  std::string rv;
  bool exact = false;
  /// A version the answer must not be older than (else 504).
  std::optional<std::uint64_t> at_least;
};

http_reply list_reply(const api_call& call, const list_plan& plan,
                      list_result result) {
  const auto& r = call.r;
  std::vector<api_object> items;
  std::uint64_t remaining = 0;
  std::string last_key;
  for (auto& x : result.items) {
    if (!keep(r, x) || (plan.cont && !after_start(r, plan.cont->start, x)))
      continue;
    if (plan.paged && r.limit != 0 && items.size() >= r.limit) {
      ++remaining;
      continue;
    }
    if (plan.paged)
      last_key = page_key(r, x);
    items.push_back(std::move(x));
  }
  const auto& rv = result.resource_version;
  auto body = call.table ? encode_table(r.res, items, rv, true,
                                        clock_type::now())
                         : encode_list(r.res, items, rv);
  if (remaining > 0) {
    // As the real server: the count only when no selector filters.
    bool selected = !r.labels.empty() || !r.fields.empty();
    auto token = encode_continue(
      continue_token{static_cast<std::int64_t>(*number_of(rv)),
                     last_key + '\0'});
    body = with_page(std::move(body), rv, token,
                     selected ? std::nullopt
                              : std::optional<std::uint64_t>{remaining});
  }
  return {200, "application/json", std::move(body)};
}

http_reply object_reply(const api_call& call, const api_object& obj,
                        int status) {
  if (call.table)
    return {status, "application/json",
            encode_table(call.r.res, {obj}, obj.meta().resource_version, true,
                         clock_type::now())};
  return {status, "application/json", encode_object(obj)};
}

/// The namespace a collection request reads: the path's, or the field
/// selector's for /api/v1/RES.
std::string scope_namespace(const route& r) {
  if (r.ns.empty() && r.field_namespace)
    return *r.field_namespace;
  return r.ns;
}

/// Plans a list (see list_plan); a failure is the reply.
std::optional<http_reply> plan_list(const route& r, list_plan& plan) {
  if (!r.continue_token.empty()) {
    auto token = decode_continue(r.continue_token);
    if (!token)
      return reply_of(bad_request_status(token.error().message));
    plan.cont = *token;
    plan.paged = true;
    plan.exact = token->rv > 0;
    plan.rv = plan.exact ? std::to_string(token->rv) : std::string{};
    // A token from the future (forged) is a version not reached yet.
    if (plan.exact)
      plan.at_least = static_cast<std::uint64_t>(token->rv);
    return std::nullopt;
  }
  const auto& rv = r.resource_version;
  // RV "0" reads any version, whole (the real server's watch cache
  // ignores the limit there); a limit otherwise pages.
  plan.paged = r.limit > 0 && rv != "0";
  plan.rv = rv;
  const auto& match = r.resource_version_match;
  plan.exact = match == "Exact"
               || (match.empty() && plan.paged && !rv.empty() && rv != "0");
  plan.at_least = number_of(rv);
  if (plan.at_least == std::uint64_t{0})
    plan.at_least.reset();
  return std::nullopt;
}

void send_list(caf::event_based_actor* self,
               const memory_api_server_actor& server, api_call call,
               caf::timespan timeout, std::function<void(http_reply)> done) {
  auto ns = scope_namespace(call.r);
  list_plan plan;
  if (auto failed = plan_list(call.r, plan)) {
    done(std::move(*failed));
    return;
  }
  auto name = call.r.field_name && !ns.empty() ? *call.r.field_name
                                               : std::string{};
  self
    ->request(server, timeout, list_at_atom::value, call.r.res, ns, name,
              plan.rv, plan.exact)
    .then(
      [done, call, plan](list_result& result) {
        auto now = number_of(result.resource_version).value_or(0);
        if (plan.at_least && *plan.at_least > now) {
          auto status = too_large_version_status(*plan.at_least, now);
          done(reply_of(status));
          return;
        }
        done(list_reply(call, plan, std::move(result)));
      },
      [done, call, plan](caf::error& err) {
        auto info = from_caf_error(err, error_info{errc::unavailable,
                                                   caf::to_string(err)});
        if (plan.cont && info.code == errc::expired) {
          done(reply_of(expired_continue_status(
            encode_continue(continue_token{-1, plan.cont->start}))));
          return;
        }
        done(error_reply(err, call.r));
      });
}

/// A get with resourceVersion N (not 0) reads a state not older than N:
/// 504 when the server has not reached N.
void send_get_at(caf::event_based_actor* self,
                 const memory_api_server_actor& server, api_call call,
                 caf::timespan timeout, std::function<void(http_reply)> done) {
  const auto& r = call.r;
  self
    ->request(server, timeout, list_at_atom::value, r.res, r.ns, r.name,
              r.resource_version, false)
    .then(
      [done, call](list_result& result) {
        auto asked = number_of(call.r.resource_version).value_or(0);
        auto now = number_of(result.resource_version).value_or(0);
        if (asked > now)
          done(reply_of(too_large_version_status(asked, now)));
        else if (result.items.empty())
          done(reply_of(not_found_status(call.r.res, call.r.name)));
        else
          done(object_reply(call, result.items.front(), 200));
      },
      [done, r = call.r](caf::error& err) { done(error_reply(err, r)); });
}

void send_delete(caf::event_based_actor* self,
                 const memory_api_server_actor& server, api_call call,
                 caf::timespan timeout, std::function<void(http_reply)> done) {
  auto r = call.r;
  self->request(server, timeout, peek_atom::value, r.res, r.ns, r.name)
    .then(
      [self, server, r, timeout, done](const api_object& found) {
        self
          ->request(server, timeout, caf::delete_atom::value, r.res, r.ns,
                    r.name)
          .then(
            [r, found, done](caf::ok_atom) {
              if (delete_answers_object(r.res))
                done({200, "application/json", encode_object(found)});
              else
                done(reply_of(delete_success_status(r.res, r.name,
                                                    found.meta().uid)));
            },
            [r, done](caf::error& err) { done(error_reply(err, r)); });
      },
      [r, done](caf::error& err) { done(error_reply(err, r)); });
}

void send_call(caf::event_based_actor* self,
               const memory_api_server_actor& server, api_call call,
               caf::timespan timeout, std::function<void(http_reply)> done) {
  auto on_error = [done, r = call.r](caf::error& err) {
    done(error_reply(err, r));
  };
  // Get, create and update answer with the object.
  auto answer = [done, call](int status) {
    return [done, call, status](const api_object& obj) {
      done(object_reply(call, obj, status));
    };
  };
  const auto& r = call.r;
  switch (r.kind) {
    case route_kind::get:
      if (!r.resource_version.empty() && r.resource_version != "0") {
        send_get_at(self, server, std::move(call), timeout, std::move(done));
        return;
      }
      self
        ->request(server, timeout, caf::get_atom::value, r.res, r.ns, r.name,
                  r.resource_version)
        .then(answer(200), on_error);
      return;
    case route_kind::create:
      check_namespace(
        self, server, call, timeout,
        [self, server, timeout, call, answer, done] {
          // The path names no object: its errors name the body's.
          self
            ->request(server, timeout, create_atom::value,
                      stamp_new(call.object, clock_type::now()))
            .then(answer(201), [done, call](caf::error& err) {
              done(error_reply(err, call.r.res, call.object.meta().name));
            });
        },
        done);
      return;
    case route_kind::update:
      self->request(server, timeout, replace_atom::value, call.object)
        .then(answer(200), on_error);
      return;
    case route_kind::list:
      send_list(self, server, std::move(call), timeout, std::move(done));
      return;
    case route_kind::patch:
      send_patch(self, server, std::move(call), timeout, std::move(done));
      return;
    case route_kind::remove:
      if (r.res == resource::pods)
        send_pod_delete(self, server, call, timeout, std::move(done));
      else if (r.res == resource::namespaces)
        send_namespace_delete(self, server, call, timeout, std::move(done));
      else
        send_delete(self, server, std::move(call), timeout, std::move(done));
      return;
    default:
      done(reply_of(method_not_allowed_status()));
  }
}

/// The actor behind a watch_session.
class watch_actor_session final : public watch_session {
public:
  explicit watch_actor_session(caf::actor self) : self_(std::move(self)) {
    // nop
  }

  void cancel() override {
    if (!cancelled_.exchange(true))
      caf::anon_send_exit(self_, caf::exit_reason::user_shutdown);
  }

private:
  caf::actor self_;
  std::atomic<bool> cancelled_{false};
};

/// Encodes one event for the watch's client: the object (or a Table of one
/// row, with the columns only in the first event).
std::string event_line(const api_call& call, const watch_event& ev,
                       bool& first_table) {
  if (ev.type == watch_event_type::bookmark)
    return encode_watch_line("BOOKMARK",
                             encode_bookmark(call.r.res, ev.resource_version));
  std::string object;
  if (call.table) {
    object = encode_table(call.r.res, {ev.object},
                          std::to_string(ev.resource_version), first_table,
                          clock_type::now());
    first_table = false;
  } else {
    object = encode_object(ev.object);
  }
  return encode_watch_line(to_string(ev.type), object);
}

/// A watch's filter. With a label selector, an object whose labels stop
/// (start) matching is sent as DELETED (ADDED), as the API server's watch
/// cache does; so the watch remembers which objects it has sent.
class label_tracker {
public:
  std::optional<watch_event> filter(const route& r, const watch_event& ev) {
    if (ev.type == watch_event_type::bookmark)
      return ev;
    if (r.labels.empty())
      return keep(r, ev.object) ? std::optional<watch_event>{ev}
                                : std::nullopt;
    const auto& meta = ev.object.meta();
    auto key = meta.ns + "/" + meta.name;
    bool was = sent_.count(key) != 0;
    bool now = ev.type != watch_event_type::deleted && keep(r, ev.object);
    auto out = ev;
    if (now && !was) {
      sent_.insert(key);
      out.type = watch_event_type::added;
      return out;
    }
    if (!now && was) {
      sent_.erase(key);
      out.type = watch_event_type::deleted;
      return out;
    }
    if (now)
      return out;
    return std::nullopt;
  }

private:
  std::set<std::string> sent_;
};

/// The watch actor's own timers: time for a periodic (or, `last`, the
/// pre-deadline) bookmark; the watch's timeoutSeconds ran out.
using bookmark_tick_atom = caf::atom_constant<caf::atom("bm_tick")>;
using deadline_atom = caf::atom_constant<caf::atom("deadline")>;

/// What a watch actor keeps between its messages.
struct watch_progress {
  /// The server's id of this watch, once it answered.
  std::optional<watch_id> id;
  /// sendInitialEvents=true: the next bookmark ends the initial events.
  bool awaiting_initial_end = false;
  bool first_table = true;
  label_tracker selected;
};

/// Where the server's watch starts. Without sendInitialEvents, from the
/// request's resourceVersion ("" and "0" replay the current state as ADDED,
/// as the real server does). sendInitialEvents=true replays the current
/// state (not older than the version asked for: checked against the
/// server's version first). sendInitialEvents=false with "" or "0" starts
/// at the server's version with no initial events.
struct watch_start {
  /// Ask the server for its version before opening the watch.
  bool needs_version = false;
  std::string from;
};

watch_start start_of(const route& r) {
  const auto& rv = r.resource_version;
  if (!r.send_initial_events)
    return {false, rv};
  if (*r.send_initial_events)
    return {number_of(rv).value_or(0) > 0, std::string{}};
  if (rv.empty() || rv == "0")
    return {true, std::string{}};
  return {false, rv};
}

caf::behavior watch_actor(caf::event_based_actor* self,
                          memory_api_server_actor server, api_call request,
                          std::shared_ptr<watch_callbacks> cb) {
  // One copy of the request for every handler (a watch lives long, and
  // 100k of them are many copies).
  auto call = std::make_shared<const api_call>(std::move(request));
  auto ended = std::make_shared<bool>(false);
  auto end = [self, cb, ended] {
    if (!*ended) {
      *ended = true;
      cb->on_end();
    }
    self->quit();
  };
  // timeoutSeconds counts from the request; 0 means none, as for the real
  // server (which then picks its own, 30 to 60 minutes).
  std::optional<std::chrono::milliseconds> deadline;
  if (call->r.timeout_seconds && *call->r.timeout_seconds > 0)
    deadline = std::chrono::seconds(*call->r.timeout_seconds);
  if (deadline)
    self->delayed_send(self, *deadline, deadline_atom::value);
  if (call->r.allow_bookmarks) {
    const auto& timing = call->bookmarks;
    if (timing.interval.count() > 0)
      self->delayed_send(self, timing.interval, bookmark_tick_atom::value,
                         false);
    if (deadline && *deadline > timing.lead)
      self->delayed_send(self, *deadline - timing.lead,
                         bookmark_tick_atom::value, true);
  }
  auto me = caf::actor_cast<watcher_actor>(self);
  auto ns = scope_namespace(call->r);
  auto name = call->r.field_name && !ns.empty() ? *call->r.field_name
                                               : std::string{};
  auto on_error = [cb, end, call](caf::error& err) {
    auto info = from_caf_error(err, error_info{errc::unavailable,
                                               caf::to_string(err)});
    auto status = status_of(info, call->r.res, call->r.name);
    cb->on_line(encode_watch_line("ERROR", info.code == errc::expired
                                             ? expired_watch_status(
                                               info.message)
                                             : status.body));
    end();
  };
  auto progress = std::make_shared<watch_progress>();
  bool initial = call->r.send_initial_events.value_or(false);
  auto on_open = [self, server, call, progress, initial](watch_id id) {
    progress->id = id;
    if (initial) {
      // The initial ADDED events follow this reply; the bookmark the
      // server sends on this message follows them.
      progress->awaiting_initial_end = true;
      self->send(server, w_mark_atom::value, id, true);
    }
  };
  auto open = [self, server, call, ns, name, me, on_open,
               on_error](const std::string& from) {
    if (!name.empty())
      self
        ->request(server, caf::infinite, watch_atom::value, call->r.res, ns,
                  name, from, me)
        .then(on_open, on_error);
    else
      self
        ->request(server, caf::infinite, watch_ns_atom::value, call->r.res, ns,
                  from, me)
        .then(on_open, on_error);
  };
  auto start = start_of(call->r);
  if (!start.needs_version) {
    open(start.from);
  } else {
    self
      ->request(server, caf::infinite, list_at_atom::value, call->r.res, ns,
                name, std::string{}, false)
      .then(
        [cb, end, call, open, initial](list_result& now) {
          auto version = number_of(now.resource_version).value_or(0);
          auto asked = number_of(call->r.resource_version).value_or(0);
          if (initial && asked > version) {
            cb->on_line(encode_watch_line(
              "ERROR", too_large_version_status(asked, version).body));
            end();
            return;
          }
          open(initial || version == 0 ? std::string{}
                                       : std::to_string(version));
        },
        on_error);
  }
  return {
    [cb, call, progress](w_event_atom, watch_id, const watch_event& ev) {
      if (progress->awaiting_initial_end
          && ev.type == watch_event_type::bookmark) {
        progress->awaiting_initial_end = false;
        // Without allowWatchBookmarks the request is valid, but the end
        // of the initial events is never marked (as upstream).
        if (call->r.allow_bookmarks)
          cb->on_line(encode_watch_line(
            "BOOKMARK", encode_bookmark(call->r.res, ev.resource_version,
                                        true)));
        return;
      }
      if (ev.type == watch_event_type::bookmark && !call->r.allow_bookmarks)
        return;
      if (auto out = progress->selected.filter(call->r, ev))
        cb->on_line(event_line(*call, *out, progress->first_table));
    },
    [cb, end, call](w_end_atom, watch_id, const caf::error& err) {
      if (err) {
        auto info = from_caf_error(err, error_info{errc::unavailable,
                                                   caf::to_string(err)});
        if (info.code == errc::expired)
          cb->on_line(
            encode_watch_line("ERROR", expired_watch_status(info.message)));
      }
      end();
    },
    [self, server, call, progress](bookmark_tick_atom, bool last) {
      if (progress->id)
        self->send(server, w_mark_atom::value, *progress->id, false);
      if (!last)
        self->delayed_send(self, call->bookmarks.interval,
                           bookmark_tick_atom::value, false);
    },
    [end](deadline_atom) { end(); },
  };
}

} // namespace

http_reply reply_of(const api_status& status) {
  return {status.code, "application/json", status.body};
}

http_reply error_reply(const caf::error& err, resource res,
                       const std::string& name) {
  auto info = from_caf_error(
    err, error_info{errc::unavailable, "the API server did not answer: "
                                         + caf::to_string(err)});
  return reply_of(status_of(info, res, name));
}

http_reply error_reply(const caf::error& err, const route& r) {
  return error_reply(err, r.res, r.name);
}

void call_api(caf::actor_system& sys, const caf::actor& server, api_call call,
              std::chrono::milliseconds timeout,
              std::function<void(http_reply)> done) {
  if (!server) {
    done(reply_of(failure_status(503, "ServiceUnavailable",
                                 "the API server is not running")));
    return;
  }
  auto typed = caf::actor_cast<memory_api_server_actor>(server);
  sys.spawn([typed, call = std::move(call), timeout,
             done = std::move(done)](caf::event_based_actor* self) mutable {
    send_call(self, typed, std::move(call),
              std::chrono::duration_cast<caf::timespan>(timeout),
              std::move(done));
  });
}

std::shared_ptr<watch_session> start_watch(caf::actor_system& sys,
                                           const caf::actor& server,
                                           api_call call,
                                           watch_callbacks callbacks) {
  auto cb = std::make_shared<watch_callbacks>(std::move(callbacks));
  if (!server) {
    cb->on_line(encode_watch_line(
      "ERROR", failure_status(503, "ServiceUnavailable",
                              "the API server is not running")
                 .body));
    cb->on_end();
    return nullptr;
  }
  auto typed = caf::actor_cast<memory_api_server_actor>(server);
  auto self = sys.spawn(watch_actor, typed, std::move(call), cb);
  return std::make_shared<watch_actor_session>(std::move(self));
}

} // namespace podref::wire::detail
