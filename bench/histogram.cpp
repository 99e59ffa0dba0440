// The bucket arithmetic of the log-linear histogram (see histogram.hpp).
#include "bench/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace podref::bench {

namespace {

constexpr std::uint64_t exact_limit = std::uint64_t{1} << histogram::sub_bits;
constexpr std::uint64_t half = exact_limit / 2;

/// Buckets: the exact range, then `half` buckets per shift 1..64-sub_bits.
constexpr std::size_t bucket_count
  = exact_limit + (64 - histogram::sub_bits) * half;

unsigned msb(std::uint64_t x) noexcept {
  return 63u - static_cast<unsigned>(__builtin_clzll(x));
}

} // namespace

histogram::histogram() : counts_(bucket_count, 0) {
  // nop
}

std::size_t histogram::index_of(std::uint64_t value) noexcept {
  if (value < exact_limit)
    return static_cast<std::size_t>(value);
  auto shift = msb(value) - (sub_bits - 1);
  auto top = value >> shift; // in [half, exact_limit)
  return static_cast<std::size_t>(shift * half + top);
}

std::uint64_t histogram::highest_in(std::size_t index) noexcept {
  if (index < exact_limit)
    return index;
  auto shift = (index - half) / half;
  auto top = index - shift * half;
  auto low = static_cast<std::uint64_t>(top) << shift;
  return low + ((std::uint64_t{1} << shift) - 1);
}

void histogram::merge(const histogram& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i)
    counts_[i] += other.counts_[i];
  total_ += other.total_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

void histogram::reset() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0);
  total_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
  sum_ = 0;
}

double histogram::mean() const noexcept {
  return total_ == 0 ? 0.0
                     : static_cast<double>(sum_ / static_cast<long double>(
                                                    total_));
}

std::uint64_t
histogram::value_at_percentile(double percentile) const noexcept {
  if (total_ == 0)
    return 0;
  percentile = std::clamp(percentile, 0.0, 100.0);
  auto rank = static_cast<std::uint64_t>(
    std::ceil(percentile / 100.0 * static_cast<double>(total_)));
  rank = std::clamp<std::uint64_t>(rank, 1, total_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank)
      return std::min(highest_in(i), max_);
  }
  return max_;
}

} // namespace podref::bench
