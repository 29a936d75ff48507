// tests/sweep.hpp — how many seeds a "passes over N seeds" sweep runs.
//
// A sweep that asserts a fixed protocol stays clean over seeds 1..N runs all N in the default build.
// The bounded sanitizer runs of CI (scripts/test.sh) compile the tests with
// KCCL_TESTS_SWEEP_DIVISOR=5: the same sweeps over the first N/5 seeds, every mode and profile
// still covered (a sanitizer checks the code paths, which the first seeds already take; the seeds
// themselves are the default build's job). Searches that must find a bug within N seeds are not
// bounded this way: fewer seeds could miss it.
#pragma once
#include <cstdint>

#ifndef KCCL_TESTS_SWEEP_DIVISOR
#define KCCL_TESTS_SWEEP_DIVISOR 1
#endif
static_assert(KCCL_TESTS_SWEEP_DIVISOR >= 1, "KCCL_TESTS_SWEEP_DIVISOR must be at least 1");

namespace kccl_tests {
/// n seeds, or n / KCCL_TESTS_SWEEP_DIVISOR (at least 1) in the bounded sanitizer runs.
constexpr uint32_t sweep_seeds(uint32_t n) {
    const uint32_t k = n / uint32_t(KCCL_TESTS_SWEEP_DIVISOR);
    return k ? k : 1;
}
}  // namespace kccl_tests
