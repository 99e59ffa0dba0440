// Asking the kernel for a shorter time slice for the calling thread.
//
// Linux's EEVDF scheduler (6.12 and later) reads sched_attr::sched_runtime
// of a SCHED_OTHER thread as the slice it asks for, and lets a waking
// thread with a shorter slice preempt a running one at once instead of at
// the end of the running thread's slice (1.4 ms on a 2-core machine). The
// runtime's workers run short actor jobs whose latency decides how soon an
// API server write reaches readers; with busy caller threads on every core
// they would otherwise wait up to a full slice for a CPU. No privilege is
// needed; the kernel clamps the value to [100 µs, 100 ms].
#pragma once

#include <chrono>

namespace podref::detail {

/// Asks for `slice` as the calling thread's time slice, keeping its policy
/// and nice value. Returns whether the kernel took it; older kernels and
/// other systems keep their default and return false (nothing else
/// changes). A zero `slice` asks for nothing and returns false.
bool request_thread_slice(std::chrono::nanoseconds slice) noexcept;

/// The calling thread's slice as the kernel reports it; zero where the
/// kernel does not report one.
std::chrono::nanoseconds thread_slice() noexcept;

} // namespace podref::detail
