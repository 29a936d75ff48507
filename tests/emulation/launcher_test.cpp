// The launcher: results per core, start skew, the watchdog's dump, and every bad-input error
// naming the core, the operation and the bound.
#include "util.hpp"

#include <atomic>

using namespace kccl::test;
namespace topo = kccl::emu::topology;

TEST_CASE("kernels get their runtime args and report their return values", "[launcher]") {
    Cluster c(topo::n300(small_chip()));
    Launcher L(c);
    for (uint32_t chip = 0; chip < 2; ++chip)
        for (uint32_t x = 0; x < 4; ++x)
            L.add(c.chip(chip).worker(x, 1),
                  [](auto& h) { return h.arg(0) * 100 + h.arg(1) + h.core_x() * 10 + h.chip_id() * 1000; },
                  {chip, x});
    auto r = L.run();
    KCCL_REQUIRE_OK(r);
    REQUIRE(r.cores.size() == 8);
    for (uint32_t chip = 0; chip < 2; ++chip)
        for (uint32_t x = 0; x < 4; ++x)
            REQUIRE(r.at(c.chip(chip).worker(x, 1)).value == chip * 100 + x + x * 10 + chip * 1000);
    REQUIRE_THROWS_WITH(L.add(c.chip(0).worker(0, 1), [](auto&) {}), Catch::Contains("already has a kernel"));
}

TEST_CASE("start skew delays a chip's kernels - a handshake makes the protocol indifferent", "[launcher]") {
    Cluster c(topo::n300(small_chip()));
    auto [e0, e1] = c.links_between(0, 1)[0];
    std::atomic<int64_t> start0{0}, start1{0};
    auto now_us = [] {
        return std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    };
    constexpr uint32_t kHs = 0x100, kHsSrc = 0x200;
    // Handshake as in tt-metal's BasicEthernetGuide ("Ethernet Kernel Setup"): the master sends a 16-byte word and waits for the answer.
    Launcher L(c);
    L.add(e0, [&](auto& h) {
        start0 = now_us();
        put(h, kHsSrc, 1u);
        h.eth_send(0, kHsSrc, kHs, 16);
        h.sem_wait(kHs + 16, 1);  // answer lands in the next word
    });
    L.add(e1, [&](auto& h) {
        start1 = now_us();
        h.sem_wait(kHs, 1);
        put(h, kHsSrc, 1u);
        h.eth_send(0, kHsSrc, kHs + 16, 16);
    });
    RunOptions o = normal();
    // Host time between starts is what this checks: the thread engine's skew is host time (the
    // fiber engine's skew orders starts in scheduling rounds; tests/emulation/engine_test.cpp).
    o.engine = kccl::emu::Engine::threads;
    o.start_skew = {std::chrono::microseconds(0), std::chrono::microseconds(50000)};
    auto r = L.run(o);
    KCCL_REQUIRE_OK(r);
    REQUIRE(start1 - start0 >= 45000);
    // Random skew is reproducible from its seed and bounded.
    RunOptions o2 = normal();
    o2.random_skew_max = std::chrono::microseconds(20000);
    o2.skew_seed = 42;
    c.clear_memory();
    KCCL_REQUIRE_OK(L.run(o2));
}

TEST_CASE("the watchdog fails a hung run with a dump of what every core waits for", "[launcher][watchdog]") {
    Cluster c(topo::n300(small_chip()));
    auto [e0, e1] = c.links_between(0, 1)[0];
    Launcher L(c);
    c.write32(c.chip(0).worker(0, 0), 0x104, 3);
    L.add(c.chip(0).worker(0, 0), [](auto& h) { h.sem_wait(0x104, 5); });
    L.add(c.chip(0).worker(1, 0), [](auto& h) { h.sem_wait_min(0x200, 2); });
    L.add(e1, [](auto& h) {
        while (h.sem_read(0x300) == 0) h.idle();
    });
    L.add(e0, [](auto&) {});
    L.on_dump(e1, [] { return std::string("queue ptrs: head=1 tail=0"); });
    const auto t0 = std::chrono::steady_clock::now();
    auto r = L.run(normal(std::chrono::milliseconds(200)));
    const auto took = std::chrono::steady_clock::now() - t0;
    REQUIRE_FALSE(r.ok());
    REQUIRE(r.watchdog_fired);
    INFO(r.watchdog_dump);
    REQUIRE_THAT(r.watchdog_dump, Catch::Contains("chip 0 worker (0,0): sem_wait L1 0x104 expected == 5, current 3"));
    REQUIRE_THAT(r.watchdog_dump, Catch::Contains("chip 0 worker (1,0): sem_wait_min L1 0x200 expected >= 2, current 0"));
    REQUIRE_THAT(r.watchdog_dump, Catch::Contains("idle in a poll loop; last sem_read L1 0x300, current 0"));
    REQUIRE_THAT(r.watchdog_dump, Catch::Contains("queue ptrs: head=1 tail=0"));
    REQUIRE_THAT(r.watchdog_dump, Catch::Contains("finished"));
    REQUIRE(r.at(c.chip(0).worker(0, 0)).status == kccl::emu::CoreStatus::aborted);
    REQUIRE(took < std::chrono::seconds(5));
}

TEST_CASE("a slow but progressing run does not trip the watchdog", "[launcher][watchdog]") {
    Cluster c(topo::single_chip(small_chip()));
    Launcher L(c);
    // 300 ms of work in small steps, watchdog at 100 ms.
    L.add(c.chip(0).worker(0, 0), [](auto& h) {
        for (int i = 0; i < 60; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            h.sem_inc(h.noc_addr(1, 0, 0x100), 1);
        }
    });
    L.add(c.chip(0).worker(1, 0), [](auto& h) { h.sem_wait(0x100, 60); });
    KCCL_REQUIRE_OK(L.run(normal(std::chrono::milliseconds(100))));
}

namespace {
// Runs one kernel on `core` and returns the error it failed with.
template <class K>
std::string error_of(Cluster& c, CoreCoord core, K k, std::vector<uint32_t> args = {}) {
    Launcher L(c);
    L.add(core, k, std::move(args));
    auto r = L.run(normal(std::chrono::milliseconds(2000)));
    REQUIRE_FALSE(r.ok());
    REQUIRE_FALSE(r.watchdog_fired);
    return r.first_error();
}
}  // namespace

TEST_CASE("bad input fails the run with an error naming core / operation and bound", "[launcher][errors]") {
    Cluster c(topo::n300(small_chip()));
    const auto w = c.chip(0).worker(1, 1);
    const auto [e0, e1] = c.links_between(0, 1)[0];
    const auto unlinked = c.chip(0).eth(3);
    using Catch::Contains;

    SECTION("L1 address or size out of range") {
        auto m = error_of(c, w, [](auto& h) { h.noc_write(64 * 1024 - 8, h.noc_addr(0, 0, 0), 16); });
        REQUIRE_THAT(m, Contains("chip 0 worker (1,1): noc_write (source): L1 range [0xfff8, 0x10008)") &&
                            Contains("L1 of 65536 bytes"));
        m = error_of(c, w, [](auto& h) { h.noc_write(0, h.noc_addr(2, 0, 65530), 16); });
        REQUIRE_THAT(m, Contains("noc_write: range [0xfffa, 0x1000a) on chip 0 worker (2,0) exceeds its memory of 65536"));
        m = error_of(c, w, [](auto& h) { h.sem_set(1 << 20, 1); });
        REQUIRE_THAT(m, Contains("sem_set: L1 range [0x100000, 0x100004)"));
        m = error_of(c, w, [](auto& h) { h.l1_ptr(65000, 1000); });
        REQUIRE_THAT(m, Contains("l1_ptr"));
        m = error_of(c, w, [](auto& h) { h.sem_inc(h.noc_addr(0, 0, 0x102), 1); });
        REQUIRE_THAT(m, Contains("sem_inc: semaphore address 0x102 is not 4-byte aligned"));
    }
    SECTION("unaligned Ethernet send") {
        auto m = error_of(c, e0, [](auto& h) { h.eth_send(0, 0x1008, 0x1000, 32); });
        REQUIRE_THAT(m, Contains("chip 0 eth 0 (0,2): eth_send: src 0x1008, dst 0x1000 and bytes 32 must all be multiples of 16"));
        m = error_of(c, e0, [](auto& h) { h.eth_send(0, 0x1000, 0x1000, 20); });
        REQUIRE_THAT(m, Contains("bytes 20 must all be multiples of 16"));
        m = error_of(c, e0, [](auto& h) { h.eth_send(2, 0x1000, 0x1000, 16); });
        REQUIRE_THAT(m, Contains("tx queue 2 does not exist (queues are 0 and 1)"));
        m = error_of(c, e0, [](auto& h) { h.eth_send(0, 0x1000, 65536 - 16, 32); });
        REQUIRE_THAT(m, Contains("destination range [0xfff0, 0x10010) exceeds the L1 of chip 1 eth 0"));
    }
    SECTION("Ethernet send on a core with no link, or not an Ethernet core") {
        auto m = error_of(c, unlinked, [](auto& h) { h.eth_send(0, 0x1000, 0x1000, 16); });
        REQUIRE_THAT(m, Contains("chip 0 eth 3 (3,2): eth_send: this Ethernet core has no link"));
        m = error_of(c, w, [](auto& h) { h.eth_send(0, 0x1000, 0x1000, 16); });
        REQUIRE_THAT(m, Contains("only Ethernet cores can send over Ethernet; this is a worker core"));
    }
    SECTION("NoC address on another chip or of no core") {
        Launcher L(c);
        kccl::hal::noc_addr_t other = kccl::emu::Hal::encode(1, 0, 0, 0x100);
        auto m = error_of(c, w, [other](auto& h) { h.sem_inc(other, 1); });
        REQUIRE_THAT(m, Contains("sem_inc: NoC address names chip 1 core (0,0) but this core is on chip 0") &&
                            Contains("other chips only over Ethernet links"));
        m = error_of(c, w, [](auto& h) { h.noc_read(h.noc_addr(7, 7, 0), 0, 4); });
        REQUIRE_THAT(m, Contains("noc_read: NoC address names core (7,7) which does not exist on chip 0; workers are (x<4, y<2)"));
        m = error_of(c, w, [](auto& h) { h.noc_write(0, 0x100, 4); });
        REQUIRE_THAT(m, Contains("was not made by noc_addr()"));
    }
    SECTION("runtime arg index out of range") {
        auto m = error_of(c, w, [](auto& h) { return h.arg(2); }, {5, 6});
        REQUIRE_THAT(m, Contains("chip 0 worker (1,1): arg: runtime argument index 2 is out of range; this core was given 2 argument(s) (valid indices 0..1)"));
        m = error_of(c, w, [](auto& h) { return h.arg(0); });
        REQUIRE_THAT(m, Contains("given 0 argument(s) (valid indices 0..none)"));
    }
    SECTION("a failing core aborts the others instead of leaving them hung") {
        Launcher L(c);
        L.add(w, [](auto& h) { h.sem_set(1 << 20, 1); });
        L.add(c.chip(0).worker(0, 0), [](auto& h) { h.sem_wait(0x100, 1); });
        auto r = L.run(normal(std::chrono::milliseconds(10000)));
        REQUIRE_FALSE(r.ok());
        REQUIRE_FALSE(r.watchdog_fired);
        REQUIRE(r.at(c.chip(0).worker(0, 0)).status == kccl::emu::CoreStatus::aborted);
        REQUIRE(r.at(w).status == kccl::emu::CoreStatus::failed);
    }
}
