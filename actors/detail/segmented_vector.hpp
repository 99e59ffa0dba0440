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
// Indexing costs an add, a bit scan, a load from the directory and a
// multiply-add: the directory keeps, per segment, the address element 0
// would have if the segment started there. Large segments are populated a
// window ahead of the last element (see fresh_memory.hpp), not all at once:
// a new segment is as large as all before it, and most of it may never be
// used.
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

#include "podref/actors/detail/fresh_memory.hpp"

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
    return *at(segment_of(i), i);
  }

  const T& operator[](std::size_t i) const noexcept {
    return *at(segment_of(i), i);
  }

  T& back() noexcept {
    return (*this)[size_ - 1];
  }

  /// The index of `x`, an element of this vector. Looks from the last
  /// segment down: it holds about half of the elements.
  std::size_t index_of(const T* x) const noexcept {
    auto at = reinterpret_cast<std::uintptr_t>(x);
    for (auto k = segments_; k-- > 0;) {
      auto from = reinterpret_cast<std::uintptr_t>(segment(k));
      if (at >= from && at < from + capacity_of(k) * sizeof(T))
        return (at - base_[k]) / sizeof(T);
    }
    return size_; // not reached for elements of this vector
  }

  // -- modifiers --------------------------------------------------------------

  template <class... Ts>
  T& emplace_back(Ts&&... xs) {
    auto k = segment_of(size_);
    if (k == segments_) {
      auto* p = static_cast<T*>(::operator new(capacity_of(k) * sizeof(T)));
      base_[k] = reinterpret_cast<std::uintptr_t>(p) - start_of(k) * sizeof(T);
      ++segments_;
    }
    if (size_ >= populated_)
      populate_from(k);
    auto* x = ::new (at(k, size_)) T(std::forward<Ts>(xs)...);
    ++size_;
    return *x;
  }

  void push_back(T x) {
    emplace_back(std::move(x));
  }

  void pop_back() noexcept {
    if constexpr (!std::is_trivially_destructible_v<T>)
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

  static constexpr std::size_t capacity_of(unsigned k) noexcept {
    return first << k;
  }

  /// Index of segment k's first element: first * (2^k - 1).
  static constexpr std::size_t start_of(unsigned k) noexcept {
    return (first << k) - first;
  }

  /// Segment k holds [first * (2^k - 1), first * (2^(k+1) - 1)): k is the
  /// top bit of i + first, minus FirstShift.
  static unsigned segment_of(std::size_t i) noexcept {
    auto j = static_cast<std::uint64_t>(i) + first;
    return 63u - static_cast<unsigned>(__builtin_clzll(j)) - FirstShift;
  }

  /// Element i, in segment k.
  T* at(unsigned k, std::size_t i) const noexcept {
    return reinterpret_cast<T*>(base_[k] + i * sizeof(T));
  }

  T* segment(unsigned k) const noexcept {
    return at(k, start_of(k));
  }

  /// Populates segment k from element size_ on, one window or up to its
  /// end.
  void populate_from(unsigned k) noexcept {
    constexpr std::size_t window =
      sizeof(T) < populate_window ? populate_window / sizeof(T) : 1;
    auto n = start_of(k + 1) - size_;
    if (n > window)
      n = window;
    populate(at(k, size_), n * sizeof(T));
    populated_ = size_ + n;
  }

  void release(unsigned k) noexcept {
    ::operator delete(segment(k));
    base_[k] = 0;
  }

  /// Per allocated segment k: its address minus start_of(k) elements (so
  /// element i is at base_[k] + i * sizeof(T); as an integer, since it
  /// may point before the allocation).
  std::uintptr_t base_[max_segments] = {};
  unsigned segments_ = 0;
  std::size_t size_ = 0;
  /// Elements below this index are in memory touched or populated.
  std::size_t populated_ = 0;
};

} // namespace podref
