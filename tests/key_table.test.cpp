// key_table against a std::map model, with hashes weak enough to force
// equal tags, long probe runs, wrap-around and backward shifts.
#include <map>
#include <random>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "podref/actors/detail/key_table.hpp"

using namespace podref;

namespace {

struct item {
  std::string key;
  int value = 0;
};

struct key_of_item {
  std::string_view operator()(const item& x) const noexcept {
    return x.key;
  }
};

using table = key_table<item, key_of_item>;

std::map<std::string, int> contents(const table& x) {
  std::map<std::string, int> res;
  for (const auto& i : x)
    res.emplace(i.key, i.value);
  return res;
}

} // namespace

TEST_CASE("key_table finds, inserts and erases by key", "[key_table]") {
  table x;
  CHECK(x.empty());
  CHECK(x.find(hashed_key{"a"}) == nullptr);
  x.insert(hashed_key{"a"}.hash, item{"a", 1});
  x.insert(hashed_key{"b"}.hash, item{"b", 2});
  REQUIRE(x.find(hashed_key{"a"}) != nullptr);
  CHECK(x.find(hashed_key{"a"})->value == 1);
  CHECK(x.find(hashed_key{"b"})->value == 2);
  CHECK(x.size() == 2);
  x.erase(x.find(hashed_key{"a"}));
  CHECK(x.find(hashed_key{"a"}) == nullptr);
  REQUIRE(x.find(hashed_key{"b"}) != nullptr); // moved into the hole
  CHECK(x.find(hashed_key{"b"})->value == 2);
  CHECK(contents(x) == std::map<std::string, int>{{"b", 2}});
}

TEST_CASE("key_table compares the text when hashes collide", "[key_table]") {
  table x;
  x.insert(42, item{"one", 1});
  x.insert(42, item{"two", 2});
  CHECK(x.find(hashed_key{"one", 42})->value == 1);
  CHECK(x.find(hashed_key{"two", 42})->value == 2);
  CHECK(x.find(hashed_key{"three", 42}) == nullptr);
  CHECK(x.find(hashed_key{"one", 43}) == nullptr);
  auto is = [](int v) { return [v](const item& i) { return i.value == v; }; };
  REQUIRE(x.find_if(42, is(2)) != nullptr);
  CHECK(x.find_if(42, is(2))->key == "two");
  CHECK(x.find_if(42, is(3)) == nullptr);
  CHECK(x.find_if(43, is(1)) == nullptr);
}

TEST_CASE("key_table matches a map model under random inserts and erases",
          "[key_table]") {
  // hash = key number % buckets: few buckets make equal tags and long runs.
  for (std::uint32_t buckets : {1u, 7u, 1000u, 1u << 30}) {
    std::mt19937 rng(buckets);
    std::uniform_int_distribution<int> pick{0, 300};
    table x;
    if (buckets == 7)
      x.reserve(100);
    std::map<std::string, int> model;
    for (int step = 0; step < 20000; ++step) {
      auto k = pick(rng);
      auto key = "key-" + std::to_string(k);
      hashed_key hk{key, static_cast<std::size_t>(k) % buckets};
      auto* found = x.find(hk);
      auto i = model.find(key);
      REQUIRE((found != nullptr) == (i != model.end()));
      if (found != nullptr) {
        REQUIRE(found->value == i->second);
        if (rng() % 3 == 0) {
          found->value += 1;
          ++i->second;
        } else {
          x.erase(found);
          model.erase(i);
        }
      } else {
        x.insert(hk.hash, item{key, step});
        model.emplace(key, step);
      }
      REQUIRE(x.size() == model.size());
      REQUIRE(x.capacity() >= 2 * x.size());
    }
    CHECK(contents(x) == model);
    for (auto& [key, value] : model) {
      auto k = std::stoi(key.substr(4));
      auto hash = static_cast<std::size_t>(k) % buckets;
      auto* found = x.find(hashed_key{key, hash});
      REQUIRE(found != nullptr);
      CHECK(found->value == value);
    }
  }
}

TEST_CASE("key_table keeps its values through growth", "[key_table]") {
  table x;
  for (int k = 0; k < 5000; ++k) {
    auto key = std::to_string(k);
    x.prefetch(hashed_key{key}.hash);
    x.insert(hashed_key{key}.hash, item{key, k});
  }
  CHECK(x.size() == 5000);
  for (int k = 0; k < 5000; ++k) {
    auto* found = x.find(hashed_key{std::to_string(k)});
    REQUIRE(found != nullptr);
    CHECK(found->value == k);
  }
}
