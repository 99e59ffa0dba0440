// Value types of the object-source protocol: what a reflector asks of an API
// server (get, list by name, watch from a resourceVersion) and what it gets
// back. Shaped after the Kubernetes REST API so that a real API server can
// sit behind the same actor interface (messages/actor_types.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"

namespace podref {

/// The type of a watch event, as in the API's watch stream.
enum class watch_event_type : std::uint8_t {
  added,
  modified,
  deleted,
  /// Carries no object change, only a newer resourceVersion.
  bookmark,
};

/// "ADDED", "MODIFIED", "DELETED", "BOOKMARK".
const char* to_string(watch_event_type x) noexcept;

/// One event of a watch stream.
struct watch_event {
  watch_event_type type = watch_event_type::added;
  /// The object after the change; for DELETED its last state. Empty for
  /// BOOKMARK.
  api_object object;
  /// The resourceVersion this event brings the watcher to.
  std::uint64_t resource_version = 0;
};

/// The answer to a list: the matching items and the list's resourceVersion
/// (the cluster-wide version at which the list was taken).
struct list_result {
  std::vector<api_object> items;
  std::string resource_version;
};

/// Identifies one open watch at its source.
using watch_id = std::uint64_t;

/// The verbs a source counts, as client-go's fake clientset records them.
enum class source_verb : std::uint8_t {
  get,
  list,
  watch,
};

/// "get", "list", "watch".
const char* to_string(source_verb x) noexcept;

/// One recorded call to a source, for tests and stats.
struct source_action {
  source_verb verb = source_verb::get;
  resource res = resource::secrets;
  std::string ns;
  std::string name;
  /// The resourceVersion a get or list asked for: "" is a live (quorum)
  /// read, "0" a read from the API server's cache. Empty for watches.
  std::string rv;
};

/// How many calls of each verb a source answered (failed ones included).
struct source_action_counts {
  std::uint64_t gets = 0;
  std::uint64_t lists = 0;
  std::uint64_t watches = 0;

  void add(source_verb verb) noexcept {
    switch (verb) {
      case source_verb::get:
        ++gets;
        break;
      case source_verb::list:
        ++lists;
        break;
      case source_verb::watch:
        ++watches;
        break;
    }
  }
};

/// The calls of `later` that `earlier` had not counted yet.
inline source_action_counts operator-(const source_action_counts& later,
                                      const source_action_counts& earlier) {
  return {later.gets - earlier.gets, later.lists - earlier.lists,
          later.watches - earlier.watches};
}

/// What a namespace multiplexer counts (for tests and figures).
struct mux_stats {
  /// Names tracked (referenced in its namespace).
  std::uint64_t tracked = 0;
  /// Reflector watches it serves now.
  std::uint64_t sub_watches = 0;
  /// Namespace-wide lists and watches it asked its upstream for, and the
  /// per-object lists it passed on.
  std::uint64_t ns_lists = 0;
  std::uint64_t ns_watches = 0;
  std::uint64_t object_lists = 0;
  /// Reflector lists answered from its cache.
  std::uint64_t cached_lists = 0;
  /// Events of its namespace watch for names nobody references.
  std::uint64_t foreign_events = 0;
  /// Events dropped as not newer than the name's state.
  std::uint64_t duplicate_events = 0;
};

inline bool operator==(const source_action& x, const source_action& y) {
  return x.verb == y.verb && x.res == y.res && x.ns == y.ns
         && x.name == y.name && x.rv == y.rv;
}

} // namespace podref
