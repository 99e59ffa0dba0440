// Decoding what a Kubernetes API server sends a list/watch client: one
// object (GET), a list (LIST), one watch-stream line, or a Status. JSON only
// (podref's client asks for application/json), parsed with simdjson's
// on-demand API field by field; no DOM of a whole event is kept.
//
// A Secret's `data` and a ConfigMap's `binaryData` are base64 on the wire and
// decoded here (messages/base64.hpp). Unknown fields (managedFields, kind,
// apiVersion, ...) are skipped. Every error names the field that is wrong
// and never quotes a value (values may be secret).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/source_protocol.hpp"

namespace podref::wire {

/// The fields of a metav1.Status a client acts on.
struct wire_status {
  int code = 0;
  std::string reason;
  std::string message;
};

/// A decoded list: its items, metadata.resourceVersion and metadata.continue.
struct wire_list {
  std::vector<api_object> items;
  std::string resource_version;
  std::string continue_token;
};

/// One decoded watch line: an event, or (type ERROR) the Status it carries.
struct wire_watch_line {
  bool is_error = false;
  /// A BOOKMARK annotated `k8s.io/initial-events-end: "true"`: the end of
  /// a watch-list's initial events.
  bool initial_events_end = false;
  watch_event event;
  wire_status status;
};

/// One object of kind `res` (GET reply body or a list item).
result<api_object> decode_object(resource res, std::string_view json);

/// A SecretList / ConfigMapList.
result<wire_list> decode_list(resource res, std::string_view json);

/// One line of a watch stream, without its '\n'.
result<wire_watch_line> decode_watch_line(resource res, std::string_view line);

/// A Status body; an error when `json` is not one.
result<wire_status> decode_status(std::string_view json);

/// Splits a byte stream on '\n' with a bounded buffer: a line longer than
/// `max_line_bytes` is an error, after which the splitter accepts nothing.
class line_splitter {
public:
  using line_handler = std::function<bool(std::string_view line)>;

  explicit line_splitter(std::size_t max_line_bytes)
    : max_line_bytes_(max_line_bytes) {
    // nop
  }

  /// Calls `on_line` for every complete line of `chunk` (empty lines are
  /// skipped). Returns false when a line is too long or `on_line` returned
  /// false; the splitter is then failed.
  bool feed(std::string_view chunk, const line_handler& on_line);

  /// True when bytes of an unfinished line are buffered (a stream that ends
  /// here was cut mid-line).
  bool has_partial_line() const noexcept {
    return !pending_.empty();
  }

  bool failed() const noexcept {
    return failed_;
  }

private:
  std::size_t max_line_bytes_;
  std::string pending_;
  bool failed_ = false;
};

} // namespace podref::wire
