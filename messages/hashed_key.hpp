// hashed_key: a string view with its hash (hash_text, text_hash.hpp)
// computed ahead of time.
//
// Registrations carry the hashes of their keys, computed on the caller's
// thread, so that the manager actor (one thread for the whole node) only
// compares. Tables keyed by hashed_key (actors/detail/key_table.hpp) point into
// storage their values own.
#pragma once

#include <cstddef>
#include <string_view>

#include "podref/messages/text_hash.hpp"

namespace podref {

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
