// kccl::testing (testing/include/testing/catch2.hpp): explore over seeds with Catch2, and its
// framework-neutral message.
#include "testing/include/testing/catch2.hpp"

#include "util.hpp"

using namespace kccl::test;

namespace {

/// Two cores: one signals the other through a semaphore. `fail_on_seed`: that seed's run fails a
/// device check (a stand-in for a schedule-dependent bug).
kccl::emu::RunReport signal_pair(const kccl::emu::RunOptions& o, uint64_t fail_on_seed) {
    Cluster c(kccl::emu::topology::single_chip(small_chip()));
    Launcher L(c);
    L.init_word(c.chip(0).worker(1, 0), 0x100, 0);
    const bool fail = o.schedule.seed == fail_on_seed;
    L.add(c.chip(0).worker(0, 0), [](auto& h) { h.sem_inc(h.noc_addr(1, 0, 0x100), 1); });
    L.add(c.chip(0).worker(1, 0), [fail](auto& h) {
        h.sem_wait_min(0x100, 1);
        KCCL_ASSERT(!fail, "planted failure");
    });
    return L.run(o);
}

}  // namespace

TEST_CASE("kccl::testing::explore passes a correct scenario over every seed", "[testing][explore]") {
    kccl::emu::RunOptions base;
    base.watchdog = std::chrono::seconds(5);
    base.schedule.policy = kccl::emu::Policy::pct;
    kccl::testing::explore(20, base, [](const kccl::emu::RunOptions& o) { return signal_pair(o, ~0ull); });
}

TEST_CASE("kccl::testing::explore_message stops at the first failing seed and names its replay string",
          "[testing][explore]") {
    kccl::emu::RunOptions base;
    base.watchdog = std::chrono::seconds(5);
    base.schedule.policy = kccl::emu::Policy::random;
    uint32_t runs = 0;
    const std::string msg = kccl::testing::explore_message(20, base, [&](const kccl::emu::RunOptions& o) {
        ++runs;
        return signal_pair(o, 4);
    });
    CHECK(runs == 4);  // seeds 1, 2, 3 pass; 4 fails; no more
    CHECK_THAT(msg, Catch::Contains("explore: seed 4 failed (run 4 of at most 20)") &&
                        Catch::Contains("KCCL_EMU_REPLAY=\"policy=random,seed=4,") && Catch::Contains("planted failure"));
    CHECK(kccl::testing::explore_message(3, base, [](const kccl::emu::RunOptions& o) { return signal_pair(o, 4); }).empty());
}
