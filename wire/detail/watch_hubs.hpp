// The front's watches (wire/watch_hubs.cpp): a few hub actors, each the
// API server's watcher for many open watches. Private to wire/.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "podref/wire/detail/api_bridge.hpp"

namespace podref::wire::detail {

/// What a watch tells its connection, in this order: lines (each a whole
/// NDJSON event), then its end once (no line). Not called after cancel()
/// returned and the watch's hub has seen it. One function rather than two:
/// each holds the connection's gate and handle, and 100k open watches pay
/// for every byte of it.
using watch_output = std::function<void(std::optional<std::string> line)>;

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
                                       watch_output out);

private:
  struct state;
  std::unique_ptr<state> x_;
};

} // namespace podref::wire::detail
