// What every list/watch client of podref's wire room does alike (the
// object source, wire_source.cpp, and the pod source, pod_source.cpp):
// query escaping, the meaning of an error reply, Retry-After, the client's
// token bucket, and the reflector's retry backoff.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "podref/messages/errors.hpp"
#include "podref/wire/http_client.hpp"
#include "podref/wire/wire_decode.hpp"

namespace podref::wire::detail {

/// Percent-encodes all but RFC 3986's unreserved characters.
std::string escape(std::string_view s);

/// The error of a non-200 reply (or of no reply): 404 errc::not_found with
/// the server's message; 410, and 504 "too large resource version",
/// errc::expired (the caller relists); anything else errc::unavailable.
error_info error_of(const http_response& r, const std::string& subject);

/// What a watch's ERROR event with Status `st` means: errc::expired for
/// 410 and for a 504 "too large resource version" (the caller relists
/// without a version, as client-go's reflector does for both), else
/// errc::unavailable; the message is the server's, or names `subject`.
error_info watch_error_of(const wire_status& st, const std::string& subject);

/// A 429's Retry-After in whole seconds (1 when absent or unreadable),
/// clamped to [0, cap].
std::chrono::seconds retry_after(const http_response& r,
                                 std::chrono::seconds cap);

/// client-go's token bucket: `qps` tokens a second up to `burst`; qps 0
/// turns it off.
class token_bucket {
public:
  token_bucket(double qps, std::uint32_t burst);

  /// Takes a token; how long to wait for it (zero: go now).
  std::chrono::nanoseconds reserve();

private:
  double qps_;
  double burst_;
  double tokens_;
  std::chrono::steady_clock::time_point refilled_at_;
};

/// The reflectors' retry backoff (engine_settings.hpp's reflector_timing):
/// the base starts at `initial` and doubles up to `cap`; each wait is the
/// base plus uniform jitter in [0, base), capped at `cap`.
class retry_backoff {
public:
  retry_backoff(std::chrono::nanoseconds initial, std::chrono::nanoseconds cap,
                std::uint64_t seed);

  std::chrono::nanoseconds next();

  /// After a success: the next failure waits `initial` again.
  void reset() noexcept;

private:
  std::chrono::nanoseconds initial_;
  std::chrono::nanoseconds cap_;
  std::chrono::nanoseconds base_{0};
  std::uint64_t state_;
};

} // namespace podref::wire::detail
