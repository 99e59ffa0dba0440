// What the JSON and YAML front ends of the manifest decoder share: errors
// located by line, and the callback that receives each parsed document.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace podref::detail {

/// A problem with the input text itself (syntax, encoding, limits), reported
/// as `line <n>: <message>`; line 0 means the position is unknown.
class input_error : public std::runtime_error {
public:
  input_error(std::size_t line, const std::string& message)
    : std::runtime_error(message), line_(line) {
    // nop
  }

  /// The 1-based line, or 0 when unknown.
  std::size_t line() const noexcept {
    return line_;
  }

private:
  std::size_t line_;
};

/// The 1-based line of the byte at `offset` (clamped to the text).
inline std::size_t line_at(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  auto end = text.begin() + static_cast<std::ptrdiff_t>(offset);
  return static_cast<std::size_t>(std::count(text.begin(), end, '\n')) + 1;
}

/// `document is over the limit of <limit> bytes`, the error of a document
/// larger than manifest_limits::max_document_bytes.
inline std::string document_over_limit(std::size_t limit) {
  return "document is over the limit of " + std::to_string(limit) + " bytes";
}

/// Receives each document of an input with its index (from 0), in order.
/// Empty documents arrive as null.
using document_handler
  = std::function<void(std::size_t index, nlohmann::json&& document)>;

} // namespace podref::detail
