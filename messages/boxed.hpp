// boxed<T>: an optional value kept behind a pointer, like the optional Go
// pointers of the Kubernetes API types it models.
//
// std::optional<T> stores T inline, and its "engaged" flag behind T. The
// volume of a pod has twelve optional sources of which at most one is set:
// inline, a volume took 728 bytes over 12 cache lines, and finding its
// source read a flag on each line. Boxed, an absent source costs 8 bytes,
// a volume 160, and the twelve pointers sit on two lines. The reference
// walk of every registration reads them: on pods decoded earlier and no
// longer in cache (the register benchmark's), the volume walk took ~13% of
// a caller's time in misses, ~5% boxed (perf).
//
// Where the value is usually set when the field is, inline is cheaper to
// read (one line, no second miss): an env var's valueFrom stays a
// std::optional (measured: boxing it made register slower).
//
// The interface is the part of std::optional's that pods use: test, access,
// assign a value or nullopt, emplace, reset, and compare with nullopt.
// Copies are deep.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace podref {

template <class T>
class boxed {
public:
  using value_type = T;

  boxed() noexcept = default;

  boxed(std::nullopt_t) noexcept {
    // nop
  }

  boxed(T value) : ptr_(std::make_unique<T>(std::move(value))) {
    // nop
  }

  boxed(const boxed& other)
    : ptr_(other.ptr_ ? std::make_unique<T>(*other.ptr_) : nullptr) {
    // nop
  }

  boxed(boxed&&) noexcept = default;

  boxed& operator=(const boxed& other) {
    if (this != &other)
      ptr_ = other.ptr_ ? std::make_unique<T>(*other.ptr_) : nullptr;
    return *this;
  }

  boxed& operator=(boxed&&) noexcept = default;

  boxed& operator=(std::nullopt_t) noexcept {
    ptr_.reset();
    return *this;
  }

  /// Assigns to the boxed value if there is one, else boxes `value`.
  boxed& operator=(T value) {
    if (ptr_)
      *ptr_ = std::move(value);
    else
      ptr_ = std::make_unique<T>(std::move(value));
    return *this;
  }

  template <class... Ts>
  T& emplace(Ts&&... xs) {
    ptr_ = std::make_unique<T>(std::forward<Ts>(xs)...);
    return *ptr_;
  }

  void reset() noexcept {
    ptr_.reset();
  }

  bool has_value() const noexcept {
    return ptr_ != nullptr;
  }

  explicit operator bool() const noexcept {
    return has_value();
  }

  /// Requires has_value().
  T& operator*() noexcept {
    return *ptr_;
  }

  const T& operator*() const noexcept {
    return *ptr_;
  }

  T* operator->() noexcept {
    return ptr_.get();
  }

  const T* operator->() const noexcept {
    return ptr_.get();
  }

  /// The value; throws std::bad_optional_access if there is none.
  const T& value() const {
    if (!ptr_)
      throw std::bad_optional_access{};
    return *ptr_;
  }

  T& value() {
    if (!ptr_)
      throw std::bad_optional_access{};
    return *ptr_;
  }

  friend bool operator==(const boxed& x, std::nullopt_t) noexcept {
    return !x;
  }

  friend bool operator!=(const boxed& x, std::nullopt_t) noexcept {
    return static_cast<bool>(x);
  }

private:
  std::unique_ptr<T> ptr_;
};

} // namespace podref
