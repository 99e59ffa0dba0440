// populate: pages become present, contents stay, ranges need not be aligned.
#include <cstdint>
#include <cstring>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "podref/actors/detail/fresh_memory.hpp"

using namespace podref;

namespace {

/// Which pages of [at, at + pages * page) are resident.
std::vector<bool> resident(char* at, std::size_t pages, std::size_t page) {
  std::vector<unsigned char> flags(pages);
  REQUIRE(mincore(at, pages * page, flags.data()) == 0);
  std::vector<bool> res;
  for (auto f : flags)
    res.push_back((f & 1) != 0);
  return res;
}

} // namespace

TEST_CASE("populate makes the whole pages of a range present",
          "[fresh_memory]") {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t pages = 8;
  auto* at = static_cast<char*>(mmap(nullptr, pages * page,
                                     PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(at != MAP_FAILED);
  CHECK(resident(at, pages, page) == std::vector<bool>(pages, false));
  // From the middle of page 1 to the middle of page 5: pages 2-4 only.
  if (!populate(at + page + 100, 4 * page)) {
    WARN("the kernel cannot populate (MADV_POPULATE_WRITE needs Linux 5.14)");
  } else {
    CHECK(resident(at, pages, page)
          == std::vector<bool>{false, false, true, true, true, false, false,
                               false});
  }
  munmap(at, pages * page);
}

TEST_CASE("populate keeps contents and accepts ranges without a whole page",
          "[fresh_memory]") {
  std::vector<std::uint32_t> data(100000);
  for (std::uint32_t i = 0; i < data.size(); ++i)
    data[i] = i * 7;
  populate(data.data(), data.size() * sizeof(data[0])); // may be refused
  CHECK(populate(data.data() + 3, 10)); // no whole page: nothing to do
  CHECK(populate(data.data(), 0));
  for (std::uint32_t i = 0; i < data.size(); ++i)
    REQUIRE(data[i] == i * 7);
}
