// The node TTL annotation of the Cache strategy (reference kubelet-manager.md
// 2.4, 2.5 and 5.1 #6 TestParseNodeAnnotation), Go's strconv.Atoi rules, the
// embedder-fed node_ttl_source, the freshness rule and strategy names.
#include "podref/messages/node_ttl.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "podref/runtime/object_manager.hpp"
#include "podref/messages/strategy.hpp"

using namespace podref;
using namespace std::chrono_literals;

namespace {

node_ptr make_node(std::map<std::string, std::string> annotations) {
  auto n = std::make_shared<node>();
  n->metadata.name = "node-1";
  n->metadata.annotations = std::move(annotations);
  return n;
}

node_ptr node_with_ttl(const std::string& value) {
  return make_node({{std::string{node_ttl_annotation}, value}});
}

} // namespace

// -- 5.1 #6 TestParseNodeAnnotation ------------------------------------------

TEST_CASE("the TTL annotation is read as upstream's GetObjectTTLFromNodeFunc "
          "does",
          "[node_ttl]") {
  // (nil node, error): no TTL.
  CHECK_FALSE(ttl_from_node(nullptr));
  // A node without annotations, and with annotations but not this one.
  CHECK_FALSE(ttl_from_node(make_node({}).get()));
  CHECK_FALSE(ttl_from_node(make_node({{"other", "60"}}).get()));
  CHECK_FALSE(ttl_from_node(node_with_ttl("bad").get()));
  CHECK(ttl_from_node(node_with_ttl("0").get()) == std::optional{0s});
  CHECK(ttl_from_node(node_with_ttl("60").get()) == std::optional{60s});
}

TEST_CASE("annotation values follow Go's strconv.Atoi exactly",
          "[node_ttl]") {
  using opt = std::optional<std::int64_t>;
  CHECK(parse_go_int("15") == opt{15});
  CHECK(parse_go_int("007") == opt{7});
  CHECK(parse_go_int("+5") == opt{5});
  CHECK(parse_go_int("-5") == opt{-5});
  CHECK(parse_go_int("-0") == opt{0});
  CHECK(parse_go_int("9223372036854775807") == opt{INT64_MAX});
  CHECK(parse_go_int("-9223372036854775808") == opt{INT64_MIN});
  for (const char* bad : {"", "+", "-", " 5", "5 ", "1_000", "0x10", "1e3",
                          "1.5", "++1", "9223372036854775808",
                          "-9223372036854775809", "99999999999999999999"}) {
    INFO("value: \"" << bad << '"');
    CHECK_FALSE(parse_go_int(bad));
  }
}

TEST_CASE("a negative annotation is a negative TTL: always stale",
          "[node_ttl]") {
  auto ttl = ttl_from_node(node_with_ttl("-30").get());
  REQUIRE(ttl);
  CHECK(*ttl == -30s);
  CHECK_FALSE(is_fresh(0, 0, *ttl));
}

// -- the freshness rule (2.4) -------------------------------------------------

TEST_CASE("fresh means strictly before last update plus TTL",
          "[node_ttl]") {
  constexpr std::int64_t t0 = 1'000'000'000;
  CHECK(is_fresh(t0, t0, 1min));
  CHECK(is_fresh(t0, t0 + 59'999'999'999, 60s));
  CHECK_FALSE(is_fresh(t0, t0 + 60'000'000'000, 60s));
  CHECK_FALSE(is_fresh(t0, t0, 0s)); // TTL 0: always stale
  // A saturated TTL neither overflows nor expires.
  CHECK(is_fresh(t0, INT64_MAX / 2, std::chrono::nanoseconds{INT64_MAX}));
}

// -- node_ttl_source ----------------------------------------------------------

TEST_CASE("node_ttl_source stores the parsed TTL of the node it is fed",
          "[node_ttl]") {
  node_ttl_source src;
  CHECK_FALSE(src.ttl());
  CHECK(node_ttl_source::effective(&src, 1min) == 1min);
  CHECK(node_ttl_source::effective(nullptr, 1min) == 1min);
  src.set_node(node_with_ttl("15"));
  CHECK(src.ttl() == std::optional<std::chrono::nanoseconds>{15s});
  CHECK(node_ttl_source::effective(&src, 1min) == 15s);
  src.set_node(node_with_ttl("0"));
  CHECK(node_ttl_source::effective(&src, 1min) == 0s);
  src.set_node(node_with_ttl("bad"));
  CHECK_FALSE(src.ttl());
  src.set_node(node_with_ttl("-9223372036854775808"));
  REQUIRE(src.ttl());
  CHECK(src.ttl()->count() < 0); // saturated, still "present"
  src.set_node(nullptr);
  CHECK_FALSE(src.ttl());
  src.set_ttl(5min);
  CHECK(src.ttl() == std::optional<std::chrono::nanoseconds>{5min});
  src.set_ttl(std::nullopt);
  CHECK_FALSE(src.ttl());
}

TEST_CASE("a getter is asked on every TTL check and can be removed again",
          "[node_ttl]") {
  node_ttl_source src;
  src.set_node(node_with_ttl("15"));
  int calls = 0;
  auto current = node_with_ttl("30");
  src.set_getter([&] {
    ++calls;
    return current;
  });
  CHECK(src.ttl() == std::optional<std::chrono::nanoseconds>{30s});
  current = make_node({});
  CHECK_FALSE(src.ttl());
  current = nullptr; // upstream: getNode failed
  CHECK_FALSE(src.ttl());
  CHECK(calls == 3);
  src.set_getter({});
  CHECK(src.ttl() == std::optional<std::chrono::nanoseconds>{15s});
  CHECK(calls == 3);
}

TEST_CASE("node_ttl_source may be fed and read from different threads",
          "[node_ttl]") {
  node_ttl_source src;
  auto a = node_with_ttl("10");
  auto b = node_with_ttl("20");
  std::thread writer{[&] {
    for (int i = 0; i < 10000; ++i)
      src.set_node(i % 2 == 0 ? a : b);
  }};
  int bad = 0;
  for (int i = 0; i < 10000; ++i) {
    auto ttl = src.ttl();
    if (ttl && *ttl != 10s && *ttl != 20s)
      ++bad;
  }
  writer.join();
  CHECK(bad == 0);
  CHECK(src.ttl() == std::optional<std::chrono::nanoseconds>{20s});
}

// -- strategy names (1.5) -----------------------------------------------------

TEST_CASE("strategies are chosen by upstream's names and anything else fails "
          "with upstream's text",
          "[strategy]") {
  for (auto x : {strategy::get, strategy::cache, strategy::watch}) {
    auto parsed = parse_strategy(to_string(x));
    REQUIRE(parsed);
    CHECK(*parsed == x);
  }
  CHECK(std::string{to_string(strategy::get)} == "Get");
  CHECK(std::string{to_string(strategy::cache)} == "Cache");
  CHECK(std::string{to_string(strategy::watch)} == "Watch");
  CHECK(manager_options{}.strategy == strategy::watch); // the default
  for (const char* bad : {"", "watch", "TTL", "Cache ", "Fetch"}) {
    auto parsed = parse_strategy(bad);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == errc::invalid_argument);
    CHECK(parsed.error().message
          == std::string{"unknown configmap and secret manager mode: "} + bad);
  }
}
