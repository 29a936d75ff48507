// kccl/testing/catch2.hpp — Catch2 (v2) glue for tests of kernels on the emulation.
//
// Target kccl::testing (installed with the package: find_package(kccl) -> kccl::testing; link
// your own Catch2 as well). Host-only: C++20.
//
//   #include <testing/catch2.hpp>
//   TEST_CASE("my protocol under 200 schedules") {
//       kccl::emu::RunOptions base;
//       base.schedule.policy = kccl::emu::Policy::pct;   // or random (the default with the adversary)
//       kccl::testing::explore(200, base, [&](const kccl::emu::RunOptions& o) { return run_my_kernels(o); });
//   }
//
// explore() runs the scenario once per seed (kccl::emu::explore: the seed is the schedule's, the
// adversary's and the start skew's) on the fiber engine and stops at the first failure, which
// fails the test with the failing seed, the KCCL_EMU_REPLAY value that replays it exactly and
// the run's summary (errors, the watchdog's dump). A scenario takes `const RunOptions&` (pass
// them to Launcher::run) and returns a RunReport (failed = !ok()) or a bool. With
// KCCL_EMU_REPLAY set in the environment only that setting runs.
//
// explore_message() is the framework-neutral form: "" when every seed passed, else the same
// text — any test runner can print it and fail.
#pragma once

#include <emulation/emulation.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace kccl::testing {

/// Runs `scenario` for seeds first_seed .. first_seed + n_seeds - 1; "" if every one passed,
/// else which seed failed, its replay string and the run's summary.
template <class Scenario>
std::string explore_message(uint32_t n_seeds, kccl::emu::RunOptions base, Scenario&& scenario, uint64_t first_seed = 1) {
    const kccl::emu::ExploreResult r = kccl::emu::explore(n_seeds, base, std::forward<Scenario>(scenario), first_seed);
    if (r.ok) return {};
    return "explore: seed " + std::to_string(r.failing_seed) + " failed (run " + std::to_string(r.runs) +
           " of at most " + std::to_string(n_seeds) + "). Replay it with:\n  KCCL_EMU_REPLAY=\"" + r.replay + "\"\n" + r.message;
}

/// Catch2: explore_message(), failing the test with its text on the first failing seed.
template <class Scenario>
void explore(uint32_t n_seeds, kccl::emu::RunOptions base, Scenario&& scenario, uint64_t first_seed = 1) {
    const std::string msg = explore_message(n_seeds, base, std::forward<Scenario>(scenario), first_seed);
    if (!msg.empty()) FAIL(msg);
    SUCCEED("explore: " << n_seeds << " seeds passed");
}

}  // namespace kccl::testing
