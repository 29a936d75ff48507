// The IPCQ protocol mutations (iq::DefaultPolicy switches), each asserted to fail for the reason
// it demonstrates — corrupted payload or headers in a run that otherwise completes — rather than
// "the run failed" (a watchdog on an overloaded host, or an unrelated error, must not make a
// mutation test pass). Tagged [mutation]: the broken protocols race on purpose, so the
// ThreadSanitizer run excludes them.
#include "ipcq_util.hpp"

#include <algorithm>
#include <string>

using namespace kccl::test;
using namespace kccl::test::ipcq;
using iq::Nsew;

namespace {

constexpr uint32_t kSrc = kScratch;
constexpr uint32_t kAcc = kScratch + 0x4000;

constexpr uint32_t words_of(uint32_t m) { return 1 + (m * 7) % 16; }

struct StreamOutcome {
    bool ok = false, hang = false, failed = false;
    uint64_t bad_words = 0, bad_headers = 0;
    std::string summary;
};

/// Rank 0 streams n messages to rank 1 (ring_1d_unidir); rank 1 checks every one.
template <class Policy>
StreamOutcome stream(uint32_t n, iq::Placement placement, uint64_t seed) {
    ih::QueueConfig qc;
    qc.n_slots = 4;
    qc.slot_size = 64;
    qc.mode = iq::Backpressure::poll;
    qc.placement = placement;
    Setup<Nsew> s(ih::ring_1d_unidir(2), qc);
    s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
        iq::Queues<std::decay_t<decltype(hal)>, Nsew, Policy> q(hal, hal.arg(0));
        if (r == 0) {
            for (uint32_t m = 0; m < n; ++m) {
                fill(hal, kSrc, words_of(m), 0, 1, m);
                q.send(Nsew::E, kSrc, 4 * words_of(m));
            }
            q.quiesce();
            return 0;
        }
        uint64_t bad = 0, hdr = 0;
        for (uint32_t m = 0; m < n; ++m) {
            auto slot = q.recv(Nsew::W);
            hdr += slot.seq != m || slot.info.nbytes != 4 * words_of(m);
            const uint32_t w = std::min<uint32_t>(slot.info.nbytes / 4, 16);
            bad += mismatches(q.data(slot), w, 0, 1, m);
            q.release(slot);
        }
        q.quiesce();
        put(hal, kAcc, bad);
        put(hal, kAcc + 8, hdr);
        return 0;
    });
    auto rep = s.run(adversarial(seed));
    StreamOutcome o;
    o.ok = rep.ok();
    o.hang = rep.watchdog_fired;
    for (const auto& c : rep.cores) o.failed |= c.status == kccl::emu::CoreStatus::failed;
    o.summary = rep.summary();
    if (o.ok) {
        o.bad_words = s.cluster.read32(s.core(1), kAcc);
        o.bad_headers = s.cluster.read32(s.core(1), kAcc + 8);
    }
    return o;
}

struct HeadBeforeData : iq::DefaultPolicy {
    static constexpr bool head_before_data = true;
};
struct NoDramBarrier : iq::DefaultPolicy {
    static constexpr bool skip_dram_barrier = true;
};

}  // namespace

TEST_CASE("ipcq mutation, asserted precisely: the head before the data shows stale payload and headers",
          "[ipcq][adversarial][mutation]") {
    // Expected failure: the receiver sees the head (an inline write) before the descriptor and
    // payload writes to the same core land, and reads stale data. Every run completes.
    uint64_t corrupt = 0;
    for (uint64_t seed = 1; seed <= 6 && corrupt == 0; ++seed) {
        const auto o = stream<HeadBeforeData>(2000, iq::Placement::l1, seed);
        INFO("seed " << seed << ": " << o.summary);
        REQUIRE(o.ok);
        corrupt += o.bad_words + o.bad_headers;
    }
    REQUIRE(corrupt > 0);
}

TEST_CASE("ipcq mutation, asserted precisely: a DRAM payload without a barrier shows stale payload only",
          "[ipcq][adversarial][mutation]") {
    // Expected failure: the DRAM payload goes to another NoC endpoint than the head, so without
    // the barrier the head can land first and the receiver reads a stale payload. The
    // descriptor goes to the receiver's core like the head, so headers stay right (N1).
    uint64_t bad_words = 0;
    for (uint64_t seed = 1; seed <= 6 && bad_words == 0; ++seed) {
        const auto o = stream<NoDramBarrier>(2000, iq::Placement::dram, seed);
        INFO("seed " << seed << ": " << o.summary);
        REQUIRE(o.ok);
        REQUIRE(o.bad_headers == 0);
        bad_words += o.bad_words;
    }
    REQUIRE(bad_words > 0);
}
