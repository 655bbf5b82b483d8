#pragma once

// The random number generator of the core: xoshiro256** (Blackman and Vigna), seeded through
// splitmix64. std::mt19937_64 was used before; its 2.5 KB of state sat in every PodGroup actor
// (20,000 actors: 50 MB of the restart's resident set) for a few draws per scheduling round.
// This one is 32 bytes, passes the usual statistical batteries, and is a
// UniformRandomBitGenerator, so <random>'s distributions take it. Its output is fixed by its
// definition here, so seeded runs repeat on every platform.

#include <cstdint>
#include <limits>

namespace phalanx::scheduler {

/// SplitMix64's finalizer: every input bit moves every output bit. For hashes built from weak
/// mixes (FNV, sums of words) and for seeding.
constexpr uint64_t mix64(uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class rng {
 public:
  using result_type = uint64_t;

  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }

  /// The same default seed as std::mt19937_64, for default-constructed generators.
  rng() noexcept { seed(5489u); }
  explicit rng(uint64_t seed_value) noexcept { seed(seed_value); }

  /// Restarts the sequence: every seed (0 included) gives a valid, distinct state.
  void seed(uint64_t seed_value) noexcept {
    uint64_t x = seed_value;
    for (auto& word : state_)
      word = splitmix64(x);
  }

  result_type operator()() noexcept {
    const uint64_t result = rotate_left(state_[1] * 5, 7) * 9;
    const uint64_t shifted = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= shifted;
    state_[3] = rotate_left(state_[3], 45);
    return result;
  }

  void discard(unsigned long long n) noexcept {
    while (n-- > 0)
      (*this)();
  }

  friend bool operator==(const rng&, const rng&) = default;

 private:
  static constexpr uint64_t rotate_left(uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }
  // Advances `x` and returns the next splitmix64 output.
  static constexpr uint64_t splitmix64(uint64_t& x) noexcept {
    return mix64(x += 0x9E3779B97F4A7C15ULL);
  }

  uint64_t state_[4];
};

} // namespace phalanx::scheduler
