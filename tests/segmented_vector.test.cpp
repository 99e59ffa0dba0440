// segmented_vector against a std::vector model: indexing across segment
// boundaries, elements that never move, index_of, shrinking with one empty
// segment kept, and destruction of every element.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "podref/actors/detail/segmented_vector.hpp"

using namespace podref;

TEST_CASE("segmented_vector indexes across segments", "[segmented_vector]") {
  segmented_vector<std::uint64_t, 2> x; // segments of 4, 8, 16, ...
  CHECK(x.empty());
  CHECK(x.capacity() == 0);
  for (std::uint64_t i = 0; i < 1000; ++i)
    CHECK(x.emplace_back(i * 3) == i * 3);
  CHECK(x.size() == 1000);
  // 4 + 8 + ... + 512 = 1020 >= 1000 > 508.
  CHECK(x.capacity() == 1020);
  for (std::size_t i = 0; i < 1000; ++i) {
    REQUIRE(x[i] == i * 3);
    REQUIRE(x.index_of(&x[i]) == i);
  }
  std::uint64_t sum = 0;
  for (auto v : x)
    sum += v;
  CHECK(sum == 3 * 999 * 1000 / 2);
  CHECK(x.back() == 999 * 3);
}

TEST_CASE("segmented_vector never moves its elements", "[segmented_vector]") {
  segmented_vector<std::string> x;
  std::vector<const std::string*> at;
  for (int i = 0; i < 5000; ++i) {
    x.emplace_back("value-" + std::to_string(i));
    at.push_back(&x.back());
  }
  for (int i = 0; i < 5000; ++i) {
    REQUIRE(&x[i] == at[i]);
    REQUIRE(*at[i] == "value-" + std::to_string(i));
  }
}

TEST_CASE("segmented_vector frees a segment once the one before is empty",
          "[segmented_vector]") {
  segmented_vector<int, 2> x; // segments hold [0,4) [4,12) [12,28) [28,60)
  for (int i = 0; i < 29; ++i)
    x.push_back(i);
  CHECK(x.capacity() == 60);
  while (x.size() > 13)
    x.pop_back();
  CHECK(x.capacity() == 60); // segment [28,60) kept while [12,28) is used
  x.pop_back();
  CHECK(x.size() == 12);
  CHECK(x.capacity() == 28); // [12,28) is empty: [28,60) went
  // Back and forth over a boundary allocates nothing.
  for (int round = 0; round < 3; ++round) {
    x.push_back(11);
    x.push_back(12);
    CHECK(x.capacity() == 28);
    x.pop_back();
    x.pop_back();
    CHECK(x.capacity() == 28);
  }
  while (!x.empty())
    x.pop_back();
  CHECK(x.capacity() == 4); // the first segment stays
  for (int i = 0; i < 100; ++i)
    x.push_back(i);
  for (int i = 0; i < 100; ++i)
    REQUIRE(x[i] == i);
}

TEST_CASE("segmented_vector matches a vector under random pushes and pops",
          "[segmented_vector]") {
  std::mt19937 rng(7);
  segmented_vector<std::uint32_t, 3> x;
  std::vector<std::uint32_t> model;
  for (int step = 0; step < 200000; ++step) {
    // Drifts up, then down, then up: crosses boundaries both ways.
    auto phase = (step / 50000) % 2;
    bool push = model.empty() || rng() % 100 < (phase == 0 ? 60u : 40u);
    if (push) {
      auto v = static_cast<std::uint32_t>(rng());
      x.push_back(v);
      model.push_back(v);
    } else {
      x.pop_back();
      model.pop_back();
    }
    REQUIRE(x.size() == model.size());
    if (!model.empty()) {
      REQUIRE(x.back() == model.back());
      auto i = rng() % model.size();
      REQUIRE(x[i] == model[i]);
    }
  }
  std::size_t i = 0;
  for (auto v : x)
    REQUIRE(v == model[i++]);
  CHECK(i == model.size());
}

TEST_CASE("segmented_vector destroys every element", "[segmented_vector]") {
  auto token = std::make_shared<int>(0);
  {
    segmented_vector<std::shared_ptr<int>> x;
    for (int i = 0; i < 3000; ++i)
      x.push_back(token);
    for (int i = 0; i < 1000; ++i)
      x.pop_back();
    CHECK(token.use_count() == 2001);
  }
  CHECK(token.use_count() == 1);
}
