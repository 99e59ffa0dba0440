// The string hash of podref's tables: the bookkeeping's precomputed key
// hashes (hashed_key.hpp) and the read side's object index.
//
// Keys are short (a uid, "ns/name"), callers hash five of them per
// registration and one per read, so this is an inline multiply-xorshift
// over 8-byte words (short tails read with overlapping loads; the lengths,
// mixed in first, keep them apart) with a final mix that makes the low bits
// depend on every input bit. About 20 instructions for a 20-byte key
// against ~55 for std::hash's out-of-line murmur. Not keyed: do not feed it
// adversarial keys in bulk. Values are for in-process tables only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace podref {

namespace detail {

/// The 8 bytes at `p`, unaligned.
inline std::uint64_t load64(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

/// The 4 bytes at `p`, unaligned.
inline std::uint64_t load32(const char* p) noexcept {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return static_cast<std::uint64_t>(w);
}

constexpr std::uint64_t hash_k1 = 0x9e3779b97f4a7c15u;
constexpr std::uint64_t hash_k2 = 0xbf58476d1ce4e5b9u;
constexpr std::uint64_t hash_k3 = 0xc4ceb9fe1a85ec53u;

inline std::uint64_t hash_mix(std::uint64_t h, std::uint64_t w) noexcept {
  h = (h ^ w) * hash_k1;
  return h ^ (h >> 29);
}

/// Mixes the bytes of `x` into `h`.
inline std::uint64_t hash_absorb(std::uint64_t h, std::string_view x) noexcept {
  const char* p = x.data();
  std::size_t n = x.size();
  if (n >= 8) {
    for (; n > 8; p += 8, n -= 8)
      h = hash_mix(h, load64(p));
    // The last 8 bytes, maybe overlapping.
    return hash_mix(h, load64(p + n - 8));
  }
  if (n >= 4)
    return hash_mix(h, load32(p) | (load32(p + n - 4) << 32));
  if (n > 0) {
    auto byte = [p](std::size_t i) {
      return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i]));
    };
    return hash_mix(h, (byte(0) << 16) | (byte(n / 2) << 8) | byte(n - 1));
  }
  return h;
}

inline std::size_t hash_finish(std::uint64_t h) noexcept {
  h ^= h >> 32;
  h *= hash_k2;
  h ^= h >> 29;
  return static_cast<std::size_t>(h);
}

} // namespace detail

/// The hash of `text`.
inline std::size_t hash_text(std::string_view text) noexcept {
  auto seed = (static_cast<std::uint64_t>(text.size()) + 1) * detail::hash_k2;
  return detail::hash_finish(detail::hash_absorb(seed, text));
}

/// The hash of the pair (`first`, `second`), without joining them: apart
/// from other splits of the same bytes (both lengths are mixed in first)
/// and, in all likelihood, from hash_text of any single text.
inline std::size_t hash_text(std::string_view first,
                             std::string_view second) noexcept {
  auto seed = ((static_cast<std::uint64_t>(first.size()) + 1) * detail::hash_k2)
              ^ ((static_cast<std::uint64_t>(second.size()) + 1)
                 * detail::hash_k3);
  return detail::hash_finish(
    detail::hash_absorb(detail::hash_absorb(seed, first), second));
}

} // namespace podref
