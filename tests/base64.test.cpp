// The base64 decoder (messages/base64.hpp) against a per-character
// reference written from RFC 4648 and Go's StdEncoding rules (line breaks
// skipped, padding only at the end), on every one-byte change and cut of
// encoded texts of every length up to 40, and with line breaks inserted.
#include "podref/messages/base64.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <string>

namespace {

std::optional<std::string> reference(std::string_view text) {
  std::string chars;
  for (char c : text)
    if (c != '\r' && c != '\n')
      chars += c;
  if (chars.size() % 4 != 0)
    return std::nullopt;
  auto value = [](char c) -> int {
    static const std::string a
      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    auto i = a.find(c);
    return i == std::string::npos ? -1 : static_cast<int>(i);
  };
  std::string out;
  for (std::size_t i = 0; i < chars.size(); i += 4) {
    bool last = i + 4 == chars.size();
    std::size_t pad = 0;
    if (last && chars[i + 3] == '=')
      pad = chars[i + 2] == '=' ? 2 : 1;
    std::uint32_t bits = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      int v = k < 4 - pad ? value(chars[i + k]) : 0;
      if (v < 0)
        return std::nullopt;
      bits = (bits << 6) | static_cast<std::uint32_t>(v);
    }
    out += static_cast<char>(bits >> 16);
    if (pad < 2)
      out += static_cast<char>((bits >> 8) & 0xFF);
    if (pad < 1)
      out += static_cast<char>(bits & 0xFF);
  }
  return out;
}

} // namespace

TEST_CASE("base64 decoding agrees with the reference on every change and "
          "cut") {
  std::minstd_rand rng{7};
  std::size_t valid = 0;
  std::size_t invalid = 0;
  for (std::size_t len = 0; len <= 40; ++len) {
    std::string bytes;
    for (std::size_t i = 0; i < len; ++i)
      bytes += static_cast<char>(rng() & 0xFF);
    auto text = podref::encode_base64(bytes);
    REQUIRE(podref::decode_base64(text) == bytes);
    for (std::size_t i = 0; i < text.size(); ++i) {
      for (char c : {'=', 'A', '/', '+', '-', '\0', '\n', '\xff', 'z'}) {
        auto x = text;
        x[i] = c;
        auto got = podref::decode_base64(x);
        INFO(x);
        CHECK(got == reference(x));
        // The validating decoder (error offsets as Go names them) accepts
        // and refuses exactly what the fast one does.
        CHECK(podref::decode_base64_checked(x).bytes == got);
        (got ? valid : invalid) += 1;
      }
      CHECK(podref::decode_base64(text.substr(0, i)) == reference(text.substr(0, i)));
      auto broken = text;
      broken.insert(i, i % 2 == 0 ? "\r\n" : "\n");
      CHECK(podref::decode_base64(broken) == bytes);
      CHECK(podref::decode_base64_checked(broken).bytes == bytes);
    }
  }
  CHECK(valid > 0);
  CHECK(invalid > 0);
}
