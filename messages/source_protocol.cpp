#include "podref/messages/source_protocol.hpp"

namespace podref {

const char* to_string(watch_event_type x) noexcept {
  switch (x) {
    case watch_event_type::added:
      return "ADDED";
    case watch_event_type::modified:
      return "MODIFIED";
    case watch_event_type::deleted:
      return "DELETED";
    case watch_event_type::bookmark:
      return "BOOKMARK";
  }
  return "UNKNOWN";
}

const char* to_string(source_verb x) noexcept {
  switch (x) {
    case source_verb::get:
      return "get";
    case source_verb::list:
      return "list";
    case source_verb::watch:
      return "watch";
  }
  return "unknown";
}

} // namespace podref
