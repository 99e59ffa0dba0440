#include "podref/runtime/detail/thread_slice.hpp"

#include <cstdint>

#if defined(__linux__)
#  include <sys/syscall.h>
#  include <unistd.h>
#endif

namespace podref::detail {

#if defined(__linux__) && defined(SYS_sched_setattr)                         \
  && defined(SYS_sched_getattr)

namespace {

/// The kernel's struct sched_attr (glibc 2.36 does not declare it).
struct sched_attr {
  std::uint32_t size = sizeof(sched_attr);
  std::uint32_t sched_policy = 0;
  std::uint64_t sched_flags = 0;
  std::int32_t sched_nice = 0;
  std::uint32_t sched_priority = 0;
  std::uint64_t sched_runtime = 0;
  std::uint64_t sched_deadline = 0;
  std::uint64_t sched_period = 0;
  std::uint32_t sched_util_min = 0;
  std::uint32_t sched_util_max = 0;
};

constexpr int this_thread = 0;

bool get_attr(sched_attr& attr) noexcept {
  return syscall(SYS_sched_getattr, this_thread, &attr, sizeof(attr), 0) == 0;
}

} // namespace

bool request_thread_slice(std::chrono::nanoseconds slice) noexcept {
  sched_attr attr;
  if (slice.count() <= 0 || !get_attr(attr))
    return false;
  // Only SCHED_OTHER (0) threads have a slice to ask for; real-time and
  // deadline threads keep what they have.
  if (attr.sched_policy != 0)
    return false;
  attr.sched_flags = 0;
  attr.sched_runtime = static_cast<std::uint64_t>(slice.count());
  if (syscall(SYS_sched_setattr, this_thread, &attr, 0) != 0)
    return false;
  // Kernels before 6.12 accept and ignore sched_runtime for SCHED_OTHER.
  sched_attr now;
  return get_attr(now) && now.sched_runtime != 0;
}

std::chrono::nanoseconds thread_slice() noexcept {
  sched_attr attr;
  if (!get_attr(attr))
    return std::chrono::nanoseconds{0};
  return std::chrono::nanoseconds{static_cast<std::int64_t>(attr.sched_runtime)};
}

#else

bool request_thread_slice(std::chrono::nanoseconds) noexcept {
  return false;
}

std::chrono::nanoseconds thread_slice() noexcept {
  return std::chrono::nanoseconds{0};
}

#endif

} // namespace podref::detail
