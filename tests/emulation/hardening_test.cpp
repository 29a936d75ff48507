// The emulation where programs meet and users err: dirty L1, programs back to back per chip,
// initial words, device checks that reach the user, runs that cannot hang, and named errors for
// every bad size or coordinate.
#include "child_process.hpp"
#include "util.hpp"

#include <hal/config.hpp>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kccl::test;
namespace topo = kccl::emu::topology;
using kccl::emu::EmulationError;

namespace {
/// Sum of the words [addr, addr + bytes) as the kernel sees them, and how many are zero.
template <class H>
uint64_t zero_words(H& h, uint32_t addr, uint32_t bytes) {
    uint64_t zeros = 0;
    for (uint32_t i = 0; i < bytes / 4; ++i) zeros += get<uint32_t>(h, addr + 4 * i) == 0;
    return zeros;
}
}  // namespace

TEST_CASE("dirty L1: a never-run core starts with garbage except what the host wrote", "[emulation][dirty]") {
    Cluster c(topo::single_chip(small_chip()));
    const auto w = c.chip(0).worker(0, 0);
    c.write32(w, 0x2000, 0x12345678);  // a program input
    Launcher L(c);
    L.add(w, [](auto& h) { return zero_words(h, 0x1000, 0x1000) << 32 | get<uint32_t>(h, 0x2000); });
    RunOptions o = adversarial(7);
    auto r = L.run(o);
    KCCL_REQUIRE_OK(r);
    const uint64_t v = r.at(w).value;
    REQUIRE((v & 0xffffffff) == 0x12345678u);  // the host's write survived
    REQUIRE((v >> 32) < 8);                     // 1024 words of garbage: (almost) none is zero

    // The next run on the same cluster keeps the previous program's bytes (no new garbage).
    Launcher L2(c);
    L2.add(w, [](auto& h) { put(h, 0x3000, 0xCAFEu); });
    KCCL_REQUIRE_OK(L2.run(adversarial(8)));
    Launcher L3(c);
    L3.add(w, [](auto& h) { return get<uint32_t>(h, 0x3000); });
    auto r3 = L3.run(adversarial(9));
    KCCL_REQUIRE_OK(r3);
    REQUIRE(r3.at(w).value == 0xCAFEu);
}

TEST_CASE("dirty L1 is seeded (same seed, same garbage), off without the adversary, on by request", "[emulation][dirty]") {
    auto first_word = [](kccl::emu::RunOptions o) {
        Cluster c(topo::single_chip(small_chip()));
        Launcher L(c);
        L.add(c.chip(0).worker(1, 1), [](auto& h) { return get<uint32_t>(h, 0x1230); });
        auto r = L.run(o);
        KCCL_REQUIRE_OK(r);
        return r.at(c.chip(0).worker(1, 1)).value;
    };
    REQUIRE(first_word(adversarial(3)) == first_word(adversarial(3)));
    REQUIRE(first_word(adversarial(3)) != first_word(adversarial(4)));
    REQUIRE(first_word(normal()) == 0);
    RunOptions on = normal();
    on.dirty_l1 = RunOptions::DirtyL1::on;
    on.dirty_seed = 99;
    REQUIRE(first_word(on) != 0);
    // scramble_memory() makes every core dirty at once, seeded.
    Cluster c(topo::single_chip(small_chip()));
    c.scramble_memory(5);
    REQUIRE(c.read32(c.chip(0).worker(3, 1), 0x40) != 0);
}

TEST_CASE("dirty L1: the garbage repeats nowhere: every 4 KiB block, core and seed its own", "[emulation][dirty]") {
    // What a program finds must not be a pattern it could pass by luck: no two blocks of a core
    // alike, no two cores alike, another seed other bytes; and hardly a zero word anywhere.
    auto snapshot = [](uint64_t seed, uint32_t x) {
        Cluster c(topo::single_chip(small_chip()));
        c.scramble_memory(seed);
        const auto m = c.l1(c.chip(0).worker(x, 1));
        return std::vector<uint8_t>(m.begin(), m.end());
    };
    const std::vector<uint8_t> a = snapshot(5, 0), b = snapshot(5, 1), a6 = snapshot(6, 0);
    REQUIRE(a.size() == 64 * 1024);
    REQUIRE(a == snapshot(5, 0));  // seeded
    constexpr size_t kBlock = 4096;
    uint32_t zero_words = 0;
    for (size_t i = 0; i + 4 <= a.size(); i += 4) {
        uint32_t w;
        std::memcpy(&w, a.data() + i, 4);
        zero_words += w == 0;
    }
    CHECK(zero_words < 4);  // 16384 random words: a zero is a 1-in-4-billion event each
    for (size_t i = 0; i < a.size(); i += kBlock)
        for (size_t j = i + kBlock; j < a.size(); j += kBlock) {
            INFO("blocks at " << i << " and " << j);
            CHECK(std::memcmp(a.data() + i, a.data() + j, kBlock) != 0);
        }
    for (size_t i = 0; i < a.size(); i += kBlock) {
        INFO("block at " << i);
        CHECK(std::memcmp(a.data() + i, b.data() + i, kBlock) != 0);   // another core
        CHECK(std::memcmp(a.data() + i, a6.data() + i, kBlock) != 0);  // another seed
    }
}

TEST_CASE("programs back to back: a chip starts program p+1 when its own kernels of p are done", "[emulation][programs]") {
    Cluster c(topo::n300(small_chip()));
    std::atomic<uint32_t> chip0_in_program1{0};
    Launcher L(c);
    const auto a = c.chip(0).worker(0, 0), b = c.chip(0).worker(1, 0), z = c.chip(1).worker(0, 0);
    // Program 0: a finishes at once, b takes a while; chip 1's kernel waits until chip 0 has
    // started program 1 — chips do not wait for each other, so this cannot deadlock.
    L.add(a, [](auto&) { return 1; });
    L.add(b, [](auto& h) {
        for (int i = 0; i < 50; ++i) h.idle();  // ~0.1 s: idle() sleeps up to 2 ms when nothing changes
        return 2;
    });
    L.add(z, [&](auto& h) {
        while (!chip0_in_program1.load(std::memory_order_acquire)) h.idle();
        return 3;
    });
    L.init_word(a, 0x100, 7);
    L.next_program();
    // Program 1 on chip 0: a sees program 1's initial word, and only after b finished program 0.
    L.init_word(a, 0x104, 11);
    L.add(a, [&](auto& h) {
        chip0_in_program1.store(1, std::memory_order_release);
        return uint64_t(h.sem_read(0x100)) << 32 | h.sem_read(0x104);
    });
    auto r = L.run(normal(std::chrono::milliseconds(5000)));
    KCCL_REQUIRE_OK(r);
    REQUIRE(r.cores.size() == 4);
    REQUIRE(r.at(b, 0).value == 2);
    REQUIRE(r.at(z, 0).value == 3);
    REQUIRE(r.at(a, 1).value == (uint64_t(7) << 32 | 11));
    REQUIRE(r.at(a, 1).program == 1);
    REQUIRE_THROWS_WITH(r.at(b, 1), Catch::Contains("no kernel ran on chip 0 (1,0) in program 1"));
    Launcher E(c);
    REQUIRE_THROWS_WITH(E.next_program(), Catch::Contains("program 0 has no kernel"));
}

TEST_CASE("a failed device check fails its core with the message (no trap, no SIGILL)", "[emulation][errors]") {
    // Before: assert_fail trapped (SIGILL) when no handler was installed, killing the test process.
    // This case runs with none installed, whatever the cases before it in the process left.
    const kccl::assert_handler_t before = kccl::set_assert_handler(nullptr);
    Cluster c(topo::single_chip(small_chip()));
    Launcher L(c);
    L.add(c.chip(0).worker(2, 1), [](auto& h) {
        KCCL_ASSERT(h.core_x() == 99, "the kernel wanted core x 99");
    });
    L.add(c.chip(0).worker(0, 0), [](auto& h) { h.sem_wait(0x100, 12345); });  // aborted by the failure
    auto r = L.run(normal(std::chrono::milliseconds(5000)));
    REQUIRE_FALSE(r.ok());
    REQUIRE_FALSE(r.watchdog_fired);
    REQUIRE_THAT(r.first_error(), Catch::Contains("chip 0 worker (2,1): device check failed: the kernel wanted core x 99") &&
                                      Catch::Contains("h.core_x() == 99"));
    REQUIRE(r.at(c.chip(0).worker(0, 0)).status == kccl::emu::CoreStatus::aborted);
    // Outside a run the handler the user installed (here none) is back.
    CHECK(kccl::assert_handler() == nullptr);
    kccl::set_assert_handler(before);
}

namespace {
void spinning_kernel_run() {
    Cluster c(topo::single_chip(small_chip()));
    Launcher L(c);
    std::atomic<bool> never{false};
    // A poll loop that never calls the backend: the watchdog fires, but the thread cannot be stopped.
    L.add(c.chip(0).worker(0, 0), [&](auto&) {
        while (!never.load(std::memory_order_relaxed)) {
        }
    });
    L.add(c.chip(0).worker(1, 0), [](auto& h) { h.sem_wait(0x100, 5); });
    RunOptions o = normal(std::chrono::milliseconds(200));
    o.stop_grace = std::chrono::milliseconds(300);
    (void)L.run(o);
    std::_Exit(0);  // not reached: run() ends the process
}
}  // namespace

TEST_CASE("a kernel that never calls the backend cannot hang the run: dump on stderr, exit 3", "[emulation][watchdog]") {
    // Before: run() joined the spinning thread forever after the watchdog fired; no dump.
    auto [status, err] = in_child(&spinning_kernel_run, 30);
    INFO(err);
    REQUIRE(status == 3);
    // The default (fiber) engine runs one core at a time: the spinning kernel never lets the
    // other one start (on the thread engine it would show its sem_wait instead).
    REQUIRE_THAT(err, Catch::Contains("did not stop within 300 ms") && Catch::Contains("chip 0 worker (0,0)") &&
                          Catch::Contains("running (not blocked in the backend)") &&
                          Catch::Contains("chip 0 worker (1,0): not started"));
}

namespace {
void too_many_threads_run() {
    // Address space for a few thread stacks only: thread creation fails part-way.
    Cluster c(topo::single_chip(small_chip()));
    Launcher L(c);
    for (uint32_t y = 0; y < 2; ++y)
        for (uint32_t x = 0; x < 4; ++x) L.add(c.chip(0).worker(x, y), [](auto& h) { h.sem_wait(0x100, 0); });
    for (uint32_t e = 0; e < 4; ++e) L.add(c.chip(0).eth(e), [](auto& h) { h.sem_wait(0x100, 0); });
    rlimit lim{};
    getrlimit(RLIMIT_AS, &lim);
    // Find the current size of the address space and allow ~3 more 8 MiB stacks.
    FILE* f = std::fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (std::fscanf(f, "%lu", &pages) != 1) pages = 0;
        std::fclose(f);
    }
    lim.rlim_cur = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (28u << 20);
    setrlimit(RLIMIT_AS, &lim);
    try {
        RunOptions o = normal();
        o.engine = kccl::emu::Engine::threads;  // threads are what runs out here
        (void)L.run(o);
        std::fputs("run returned normally\n", stderr);
        std::_Exit(1);
    } catch (const EmulationError& e) {
        std::fputs(e.what(), stderr);
        std::_Exit(4);
    }
}
}  // namespace

TEST_CASE("running out of threads is a named error, not a crash", "[emulation][errors]") {
    auto [status, err] = in_child(&too_many_threads_run, 30);
    INFO(err);
    REQUIRE(status == 4);
    REQUIRE_THAT(err, Catch::Contains("Launcher::run: could not start thread") && Catch::Contains("of 12"));
}

TEST_CASE("bad sizes, counts and coordinates are named errors", "[emulation][errors]") {
    Cluster c(topo::n300(small_chip()));
    REQUIRE_THROWS_WITH(c.chip(2), Catch::Contains("Cluster::chip(2): chip does not exist; this cluster has 2 chips (0..1)"));
    Launcher L(c);
    L.add(c.chip(0).worker(0, 0), [](auto&) {});
    RunOptions zero = normal();
    zero.watchdog = std::chrono::milliseconds(0);
    REQUIRE_THROWS_WITH(L.run(zero), Catch::Contains("watchdog of 0 ms; it must be at least 1 ms"));
    RunOptions few = normal();
    few.max_threads = 0;
    few.engine = kccl::emu::Engine::threads;  // the thread engine's limit
    REQUIRE_THROWS_WITH(L.run(few), Catch::Contains("1 cores run kernels but RunOptions::max_threads is 0"));
    REQUIRE_THROWS_WITH(L.init_word(c.chip(0).worker(0, 0), 0x102, 1), Catch::Contains("must be 4-byte aligned"));

    REQUIRE_THROWS_WITH(topo::custom(257), Catch::Contains("257 chips requested; at most 256 are allowed"));
    REQUIRE_THROWS_WITH(topo::ring(300), Catch::Contains("300 chips requested; at most 256"));
    REQUIRE_THROWS_WITH(topo::mesh(UINT32_MAX, UINT32_MAX), Catch::Contains("at most 256 chips are allowed"));
    kccl::emu::ChipSpec wide = small_chip();
    wide.grid_w = 1025;  // x is 10 bits in a NoC address: 0..1023
    REQUIRE_THROWS_WITH(Cluster(topo::single_chip(wide)),
                        Catch::Contains("does not fit the NoC coordinates") && Catch::Contains("grid_w <= 1024"));
    kccl::emu::ChipSpec tall = small_chip();
    tall.grid_h = 1023;  // y is 10 bits and the last two rows are Ethernet and DRAM
    REQUIRE_THROWS_WITH(Cluster(topo::single_chip(tall)), Catch::Contains("grid_h <= 1022"));
    kccl::emu::ClusterSpec many = topo::custom(256, small_chip());
    many.num_chips = 300;  // bypassing the topology helpers
    REQUIRE_THROWS_WITH(Cluster(many), Catch::Contains("300 chips requested; at most 256"));
}
