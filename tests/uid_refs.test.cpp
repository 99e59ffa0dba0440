// uid_refs: the per-uid object counts, inline and spilled, against a
// std::map model.
#include <map>
#include <random>

#include <catch2/catch.hpp>

#include "podref/actors/uid_refs.hpp"

using namespace podref;

namespace {

std::map<object_id, int> contents(const uid_refs& x) {
  std::map<object_id, int> res;
  x.for_each([&](object_id obj, int n) { res.emplace(obj, n); });
  return res;
}

} // namespace

TEST_CASE("uid_refs counts per object and erases at zero", "[uid_refs]") {
  uid_refs x;
  CHECK(x.empty());
  CHECK(x.count(7) == 0);
  CHECK(x.remove(7) == ref_counts::removal::absent);
  CHECK(x.add(7));
  CHECK_FALSE(x.add(7));
  CHECK(x.add(9));
  CHECK(x.count(7) == 2);
  CHECK(x.size() == 2);
  CHECK(x.remove(7) == ref_counts::removal::decremented);
  CHECK(x.remove(7) == ref_counts::removal::erased);
  CHECK(x.remove(7) == ref_counts::removal::absent);
  CHECK(contents(x) == std::map<object_id, int>{{9, 1}});
}

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

TEST_CASE("uid_refs matches a map model under random adds and removes",
          "[uid_refs]") {
  // Ranges below, at and above the inline capacity: spills, refills and
  // moves between the two forms.
  for (object_id range : {3u, 5u, 9u, 200u}) {
    std::mt19937 rng(static_cast<std::uint32_t>(range));
    std::uniform_int_distribution<object_id> pick{1, range};
    uid_refs x;
    std::map<object_id, int> model;
    for (int step = 0; step < 20000; ++step) {
      auto obj = pick(rng);
      // Removes win slightly: the sizes go up and down through the spill.
      if (rng() % 100 < 48) {
        REQUIRE(x.add(obj) == (model[obj]++ == 0));
      } else {
        auto expected = ref_counts::removal::absent;
        if (auto i = model.find(obj); i != model.end()) {
          expected = --i->second == 0 ? ref_counts::removal::erased
                                      : ref_counts::removal::decremented;
          if (i->second == 0)
            model.erase(i);
        }
        REQUIRE(x.remove(obj) == expected);
      }
      REQUIRE(x.size() == model.size());
    }
    CHECK(contents(x) == model);
    for (auto& [obj, n] : model)
      CHECK(x.count(obj) == n);
  }
}
