#include "podref/manifest/detail/error_list.hpp"

#include <fmt/format.h>

namespace podref::detail {

void error_list::add(std::string_view message) noexcept {
  if (kept_ < max_kept_) {
    try {
      out_.push_back(fmt::format("{}: {}", file_, message));
      ++kept_;
      return;
    } catch (...) {
      // Counted below.
    }
  }
  ++dropped_;
}

void error_list::finish() noexcept {
  if (dropped_ == 0)
    return;
  try {
    out_.push_back(fmt::format("{}: ... and {} more error{}", file_, dropped_,
                               dropped_ == 1 ? "" : "s"));
  } catch (...) {
    // Some error must remain, or the input would pass as valid; this text
    // fits the small-string buffer and needs no allocation of its own.
    if (!out_.empty())
      return;
    try {
      out_.emplace_back();
      out_.back() = "out of memory";
    } catch (...) {
      // Not even one slot: nothing left to try.
    }
  }
}

} // namespace podref::detail
