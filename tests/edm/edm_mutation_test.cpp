// The protocol mistakes tt-metal's Ethernet and CCL guides warn about, each a compile-time switch of the EDM Config used
// only here: every one must make a test fail, and these tests assert that it does. The same
// scenarios pass with the correct protocol (edm_e2e_test.cpp and the controls below).
// Tagged [mutation]: they provoke real races, so the ThreadSanitizer run excludes them.
#include "edm/harness.hpp"

#include <atomic>
#include <string>
#include <thread>

using namespace kccl::test;
using namespace kccl::test::edm_harness;
using namespace kccl::test::edm_harness::mutations;
namespace edm = kccl::edm;

namespace {

/// What one adversarial run of a scenario produced.
struct Outcome {
    uint64_t seed = 0;
    bool ok = false;      ///< every core returned normally
    bool hang = false;    ///< the watchdog fired
    bool failed = false;  ///< some core failed (e.g. an EmulationError) rather than being aborted
    uint64_t errors = 0, received = 0, expected = 0;
    std::string dump, summary;
    std::string describe() const {
        return "seed " + std::to_string(seed) + ": " + (ok ? "ok" : hang ? "hang" : "failed") + ", " +
               std::to_string(errors) + " corrupted words, " + std::to_string(received) + " of " +
               std::to_string(expected) + " messages\n" + summary;
    }
};

/// `race`: with the race detector (reports fail the run); off, these tests see what the
/// adversary's schedules do to the data.
template <class Config>
Outcome observe(const Scenario& s, uint64_t seed, bool race = false) {
    Cluster cluster(two_chips());
    RunOptions opt = adversarial(seed, std::chrono::milliseconds(1000));
    if (!race) opt.race = RunOptions::RaceCheck::off;
    auto r = run<Config>(cluster, s, opt);
    Outcome o;
    o.seed = seed;
    o.ok = r.report.ok();
    o.hang = r.report.watchdog_fired;
    for (const auto& c : r.report.cores) o.failed |= c.status == kccl::emu::CoreStatus::failed;
    o.errors = r.errors;
    o.received = r.received;
    o.expected = r.expected_received;
    o.dump = r.report.watchdog_dump;
    o.summary = r.report.summary().substr(0, 1500);
    return o;
}

bool has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

}  // namespace

TEST_CASE("mutation: sync word before the payload is caught", "[edm][mutation]") {
    // Expected failure: receivers read payload words that have not arrived yet. Every run
    // completes with every message delivered, and some words differ.
    uint64_t corrupted = 0;
    for (uint64_t seed = 1; seed <= 10 && corrupted == 0; ++seed) {
        const Outcome o = observe<SyncWordFirst>(small(2, 2, 1024, 200), seed);
        INFO(o.describe());
        REQUIRE(o.ok);
        REQUIRE(o.received == o.expected);
        corrupted += o.errors;
    }
    REQUIRE(corrupted > 0);
}

TEST_CASE("mutation: sync word before the payload is reported by the race detector on the first run", "[edm][mutation][race]") {
    // The receiver EDM acts on the sync word, now the first word of the packet: nothing orders the
    // payload behind it (E3), whatever this schedule's data turned out to be.
    const Outcome o = observe<SyncWordFirst>(small(2, 2, 1024, 200), 1, /*race=*/true);
    INFO(o.describe());
    REQUIRE_FALSE(o.ok);
    CHECK(has(o.summary, "last written by chip 1 eth 0 (0,8) (eth_send at channel.hpp:"));
    CHECK(has(o.summary, "which the contract does not order before this read (an eth_send's bytes are ordered before a "
                         "reader that polled the last 16-byte word of that send, E3)"));
    // The correct EDM, same scenario: no report.
    const Outcome c = observe<kccl::edm::DefaultConfig>(small(2, 2, 1024, 200), 1, /*race=*/true);
    INFO(c.describe());
    CHECK(c.ok);
}

TEST_CASE("mutation: notify before clear is caught", "[edm][mutation]") {
    // Expected failure: a worker's increment lands on the EDM's semaphore before the EDM clears
    // it and is erased, so that channel stops: both EDMs keep polling, the channel's sender
    // worker waits for a slot grant and its receiver worker for a message (both semaphores 0).
    // Runs that complete must be clean.
    bool caught = false;
    for (uint64_t seed = 1; seed <= 10 && !caught; ++seed) {
        const Outcome o = observe<NotifyBeforeClear>(small(2, 2, 64, 2000), seed);
        INFO(o.describe());
        REQUIRE_FALSE(o.failed);
        if (o.ok) {
            REQUIRE(o.errors == 0);
            REQUIRE(o.received == o.expected);
            continue;
        }
        REQUIRE(o.hang);
        REQUIRE(edm_polling(o.dump, "chip 0 eth 0 (0,8)"));
        REQUIRE(edm_polling(o.dump, "chip 1 eth 0 (0,8)"));
        bool stalled = false;
        for (const auto& ch : kChannels)
            stalled |= has(o.dump, ch.sender + kGrantWait) && has(o.dump, ch.receiver + kDataWait);
        REQUIRE(stalled);
        caught = true;
    }
    REQUIRE(caught);
}

TEST_CASE("mutation: one source word for ack and completion is caught", "[edm][mutation]") {
    // Expected failure: an ack is sent with the completion's content (or the reverse) because
    // both read the same source word when they execute, so the sending EDM counts a message as
    // complete that the receiving side never got: the channel's sender worker finishes, its
    // receiver worker waits for a message that never comes and the receiving EDM keeps polling.
    // Runs that complete must be clean.
    bool caught = false;
    for (uint64_t seed = 1; seed <= 20 && !caught; ++seed) {
        const Outcome o = observe<SharedAckSource>(small(2, 1, 64, 2000), seed);
        INFO(o.describe());
        REQUIRE_FALSE(o.failed);
        if (o.ok) {
            REQUIRE(o.errors == 0);
            REQUIRE(o.received == o.expected);
            continue;
        }
        REQUIRE(o.hang);
        bool lost = false;
        for (const auto& ch : kChannels)
            lost |= has(o.dump, std::string(ch.sender) + ": finished") && has(o.dump, ch.receiver + kDataWait) &&
                    edm_polling(o.dump, ch.receiver_edm);
        REQUIRE(lost);
        caught = true;
    }
    REQUIRE(caught);
}

namespace {
/// The "asynchronous program completion" problem (tt-metal BasicEthernetGuide): after the EDM
/// returns, the next op on the
/// same Ethernet core (side a, a sender of channel 0) uses the EDM's L1 region for its own data.
/// It fills the region, waits until the other chip's EDM has finished and delivered everything,
/// and counts the words that changed: a late completion of the EDM program lands there.
/// Returns that count; requires the run itself to be otherwise clean (every message delivered
/// intact), so only the expected failure — corruption of the next op's data — can count.
template <class Config>
uint64_t next_op_corruption(uint64_t seed) {
    Cluster cluster(two_chips());
    std::atomic<bool> b_done{false};
    const AfterEdm after = next_op_overwrite_count(b_done);
    const Scenario s = small(1, 2, 256, 50);  // a sends, b receives
    RunOptions o = adversarial(seed, std::chrono::milliseconds(5000));
    auto r = run<Config>(cluster, s, o, 1, after);
    INFO("seed " << seed << ": " << r.report.summary());
    REQUIRE(r.report.ok());
    REQUIRE(r.received == r.expected_received);
    REQUIRE(r.errors == 0);  // the receivers got every word right: the only failure is the next op's
    return r.next_op_errors;
}
}  // namespace

TEST_CASE("teardown waits for every completion: the next op on the core is never corrupted", "[edm][e2e][adversarial]") {
    for (uint64_t seed = 1; seed <= 5; ++seed) REQUIRE(next_op_corruption<edm::DefaultConfig>(seed) == 0);
}

TEST_CASE("mutation: teardown without waiting is caught", "[edm][mutation]") {
    // Expected failure: a completion for the exited EDM program lands in the next op's data.
    uint64_t bad = 0;
    for (uint64_t seed = 1; seed <= 10 && bad == 0; ++seed) bad += next_op_corruption<TeardownWithoutWait>(seed);
    REQUIRE(bad > 0);
}
