// The time of an actor's clock in nanoseconds since its epoch: what the
// engine stores as access and update times, so that tests on CAF's
// deterministic scheduler see the virtual clock they advance.
#pragma once

#include <chrono>
#include <cstdint>

namespace podref {

/// `self->clock().now()` in nanoseconds since the clock's epoch.
template <class Self>
std::int64_t clock_ns(const Self& self) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           self->clock().now().time_since_epoch())
    .count();
}

} // namespace podref
