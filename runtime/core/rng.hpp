// A small, fast, deterministic PRNG for victim selection and tests: xoshiro256** (Blackman
// and Vigna) whose 256-bit state is filled from the seed by splitmix64, so that nearby seeds
// (worker 0, 1, 2, ...) give unrelated streams. No allocation, no global state, no locking:
// each worker owns one. Not for cryptography.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

#include "core/assert.hpp"

namespace rt::core {

class rng {
 public:
  using result_type = std::uint64_t;

  // The same seed always gives the same sequence.
  explicit rng(std::uint64_t seed = 0) noexcept {
    std::uint64_t x = seed;
    for (std::uint64_t& w : s_) w = splitmix64(x);
  }

  std::uint64_t next_u64() noexcept {
    const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), without modulo bias (Lemire's multiply-and-reject). I-RNG-1: n > 0.
  std::uint64_t next_below(std::uint64_t n) noexcept {
    RT_ASSERT(n > 0, "I-RNG-1", "rng::next_below(0) has no valid result");
    __extension__ using u128 = unsigned __int128;
    u128 m = static_cast<u128>(next_u64()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      // 2^64 mod n: the number of low products that would over-represent some results.
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<u128>(next_u64()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // UniformRandomBitGenerator, so std::shuffle and <random> distributions accept it.
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }
  result_type operator()() noexcept { return next_u64(); }

 private:
  static std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  std::uint64_t s_[4];
};

}  // namespace rt::core
