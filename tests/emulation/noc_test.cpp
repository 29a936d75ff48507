// NoC semantics, one by one, in normal and adversarial mode: per-destination write ordering (N1),
// barriers and flush (N2, N3), read barrier (N4), semaphore operations (N5).
#include "util.hpp"

#include <atomic>
#include <string>
#include <utility>
#include <vector>

using namespace kccl::test;
namespace topo = kccl::emu::topology;

namespace {
constexpr uint32_t kSem = 0x100;   // semaphore word
constexpr uint32_t kSem2 = 0x104;
constexpr uint32_t kSrc = 0x1000;  // local staging
constexpr uint32_t kDst = 0x4000;  // landing area
constexpr uint32_t kWords = 64;    // 256-byte messages
}  // namespace

TEST_CASE("write then sem_inc to the same core: the data is visible when the increment is (N1)",
          "[noc][adversarial]") {
    const uint32_t kMsgs = 300;
    for (uint64_t seed : {1ull, 2ull, 3ull}) {
        Cluster c(topo::single_chip(small_chip()));
        host_zero(c, kSem, 8);  // the semaphores start at 0 (host-initialised)
        Launcher L(c);
        auto a = c.chip(0).worker(0, 0), b = c.chip(0).worker(1, 0);
        // A streams messages to B: each message = kWords copies of its sequence number, written
        // into one slot, then B's counter is incremented. B acknowledges each on A's counter.
        L.add(a, [&](auto& h) {
            for (uint32_t m = 1; m <= kMsgs; ++m) {
                h.sem_wait_min(kSem, m - 1);  // B has consumed message m-1
                for (uint32_t w = 0; w < kWords; ++w) put(h, kSrc + 4 * w, m);
                h.noc_write(kSrc, h.noc_addr(1, 0, kDst), kWords * 4);
                h.sem_inc(h.noc_addr(1, 0, kSem), 1);
                h.noc_writes_flushed();  // kSrc is rewritten next iteration (N3)
            }
        });
        L.add(b, [&](auto& h) {
            uint32_t bad = 0;
            for (uint32_t m = 1; m <= kMsgs; ++m) {
                h.sem_wait_min(kSem, m);
                for (uint32_t w = 0; w < kWords; ++w) bad += get<uint32_t>(h, kDst + 4 * w) != m;
                h.sem_inc(h.noc_addr(0, 0, kSem), 1);
            }
            return bad;
        });
        RunOptions o = seed == 1 ? normal() : adversarial(seed);
        // N1 as observed (the default profile); under the strict profile this kernel needs a flush
        // before the increment (docs/contract.md, "Ordering profiles"; ordering_test.cpp).
        o.ordering = kccl::emu::OrderingProfile::observed;
        auto r = L.run(o);
        KCCL_REQUIRE_OK(r);
        REQUIRE(r.at(b).value == 0);
    }
}

TEST_CASE("writes to one destination land in issue order (N1)", "[noc][adversarial]") {
    Cluster c(topo::single_chip(small_chip()));
    host_zero(c, kSem, 8);  // the semaphores start at 0 (host-initialised)
    Launcher L(c);
    auto a = c.chip(0).worker(0, 0), b = c.chip(0).worker(1, 0);
    // A overwrites the same word with 1..N, then increments B's semaphore. Whatever B sees at
    // any time is non-decreasing, and after the increment it is exactly N.
    const uint32_t N = 2000;
    L.add(a, [&](auto& h) {
        for (uint32_t i = 1; i <= N; ++i) {
            put(h, kSrc + 16 * (i % 8), i);
            h.noc_write(kSrc + 16 * (i % 8), h.noc_addr(1, 0, kDst), 4);
            if (i % 8 == 7) h.noc_writes_flushed();
        }
        h.sem_inc(h.noc_addr(1, 0, kSem), 1);
    });
    L.add(b, [&](auto& h) {
        h.sem_wait(kSem, 1);
        return h.sem_read(kDst);
    });
    auto r = L.run(adversarial(11));
    KCCL_REQUIRE_OK(r);
    REQUIRE(r.at(b).value == N);
}

TEST_CASE("the adversary really defers writes: no ordering across destinations (N1 / N6)",
          "[noc][adversarial][mutation]") {
    // A writes data to B, then increments C's semaphore without a barrier. C reads B's memory
    // over the NoC. The contract does not promise C sees the data; the adversary must show it
    // (otherwise the adversary would let protocols that rely on it pass).
    uint64_t stale = 0;
    const uint32_t kRounds = 200;
    for (uint64_t seed = 1; seed <= 5 && stale == 0; ++seed) {
        Cluster c(topo::single_chip(small_chip()));
        host_zero(c, kSem, 8);  // the semaphores start at 0 (host-initialised)
        Launcher L(c);
        auto a = c.chip(0).worker(0, 0), b = c.chip(0).worker(1, 0), cc = c.chip(0).worker(2, 0);
        L.add(a, [&](auto& h) {
            for (uint32_t r = 1; r <= kRounds; ++r) {
                put(h, kSrc, r);
                h.noc_write(kSrc, h.noc_addr(1, 0, kDst), 4);
                h.sem_inc(h.noc_addr(2, 0, kSem), 1);
                h.sem_wait(kSem2, r);  // C has looked
                h.noc_write_barrier();  // (so kSrc may be rewritten)
            }
        });
        L.add(b, [](auto&) {});
        L.add(cc, [&](auto& h) {
            uint64_t stale_rounds = 0, other = 0;
            for (uint32_t r = 1; r <= kRounds; ++r) {
                h.sem_wait(kSem, r);
                h.noc_read(h.noc_addr(1, 0, kDst), kSrc, 4);
                h.noc_read_barrier();
                // The write of round r has landed (r) or not yet (r - 1: A's barrier landed the
                // previous round's; the write is 4 bytes, one piece). Anything else is a bug.
                const uint32_t seen = get<uint32_t>(h, kSrc);
                stale_rounds += seen == r - 1;
                other += seen != r && seen != r - 1;
                h.sem_inc(h.noc_addr(0, 0, kSem2), 1);
            }
            return other << 32 | stale_rounds;
        });
        RunOptions o = adversarial(seed);
        o.race = RunOptions::RaceCheck::off;  // races on purpose (the race detector reports it at once)
        auto r = L.run(o);
        INFO("seed " << seed);
        KCCL_REQUIRE_OK(r);
        REQUIRE((r.at(cc).value >> 32) == 0);
        stale += r.at(cc).value & 0xffffffff;
    }
    REQUIRE(stale > 0);
}

TEST_CASE("a write barrier before signalling another core makes the data visible there (N2)",
          "[noc][adversarial]") {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        Cluster c(topo::single_chip(small_chip()));
        host_zero(c, kSem, 8);  // the semaphores start at 0 (host-initialised)
        Launcher L(c);
        auto a = c.chip(0).worker(0, 0), b = c.chip(0).worker(1, 0), cc = c.chip(0).worker(2, 0);
        L.add(a, [&](auto& h) {
            put(h, kSrc, 0xC0FFEEu);
            h.noc_write(kSrc, h.noc_addr(1, 0, kDst), 4);
            h.noc_write_barrier();
            h.sem_inc(h.noc_addr(2, 0, kSem), 1);
        });
        L.add(b, [](auto&) {});
        L.add(cc, [&](auto& h) {
            h.sem_wait(kSem, 1);
            h.noc_read(h.noc_addr(1, 0, kDst), kSrc, 4);
            h.noc_read_barrier();
            return get<uint32_t>(h, kSrc);
        });
        auto r = L.run(adversarial(seed));
        KCCL_REQUIRE_OK(r);
        REQUIRE(r.at(cc).value == 0xC0FFEEu);
    }
}

TEST_CASE("noc_writes_flushed lets the source be reused without changing what lands (N2 / N3)",
          "[noc][adversarial]") {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        Cluster c(topo::single_chip(small_chip()));
        host_zero(c, kSem, 8);  // the semaphores start at 0 (host-initialised)
        Launcher L(c);
        auto a = c.chip(0).worker(0, 0), b = c.chip(0).worker(1, 0);
        L.add(a, [&](auto& h) {
            put(h, kSrc, 111u);
            h.noc_write(kSrc, h.noc_addr(1, 0, kDst), 4);
            h.noc_writes_flushed();
            put(h, kSrc, 222u);  // reuse: must not affect the write already flushed
            h.noc_write(kSrc, h.noc_addr(1, 0, kDst + 4), 4);
            h.sem_inc(h.noc_addr(1, 0, kSem), 1);
        });
        L.add(b, [&](auto& h) {
            h.sem_wait(kSem, 1);
            return uint64_t(get<uint32_t>(h, kDst)) << 32 | get<uint32_t>(h, kDst + 4);
        });
        auto r = L.run(adversarial(seed));
        KCCL_REQUIRE_OK(r);
        REQUIRE(r.at(b).value == ((uint64_t(111) << 32) | 222));
    }
}

TEST_CASE("reusing a write's source before a flush is caught by the adversary (N3)",
          "[noc][adversarial]") {
    // Expected failure: B sees the REUSED value 222 (the write read its source late), never
    // anything but 111 or 222, in runs that otherwise complete.
    uint32_t corrupted = 0;
    for (uint64_t seed = 1; seed <= 40 && corrupted == 0; ++seed) {
        Cluster c(topo::single_chip(small_chip()));
        host_zero(c, kSem, 8);  // the semaphores start at 0 (host-initialised)
        Launcher L(c);
        auto a = c.chip(0).worker(0, 0), b = c.chip(0).worker(1, 0);
        L.add(a, [&](auto& h) {
            put(h, kSrc, 111u);
            h.noc_write(kSrc, h.noc_addr(1, 0, kDst), 4);
            put(h, kSrc, 222u);  // BUG: no flush before reuse
            h.sem_inc(h.noc_addr(1, 0, kSem), 1);
        });
        L.add(b, [&](auto& h) {
            h.sem_wait(kSem, 1);
            return get<uint32_t>(h, kDst);
        });
        auto r = L.run(adversarial(seed));
        INFO("seed " << seed);
        KCCL_REQUIRE_OK(r);
        REQUIRE((r.at(b).value == 111u || r.at(b).value == 222u));
        corrupted += r.at(b).value == 222u;
    }
    REQUIRE(corrupted > 0);
}

TEST_CASE("noc_read data is valid after the read barrier (N4) / and not promised before it",
          "[noc][adversarial]") {
    uint32_t early_stale = 0;
    for (uint64_t seed = 1; seed <= 30; ++seed) {
        Cluster c(topo::single_chip(small_chip()));
        host_zero(c, kSem, 8);  // the semaphores start at 0 (host-initialised)
        host_zero(c, kSrc, 4);  // the word the read lands in starts at 0
        c.write32(c.chip(0).worker(1, 0), kDst, 0xBEEF);
        Launcher L(c);
        auto a = c.chip(0).worker(0, 0);
        L.add(a, [&](auto& h) {
            h.noc_read(h.noc_addr(1, 0, kDst), kSrc, 4);
            uint32_t before = h.sem_read(kSrc);
            h.noc_read_barrier();
            uint32_t after = h.sem_read(kSrc);
            return uint64_t(before) << 32 | after;
        });
        auto r = L.run(adversarial(seed));
        KCCL_REQUIRE_OK(r);
        REQUIRE((r.at(a).value & 0xffffffff) == 0xBEEF);
        // Before the barrier the local word is the old 0 (read not landed) or 0xBEEF.
        REQUIRE(((r.at(a).value >> 32) == 0 || (r.at(a).value >> 32) == 0xBEEF));
        early_stale += (r.at(a).value >> 32) == 0;
    }
    REQUIRE(early_stale > 0);  // the adversary does defer reads
}

TEST_CASE("semaphore operations: inc from many cores / set / wait == / wait >= / inline write (N5)",
          "[noc][sem]") {
    for (bool adv : {false, true}) {
        Cluster c(topo::single_chip(small_chip()));
        host_zero(c, kSem, 8);  // the semaphores start at 0 (host-initialised)
        Launcher L(c);
        const uint32_t kIncs = 500;
        auto target = c.chip(0).worker(0, 0);
        // 7 cores each increment the target's counter kIncs times by 1 and once by 3.
        for (uint32_t i = 1; i < 8; ++i)
            L.add(c.chip(0).worker(i % 4, i / 4), [&](auto& h) {
                for (uint32_t k = 0; k < kIncs; ++k) h.sem_inc(h.noc_addr(0, 0, kSem), 1);
                h.sem_inc(h.noc_addr(0, 0, kSem), 3);
                h.sem_wait(kSem2, 42);  // released by the target's inline write
            });
        L.add(target, [&](auto& h) {
            h.sem_wait_min(kSem, 7 * kIncs);  // >= : returns once all plain increments may be in
            h.sem_wait(kSem, 7 * (kIncs + 3));  // == : exact total, no increment lost
            const uint32_t total = h.sem_read(kSem);
            h.sem_set(kSem, 0);
            for (uint32_t i = 1; i < 8; ++i) h.noc_inline_write32(h.noc_addr(i % 4, i / 4, kSem2), 42);
            return uint64_t(total) << 32 | h.sem_read(kSem);
        });
        auto r = L.run(adv ? adversarial(7) : normal());
        KCCL_REQUIRE_OK(r);
        REQUIRE(r.at(target).value >> 32 == 7 * (kIncs + 3));
        REQUIRE((r.at(target).value & 0xffffffff) == 0);
    }
}

TEST_CASE("DRAM endpoint is a NoC target", "[noc]") {
    auto chip = small_chip();
    chip.dram_bytes = 1 << 20;
    Cluster c(topo::single_chip(chip));
    host_zero(c, kSem, 8);  // the semaphores start at 0 (host-initialised)
    Launcher L(c);
    auto a = c.chip(0).worker(0, 0);
    const auto dram = c.chip(0).dram();
    L.add(a, [&](auto& h) {
        put(h, kSrc, 0x5151u);
        h.noc_write(kSrc, h.noc_addr(dram.x, dram.y, 0x80000), 4);
        h.noc_write_barrier();
        h.noc_read(h.noc_addr(dram.x, dram.y, 0x80000), kSrc + 16, 4);
        h.noc_read_barrier();
        return get<uint32_t>(h, kSrc + 16);
    });
    auto r = L.run();
    KCCL_REQUIRE_OK(r);
    REQUIRE(r.at(a).value == 0x5151u);
    REQUIRE(c.read32(dram, 0x80000) == 0x5151u);
    Launcher L2(c);
    REQUIRE_THROWS_WITH(L2.add(dram, [](auto&) {}), Catch::Contains("DRAM endpoint"));
}

// ---- the adversary defers increments and inline writes, and lands writes in pieces ----------------

namespace {
constexpr uint32_t kPeek = 0x2000;  // where C copies B's word to (noc_read)

/// A signals B, then C, with no barrier between (or with one, `barrier`); C, once it sees its
/// signal, reads B's word over the NoC. Returns the number of rounds in which C saw B's word
/// still without A's signal of that round — an order the contract does not promise (N1 / N6).
/// `inline_write`: the signals are inline writes of the round number instead of increments.
/// Sets `ok` to whether the run completed; `bad_value` to whether any value other than the
/// round or the previous round was seen (that would be an adversary bug, not a reordering).
uint64_t cross_destination_signals(bool inline_write, bool barrier, uint64_t seed, bool& ok, bool& bad_value,
                                   std::string& summary) {
    const uint32_t kRounds = 200;
    Cluster c(topo::single_chip(small_chip()));
    host_zero(c, kSem, 12);  // the semaphores start at 0 (host-initialised)
    Launcher L(c);
    auto a = c.chip(0).worker(0, 0), b = c.chip(0).worker(1, 0), cc = c.chip(0).worker(2, 0);
    L.add(a, [&](auto& h) {
        for (uint32_t r = 1; r <= kRounds; ++r) {
            if (inline_write) h.noc_inline_write32(h.noc_addr(1, 0, kSem), r);
            else h.sem_inc(h.noc_addr(1, 0, kSem), 1);
            if (barrier) h.noc_write_barrier();
            if (inline_write) h.noc_inline_write32(h.noc_addr(2, 0, kSem), r);
            else h.sem_inc(h.noc_addr(2, 0, kSem), 1);
            h.sem_wait(kSem2, r);  // C has looked
        }
    });
    L.add(b, [](auto&) {});
    L.add(cc, [&](auto& h) {
        uint64_t behind = 0, other = 0;
        for (uint32_t r = 1; r <= kRounds; ++r) {
            h.sem_wait(kSem, r);
            h.noc_read(h.noc_addr(1, 0, kSem), kPeek, 4);
            h.noc_read_barrier();
            const uint32_t seen = get<uint32_t>(h, kPeek);
            // A signals B once per round and waits for this core before the next round, so B's
            // word is r (A's signal landed) or below r (still in flight).
            behind += seen < r;
            other += seen > r;
            h.sem_inc(h.noc_addr(0, 0, kSem2), 1);
        }
        return other << 32 | behind;
    });
    RunOptions o = adversarial(seed);
    o.race = RunOptions::RaceCheck::off;  // C's noc_read of B's semaphore races on purpose
    auto r = L.run(o);
    ok = r.ok();
    summary = r.summary();
    if (!ok) return 0;
    bad_value = (r.at(cc).value >> 32) != 0;
    return r.at(cc).value & 0xffffffff;
}
}  // namespace

TEST_CASE("the adversary reorders increments to different cores (N1 / N6)", "[noc][adversarial][mutation]") {
    // Relying on "sem_inc(B); sem_inc(C)" landing in that order is a bug; C must be able to see
    // its increment while B's is still in flight. (C's noc_read of B's semaphore races with A's
    // increment on purpose: [mutation].)
    uint64_t behind = 0;
    for (uint64_t seed = 1; seed <= 10 && behind == 0; ++seed) {
        bool ok = false, bad = false;
        std::string s;
        behind += cross_destination_signals(false, false, seed, ok, bad, s);
        INFO("seed " << seed << ": " << s);
        REQUIRE(ok);
        REQUIRE_FALSE(bad);
    }
    REQUIRE(behind > 0);
}

TEST_CASE("the adversary reorders inline writes to different cores (N1 / N6)", "[noc][adversarial][mutation]") {
    uint64_t behind = 0;
    for (uint64_t seed = 1; seed <= 10 && behind == 0; ++seed) {
        bool ok = false, bad = false;
        std::string s;
        behind += cross_destination_signals(true, false, seed, ok, bad, s);
        INFO("seed " << seed << ": " << s);
        REQUIRE(ok);
        REQUIRE_FALSE(bad);
    }
    REQUIRE(behind > 0);
}

TEST_CASE("a write barrier orders increments / inline writes to different cores (N2)", "[noc][adversarial]") {
    for (bool inline_write : {false, true})
        for (uint64_t seed = 1; seed <= 5; ++seed) {
            bool ok = false, bad = false;
            std::string s;
            const uint64_t behind = cross_destination_signals(inline_write, true, seed, ok, bad, s);
            INFO("inline " << inline_write << " seed " << seed << ": " << s);
            REQUIRE(ok);
            REQUIRE_FALSE(bad);
            REQUIRE(behind == 0);
        }
}

namespace {
constexpr uint32_t kOld = 0x01D01D0u;  // what the host left in A's landing word
constexpr uint32_t kNew = 0xDA7Au;     // what the writer sends there

/// The contract's cross-destination probe, one shot: the writer (0,0) sends kNew to core A (1,0)
/// (`incs`: increments A's semaphore instead), then increments the flag of core B (2,0) and
/// returns (its kernel ends with both in flight); `barrier`: noc_write_barrier() between the two.
/// B waits for its flag, reads A's word over the NoC and returns it. The contract does not order
/// the two operations (different destinations, N1 / N6) unless a barrier separates them (N2), so
/// without one B may see kOld (or 0: A's increment not landed) and the adversary must show it.
uint32_t one_shot_cross_destination(bool incs, bool barrier, uint64_t seed, std::string& summary) {
    Cluster c(topo::single_chip(small_chip()));
    host_zero(c, kSem, 8);
    c.write(c.chip(0).worker(1, 0), kDst, &kOld, 4);
    Launcher L(c);
    L.add(c.chip(0).worker(0, 0), [&](auto& h) {
        if (incs) {
            h.sem_inc(h.noc_addr(1, 0, kSem), 1);
        } else {
            put(h, kSrc, kNew);
            h.noc_write(kSrc, h.noc_addr(1, 0, kDst), 4);
        }
        if (barrier) h.noc_write_barrier();
        h.sem_inc(h.noc_addr(2, 0, kSem), 1);
    });
    L.add(c.chip(0).worker(1, 0), [](auto&) {});
    L.add(c.chip(0).worker(2, 0), [&](auto& h) {
        h.sem_wait(kSem, 1);
        h.noc_read(h.noc_addr(1, 0, incs ? kSem : kDst), kPeek, 4);
        h.noc_read_barrier();
        return get<uint32_t>(h, kPeek);
    });
    RunOptions o = adversarial(seed);
    // Without the barrier B's read races on purpose (the race detector reports it on every run);
    // with it the run must be clean, detector on.
    if (!barrier) o.race = RunOptions::RaceCheck::off;
    auto r = L.run(o);
    summary = r.summary();
    return r.ok() ? uint32_t(r.at(c.chip(0).worker(2, 0)).value) : 0xFA11FA11u;
}
}  // namespace

TEST_CASE("the adversary: a write to core A then a flag to core B, writer returning at once: B reads A's "
          "old data on some seed of 1..20 (N1 / N6)", "[noc][adversarial][mutation]") {
    // The in-flight operations a kernel leaves behind land while the other cores run, in any
    // order across destinations: B, woken by its flag, can read A's word before the data lands.
    uint32_t stale = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        std::string s;
        const uint32_t v = one_shot_cross_destination(false, false, seed, s);
        INFO("seed " << seed << ": " << s);
        REQUIRE((v == kOld || v == kNew));
        stale += v == kOld;
    }
    REQUIRE(stale > 0);
}

TEST_CASE("the adversary: two increments to different cores, writer returning at once: the second is "
          "seen before the first on some seed of 1..20 (N1 / N6)", "[noc][adversarial][mutation]") {
    uint32_t reordered = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        std::string s;
        const uint32_t v = one_shot_cross_destination(true, false, seed, s);
        INFO("seed " << seed << ": " << s);
        REQUIRE(v <= 1);  // A's semaphore: 0 (its increment still in flight) or 1
        reordered += v == 0;
    }
    REQUIRE(reordered > 0);
}

TEST_CASE("the adversary: the same one-shot probes with a write barrier between the two pass on seeds "
          "1..20 (N2)", "[noc][adversarial]") {
    for (bool incs : {false, true})
        for (uint64_t seed = 1; seed <= 20; ++seed) {
            std::string s;
            const uint32_t v = one_shot_cross_destination(incs, true, seed, s);
            INFO("incs " << incs << " seed " << seed << ": " << s);
            REQUIRE(v == (incs ? 1u : kNew));
        }
}

TEST_CASE("write, inline write and sem_inc to one core land in issue order, whatever the size (N1)",
          "[noc][adversarial]") {
    // Messages of several sizes (pieces of 4-byte multiples and odd tails), each followed by an
    // inline write of its number and an increment to the same core: when the increment is seen,
    // the whole message and the inline word are.
    const uint32_t sizes[] = {4, 12, 36, 40, 250, 1028};
    const uint32_t kMsgs = 60;
    for (uint64_t seed = 1; seed <= 12; ++seed) {
        Cluster c(topo::single_chip(small_chip()));
        host_zero(c, kSem, 12);  // the semaphores start at 0 (host-initialised)
        Launcher L(c);
        auto a = c.chip(0).worker(0, 0), b = c.chip(0).worker(1, 0);
        L.add(a, [&](auto& h) {
            for (uint32_t m = 1; m <= kMsgs; ++m) {
                h.sem_wait_min(kSem, m - 1);
                const uint32_t bytes = sizes[m % 6];
                uint8_t* p = h.l1_ptr(kSrc, bytes);
                for (uint32_t i = 0; i < bytes; ++i) p[i] = uint8_t(m * 31 + i);
                h.noc_write(kSrc, h.noc_addr(1, 0, kDst), bytes);
                h.noc_inline_write32(h.noc_addr(1, 0, kSem2 + 4), m);
                h.sem_inc(h.noc_addr(1, 0, kSem), 1);
                h.noc_writes_flushed();
            }
        });
        L.add(b, [&](auto& h) {
            uint64_t bad = 0;
            for (uint32_t m = 1; m <= kMsgs; ++m) {
                h.sem_wait(kSem, m);
                const uint32_t bytes = sizes[m % 6];
                const uint8_t* p = h.l1_ptr(kDst, bytes);
                for (uint32_t i = 0; i < bytes; ++i) bad += p[i] != uint8_t(m * 31 + i);
                bad += h.sem_read(kSem2 + 4) != m;
                h.sem_inc(h.noc_addr(0, 0, kSem), 1);
            }
            return bad;
        });
        RunOptions o = adversarial(seed);
        o.ordering = kccl::emu::OrderingProfile::observed;  // N1 as observed (see the first test)
        auto r = L.run(o);
        INFO("seed " << seed);
        KCCL_REQUIRE_OK(r);
        REQUIRE(r.at(b).value == 0);
    }
}

TEST_CASE("the bytes of one NoC write become visible in any order until it has landed (N1)",
          "[noc][adversarial][mutation]") {
    // B polls a range A writes to without synchronising (a race, on purpose: [mutation]). It
    // reads the words from last to first: a snapshot with a later word new and an earlier word
    // old proves the later one became visible FIRST. Nothing promises otherwise, and the
    // adversary lands a write in pieces in random order.
    const uint32_t kRounds = 100, kW = 16;  // 64-byte writes
    uint64_t out_of_order = 0;
    for (uint64_t seed = 1; seed <= 10 && out_of_order == 0; ++seed) {
        Cluster c(topo::single_chip(small_chip()));
        host_zero(c, kSem, 12);  // the semaphores start at 0 (host-initialised)
        host_zero(c, kDst, 64);  // the landing area starts zeroed
        Launcher L(c);
        auto a = c.chip(0).worker(0, 0), b = c.chip(0).worker(1, 0);
        L.add(a, [&](auto& h) {
            for (uint32_t r = 1; r <= kRounds; ++r) {
                for (uint32_t w = 0; w < kW; ++w) put(h, kSrc + 4 * w, r);
                h.noc_write(kSrc, h.noc_addr(1, 0, kDst), 4 * kW);
                h.sem_inc(h.noc_addr(1, 0, kSem), 1);
                h.sem_wait(kSem2, r);  // B saw the increment, so the write has landed (N1)
            }
        });
        L.add(b, [&](auto& h) {
            uint64_t seen = 0;
            for (uint32_t r = 1; r <= kRounds; ++r) {
                while (h.sem_read(kSem) < r) {
                    uint32_t v[kW];
                    for (uint32_t w = kW; w-- > 0;)
                        v[w] = std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(h.l1_ptr(kDst + 4 * w, 4)))
                                   .load(std::memory_order_relaxed);
                    bool later_new = false;
                    for (uint32_t w = kW; w-- > 0;) {
                        if (v[w] == r) later_new = true;
                        else if (later_new) {
                            ++seen;
                            break;
                        }
                    }
                    h.idle();
                }
                h.sem_inc(h.noc_addr(0, 0, kSem2), 1);
            }
            return seen;
        });
        auto r = L.run(adversarial(seed));
        INFO("seed " << seed);
        KCCL_REQUIRE_OK(r);
        out_of_order += r.at(b).value;
    }
    REQUIRE(out_of_order > 0);
}

TEST_CASE("noc_addr rejects coordinates the NoC address cannot encode", "[noc][errors]") {
    // x and y are 10 bits in a NoC address: (1025, 0) must not silently become (1, 0).
    Cluster c(topo::single_chip(small_chip()));
    host_zero(c, kSem, 12);  // the semaphores start at 0 (host-initialised)
    for (auto [x, y] : {std::pair{1025u, 0u}, std::pair{1u, 1024u}}) {
        Launcher L(c);
        L.add(c.chip(0).worker(0, 0), [x = x, y = y](auto& h) { h.sem_inc(h.noc_addr(x, y, 0x100), 1); });
        auto r = L.run(normal(std::chrono::milliseconds(2000)));
        REQUIRE_FALSE(r.ok());
        REQUIRE_FALSE(r.watchdog_fired);
        REQUIRE_THAT(r.first_error(),
                     Catch::Contains("chip 0 worker (0,0): noc_addr: core (" + std::to_string(x) + "," +
                                     std::to_string(y) + ") on chip 0 does not fit the NoC address encoding") &&
                         Catch::Contains("allowed: x <= 1023, y <= 1023, chip <= 255"));
    }
    REQUIRE(c.read32(c.chip(0).worker(1, 0), 0x100) == 0);  // nothing landed on (1, 0)
}

TEST_CASE("NoC coordinates beyond 255 address their own core", "[noc]") {
    // A 300 x 1 grid: worker (299, 0) is reachable, and (299 & 0xff, 0) = (43, 0) is not touched
    // (with 8-bit coordinates the two used to alias).
    kccl::emu::ChipSpec wide = small_chip();
    wide.grid_w = 300;
    wide.grid_h = 1;
    Cluster c(topo::single_chip(wide));
    for (uint32_t x : {0u, 43u, 299u}) c.write32(c.chip(0).worker(x, 0), 0x100, 0);
    Launcher L(c);
    L.add(c.chip(0).worker(0, 0), [](auto& h) { h.sem_inc(h.noc_addr(299, 0, 0x100), 5); });
    L.add(c.chip(0).worker(299, 0), [](auto& h) {
        h.sem_wait_min(0x100, 5);
        h.sem_inc(h.noc_addr(0, 0, 0x100), 7);
    });
    KCCL_REQUIRE_OK(L.run(normal(std::chrono::milliseconds(2000))));
    REQUIRE(c.read32(c.chip(0).worker(299, 0), 0x100) == 5);
    REQUIRE(c.read32(c.chip(0).worker(0, 0), 0x100) == 7);
    REQUIRE(c.read32(c.chip(0).worker(43, 0), 0x100) == 0);
}
