// boxed<T> against std::optional's behaviour where pods use it: absent by
// default, deep copies, assignment of a value or nullopt, emplace, value()
// on an absent box, and the 8 bytes an absent volume source costs.
#include <optional>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "podref/messages/boxed.hpp"
#include "podref/messages/pod.hpp"

using namespace podref;

TEST_CASE("a boxed value is absent until set", "[boxed]") {
  boxed<std::string> x;
  CHECK_FALSE(x.has_value());
  CHECK_FALSE(x);
  CHECK(x == std::nullopt);
  CHECK_THROWS_AS(x.value(), std::bad_optional_access);
  x = std::string{"s-1"};
  REQUIRE(x);
  CHECK(x != std::nullopt);
  CHECK(*x == "s-1");
  CHECK(x->size() == 3);
  CHECK(x.value() == "s-1");
  x = std::nullopt;
  CHECK_FALSE(x);
}

TEST_CASE("assigning a value to a boxed value keeps its box", "[boxed]") {
  boxed<std::string> x{std::string{"a"}};
  const auto* at = &*x;
  x = std::string{"b"};
  CHECK(&*x == at);
  CHECK(*x == "b");
}

TEST_CASE("boxed copies are deep, moves take the box", "[boxed]") {
  boxed<std::string> x{std::string{"a"}};
  auto y = x;
  REQUIRE(y);
  CHECK(&*y != &*x);
  *y = "b";
  CHECK(*x == "a");
  y = x;
  CHECK(*y == "a");
  CHECK(&*y != &*x);
  boxed<std::string> absent;
  y = absent;
  CHECK_FALSE(y);
  const auto* at = &*x;
  auto z = std::move(x);
  REQUIRE(z);
  CHECK(&*z == at);
  y = std::move(z);
  CHECK(&*y == at);
}

TEST_CASE("emplace and reset", "[boxed]") {
  boxed<std::string> x;
  CHECK(x.emplace(3, 'a') == "aaa");
  CHECK(*x == "aaa");
  x.reset();
  CHECK_FALSE(x);
}

TEST_CASE("a volume keeps its sources boxed", "[boxed]") {
  // Twelve sources of one pointer each, plus the name and other_source.
  CHECK(sizeof(volume) == 12 * sizeof(void*) + 2 * sizeof(std::string));
  volume v;
  v.secret = secret_volume_source{"s-1", {}, std::nullopt};
  auto copy = v;
  copy.secret->secret_name = "s-2";
  CHECK(v.secret->secret_name == "s-1");
  CHECK_FALSE(copy.config_map);
}
