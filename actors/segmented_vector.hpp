// segmented_vector: a growable array whose elements never move.
//
// The manager's tables grow with every pod it registers. A std::vector grows
// by moving everything into a block twice the size: the manager stops for
// the copy, and each new block is fresh memory, whose first touch is a page
// fault per page (about 2 us per 4 KiB page on the 2-core VMs we measure
// on). Registering 200k pods, the manager's vectors took 2.1k of its 12.5k
// page faults.
//
// Here, elements live in segments that double in size: segment k holds
// first << k elements and is allocated when the previous one is full, so
// growing copies nothing, and memory is touched once, as elements are
// appended. Small tables stay small (the first segment holds `first`); the
// directory is a fixed array (32 segments hold more than 2^32 * first).
// Indexing costs an add, a bit scan and a load from the directory. Large
// segments are populated a window ahead of the last element (see
// fresh_memory.hpp), not all at once: a new segment is as large as all
// before it, and most of it may never be used.
//
// Shrinking frees the last segment once the one before it is empty too, so
// a size that goes back and forth over a segment boundary does not allocate
// each time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>
#include <utility>

#include "podref/actors/fresh_memory.hpp"

namespace podref {

/// FirstShift: log2 of the first segment's size.
template <class T, unsigned FirstShift = 4>
class segmented_vector {
public:
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "segments come from the plain operator new");

  static constexpr std::size_t first = std::size_t{1} << FirstShift;

  template <bool Const>
  class basic_iterator {
  public:
    using owner = std::conditional_t<Const, const segmented_vector,
                                     segmented_vector>;
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using reference = std::conditional_t<Const, const T&, T&>;
    using pointer = std::conditional_t<Const, const T*, T*>;

    basic_iterator(owner* v, std::size_t i) noexcept : v_(v), i_(i) {
      // nop
    }

    reference operator*() const noexcept {
      return (*v_)[i_];
    }

    pointer operator->() const noexcept {
      return &(*v_)[i_];
    }

    basic_iterator& operator++() noexcept {
      ++i_;
      return *this;
    }

    basic_iterator operator++(int) noexcept {
      auto res = *this;
      ++i_;
      return res;
    }

    bool operator==(const basic_iterator& x) const noexcept {
      return i_ == x.i_;
    }

    bool operator!=(const basic_iterator& x) const noexcept {
      return i_ != x.i_;
    }

  private:
    owner* v_;
    std::size_t i_;
  };

  using iterator = basic_iterator<false>;
  using const_iterator = basic_iterator<true>;

  // -- constructors, destructors, and assignment operators --------------------

  segmented_vector() noexcept = default;

  segmented_vector(const segmented_vector&) = delete;
  segmented_vector& operator=(const segmented_vector&) = delete;

  ~segmented_vector() {
    while (size_ > 0)
      pop_back();
    for (unsigned k = 0; k < segments_; ++k)
      release(k);
  }

  // -- element access ---------------------------------------------------------

  T& operator[](std::size_t i) noexcept {
    auto [k, offset] = locate(i);
    return segment_[k][offset];
  }

  const T& operator[](std::size_t i) const noexcept {
    auto [k, offset] = locate(i);
    return segment_[k][offset];
  }

  T& back() noexcept {
    return (*this)[size_ - 1];
  }

  /// The index of `x`, an element of this vector. Looks from the last
  /// segment down: it holds about half of the elements.
  std::size_t index_of(const T* x) const noexcept {
    auto at = reinterpret_cast<std::uintptr_t>(x);
    for (auto k = segments_; k-- > 0;) {
      auto from = reinterpret_cast<std::uintptr_t>(segment_[k]);
      if (at >= from && at < from + capacity_of(k) * sizeof(T))
        return start_of(k) + (at - from) / sizeof(T);
    }
    return size_; // not reached for elements of this vector
  }

  // -- modifiers --------------------------------------------------------------

  template <class... Ts>
  T& emplace_back(Ts&&... xs) {
    auto [k, offset] = locate(size_);
    if (k == segments_) {
      segment_[k] = static_cast<T*>(
        ::operator new(capacity_of(k) * sizeof(T)));
      ++segments_;
    }
    if (size_ >= populated_)
      populate_from(k, offset);
    auto* x = ::new (segment_[k] + offset) T(std::forward<Ts>(xs)...);
    ++size_;
    return *x;
  }

  void push_back(T x) {
    emplace_back(std::move(x));
  }

  void pop_back() noexcept {
    back().~T();
    --size_;
    // Keep one empty segment: free the last only once the one before it
    // is empty too.
    if (segments_ >= 2 && size_ <= start_of(segments_ - 2)) {
      release(--segments_);
      if (populated_ > start_of(segments_))
        populated_ = start_of(segments_);
    }
  }

  // -- properties and iteration -----------------------------------------------

  std::size_t size() const noexcept {
    return size_;
  }

  bool empty() const noexcept {
    return size_ == 0;
  }

  /// Elements the allocated segments hold.
  std::size_t capacity() const noexcept {
    return segments_ == 0 ? 0 : start_of(segments_);
  }

  iterator begin() noexcept {
    return {this, 0};
  }

  iterator end() noexcept {
    return {this, size_};
  }

  const_iterator begin() const noexcept {
    return {this, 0};
  }

  const_iterator end() const noexcept {
    return {this, size_};
  }

private:
  static constexpr unsigned max_segments = 32;

  struct location {
    unsigned segment;
    std::size_t offset;
  };

  static constexpr std::size_t capacity_of(unsigned k) noexcept {
    return first << k;
  }

  /// Index of segment k's first element: first * (2^k - 1).
  static constexpr std::size_t start_of(unsigned k) noexcept {
    return (first << k) - first;
  }

  /// Segment k holds [first * (2^k - 1), first * (2^(k+1) - 1)): with
  /// j = i + first, k is j's top bit minus FirstShift.
  static location locate(std::size_t i) noexcept {
    auto j = static_cast<std::uint64_t>(i) + first;
    auto top = 63u - static_cast<unsigned>(__builtin_clzll(j));
    auto k = top - FirstShift;
    return {k, static_cast<std::size_t>(j - (std::uint64_t{1} << top))};
  }

  /// Populates segment k from `offset` on, one window or up to its end.
  void populate_from(unsigned k, std::size_t offset) noexcept {
    constexpr std::size_t window =
      sizeof(T) < populate_window ? populate_window / sizeof(T) : 1;
    auto n = capacity_of(k) - offset;
    if (n > window)
      n = window;
    populate(segment_[k] + offset, n * sizeof(T));
    populated_ = start_of(k) + offset + n;
  }

  void release(unsigned k) noexcept {
    ::operator delete(segment_[k]);
    segment_[k] = nullptr;
  }

  T* segment_[max_segments] = {};
  unsigned segments_ = 0;
  std::size_t size_ = 0;
  /// Elements below this index are in memory touched or populated.
  std::size_t populated_ = 0;
};

} // namespace podref
