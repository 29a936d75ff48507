// The protocol mistakes the seeds warn about, each a compile-time switch of the EDM Config used
// only here: every one must make a test fail, and these tests assert that it does. The same
// scenarios pass with the correct protocol (edm_e2e_test.cpp and the controls below).
// Tagged [mutation]: they provoke real races, so the ThreadSanitizer run excludes them.
#include "edm/harness.hpp"

#include <atomic>
#include <thread>

using namespace kccl::test;
using namespace kccl::test::edm_harness;
namespace edm = kccl::edm;

namespace {
struct SyncWordFirst : edm::DefaultConfig {
    static constexpr bool mutation_sync_word_first = true;
};
struct NotifyBeforeClear : edm::DefaultConfig {
    static constexpr bool mutation_notify_before_clear = true;
};
struct SharedAckSource : edm::DefaultConfig {
    static constexpr bool mutation_shared_ack_source = true;
};
struct TeardownWithoutWait : edm::DefaultConfig {
    static constexpr bool mutation_teardown_without_wait = true;
};

/// Runs the scenario for up to `seeds` adversarial seeds; true as soon as one run shows a
/// failure (hang caught by the watchdog, corrupted / lost / duplicated message).
template <class Config>
bool caught(const Scenario& s, uint64_t seeds, std::string& how) {
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
        Cluster cluster(two_chips());
        auto r = run<Config>(cluster, s, adversarial(seed, std::chrono::milliseconds(1000)));
        if (!r.report.ok()) {
            how = "seed " + std::to_string(seed) + ": " + r.report.summary().substr(0, 300);
            return true;
        }
        if (r.errors || r.received != r.expected_received) {
            how = "seed " + std::to_string(seed) + ": " + std::to_string(r.errors) + " corrupted words, " +
                  std::to_string(r.received) + " of " + std::to_string(r.expected_received) + " messages";
            return true;
        }
    }
    return false;
}

Scenario small(uint32_t buffers, uint32_t bytes, uint32_t messages) {
    Scenario s;
    s.channels = 2;
    s.buffers = buffers;
    s.packet_bytes = bytes;
    s.messages = messages;
    return s;
}
}  // namespace

TEST_CASE("mutation: sync word before the payload is caught", "[edm][mutation]") {
    std::string how;
    REQUIRE(caught<SyncWordFirst>(small(2, 1024, 200), 10, how));
    INFO(how);
    SUCCEED(how);
}

TEST_CASE("mutation: notify before clear is caught", "[edm][mutation]") {
    std::string how;
    REQUIRE(caught<NotifyBeforeClear>(small(2, 64, 2000), 10, how));
    SUCCEED(how);
}

TEST_CASE("mutation: one source word for ack and completion is caught", "[edm][mutation]") {
    std::string how;
    REQUIRE(caught<SharedAckSource>(small(1, 64, 2000), 20, how));
    SUCCEED(how);
}

namespace {
/// Seed 004's "asynchronous program completion": after the EDM returns, the next op on the
/// same Ethernet core (side a, a sender of channel 0) uses the EDM's L1 region for its own data.
/// It fills the region, waits until the other chip's EDM has finished and delivered everything,
/// and counts the words that changed: a late completion of the EDM program lands there.
template <class Config>
uint64_t next_op_corruption(uint64_t seed) {
    Cluster cluster(two_chips());
    std::atomic<bool> b_done{false};
    const uint32_t base = 0x1000, bytes = 0x4000;
    auto after = [&](kccl::emu::Hal& hal, int side) -> uint64_t {
        if (side == 1) {
            hal.drain();  // everything side b sent has been delivered
            b_done.store(true, std::memory_order_release);
            return 0;
        }
        hal.drain();  // on hardware the tx queue drains whether or not the kernel still runs
        uint32_t* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(base, bytes));
        for (uint32_t i = 0; i < bytes / 4; ++i) w[i] = 0xA5A5A5A5u;
        while (!b_done.load(std::memory_order_acquire)) hal.idle();  // idle() notices an abort
        uint64_t bad = 0;
        for (uint32_t i = 0; i < bytes / 4; ++i) bad += hal.sem_read(base + 4 * i) != 0xA5A5A5A5u;
        return bad;
    };
    Scenario s = small(2, 256, 50);
    s.channels = 1;  // a sends, b receives
    RunOptions o = adversarial(seed, std::chrono::milliseconds(5000));
    auto r = run<Config>(cluster, s, o, 1, after);
    INFO(r.report.summary());
    REQUIRE(r.report.ok());
    return r.errors + r.next_op_errors;
}
}  // namespace

TEST_CASE("teardown waits for every completion: the next op on the core is never corrupted", "[edm][e2e][adversarial]") {
    for (uint64_t seed = 1; seed <= 5; ++seed) REQUIRE(next_op_corruption<edm::DefaultConfig>(seed) == 0);
}

TEST_CASE("mutation: teardown without waiting is caught", "[edm][mutation]") {
    uint64_t bad = 0;
    for (uint64_t seed = 1; seed <= 10 && bad == 0; ++seed) bad += next_op_corruption<TeardownWithoutWait>(seed);
    REQUIRE(bad > 0);
}
