#include "podref/actors/detail/fresh_memory.hpp"

#include <cstdint>

#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#  define MADV_POPULATE_WRITE 23 // Linux 5.14; older kernels answer EINVAL
#endif

namespace podref {

bool populate(void* at, std::size_t bytes) noexcept {
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  auto from = (reinterpret_cast<std::uintptr_t>(at) + page - 1) & ~(page - 1);
  auto to = (reinterpret_cast<std::uintptr_t>(at) + bytes) & ~(page - 1);
  return from >= to
         || madvise(reinterpret_cast<void*>(from), to - from,
                    MADV_POPULATE_WRITE)
              == 0;
}

} // namespace podref
