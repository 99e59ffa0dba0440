// process_stats: the process's memory as the kernel and the allocator see
// it, for per-reflector memory and peak RSS, and its CPU time.
#pragma once

#include <cstdint>

namespace podref::bench {

/// Resident set size now, from /proc/self/statm (0 if unreadable).
std::uint64_t rss_bytes();

/// Peak resident set size (VmHWM of /proc/self/status) since the last
/// reset_peak_rss(), or since the start.
std::uint64_t peak_rss_bytes();

/// Resets the peak RSS to the current RSS (writes 5 to
/// /proc/self/clear_refs); a no-op where the kernel refuses.
void reset_peak_rss();

/// Heap bytes in use according to the allocator (tcmalloc's
/// current_allocated_bytes, else glibc's mallinfo2).
std::uint64_t heap_bytes();

/// CPU time of the whole process (every thread, user and system) so far:
/// the difference over a timed loop, divided by its wall time, is how many
/// cores the run kept busy.
double process_cpu_seconds();

/// Returns free heap memory to the kernel, so RSS deltas measure use.
void trim_heap();

} // namespace podref::bench
