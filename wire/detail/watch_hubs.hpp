// The front's watches (wire/watch_hubs.cpp): a few hub actors, each the
// API server's watcher for many open watches. Private to wire/.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "podref/wire/detail/api_bridge.hpp"

namespace podref::wire::detail {

/// What a watch tells its connection, in this order: lines (each a whole
/// NDJSON event), then end once. Neither is called after cancel() returned
/// and the watch's hub has seen it.
struct watch_callbacks {
  std::function<void(std::string)> on_line;
  std::function<void()> on_end;
};

/// One open watch.
class watch_session {
public:
  virtual ~watch_session() = default;

  /// Ends the watch (at the server too). Idempotent, any thread.
  virtual void cancel() = 0;
};

/// The actors that are the server's watchers for the front's watches: a
/// few hubs, each carrying many watches with one timer for all of their
/// deadlines and bookmarks (an actor per watch cost ~1.4 KB and three CAF
/// timers ~0.6 KB per open watch). A watch's events are encoded on its
/// hub; watches are spread over the hubs in turn.
class watch_hubs {
public:
  watch_hubs(caf::actor_system& sys, std::size_t count);
  /// Ends the hubs; the server ends their watches.
  ~watch_hubs();

  watch_hubs(const watch_hubs&) = delete;
  watch_hubs& operator=(const watch_hubs&) = delete;

  /// Opens a watch for `call` (route kind watch) at `server`.
  std::shared_ptr<watch_session> start(const caf::actor& server, api_call call,
                                       watch_callbacks callbacks);

private:
  struct state;
  std::unique_ptr<state> x_;
};

} // namespace podref::wire::detail
