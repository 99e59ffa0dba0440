// The bridge's reads and writes (one short-lived actor per request) and its
// watch sessions (one actor per watch).
#include "podref/wire/detail/api_bridge.hpp"
#include "podref/wire/detail/api_bridge_kinds.hpp"

#include <atomic>
#include <optional>
#include <set>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/status.hpp"
#include "podref/wire/table.hpp"

namespace podref::wire::detail {

namespace {

using clock_type = std::chrono::system_clock;

http_reply reply_of(const api_status& status) {
  return {status.code, "application/json", status.body};
}

http_reply error_reply(const caf::error& err, const route& r) {
  auto info = from_caf_error(
    err, error_info{errc::unavailable, "the API server did not answer: "
                                         + caf::to_string(err)});
  return reply_of(status_of(info, r.res, r.name));
}

bool keep(const route& r, const api_object& obj) {
  if (r.field_name && obj.meta().name != *r.field_name)
    return false;
  if (r.field_namespace && obj.meta().ns != *r.field_namespace)
    return false;
  return matches_node_name(r, obj) && matches_labels(r.labels, obj);
}

http_reply list_reply(const api_call& call, list_result result) {
  std::vector<api_object> items;
  for (auto& x : result.items)
    if (keep(call.r, x))
      items.push_back(std::move(x));
  if (call.table)
    return {200, "application/json",
            encode_table(call.r.res, items, result.resource_version, true,
                         clock_type::now())};
  return {200, "application/json",
          encode_list(call.r.res, items, result.resource_version)};
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

void send_list(caf::event_based_actor* self,
               const memory_api_server_actor& server, api_call call,
               caf::timespan timeout, std::function<void(http_reply)> done) {
  auto ns = scope_namespace(call.r);
  auto on_error = [done, r = call.r](caf::error& err) {
    done(error_reply(err, r));
  };
  auto on_list = [done, call](list_result& result) {
    done(list_reply(call, std::move(result)));
  };
  if (call.r.field_name && !ns.empty())
    self
      ->request(server, timeout, list_atom::value, call.r.res, ns,
                *call.r.field_name, call.r.resource_version)
      .then(on_list, on_error);
  else
    self
      ->request(server, timeout, list_ns_atom::value, call.r.res, ns,
                call.r.resource_version)
      .then(on_list, on_error);
}

void send_delete(caf::event_based_actor* self,
                 const memory_api_server_actor& server, api_call call,
                 caf::timespan timeout, std::function<void(http_reply)> done) {
  auto r = call.r;
  self->request(server, timeout, peek_atom::value, r.res, r.ns, r.name)
    .then(
      [self, server, r, timeout, done](const api_object& found) {
        auto uid = found.meta().uid;
        self
          ->request(server, timeout, caf::delete_atom::value, r.res, r.ns,
                    r.name)
          .then(
            [r, uid, done](caf::ok_atom) {
              done(reply_of(delete_success_status(r.res, r.name, uid)));
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
      self
        ->request(server, timeout, caf::get_atom::value, r.res, r.ns, r.name,
                  r.resource_version)
        .then(answer(200), on_error);
      return;
    case route_kind::create:
      check_namespace(
        self, server, call, timeout,
        [self, server, timeout, call, answer, on_error] {
          self
            ->request(server, timeout, create_atom::value,
                      stamp_new(call.object, clock_type::now()))
            .then(answer(201), on_error);
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

caf::behavior watch_actor(caf::event_based_actor* self,
                          memory_api_server_actor server, api_call call,
                          std::shared_ptr<watch_callbacks> cb) {
  auto ended = std::make_shared<bool>(false);
  auto end = [self, cb, ended] {
    if (!*ended) {
      *ended = true;
      cb->on_end();
    }
    self->quit();
  };
  auto me = caf::actor_cast<watcher_actor>(self);
  auto ns = scope_namespace(call.r);
  auto on_error = [cb, end, call](caf::error& err) {
    auto info = from_caf_error(err, error_info{errc::unavailable,
                                               caf::to_string(err)});
    auto status = status_of(info, call.r.res, call.r.name);
    cb->on_line(encode_watch_line("ERROR", info.code == errc::expired
                                             ? expired_watch_status(
                                               info.message)
                                             : status.body));
    end();
  };
  auto rv = call.r.resource_version;
  if (call.r.field_name && !ns.empty())
    self
      ->request(server, caf::infinite, watch_atom::value, call.r.res, ns,
                *call.r.field_name, rv, me)
      .then([](watch_id) {}, on_error);
  else
    self
      ->request(server, caf::infinite, watch_ns_atom::value, call.r.res, ns,
                rv, me)
      .then([](watch_id) {}, on_error);
  auto first_table = std::make_shared<bool>(true);
  auto selected = std::make_shared<label_tracker>();
  return {
    [cb, call, first_table, selected](w_event_atom, watch_id,
                                      const watch_event& ev) {
      if (auto out = selected->filter(call.r, ev))
        cb->on_line(event_line(call, *out, *first_table));
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
  };
}

} // namespace

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
