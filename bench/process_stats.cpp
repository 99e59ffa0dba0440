// Reads /proc/self and asks the allocator: tcmalloc when the program links
// it (see podref_program_malloc in CMakeLists.txt), else glibc's malloc.
#include "bench/process_stats.hpp"

#include <fstream>
#include <string>

#include <malloc.h>
#include <time.h>
#include <unistd.h>

// tcmalloc's C interface, present only when tcmalloc is linked.
extern "C" {
__attribute__((weak)) int MallocExtension_GetNumericProperty(const char* name,
                                                             size_t* value);
__attribute__((weak)) void MallocExtension_ReleaseFreeMemory();
}

namespace podref::bench {

std::uint64_t rss_bytes() {
  std::ifstream in{"/proc/self/statm"};
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  if (!(in >> size >> resident))
    return 0;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

std::uint64_t peak_rss_bytes() {
  std::ifstream in{"/proc/self/status"};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

void reset_peak_rss() {
  std::ofstream out{"/proc/self/clear_refs"};
  out << "5";
}

std::uint64_t heap_bytes() {
  if (MallocExtension_GetNumericProperty != nullptr) {
    size_t value = 0;
    if (MallocExtension_GetNumericProperty("generic.current_allocated_bytes",
                                           &value))
      return value;
  }
  auto info = mallinfo2();
  return static_cast<std::uint64_t>(info.uordblks + info.hblkhd);
}

double process_cpu_seconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
    return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void trim_heap() {
  if (MallocExtension_ReleaseFreeMemory != nullptr)
    MallocExtension_ReleaseFreeMemory();
  malloc_trim(0);
}

} // namespace podref::bench
