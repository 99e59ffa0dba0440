// The bridge from HTTP to the API server actor (private to wire/): a routed
// request becomes messages to the current server actor, and its reply or
// watch events come back through callbacks that CAF threads call. The
// callbacks must not block: the HTTP server's post their work to the
// connection's strand. No CAF and no Boost here.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "podref/messages/api_object.hpp"
#include "podref/wire/router.hpp"

namespace caf {
class actor;
class actor_system;
} // namespace caf

namespace podref::wire::detail {

/// A complete HTTP reply.
struct http_reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

/// One request for the API server actor: the route, the decoded body of a
/// create or update, and whether the client asked for the Table form.
struct api_call {
  route r;
  api_object object;
  bool table = false;
  /// Check a create's namespace (http_server_options::namespace_lifecycle).
  bool namespace_lifecycle = false;
};

/// Sends `call` to `server` and calls `done` once with the reply (503 when
/// there is no server or it does not answer within `timeout`).
void call_api(caf::actor_system& sys, const caf::actor& server, api_call call,
              std::chrono::milliseconds timeout,
              std::function<void(http_reply)> done);

/// What a watch tells its connection, in this order: lines (each a whole
/// NDJSON event), then end once. Neither is called after cancel() returned
/// and the session's actor has seen it.
struct watch_callbacks {
  std::function<void(std::string)> on_line;
  std::function<void()> on_end;
};

/// One open watch: an actor that is the server's watcher.
class watch_session {
public:
  virtual ~watch_session() = default;

  /// Ends the watch at the server (its actor exits; the server drops the
  /// watches of a watcher that is gone). Idempotent, any thread.
  virtual void cancel() = 0;
};

/// Opens a watch for `call` (route kind watch) at `server`.
std::shared_ptr<watch_session> start_watch(caf::actor_system& sys,
                                           const caf::actor& server,
                                           api_call call,
                                           watch_callbacks callbacks);

} // namespace podref::wire::detail
