/* SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): a 64-bit state advanced by a constant and
 * scrambled on the way out. Small, fast, every seed good, and a stream is
 * split by seeding a new one with the next output of the old.
 *
 * The programs' random numbers (random(n), randomFloat()) come from one
 * stream per thread: main's is the run's seed, and a child's starts from
 * its parent's next number at the fork, so a thread's numbers depend on
 * the seed and its own program order, never on the schedule. Schedule
 * exploration (vm/explore.c) draws its choices from streams of its own. */
#ifndef SIMVM_RANDOM_H
#define SIMVM_RANDOM_H

#include <stdint.h>

#define SPLITMIX64_GAMMA 0x9e3779b97f4a7c15ull

/* The scrambling of one state into an output (also a good 64-bit hash). */
static inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline uint64_t splitmix64_next(uint64_t *state) {
  *state += SPLITMIX64_GAMMA;
  return splitmix64_mix(*state);
}

/* Uniform in [0, n) for n >= 1, without bias (Lemire, "Fast random
 * integer generation in an interval", 2019). */
static inline uint64_t splitmix64_below(uint64_t *state, uint64_t n) {
  uint64_t x = splitmix64_next(state);
  __uint128_t m = (__uint128_t)x * n;
  uint64_t low = (uint64_t)m;
  if (low < n) {
    uint64_t threshold = -n % n;
    while (low < threshold) {
      x = splitmix64_next(state);
      m = (__uint128_t)x * n;
      low = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

/* Uniform in [0, 1), 53 bits. */
static inline double splitmix64_float(uint64_t *state) {
  return (double)(splitmix64_next(state) >> 11) * 0x1.0p-53;
}

#endif
