#include "podref/messages/object_status.hpp"

namespace podref {

const char* to_string(object_phase x) noexcept {
  switch (x) {
    case object_phase::unreferenced:
      return "unreferenced";
    case object_phase::unsynced:
      return "unsynced";
    case object_phase::synced:
      return "synced";
    case object_phase::failing:
      return "failing";
    case object_phase::idle_stopped:
      return "idle-stopped";
    case object_phase::immutable_stopped:
      return "immutable-stopped";
  }
  return "unknown";
}

} // namespace podref
