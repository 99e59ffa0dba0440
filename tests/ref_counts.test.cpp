// The manager's flat bookkeeping: ref_counts and uid_refs against a
// std::map model, and uid_table's interning and id reuse.
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "podref/actors/detail/ref_counts.hpp"
#include "podref/actors/detail/uid_refs.hpp"
#include "podref/actors/detail/uid_table.hpp"
#include "podref/messages/pod_registration.hpp"

using namespace podref;

namespace {

/// What a count container holds, as a map (ids are uint32 in both).
template <class Counts>
std::map<std::uint32_t, int> contents(const Counts& x) {
  std::map<std::uint32_t, int> res;
  x.for_each([&](std::uint32_t id, int n) { res.emplace(id, n); });
  return res;
}

} // namespace

// ref_counts (one object's, or a spilled uid's, counts) and uid_refs (a
// uid's counts, inline up to four objects) count alike.

TEMPLATE_TEST_CASE("counts per id and erases at zero", "[ref_counts]",
                   ref_counts, uid_refs) {
  TestType x;
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
  CHECK(contents(x) == std::map<std::uint32_t, int>{{9, 1}});
}

TEMPLATE_TEST_CASE("counts match a map model under random adds and removes",
                   "[ref_counts]", ref_counts, uid_refs) {
  // Small id ranges force long probe runs, wrap-around and backward shifts
  // in ref_counts; ranges below, at and above uid_refs' inline capacity
  // make it spill, refill and move between its two forms.
  for (std::uint32_t range : {3u, 5u, 9u, 17u, 200u}) {
    std::mt19937 rng(range);
    std::uniform_int_distribution<std::uint32_t> pick{1, range};
    TestType x;
    std::map<std::uint32_t, int> model;
    for (int step = 0; step < 20000; ++step) {
      auto id = pick(rng);
      // Removes win slightly: the sizes go up and down through the spill.
      if (rng() % 100 < 48) {
        REQUIRE(x.add(id) == (model[id]++ == 0));
      } else {
        auto expected = ref_counts::removal::absent;
        if (auto i = model.find(id); i != model.end()) {
          expected = --i->second == 0 ? ref_counts::removal::erased
                                      : ref_counts::removal::decremented;
          if (i->second == 0)
            model.erase(i);
        }
        REQUIRE(x.remove(id) == expected);
      }
      REQUIRE(x.size() == model.size());
    }
    CHECK(contents(x) == model);
    for (auto& [id, n] : model)
      CHECK(x.count(id) == n);
  }
}

TEST_CASE("uid_table interns uids and reuses freed ids", "[ref_counts]") {
  uid_table t;
  auto a = t.acquire(hashed_key{"uid-a"});
  auto b = t.acquire(hashed_key{"uid-b"});
  CHECK(a != 0);
  CHECK(b != 0);
  CHECK(a != b);
  CHECK(t.acquire(hashed_key{"uid-a"}) == a);
  CHECK(t.find(hashed_key{"uid-a"}) == a);
  CHECK(t.text(b) == "uid-b");
  CHECK(t.size() == 2);
  t.release(a);
  CHECK(t.find(hashed_key{"uid-a"}) == a); // one holder left
  t.release(a);
  CHECK(t.find(hashed_key{"uid-a"}) == 0);
  CHECK(t.size() == 1);
  auto c = t.acquire(hashed_key{"uid-c"});
  CHECK(c == a); // the freed id is reused
  CHECK(t.text(c) == "uid-c");
  t.retain(c);
  t.release(c);
  CHECK(t.find(hashed_key{"uid-c"}) == c);
}

TEST_CASE("uid_table views a registration's uid and keeps it while interned",
          "[ref_counts]") {
  uid_table t;
  auto reg = make_registration("ns", "pod", "uid-r",
                               std::vector<std::string>{});
  std::weak_ptr<const pod_registration> weak = reg;
  auto id = t.acquire(reg);
  reg.reset();
  CHECK_FALSE(weak.expired());
  CHECK(t.text(id) == "uid-r");
  CHECK(t.find(hashed_key{"uid-r"}) == id);
  // Another registration with the same uid shares the id and its text.
  auto other = make_registration("ns2", "pod", "uid-r",
                                 std::vector<std::string>{});
  CHECK(t.acquire(other) == id);
  t.release(id);
  CHECK_FALSE(weak.expired());
  t.release(id);
  CHECK(weak.expired());
  CHECK(t.find(hashed_key{"uid-r"}) == 0);
  CHECK(t.size() == 0);
}
