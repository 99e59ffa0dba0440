// hashed_key: a string view with its hash computed ahead of time.
//
// Registrations carry the hashes of their keys, computed on the caller's
// thread, so that the manager actor (one thread for the whole node) only
// compares. Tables keyed by hashed_key (actors/detail/key_table.hpp) point into
// storage their values own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace podref {

/// The hash every precomputed key hash in podref's bookkeeping uses.
///
/// Keys are short (a uid, "ns/name"), and callers hash five of them per
/// registration, so this is an inline multiply-xorshift over 8-byte words
/// (short tails read with overlapping loads; the length, mixed in first,
/// keeps them apart) with a final mix that makes the low bits depend on
/// every input bit. About 20 instructions for a 20-byte key against ~55
/// for std::hash's out-of-line murmur. Not keyed: do not feed it
/// adversarial keys in bulk.
inline std::size_t hash_text(std::string_view text) noexcept {
  constexpr std::uint64_t k1 = 0x9e3779b97f4a7c15u;
  constexpr std::uint64_t k2 = 0xbf58476d1ce4e5b9u;
  auto load64 = [](const char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  auto load32 = [](const char* p) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    return static_cast<std::uint64_t>(w);
  };
  auto mix = [](std::uint64_t h, std::uint64_t w) {
    h = (h ^ w) * k1;
    return h ^ (h >> 29);
  };
  const char* p = text.data();
  std::size_t n = text.size();
  std::uint64_t h = (static_cast<std::uint64_t>(n) + 1) * k2;
  if (n >= 8) {
    for (; n > 8; p += 8, n -= 8)
      h = mix(h, load64(p));
    h = mix(h, load64(p + n - 8)); // the last 8 bytes, maybe overlapping
  } else if (n >= 4) {
    h = mix(h, load32(p) | (load32(p + n - 4) << 32));
  } else if (n > 0) {
    auto byte = [p](std::size_t i) {
      return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i]));
    };
    h = mix(h, (byte(0) << 16) | (byte(n / 2) << 8) | byte(n - 1));
  }
  h ^= h >> 32;
  h *= k2;
  h ^= h >> 29;
  return static_cast<std::size_t>(h);
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

} // namespace podref
