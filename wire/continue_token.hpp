// The continue token of a paged list, in the real API server's shape:
// unpadded URL-safe base64 of {"v":"meta.k8s.io/v1","rv":N,"start":"KEY\u0000"}
// where KEY is the last item's key below the list's prefix (NAME in a
// namespace, NS/NAME across namespaces) and the NUL makes the next page
// start strictly after it. rv -1 is the server's token after an expired
// one: continue at the newest version, inconsistently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "podref/messages/errors.hpp"

namespace podref::wire {

struct continue_token {
  /// The version of the first page's snapshot; -1: the newest.
  std::int64_t rv = 0;
  /// The key the next page starts from (with its trailing NUL).
  std::string start;
};

/// The longest token a client may send (a real one is under 600 bytes: a
/// namespace and a name).
constexpr std::size_t max_continue_bytes = 2048;

/// The token's text.
std::string encode_continue(const continue_token& token);

/// Parses a client's token; fails with errc::invalid_argument and the real
/// server's 400 text (`invalid continue token: continue key is not valid:
/// ...`).
result<continue_token> decode_continue(const std::string& text);

} // namespace podref::wire
