#include "podref/messages/object_change.hpp"

namespace podref {

const char* to_string(change_kind x) noexcept {
  switch (x) {
    case change_kind::updated:
      return "updated";
    case change_kind::deleted:
      return "deleted";
    case change_kind::ended:
      return "ended";
  }
  return "?";
}

const std::vector<std::string>& object_change::pod_uids() const noexcept {
  static const std::vector<std::string> none;
  return uids ? *uids : none;
}

} // namespace podref
