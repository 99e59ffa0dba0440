// What HTTP/1.1 connections and HTTP/2 streams share: a request's method,
// target and the headers the front reads, turned into either a reply at
// once or a call (or watch) for the API server actor. Private to wire/; no
// Boost, no CAF.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "podref/wire/access.hpp"
#include "podref/wire/detail/api_bridge.hpp"
#include "podref/wire/detail/server_metrics.hpp"

namespace podref::wire::detail {

/// One request as a connection read it.
struct request_view {
  std::string_view method;
  /// The raw, still URL-encoded path and query.
  std::string_view target;
  std::string_view accept;
  std::string_view content_type;
  /// The Authorization header's value, empty without one.
  std::string_view authorization;
  std::string_view body;
  /// The User-Agent header's value (a write's default field manager).
  std::string_view user_agent;
};

/// What to do with a request: answer `reply` now, or send `call` to the API
/// server actor (call_api, or start_watch when `watch`).
struct dispatch {
  std::optional<http_reply> reply;
  api_call call;
  bool watch = false;
  /// Answer with the front's metrics (GET /metrics, access checked).
  bool metrics = false;
  /// What the request is counted as.
  request_class counted;
  /// Warnings for whatever the reply is, each a `Warning: 299 - "TEXT"`
  /// header (fieldValidation Warn's unknown fields).
  std::vector<std::string> warnings;
};

/// The value of a Warning header carrying `text`: `299 - "TEXT"`, the text
/// quoted as Go's strconv.Quote does for printable ASCII.
std::string warning_header(const std::string& text);

/// The Warning header values for a body's `unknown` fields (fieldValidation
/// Warn): `299 - "unknown field \"bogus\""` each.
std::vector<std::string> unknown_field_warnings(
  const std::vector<std::string>& unknown);

/// Checks `req`'s credentials (a 401 or 403 reply when `policy` refuses
/// them), then routes and decodes it; `host_port` is the server's, for
/// discovery; `certificate_user` is the connection's verified client
/// certificate's user, or null; `namespace_lifecycle` is
/// http_server_options' (a create checks its namespace).
dispatch dispatch_request(const request_view& req,
                          const std::string& host_port,
                          const access_policy& policy,
                          const user_info* certificate_user,
                          bool namespace_lifecycle);

} // namespace podref::wire::detail
