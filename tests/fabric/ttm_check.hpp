// The check the tt-metal op-structure tests run on every case: the op on dirty L1 with adversarial
// schedules and the race detector, every output unit compared with the values the runner computes
// from the seed (tools/ttm_fabric_ops.hpp: bytes for all_gather / all_to_all, bfloat16 elements
// for reduce_scatter / all_reduce). Returns "" when the run finished with no wrong output, else
// what went wrong; `out`, if given, gets the run's Result.
#pragma once

#include "tools/ttm_fabric_ops.hpp"

#include <chrono>
#include <string>

namespace kccl::tools::ttm_fabric::test {

inline void throw_handler(const char*, const char* msg, const char*, int) { throw emu::EmulationError(msg); }

inline std::string check(Options o, uint64_t seed, std::chrono::milliseconds watchdog = std::chrono::milliseconds(30000),
                         Result* out = nullptr) {
    kccl::set_assert_handler(&throw_handler);
    emu::RunOptions ro;
    ro.watchdog = watchdog;
    ro.adversary.enabled = true;
    ro.adversary.seed = seed;
    ro.dirty_l1 = emu::RunOptions::DirtyL1::on;
    ro.race = emu::RunOptions::RaceCheck::on;
    o.seed = seed;
    const Result r = run(o, ro);
    if (out) *out = r;
    if (!r.error.empty()) return "run failed: " + r.error;
    if (r.wrong) return std::to_string(r.wrong) + (reduces(o) ? " wrong elements" : " wrong bytes") + "; first:" + r.first_wrong;
    return "";
}

}  // namespace kccl::tools::ttm_fabric::test
