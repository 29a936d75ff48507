// EDM end to end on the emulation: 2 chips over 1 link, channels in both directions at once,
// 1-8 channels, 1-4 buffers, 1-4 workers in both sharing modes, both termination modes, packets
// 16 B - 64 KiB; normal and adversarial mode with random start skew; back-to-back programs.
#include "edm/harness.hpp"

using namespace kccl::test;
using namespace kccl::test::edm_harness;
namespace edm = kccl::edm;

namespace {
struct WorkerInitiated : edm::DefaultConfig {
    static constexpr auto termination = edm::Termination::worker_initiated;
};

template <class Config>
void check(const Scenario& s, const RunOptions& opt, uint32_t programs = 1) {
    Cluster cluster(two_chips());
    auto r = run<Config>(cluster, s, opt, programs);
    INFO(s.describe() << (Config::termination == edm::Termination::worker_initiated ? " worker-initiated" : " message-count"));
    KCCL_REQUIRE_OK(r.report);
    REQUIRE(r.errors == 0);
    REQUIRE(r.received == r.expected_received);
}

RunOptions skewed_adversary(uint64_t seed) {
    RunOptions o = adversarial(seed, std::chrono::milliseconds(10000));
    o.random_skew_max = std::chrono::microseconds(3000);
    o.skew_seed = seed;
    return o;
}
}  // namespace

TEST_CASE("EDM moves every message intact over one link in both directions", "[edm][e2e]") {
    Scenario s;
    s.channels = 2;
    s.messages = 200;
    check<edm::DefaultConfig>(s, normal(std::chrono::milliseconds(10000)));
}

TEST_CASE("EDM channel counts 1-8 and buffers 1-4", "[edm][e2e]") {
    for (uint32_t channels : {1u, 3u, 8u})
        for (uint32_t buffers : {1u, 2u, 4u}) {
            Scenario s;
            s.channels = channels;
            s.buffers = buffers;
            s.messages = 60;
            s.packet_bytes = 512;
            check<edm::DefaultConfig>(s, normal(std::chrono::milliseconds(10000)));
        }
}

TEST_CASE("EDM packet sizes 16 B to 64 KiB", "[edm][e2e]") {
    for (uint32_t bytes : {16u, 256u, 4096u, 16384u, 65536u}) {
        Scenario s;
        s.channels = 2;
        s.buffers = bytes >= 65536 ? 1 : 2;
        s.packet_bytes = bytes;
        s.messages = bytes >= 16384 ? 20 : 100;
        check<edm::DefaultConfig>(s, normal(std::chrono::milliseconds(10000)));
    }
}

TEST_CASE("EDM with several workers per channel in both sharing modes", "[edm][e2e]") {
    for (auto sharing : {edm::Sharing::not_shared, edm::Sharing::round_robin})
        for (uint32_t workers : {1u, 2u, 4u}) {
            Scenario s;
            s.channels = 2;
            s.workers = workers;
            s.sharing = sharing;
            s.packet_bytes = 1024;
            s.messages = 64;
            check<edm::DefaultConfig>(s, normal(std::chrono::milliseconds(10000)));
            check<WorkerInitiated>(s, normal(std::chrono::milliseconds(10000)));
            s.end_with_terminate = true;
            check<WorkerInitiated>(s, normal(std::chrono::milliseconds(10000)));
        }
}

TEST_CASE("EDM under the adversary with random start skew", "[edm][e2e][adversarial]") {
    uint64_t seed = 1;
    for (auto sharing : {edm::Sharing::not_shared, edm::Sharing::round_robin})
        for (uint32_t workers : {1u, 3u}) {
            Scenario s;
            s.channels = 4;
            s.buffers = 2;
            s.workers = workers;
            s.sharing = sharing;
            s.packet_bytes = 512;
            s.messages = 60;
            check<edm::DefaultConfig>(s, skewed_adversary(seed++));
            check<WorkerInitiated>(s, skewed_adversary(seed++));
        }
}

TEST_CASE("two EDM programs back to back on the same cores are independent", "[edm][e2e][adversarial]") {
    // The stale-credit scenario (tt-metal BasicEthernetGuide, "Asynchronous Program Completion Problem"): chips start and finish programs at different times; a
    // completion of program 1 still in flight must never be taken for one of program 2.
    for (uint64_t seed : {1ull, 2ull, 3ull}) {
        Scenario s;
        s.channels = 2;
        s.buffers = 2;
        s.packet_bytes = 256;
        s.messages = 40;
        check<edm::DefaultConfig>(s, skewed_adversary(seed), /*programs=*/3);
    }
}
