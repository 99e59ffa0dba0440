// What an open watch of the front sends (wire/watch_filter.cpp): which
// events pass its selectors, how each is encoded, and where the server's
// watch starts. Private to wire/; the hubs (watch_hubs.hpp) keep one
// watch_filter and one label_tracker per watch.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/source_protocol.hpp"
#include "podref/wire/label_selector.hpp"
#include "podref/wire/router.hpp"

namespace podref::wire::detail {

/// Encodes one event for the watch's client: the object (or a Table of one
/// row, with the columns only in the first event, which clears
/// `first_table`).
std::string event_line(resource res, bool table, const watch_event& ev,
                       bool& first_table);

/// What an open watch's events are filtered and encoded by: its request's
/// route less what only opening it needs (a whole route is 512 bytes).
struct watch_filter {
  resource res = resource::secrets;
  /// The object named in a Status about this watch.
  std::string name;
  std::vector<field_requirement> fields;
  std::vector<label_requirement> labels;
  bool allow_bookmarks = false;
  bool table = false;

  bool selects(const api_object& obj) const;
};

/// A watch's filter. With a label selector, an object whose labels stop
/// (start) matching is sent as DELETED (ADDED), as the API server's watch
/// cache does; so the watch remembers which objects it has sent.
class label_tracker {
public:
  /// The event to send for `ev`, if any.
  std::optional<watch_event> filter(const watch_filter& f,
                                    const watch_event& ev);

private:
  std::set<std::string> sent_;
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

watch_start start_of(const route& r);

} // namespace podref::wire::detail
