// The benchmark's log-linear histogram against exact percentiles of sorted
// samples: every reported percentile lies in the bucket of the exact one,
// within the histogram's relative precision.
#include "bench/histogram.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using podref::bench::histogram;

namespace {

/// The nearest-rank percentile of sorted `xs`.
std::uint64_t exact_percentile(const std::vector<std::uint64_t>& xs,
                               double p) {
  auto rank = static_cast<std::size_t>(
    std::ceil(p / 100.0 * static_cast<double>(xs.size())));
  rank = std::clamp<std::size_t>(rank, 1, xs.size());
  return xs[rank - 1];
}

void check_against_exact(std::vector<std::uint64_t> xs) {
  histogram h;
  for (auto x : xs)
    h.record(x);
  std::sort(xs.begin(), xs.end());
  REQUIRE(h.count() == xs.size());
  CHECK(h.min() == xs.front());
  CHECK(h.max() == xs.back());
  for (double p : {0.0, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    auto exact = exact_percentile(xs, p);
    auto got = h.value_at_percentile(p);
    INFO("p" << p << " exact " << exact << " got " << got);
    CHECK(got >= exact);
    CHECK(static_cast<double>(got - exact)
          <= static_cast<double>(exact) / 128.0);
    CHECK(histogram::index_of(got) == histogram::index_of(exact));
  }
}

} // namespace

TEST_CASE("small values are counted exactly") {
  histogram h;
  for (std::uint64_t i = 1; i <= 100; ++i)
    h.record(i);
  CHECK(h.value_at_percentile(50) == 50);
  CHECK(h.value_at_percentile(99) == 99);
  CHECK(h.value_at_percentile(100) == 100);
  CHECK(h.mean() == Approx(50.5));
}

TEST_CASE("an empty histogram reports zeros") {
  histogram h;
  CHECK(h.count() == 0);
  CHECK(h.value_at_percentile(99) == 0);
  CHECK(h.min() == 0);
  CHECK(h.max() == 0);
}

TEST_CASE("bucket bounds are contiguous and cover 64 bits") {
  std::size_t prev = 0;
  for (std::uint64_t v : {std::uint64_t{0}, std::uint64_t{255},
                          std::uint64_t{256}, std::uint64_t{257},
                          std::uint64_t{1000000}, UINT64_MAX}) {
    auto i = histogram::index_of(v);
    CHECK(i >= prev);
    CHECK(histogram::highest_in(i) >= v);
    if (i > 0)
      CHECK(histogram::highest_in(i - 1) < v);
    prev = i;
  }
  CHECK(histogram::highest_in(histogram::index_of(UINT64_MAX)) == UINT64_MAX);
}

TEST_CASE("percentiles match sorted samples: log-normal latencies") {
  std::mt19937_64 gen{42};
  std::lognormal_distribution<double> dist{6.0, 1.5};
  std::vector<std::uint64_t> xs;
  for (int i = 0; i < 100000; ++i)
    xs.push_back(static_cast<std::uint64_t>(dist(gen)));
  check_against_exact(xs);
}

TEST_CASE("percentiles match sorted samples: uniform over wide range") {
  std::mt19937_64 gen{7};
  std::uniform_int_distribution<std::uint64_t> dist{0, 1ULL << 40};
  std::vector<std::uint64_t> xs;
  for (int i = 0; i < 20000; ++i)
    xs.push_back(dist(gen));
  check_against_exact(xs);
}

TEST_CASE("merging equals recording into one histogram") {
  histogram a;
  histogram b;
  histogram both;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    auto x = i * i % 100003;
    (i % 2 == 0 ? a : b).record(x);
    both.record(x);
  }
  a.merge(b);
  CHECK(a.count() == both.count());
  for (double p : {50.0, 99.0, 99.9})
    CHECK(a.value_at_percentile(p) == both.value_at_percentile(p));
  CHECK(a.max() == both.max());
  CHECK(a.min() == both.min());
}
