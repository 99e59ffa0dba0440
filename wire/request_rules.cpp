// The shared request rules of the wire client (detail/request_rules.hpp).
#include "podref/wire/detail/request_rules.hpp"

#include <algorithm>
#include <cctype>

#include "podref/wire/wire_decode.hpp"

namespace podref::wire::detail {

std::string escape(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

namespace {

/// client-go's isTooLargeResourceVersionError: a 504 whose cause is
/// ResourceVersionTooLarge; its message, "Timeout: Too large resource
/// version: X, current: Y" (kube-apiserver-transcripts/secrets/
/// list-rv-too-large.json), says the same to a decoder that keeps no causes.
bool too_large_rv(int code, const std::string& reason,
                  const std::string& message) {
  return code == 504 && reason == "Timeout"
         && message.find("Too large resource version") != std::string::npos;
}

} // namespace

error_info watch_error_of(const wire_status& st, const std::string& subject) {
  auto msg = st.message.empty()
               ? subject + ": ERROR event with code " + std::to_string(st.code)
               : st.message;
  bool expired = st.code == 410 || too_large_rv(st.code, st.reason, msg);
  return {expired ? errc::expired : errc::unavailable, std::move(msg)};
}

error_info error_of(const http_response& r, const std::string& subject) {
  if (r.status == 0)
    return {errc::unavailable, subject + ": " + r.error};
  auto st = decode_status(r.body);
  std::string msg = st ? st->message : std::string{};
  if (msg.empty())
    msg = subject + ": the server answered HTTP " + std::to_string(r.status);
  if (r.status == 404)
    return {errc::not_found, msg};
  if (r.status == 410)
    return {errc::expired, msg};
  // "Too large resource version": the reflector relists from "" (as for 410).
  if (st && too_large_rv(r.status, st->reason, msg))
    return {errc::expired, msg};
  return {errc::unavailable, msg};
}

std::chrono::seconds retry_after(const http_response& r,
                                 std::chrono::seconds cap) {
  long secs = 1;
  try {
    if (!r.retry_after.empty())
      secs = std::stol(r.retry_after);
  } catch (...) {
    secs = 1;
  }
  return std::chrono::seconds(std::clamp<long>(secs, 0, cap.count()));
}

token_bucket::token_bucket(double qps, std::uint32_t burst)
  : qps_(qps),
    burst_(burst),
    tokens_(burst),
    refilled_at_(std::chrono::steady_clock::now()) {
  // nop
}

std::chrono::nanoseconds token_bucket::reserve() {
  if (qps_ <= 0)
    return std::chrono::nanoseconds{0};
  auto now = std::chrono::steady_clock::now();
  std::chrono::duration<double> elapsed = now - refilled_at_;
  refilled_at_ = now;
  tokens_ = std::min(burst_, tokens_ + elapsed.count() * qps_);
  tokens_ -= 1;
  if (tokens_ >= 0)
    return std::chrono::nanoseconds{0};
  auto wait = std::chrono::duration<double>(-tokens_ / qps_);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(wait);
}

retry_backoff::retry_backoff(std::chrono::nanoseconds initial,
                             std::chrono::nanoseconds cap, std::uint64_t seed)
  : initial_(initial), cap_(cap), state_(seed) {
  // nop
}

std::chrono::nanoseconds retry_backoff::next() {
  base_ = base_.count() == 0 ? initial_ : std::min(cap_, base_ * 2);
  // SplitMix64 step for the jitter.
  auto z = (state_ += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  auto base = static_cast<std::uint64_t>(base_.count());
  auto jitter = base == 0 ? 0 : z % base;
  return std::min(cap_, base_ + std::chrono::nanoseconds(jitter));
}

void retry_backoff::reset() noexcept {
  base_ = std::chrono::nanoseconds{0};
}

} // namespace podref::wire::detail
