// uid_refs: spilling past its inline room keeps the counts (the behaviour it
// shares with ref_counts is tested against a model in ref_counts.test.cpp).
#include <map>

#include <catch2/catch.hpp>

#include "podref/actors/detail/uid_refs.hpp"

using namespace podref;

namespace {

std::map<object_id, int> contents(const uid_refs& x) {
  std::map<object_id, int> res;
  x.for_each([&](object_id obj, int n) { res.emplace(obj, n); });
  return res;
}

} // namespace

TEST_CASE("uid_refs keeps the counts when it spills past four objects",
          "[uid_refs]") {
  uid_refs x;
  for (object_id obj = 1; obj <= 4; ++obj)
    for (object_id k = 0; k < obj; ++k)
      x.add(obj);
  CHECK(x.size() == 4);
  CHECK(x.add(5)); // the fifth distinct object spills
  CHECK(x.size() == 5);
  CHECK(contents(x)
        == std::map<object_id, int>{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 1}});
  CHECK_FALSE(x.add(4));
  CHECK(x.count(4) == 5);
  // Emptied, it keeps counting in its table.
  for (object_id obj = 1; obj <= 5; ++obj)
    while (x.remove(obj) != ref_counts::removal::erased) {
    }
  CHECK(x.empty());
  CHECK(x.add(3));
  CHECK(contents(x) == std::map<object_id, int>{{3, 1}});
}
