// Continue tokens byte for byte as the real server writes them
// (kube-apiserver-transcripts: secrets/list-limit-1*.json,
// watch/list-continue-expired.json), and what a client's token must be.
#include "podref/wire/continue_token.hpp"

#include "podref/messages/base64.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace podref;
using namespace podref::wire;
using namespace std::string_literals;

TEST_CASE("continue tokens are the real server's") {
  // secrets/list-limit-1.json and list-limit-1-continue.json.
  CHECK(encode_continue({229, "gen-brkw6\0"s})
        == "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjI5LCJzdGFydCI6Imdlbi1icmt3N"
           "lx1MDAwMCJ9");
  CHECK(encode_continue({229, "s1\0"s})
        == "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjI5LCJzdGFydCI6InMxXHUwMDAwI"
           "n0");
  auto back = decode_continue(
    "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjI5LCJzdGFydCI6InMxXHUwMDAwIn0");
  REQUIRE(back);
  CHECK(back->rv == 229);
  CHECK(back->start == "s1\0"s);
  // The expired-continue Status's token: rv -1, same start.
  auto inconsistent = decode_continue(encode_continue({-1, "ns1/a\0"s}));
  REQUIRE(inconsistent);
  CHECK(inconsistent->rv == -1);
}

TEST_CASE("a client's continue token is checked, never trusted") {
  auto refused = [](const std::string& text) {
    auto t = decode_continue(text);
    REQUIRE_FALSE(t);
    CHECK(t.error().code == errc::invalid_argument);
    CHECK(t.error().message.find(
            "invalid continue token: continue key is not valid")
          == 0);
    return t.error().message;
  };
  // Any JSON as a token, in the tokens' alphabet (unpadded base64url).
  auto token = [](const std::string& json) {
    auto text = encode_base64(json);
    while (!text.empty() && text.back() == '=')
      text.pop_back();
    for (auto& c : text)
      c = c == '+' ? '-' : c == '/' ? '_' : c;
    return text;
  };
  CHECK(refused("not*base64").find("illegal base64 data at input byte 3")
        != std::string::npos);
  refused(token("[1,2]"));
  CHECK(refused(token(R"({"v":"v2","rv":5,"start":"a"})"))
          .find("server does not recognize this encoded version \"v2\"")
        != std::string::npos);
  CHECK(refused(token(R"({"v":"meta.k8s.io/v1","rv":0,"start":"a"})"))
          .find("incorrect encoded start resourceVersion")
        != std::string::npos);
  CHECK(refused(token(R"({"v":"meta.k8s.io/v1","rv":5,"start":""})"))
          .find("encoded start key empty")
        != std::string::npos);
  // A key that would leave the list's prefix.
  refused(token(R"({"v":"meta.k8s.io/v1","rv":5,"start":"../other/x"})"));
  refused(token(R"({"v":"meta.k8s.io/v1","rv":5,"start":"ns1/./x"})"));
  CHECK(refused(std::string(3000, 'A')).find("longer than 2048 bytes")
        != std::string::npos);
  // A well-formed key from the same encoder is accepted.
  auto ok = decode_continue(
    token(R"({"v":"meta.k8s.io/v1","rv":5,"start":"ns1/x"})"));
  REQUIRE(ok);
  CHECK(ok->start == "ns1/x");
}
