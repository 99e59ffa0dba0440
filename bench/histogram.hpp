// histogram: an HDR-style log-linear latency histogram with fixed memory.
//
// Values (nanoseconds, or any unsigned count) below 2^sub_bits are counted
// exactly; above, every power-of-two range is split into 2^(sub_bits-1)
// equal buckets, so a reported value is within 1/128 of the recorded one
// (two to three significant digits). Each thread records into its own
// instance; merge() adds instances together at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace podref::bench {

class histogram {
public:
  /// log2 of the exact range; relative error is at most 2^-(sub_bits - 1).
  static constexpr unsigned sub_bits = 8;

  histogram();

  /// Counts one occurrence of `value`.
  void record(std::uint64_t value) noexcept {
    ++counts_[index_of(value)];
    ++total_;
    if (value < min_)
      min_ = value;
    if (value > max_)
      max_ = value;
    sum_ += value;
  }

  /// Adds every count of `other`.
  void merge(const histogram& other);

  /// Forgets every recorded value.
  void reset() noexcept;

  /// The number of recorded values.
  std::uint64_t count() const noexcept {
    return total_;
  }

  /// The smallest / largest recorded value (0 when empty).
  std::uint64_t min() const noexcept {
    return total_ == 0 ? 0 : min_;
  }

  std::uint64_t max() const noexcept {
    return max_;
  }

  /// The arithmetic mean of the recorded values (0 when empty).
  double mean() const noexcept;

  /// The value below or at which `percentile` percent of the recorded values
  /// lie (nearest rank), as the highest value of its bucket, never above
  /// max(). 0 when empty. `percentile` is clamped to [0, 100].
  std::uint64_t value_at_percentile(double percentile) const noexcept;

  /// The bucket of `value` (exposed for tests).
  static std::size_t index_of(std::uint64_t value) noexcept;

  /// The highest value that falls into bucket `index`.
  static std::uint64_t highest_in(std::size_t index) noexcept;

private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t total_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
  long double sum_ = 0;
};

} // namespace podref::bench
