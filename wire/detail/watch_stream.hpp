// What the I/O thread keeps of one watch stream, for every source that
// reads NDJSON watch events (wire_source.cpp, pod_source.cpp): the line
// splitter and the first error that ends the stream. Private to wire/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "podref/wire/http_client.hpp"
#include "podref/wire/wire_decode.hpp"

namespace podref::wire::detail {

class watch_stream {
public:
  explicit watch_stream(std::size_t max_line_bytes)
    : splitter_(max_line_bytes), max_line_bytes_(max_line_bytes) {
    // nop
  }

  /// Splits `chunk` into lines, decodes each with `decode(line)` (a
  /// result<T>) and hands the value to `deliver`. Returns false, with the
  /// reason kept, on a line that does not decode or is over the bound.
  template <class Decode, class Deliver>
  bool feed(std::string_view chunk, Decode&& decode, Deliver&& deliver) {
    auto ok = splitter_.feed(chunk, [&](std::string_view line) {
      auto ev = decode(line);
      if (!ev) {
        error_ = ev.error().message;
        return false;
      }
      deliver(std::move(ev).value());
      return true;
    });
    if (!ok && error_.empty())
      error_ = "watch event over " + std::to_string(max_line_bytes_)
               + " bytes";
    return ok;
  }

  /// Puts the stream's own error into the finished transfer `r`: the kept
  /// one, or "stream ended mid-event" for a clean end inside a line.
  void finish(http_response& r) {
    if (error_.empty() && r.status == 200 && r.error.empty()
        && splitter_.has_partial_line())
      error_ = "stream ended mid-event";
    if (!error_.empty())
      r.error = error_;
  }

private:
  line_splitter splitter_;
  std::size_t max_line_bytes_;
  std::string error_;
};

} // namespace podref::wire::detail
