// The IPCQ protocol mutations (iq::DefaultPolicy switches), each asserted to fail for the reason
// it demonstrates — corrupted payload or headers in a run that otherwise completes — rather than
// "the run failed" (a watchdog on an overloaded host, or an unrelated error, must not make a
// mutation test pass). Tagged [mutation]: the broken protocols race on purpose, so the
// ThreadSanitizer run excludes them.
#include "ipcq_util.hpp"

#include <string>

using namespace kccl::test;
using namespace kccl::test::ipcq;
using namespace kccl::test::ipcq::mutations;
using iq::Nsew;

namespace {

struct StreamOutcome {
    bool ok = false, hang = false, failed = false;
    uint64_t bad_words = 0, bad_headers = 0;
    std::string summary;
};

/// Rank 0 streams n messages to rank 1 (ring_1d_unidir, 4 slots of 64 B, poll mode); rank 1
/// checks every one. `race`: with the race detector (reports fail the run); off, the tests see
/// what the adversary's schedules do to the data.
template <class Policy>
StreamOutcome stream(uint32_t n, iq::Placement placement, uint64_t seed, bool race = false) {
    RunOptions opt = adversarial(seed);
    if (!race) opt.race = RunOptions::RaceCheck::off;
    const StreamRun r = run_stream<Policy>(n, cfg(4, 64, iq::Backpressure::poll, placement), opt);
    StreamOutcome o;
    o.ok = r.report.ok();
    o.hang = r.report.watchdog_fired;
    for (const auto& c : r.report.cores) o.failed |= c.status == kccl::emu::CoreStatus::failed;
    o.summary = r.report.summary();
    o.bad_words = r.bad_words;  // 0 unless the run completed
    o.bad_headers = r.bad_headers;
    return o;
}

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

TEST_CASE("ipcq mutation: a DRAM payload without a barrier is reported by the race detector on the first run",
          "[ipcq][adversarial][mutation][race]") {
    const auto o = stream<NoDramBarrier>(50, iq::Placement::dram, 1, /*race=*/true);
    INFO(o.summary);
    REQUIRE_FALSE(o.ok);
    CHECK(o.summary.find("noc_read reading its source at queues.hpp:") != std::string::npos);
    CHECK(o.summary.find("last written by chip 0 worker (0,0) (noc_write at queues.hpp:") != std::string::npos);
    CHECK(o.summary.find("or after a noc_write_barrier() (N2))") != std::string::npos);
    // The correct queue, same stream: no report.
    const auto c = stream<iq::DefaultPolicy>(50, iq::Placement::dram, 1, /*race=*/true);
    INFO(c.summary);
    CHECK(c.ok);
}
