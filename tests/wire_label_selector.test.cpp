// labelSelector as the API server parses and matches it
// (kube-apiserver-transcripts: secrets/list-labelselector*.json).
#include "podref/wire/label_selector.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace podref;
using namespace podref::wire;
using op = label_requirement::op;

namespace {

api_object labelled(std::map<std::string, std::string> labels) {
  auto s = std::make_shared<secret>();
  s->metadata.name = "s1";
  s->metadata.ns = "ns1";
  s->metadata.labels = std::move(labels);
  return api_object{secret_ptr{std::move(s)}};
}

bool selects(const std::string& selector,
             std::map<std::string, std::string> labels) {
  auto parsed = parse_label_selector(selector);
  REQUIRE(parsed);
  return matches_labels(*parsed, labelled(std::move(labels)));
}

std::string error_of(const std::string& selector) {
  auto parsed = parse_label_selector(selector);
  REQUIRE_FALSE(parsed);
  return parsed.error().message;
}

} // namespace

TEST_CASE("label selectors parse every operator the API server knows") {
  auto parsed = parse_label_selector(
    "a=1, b==2, c!=3, d in (x, y), e notin (z), f, !g, h>4, i<5");
  REQUIRE(parsed);
  const auto& xs = *parsed;
  REQUIRE(xs.size() == 9);
  CHECK(xs[0].kind == op::equals);
  CHECK(xs[0].value == "1");
  CHECK(xs[1].kind == op::equals);
  CHECK(xs[2].kind == op::not_equals);
  CHECK(xs[3].kind == op::in);
  CHECK(xs[3].values == std::vector<std::string>{"x", "y"});
  CHECK(xs[4].kind == op::not_in);
  CHECK(xs[5].kind == op::exists);
  CHECK(xs[6].kind == op::not_exists);
  CHECK(xs[6].key == "g");
  CHECK(xs[7].kind == op::greater_than);
  CHECK(xs[8].kind == op::less_than);
  // "in" is a value where a value goes, and an empty selector is everything.
  auto keyword = parse_label_selector("in=in");
  REQUIRE(keyword);
  CHECK((*keyword)[0].value == "in");
  CHECK(parse_label_selector("")->empty());
}

TEST_CASE("label selectors match as the API server's do") {
  CHECK(selects("app in (a,b)", {{"app", "a"}}));
  CHECK_FALSE(selects("app in (a,b)", {{"app", "c"}}));
  CHECK_FALSE(selects("app in (a,b)", {}));
  CHECK(selects("app notin (a,b)", {}));
  CHECK(selects("app notin (a,b)", {{"app", "c"}}));
  CHECK_FALSE(selects("app notin (a,b)", {{"app", "b"}}));
  CHECK(selects("app!=a", {}));
  CHECK_FALSE(selects("app!=a", {{"app", "a"}}));
  CHECK(selects("app,!tier", {{"app", ""}}));
  CHECK_FALSE(selects("app,!tier", {{"app", ""}, {"tier", "web"}}));
  CHECK(selects("n>4", {{"n", "5"}}));
  CHECK_FALSE(selects("n>4", {{"n", "4"}}));
  CHECK_FALSE(selects("n<4", {{"n", "x"}}));
  CHECK(selects("app=", {{"app", ""}}));
  CHECK(selects("example.com/app=a", {{"example.com/app", "a"}}));
}

TEST_CASE("label selector errors carry the real server's text") {
  // secrets/list-labelselector-invalid.json
  CHECK(error_of("app===x")
        == "unable to parse requirement: found '=', expected: identifier");
  CHECK(error_of(",app") == "found ',', expected: !, identifier, or 'end of "
                            "string'");
  CHECK(error_of("app=a b")
        == "found 'b', expected: ',' or 'end of string'");
  CHECK(error_of("app=a,") == "found '', expected: identifier after ','");
  CHECK(error_of("app in a")
        == "unable to parse requirement: found 'a' expected: '('");
  CHECK(error_of("app in (a b)")
        == "unable to parse requirement: found 'b', expected: ',' or ')'");
  CHECK(error_of("app (a)")
        == "unable to parse requirement: found '(', expected: in, notin, =, "
           "==, !=, gt, lt");
  CHECK(error_of("app>x").find("the value must be an integer")
        != std::string::npos);
  auto bad_key = error_of("-bad-=x");
  CHECK(bad_key.find("unable to parse requirement: key: Invalid value: "
                     "\"-bad-\": name part must consist of")
        == 0);
  auto bad_value = error_of("app=-bad-");
  CHECK(bad_value.find("values[0][app]: Invalid value: \"-bad-\": a valid "
                       "label must be an empty string")
        != std::string::npos);
}

TEST_CASE("label selectors are bounded") {
  std::string many;
  for (int i = 0; i < 101; ++i)
    many += (i ? ",k" : "k") + std::to_string(i);
  CHECK(error_of(many).find("more than 100 requirements")
        != std::string::npos);
  std::string set = "app in (";
  for (int i = 0; i < 300; ++i)
    set += (i ? ",v" : "v") + std::to_string(i);
  CHECK(error_of(set + ")").find("more than 256 values") != std::string::npos);
  CHECK(error_of(std::string(20000, 'a')).find("longer than")
        != std::string::npos);
}
