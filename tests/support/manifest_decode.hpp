// What the manifest decoder's tests share: decoding text as "test.yaml",
// the one error of an input that must fail, and a Pod around a spec.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "podref/manifest/manifest.hpp"

namespace podref::test {

/// Decodes `text` as the file "test.yaml" (the name only labels errors).
inline manifest_result decode(std::string_view text,
                              const manifest_limits& limits = {}) {
  return decode_manifest(text, "test.yaml", limits);
}

/// Every error of `result`, one a line, for INFO.
inline std::string errors_text(const manifest_result& result) {
  std::string out;
  for (const auto& error : result.errors)
    out += error + '\n';
  return out;
}

/// The error of decoding `text`, which must fail with exactly one error
/// and yield no objects.
inline std::string error_of(std::string_view text,
                            const manifest_limits& limits = {}) {
  auto result = decode(text, limits);
  CHECK_FALSE(result.ok());
  CHECK(result.objects.empty());
  REQUIRE(result.errors.size() == 1);
  return result.errors.front();
}

/// The error of decoding `text`, which must fail with exactly one error;
/// the documents and List items before or beside the bad one must still
/// yield `kept` objects.
inline std::string error_keeping(std::string_view text, std::size_t kept,
                                 const manifest_limits& limits = {}) {
  auto result = decode(text, limits);
  CHECK_FALSE(result.ok());
  CHECK(result.objects.size() == kept);
  REQUIRE(result.errors.size() == 1);
  return result.errors.front();
}

/// A Pod manifest with `spec_body` (YAML, indented by two spaces) as spec.
inline std::string pod_with_spec(const std::string& spec_body) {
  return "kind: Pod\nmetadata:\n  name: p\nspec:\n" + spec_body;
}

} // namespace podref::test
