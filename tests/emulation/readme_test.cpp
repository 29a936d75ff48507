// The README's "A minimal test", compiled and run as the README shows it (the README's block is
// checked line by line against this file), and the same protocol without its semaphore's initial
// value, which dirty L1 must break.
#include <testing/util.hpp>   // target kccl::testing (and your Catch2)
using namespace kccl::test;

TEST_CASE("my protocol survives the adversary", "[myproto][adversarial]") {
    for (uint64_t seed = 1; seed <= 50; ++seed) {  // each seed: another order of events, other garbage in L1
        Cluster c(kccl::emu::topology::single_chip(small_chip()));
        Launcher L(c);
        L.init_word(c.chip(0).worker(1, 0), 0x100, 0);  // the semaphore starts at 0 (tt-metal: CreateSemaphore)
        L.add(c.chip(0).worker(0, 0), [](auto& h) { h.sem_inc(h.noc_addr(1, 0, 0x100), 1); });
        L.add(c.chip(0).worker(1, 0), [](auto& h) { h.sem_wait_min(0x100, 1); });
        KCCL_REQUIRE_OK(L.run(adversarial(seed)));
    }
}

TEST_CASE("README minimal test without the semaphore's initial value fails on dirty L1", "[myproto][adversarial][mutation]") {
    // Without init_word the waiter reads whatever the previous program left at 0x100: the emulation
    // reports the garbage read (on about half the seeds the wait would otherwise pass on garbage).
    uint32_t failed = 0;
    for (uint64_t seed = 1; seed <= 50; ++seed) {
        Cluster c(kccl::emu::topology::single_chip(small_chip()));
        Launcher L(c);
        L.add(c.chip(0).worker(0, 0), [](auto& h) { h.sem_inc(h.noc_addr(1, 0, 0x100), 1); });
        L.add(c.chip(0).worker(1, 0), [](auto& h) { h.sem_wait_min(0x100, 1); });
        const auto r = L.run(adversarial(seed));
        if (r.ok()) continue;
        ++failed;
        const std::string s = r.summary();
        INFO(s);
        REQUIRE(s.find("garbage used as data: chip 0 worker (1,0) sem_wait") != std::string::npos);
        REQUIRE(s.find("L1 [0x100, 0x104) of chip 0 worker (1,0)") != std::string::npos);
    }
    REQUIRE(failed >= 10);  // 25 of 50 when written
}
