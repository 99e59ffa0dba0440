// object_status: what the engine keeps of one object, as a test or a
// diagnostic asks for it (object_manager::status()). A snapshot of one
// moment, taken in the order of the manager's messages: after sync() it
// reflects every registration made before.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "podref/messages/errors.hpp"

namespace podref {

enum class object_phase : std::uint8_t {
  /// No registered pod references the object: nothing is kept.
  unreferenced,
  /// Referenced, but no list (Watch) or fetch (Cache) has succeeded since
  /// it was (re)started: reads wait for one.
  unsynced,
  /// Watch: listed, and watching or opening the watch. Cache: a fetched
  /// state (object or NotFound) is cached.
  synced,
  /// The last list, watch or fetch failed; `failure` says why. Watch: the
  /// reflector backs off and retries (what it listed before is still
  /// served); Cache: the next read fetches again.
  failing,
  /// Watch: stopped because nobody read it for max_idle; the next read
  /// lists again.
  idle_stopped,
  /// Watch: stopped for good because a read saw it immutable; what was
  /// read is served for ever.
  immutable_stopped,
};

/// "unreferenced", "unsynced", "synced", "failing", "idle-stopped",
/// "immutable-stopped".
const char* to_string(object_phase x) noexcept;

struct object_status {
  object_phase phase = object_phase::unreferenced;
  /// Set exactly while phase is failing.
  std::optional<error_info> failure;
  /// Whether the state last seen has the object (false: not found, or
  /// nothing seen yet).
  bool found = false;
  /// The object's resourceVersion as last seen ("" when not found).
  std::string resource_version;
  /// The references of registered pods, by pod uid.
  std::map<std::string, int> references;
};

} // namespace podref
