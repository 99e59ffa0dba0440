// small_rng: a one-word random bit generator for backoff jitter.
//
// std::mt19937_64 keeps 2.5 KB of state, which was half the memory of every
// reflector; jitter needs no statistical strength beyond spreading retries.
// This is SplitMix64 (Steele, Lea, Flood 2014): 8 bytes of state, and it
// satisfies UniformRandomBitGenerator, so the standard distributions take it.
#pragma once

#include <cstdint>

namespace podref {

class small_rng {
public:
  using result_type = std::uint64_t;

  explicit small_rng(std::uint64_t seed = 0) noexcept : state_(seed) {
    // nop
  }

  void seed(std::uint64_t x) noexcept {
    state_ = x;
  }

  static constexpr result_type min() noexcept {
    return 0;
  }

  static constexpr result_type max() noexcept {
    return ~result_type{0};
  }

  result_type operator()() noexcept {
    auto z = (state_ += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }

private:
  std::uint64_t state_;
};

} // namespace podref
