// key_table: a flat hash table over values keyed by precomputed hashes.
//
// The manager looks its maps up several times per registration on the one
// thread that serves the node, with keys whose hash the caller computed
// (hashed_key). std::unordered_map costs there a node allocation per insert,
// a chase through bucket and node per lookup and a pass over every node when
// it grows. key_table keeps instead:
// - the values back to back in a segmented_vector (erase moves the last one
//   into the hole), so iteration is a scan, an insert allocates nothing
//   amortised and growing copies no value;
// - an index of 8-byte cells {32-bit tag of the hash, value position},
//   linear probing, backward-shift deletion (no tombstones), at most half
//   full (linear_probing.hpp). A lookup that misses reads only cells,
//   usually one cache line; a hit compares the tag before it touches the
//   key's text. Growing rebuilds the index from the cells alone, touching
//   no key and no value.
//
// Keys are not stored: KeyOf gives the text of a value's key, which must not
// change while the value is in the table. Unlike unordered_map, insert and
// erase invalidate pointers and iterators to values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

#include "podref/actors/detail/fresh_memory.hpp"
#include "podref/actors/detail/linear_probing.hpp"
#include "podref/actors/detail/segmented_vector.hpp"
#include "podref/messages/hashed_key.hpp"

namespace podref {

/// KeyOf: `std::string_view operator()(const T&) const`, the value's key.
template <class T, class KeyOf>
class key_table {
public:
  using iterator = typename segmented_vector<T>::iterator;
  using const_iterator = typename segmented_vector<T>::const_iterator;

  // -- constructors, destructors, and assignment operators --------------------

  explicit key_table(KeyOf key_of = KeyOf{}) : key_of_(std::move(key_of)) {
    // nop
  }

  key_table(const key_table&) = delete;
  key_table& operator=(const key_table&) = delete;

  // -- lookup -----------------------------------------------------------------

  /// The value whose key is `key`, or null.
  T* find(hashed_key key) noexcept {
    auto i = find_cell(key);
    return i == npos ? nullptr : &values_[cells_[i].pos - 1];
  }

  const T* find(hashed_key key) const noexcept {
    auto i = find_cell(key);
    return i == npos ? nullptr : &values_[cells_[i].pos - 1];
  }

  /// The value whose key hashes to `hash` and for which `pred` holds, or
  /// null: a lookup by identity that compares no text, for callers that
  /// know which value they want.
  template <class Pred>
  T* find_if(std::size_t hash, Pred pred) noexcept {
    if (!cells_)
      return nullptr;
    auto tag = tag_of(hash);
    for (std::size_t i = tag & mask_;; i = detail::next_cell(i, mask_)) {
      const auto& c = cells_[i];
      if (c.pos == 0)
        return nullptr;
      if (c.tag == tag && pred(values_[c.pos - 1]))
        return &values_[c.pos - 1];
    }
  }

  /// Asks the CPU to load the index cell where a lookup of `hash` starts.
  /// Always inlined: GCC drops calls to outlined prefetch-only functions.
  [[gnu::always_inline]] void prefetch(std::size_t hash) const noexcept {
    if (cells_)
      __builtin_prefetch(&cells_[tag_of(hash) & mask_]);
  }

  // -- modifiers --------------------------------------------------------------

  /// Adds `value`, whose key hashes to `hash`; requires that no value in the
  /// table has the same key.
  T& insert(std::size_t hash, T value) {
    if (2 * (values_.size() + 1) > capacity())
      rehash(capacity() == 0 ? min_capacity : 2 * capacity());
    auto tag = tag_of(hash);
    auto pos = static_cast<std::uint32_t>(values_.size() + 1);
    values_.push_back(std::move(value));
    tags_.push_back(tag);
    place(cell{tag, pos});
    return values_.back();
  }

  /// Removes the value `x` points to (a value in this table).
  void erase(const T* x) noexcept {
    // Each element access costs a segment lookup: take each once.
    auto k = values_.index_of(x);
    auto& tag = tags_[k];
    remove_cell(cell_of(k, tag));
    auto last = values_.size() - 1;
    if (k != last) {
      auto& last_tag = tags_.back();
      cells_[cell_of(last, last_tag)].pos = static_cast<std::uint32_t>(k + 1);
      *const_cast<T*>(x) = std::move(values_.back());
      tag = last_tag;
    }
    values_.pop_back();
    tags_.pop_back();
  }

  /// Makes room for `n` values without growing the index.
  void reserve(std::size_t n) {
    auto want = capacity() == 0 ? min_capacity : capacity();
    while (want < 2 * n)
      want *= 2;
    if (want != capacity())
      rehash(want);
  }

  // -- properties and iteration -----------------------------------------------

  std::size_t size() const noexcept {
    return values_.size();
  }

  bool empty() const noexcept {
    return values_.empty();
  }

  /// Index cells (twice the size at least).
  std::size_t capacity() const noexcept {
    return cells_ ? mask_ + 1 : 0;
  }

  iterator begin() noexcept {
    return values_.begin();
  }

  iterator end() noexcept {
    return values_.end();
  }

  const_iterator begin() const noexcept {
    return values_.begin();
  }

  const_iterator end() const noexcept {
    return values_.end();
  }

private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  static constexpr std::size_t min_capacity = 16;

  /// No initialisers: rehash zeroes a new array with memset.
  struct cell {
    std::uint32_t tag;
    std::uint32_t pos; // 1 + index in values_; 0: empty
  };

  /// 32 well-mixed bits of the hash: the low ones pick the home cell, all of
  /// them filter compares. Mixing keeps a weak hash_text from clustering.
  static std::uint32_t tag_of(std::size_t hash) noexcept {
    return static_cast<std::uint32_t>(
      (static_cast<std::uint64_t>(hash) * 0x9e3779b97f4a7c15u) >> 32);
  }

  std::size_t find_cell(hashed_key key) const noexcept {
    if (!cells_)
      return npos;
    auto tag = tag_of(key.hash);
    for (std::size_t i = tag & mask_;; i = detail::next_cell(i, mask_)) {
      const auto& c = cells_[i];
      if (c.pos == 0)
        return npos; // at most half the cells are used: this terminates
      if (c.tag == tag && key_of_(values_[c.pos - 1]) == key.text)
        return i;
    }
  }

  /// The cell pointing to values_[k], whose tag is `tag`.
  std::size_t cell_of(std::size_t k, std::uint32_t tag) const noexcept {
    auto pos = static_cast<std::uint32_t>(k + 1);
    for (std::size_t i = tag & mask_;; i = detail::next_cell(i, mask_))
      if (cells_[i].pos == pos)
        return i;
  }

  static bool empty_cell(const cell& c) noexcept {
    return c.pos == 0;
  }

  void place(cell c) noexcept {
    cells_[detail::first_empty(cells_.get(), mask_, c.tag & mask_,
                               empty_cell)] = c;
  }

  void remove_cell(std::size_t i) noexcept {
    detail::erase_cell(cells_.get(), mask_, i, empty_cell,
                       [mask = mask_](const cell& c) { return c.tag & mask; });
  }

  void rehash(std::size_t new_capacity) {
    auto old_capacity = capacity();
    auto old = std::move(cells_);
    // A large index is fresh memory: populate it in one call, then zero it.
    cells_.reset(new cell[new_capacity]);
    populate(cells_.get(), new_capacity * sizeof(cell));
    std::memset(cells_.get(), 0, new_capacity * sizeof(cell));
    mask_ = new_capacity - 1;
    for (std::size_t k = 0; k < old_capacity; ++k)
      if (old[k].pos != 0)
        place(old[k]);
  }

  KeyOf key_of_;
  std::unique_ptr<cell[]> cells_;
  std::size_t mask_ = 0;
  segmented_vector<T> values_;
  /// tags_[k]: the tag of values_[k], to find its cell on erase.
  segmented_vector<std::uint32_t> tags_;
};

} // namespace podref
