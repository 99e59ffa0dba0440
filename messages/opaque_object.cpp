#include "podref/messages/opaque_object.hpp"

namespace podref {

bool operator==(const opaque_object& x, const opaque_object& y) {
  return x.metadata == y.metadata && x.deletion_timestamp == y.deletion_timestamp
         && x.deletion_grace_period_seconds == y.deletion_grace_period_seconds
         && x.body == y.body;
}

} // namespace podref
