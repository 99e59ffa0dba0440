// What a patch algorithm (merge_patch, json_patch, strategic_merge_patch)
// gives back: the patched document, or why the patch could not be applied.
// Pure data, no I/O; the HTTP front turns a failure into a Status.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace podref::wire {

/// Why a patch was refused, in the API server's terms: `bad_request` (400:
/// the patch is not a patch of its type), `invalid` (422: a well-formed
/// patch that does not apply, e.g. a failed test or a missing path),
/// `too_large` (413: past a bound on operations).
struct patch_failure {
  enum class reason { bad_request, invalid, too_large };
  reason why = reason::invalid;
  /// What went wrong, naming the operation or field (never a value).
  std::string message;
};

/// The patched document, or the failure (then `document` is unspecified).
struct patch_result {
  nlohmann::ordered_json document;
  std::optional<patch_failure> failure;

  bool ok() const noexcept {
    return !failure;
  }

  static patch_result success(nlohmann::ordered_json doc) {
    return {std::move(doc), std::nullopt};
  }

  static patch_result fail(patch_failure::reason why, std::string message) {
    return {nullptr, patch_failure{why, std::move(message)}};
  }
};

} // namespace podref::wire
