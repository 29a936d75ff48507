// Two protocol demonstrations from tt-metal's Ethernet and CCL guides, each as a correct and a
// broken variant:
//  (a) BasicEthernetGuide "End-to-End Flow Control": the sync word must be the LAST word of the packet.
//      With the flag first, a receiver sees the flag while the payload is still in flight.
//  (b) CclDeveloperGuide "EDM Communication Interface": clear your local semaphore BEFORE notifying the peer.
//      Notifying first lets the peer's next increment land before the clear, which erases it.
// The broken variants are tagged [mutation]: they provoke real data races, so the
// ThreadSanitizer run excludes them (TSan would report the race they demonstrate).
#include "util.hpp"

using namespace kccl::test;
namespace topo = kccl::emu::topology;

namespace {

// ---- (a) payload + sync word over Ethernet ------------------------------------------------------
constexpr uint32_t kTx = 0x1000, kSlot = 0x4000, kCreditSrc = 0x8000, kCredit = 0x8100;
constexpr uint32_t kPayloadWords = 64;  // 1 KiB payload + one 16-byte sync word

/// Streams `n` packets over one link; returns the number of corrupted payload words seen.
uint64_t stream_over_eth(bool flag_first, uint32_t n, const RunOptions& opt, bool* ok = nullptr) {
    Cluster c(topo::n300(small_chip()));
    host_zero(c, kSlot, kCredit + 16 - kSlot);  // landing slot and credit start zeroed (host-initialised)
    auto [e0, e1] = c.links_between(0, 1)[0];
    Launcher L(c);
    // Layout of one packet in 16-byte words: flag_first ? [sync | payload] : [payload | sync].
    const uint32_t sync_off = flag_first ? 0 : kPayloadWords * 16;
    const uint32_t data_off = flag_first ? 16 : 0;
    const uint32_t bytes = (kPayloadWords + 1) * 16;
    L.add(e0, [&](auto& h) {
        for (uint32_t m = 1; m <= n; ++m) {
            while (h.sem_read(kCredit) != m - 1) h.idle();  // the receiver is done with m-1
            for (uint32_t w = 0; w < kPayloadWords * 4; ++w) put(h, kTx + data_off + 4 * w, m * 7919 + w);
            put(h, kTx + sync_off, m);
            h.eth_send(0, kTx, kSlot, bytes);
        }
    });
    L.add(e1, [&](auto& h) {
        uint64_t bad = 0;
        for (uint32_t m = 1; m <= n; ++m) {
            h.sem_wait(kSlot + sync_off, m);
            for (uint32_t w = 0; w < kPayloadWords * 4; ++w)
                bad += get<uint32_t>(h, kSlot + data_off + 4 * w) != m * 7919 + w;
            put(h, kCreditSrc, m);
            h.eth_send(0, kCreditSrc, kCredit, 16);
        }
        return bad;
    });
    auto r = L.run(opt);
    if (ok) *ok = r.ok();
    else KCCL_REQUIRE_OK(r);
    return r.ok() ? r.at(e1).value : 0;
}

// ---- (b) worker <-> worker semaphore handshake --------------------------------------------------
constexpr uint32_t kCreditSem = 0x100, kDataSem = 0x104, kMsg = 0x1000, kRecv = 0x2000;

struct HandshakeResult {
    bool completed;
    uint64_t mismatches;
    std::string summary;
    bool hang = false;    ///< the watchdog fired
    bool failed = false;  ///< a core failed (e.g. an EmulationError), not just aborted
    std::string dump;     ///< the watchdog dump
};

/// Producer (0,0) sends n messages through one buffer on consumer (1,0). Each side waits for
/// its semaphore == 1, then either clears it before notifying the other (correct), or notifies
/// first and clears after (the race tt-metal's CCL guide warns about).
HandshakeResult handshake(bool clear_first, uint32_t n, const RunOptions& opt) {
    Cluster c(topo::single_chip(small_chip()));
    const auto p = c.chip(0).worker(0, 0), q = c.chip(0).worker(1, 0);
    host_zero(c, kCreditSem, 8);  // the semaphores start at 0 (host-initialised) ...
    c.write32(p, kCreditSem, 1);  // ... and the buffer starts free
    Launcher L(c);
    L.add(p, [&](auto& h) {
        for (uint32_t m = 1; m <= n; ++m) {
            h.sem_wait(kCreditSem, 1);
            if (clear_first) h.sem_set(kCreditSem, 0);
            put(h, kMsg, m);
            kccl::hal::l1_store_fence(h, kMsg, 4);  // the store before the NoC reads it (N7)
            h.noc_write(kMsg, h.noc_addr(1, 0, kRecv), 4);
            // The data has left this core before the increment: ordered by tt-metal's documented
            // rules too (contract N1, strict profile), and kMsg may be rewritten (N3).
            h.noc_writes_flushed();
            h.sem_inc(h.noc_addr(1, 0, kDataSem), 1);
            if (!clear_first) h.sem_set(kCreditSem, 0);
        }
    });
    L.add(q, [&](auto& h) {
        uint64_t mismatches = 0;
        for (uint32_t m = 1; m <= n; ++m) {
            h.sem_wait(kDataSem, 1);
            if (clear_first) h.sem_set(kDataSem, 0);
            mismatches += get<uint32_t>(h, kRecv) != m;
            h.sem_inc(h.noc_addr(0, 0, kCreditSem), 1);
            if (!clear_first) h.sem_set(kDataSem, 0);
        }
        return mismatches;
    });
    auto r = L.run(opt);
    HandshakeResult res{r.ok(), r.ok() ? r.at(q).value : 0, r.summary(), false, false, {}};
    res.hang = r.watchdog_fired;
    for (const auto& core : r.cores) res.failed |= core.status == kccl::emu::CoreStatus::failed;
    res.dump = r.watchdog_dump;
    return res;
}

}  // namespace

TEST_CASE("(a) sync word after the payload: every packet arrives whole", "[protocol][eth][adversarial]") {
    REQUIRE(stream_over_eth(false, 300, normal()) == 0);
    for (uint64_t seed : {1ull, 2ull, 3ull, 4ull}) REQUIRE(stream_over_eth(false, 300, adversarial(seed)) == 0);
}

TEST_CASE("(a) flag before the payload: the adversary shows the receiver a partial packet",
          "[protocol][eth][adversarial][mutation]") {
    // Expected failure: corrupted payload words, in runs that otherwise complete
    // (stream_over_eth requires every run to be ok).
    uint64_t corrupted = 0;
    for (uint64_t seed = 1; seed <= 5 && corrupted == 0; ++seed) corrupted += stream_over_eth(true, 300, adversarial(seed));
    REQUIRE(corrupted > 0);
}

TEST_CASE("(b) clear-before-notify: no message lost or duplicated", "[protocol][sem][adversarial]") {
    auto r = handshake(true, 2000, normal());
    INFO(r.summary);
    REQUIRE(r.completed);
    REQUIRE(r.mismatches == 0);
    for (uint64_t seed : {1ull, 2ull, 3ull}) {
        auto a = handshake(true, 2000, adversarial(seed));
        INFO(a.summary);
        REQUIRE(a.completed);
        REQUIRE(a.mismatches == 0);
    }
}

TEST_CASE("(b) notify-before-clear: the adversary makes an increment vanish and the handshake hangs",
          "[protocol][sem][adversarial][mutation]") {
    // Expected failure: one side's increment lands before the other side's late clear and is
    // erased. Whichever it was, the consumer (1,0) then waits for a data semaphore that stays 0,
    // and the producer (0,0) waits for a credit that stays 0 — or has finished, when the erased
    // increment was the last credit. A lost increment cannot show as a wrong message (the
    // waits are for == 1), so a run that completes must be clean.
    bool caught = false;
    for (uint64_t seed = 1; seed <= 10 && !caught; ++seed) {
        auto r = handshake(false, 2000, adversarial(seed, std::chrono::milliseconds(300)));
        INFO("seed " << seed << ": " << r.summary);
        REQUIRE_FALSE(r.failed);
        if (r.completed) {
            REQUIRE(r.mismatches == 0);
            continue;
        }
        REQUIRE(r.hang);
        REQUIRE_THAT(r.dump, Catch::Contains("chip 0 worker (1,0): sem_wait L1 0x104 expected == 1, current 0"));
        REQUIRE_THAT(r.dump, Catch::Contains("chip 0 worker (0,0): sem_wait L1 0x100 expected == 1, current 0") ||
                                 Catch::Contains("chip 0 worker (0,0): finished"));
        caught = true;
    }
    REQUIRE(caught);
}
