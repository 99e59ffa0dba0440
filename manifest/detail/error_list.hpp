// The errors of one input: each message prefixed with the file name, and at
// most a given number kept, so that no input can grow the list without bound.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace podref::detail {

/// Appends `<file>: <message>` to a list of errors, up to `max_kept` of
/// them, and counts the rest. No member throws: an error that cannot be
/// stored for lack of memory is counted like one past the limit.
class error_list {
public:
  error_list(std::string_view file, std::size_t max_kept,
             std::vector<std::string>& out) noexcept
    : file_(file), max_kept_(max_kept), out_(out) {
    // nop
  }

  /// Adds one error; `message` lacks the file name.
  void add(std::string_view message) noexcept;

  /// Appends `<file>: ... and N more errors` when some were not kept. Call
  /// once, after the last add().
  void finish() noexcept;

private:
  std::string_view file_;
  std::size_t max_kept_;
  std::vector<std::string>& out_;
  std::size_t kept_ = 0;
  std::size_t dropped_ = 0;
};

} // namespace podref::detail
