// hashed_key: a string view with its hash computed ahead of time.
//
// Registrations carry the hashes of their keys, computed on the caller's
// thread, so that the manager actor (one thread for the whole node) only
// compares. Maps keyed by hashed_key point into storage their values own.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <unordered_map>

namespace podref {

/// The hash every precomputed key hash in podref's bookkeeping uses.
inline std::size_t hash_text(std::string_view text) noexcept {
  return std::hash<std::string_view>{}(text);
}

struct hashed_key {
  std::string_view text;
  std::size_t hash = 0;

  hashed_key() = default;

  hashed_key(std::string_view text, std::size_t hash) noexcept
    : text(text), hash(hash) {
    // nop
  }

  explicit hashed_key(std::string_view text) noexcept
    : text(text), hash(hash_text(text)) {
    // nop
  }
};

struct hashed_key_hash {
  std::size_t operator()(const hashed_key& x) const noexcept {
    return x.hash;
  }
};

struct hashed_key_equal {
  bool operator()(const hashed_key& x, const hashed_key& y) const noexcept {
    return x.hash == y.hash && x.text == y.text;
  }
};

/// A map whose keys view storage owned by the mapped values.
template <class T>
using hashed_map =
  std::unordered_map<hashed_key, T, hashed_key_hash, hashed_key_equal>;

} // namespace podref
