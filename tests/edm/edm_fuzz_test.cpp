// Random EDM configurations. Valid ones (within the limits, fitting L1) must deliver every byte of
// every message, under the adversary with dirty L1 and start skew, as consecutive programs with
// different layouts; invalid ones must be rejected by the builder with a named error, never a
// crash or a hang. The default run is bounded (a few seconds); `[long]` runs many more.
//
// Replay one case: KCCL_EDM_FUZZ_SEED=<seed> build/default/tests/kccl_tests "[fuzz][edm]"
#include "edm/harness.hpp"

#include <cstdlib>
#include <random>
#include <vector>

using namespace kccl::test;
using namespace kccl::test::edm_harness;
namespace edm = kccl::edm;

namespace {
struct WorkerInitiated : edm::DefaultConfig {
    static constexpr auto termination = edm::Termination::worker_initiated;
};

/// A random valid scenario that fits the harness's 2-chip cluster (8x8 workers per chip,
/// 256 KiB Ethernet L1 from the region base).
Scenario random_valid(std::mt19937_64& rng) {
    auto pick = [&](uint32_t lo, uint32_t hi) { return lo + uint32_t(rng() % (hi - lo + 1)); };
    Scenario s;
    for (;;) {
        s.channels = pick(1, 8);
        s.workers = pick(1, 4);
        if (2 * s.channels * s.workers > 64) continue;  // worker cores per chip
        s.buffers = pick(1, 4);
        s.packet_bytes = 16 * pick(1, 256) * (pick(0, 3) == 0 ? 8 : 1);  // 16 B .. 32 KiB
        s.sharing = pick(0, 1) ? edm::Sharing::round_robin : edm::Sharing::not_shared;
        if (s.sharing == edm::Sharing::not_shared && s.packet_bytes < 16 * s.workers) continue;  // every slice >= 16 B
        s.flip = pick(0, 1);
        s.region_base = 0x1000 + 16 * pick(0, 64);
        const uint64_t need = uint64_t(s.channels) * (48 + uint64_t(s.buffers) * (s.packet_bytes + 16));
        if (need > 256 * 1024 - s.region_base) continue;
        s.messages = pick(1, 40);
        return s;
    }
}

uint64_t base_seed() {
    const char* e = std::getenv("KCCL_EDM_FUZZ_SEED");
    return e ? std::strtoull(e, nullptr, 10) : 0;
}

void fuzz_valid(uint32_t cases) {
    const uint64_t only = base_seed();
    for (uint64_t seed = only ? only : 1; seed <= (only ? only : cases); ++seed) {
        std::mt19937_64 rng(seed);
        std::vector<Scenario> programs;
        const uint32_t n = 1 + uint32_t(rng() % 3);
        for (uint32_t p = 0; p < n; ++p) programs.push_back(random_valid(rng));
        const bool wi = rng() % 2;
        std::string what = "KCCL_EDM_FUZZ_SEED=" + std::to_string(seed) + (wi ? " worker-initiated:" : " message-count:");
        for (const auto& s : programs) what += "\n  " + s.describe();
        INFO(what);
        RunOptions o = adversarial(seed, std::chrono::milliseconds(10000));
        o.random_skew_max = std::chrono::microseconds(1000);
        o.skew_seed = seed;
        Cluster cluster(two_chips());
        if (wi) {
            for (size_t i = 0; i < programs.size(); ++i) programs[i].end_with_terminate = (seed + i) % 2;
            auto r = run_programs<WorkerInitiated>(cluster, programs, o);
            KCCL_REQUIRE_OK(r.report);
            REQUIRE(r.errors == 0);
            REQUIRE(r.received == r.expected_received);
        } else {
            auto r = run_programs<edm::DefaultConfig>(cluster, programs, o);
            KCCL_REQUIRE_OK(r.report);
            REQUIRE(r.errors == 0);
            REQUIRE(r.length_errors == 0);
            REQUIRE(r.received == r.expected_received);
        }
    }
}

/// A random configuration with one thing wrong; returns the text its error must contain.
std::string break_one(std::mt19937_64& rng, edm::host::EdmEnd& a, edm::host::EdmEnd& b, edm::host::L1Region& region) {
    auto spec = [](uint32_t workers, uint32_t sem) {
        edm::host::ChannelSpec c;
        c.buffers = 2;
        c.packet_bytes = 256;
        c.message_count = 10;
        for (uint32_t k = 0; k < workers; ++k) c.workers.push_back({k, 0, sem});
        return c;
    };
    region = {0x1000, 0x20000, 0x800};
    auto tx = spec(1, 0x100), rx = spec(1, 0x100);
    std::string expect;
    switch (rng() % 14) {
        case 0: tx.buffers = rx.buffers = 0; expect = "buffers; 1..16 are allowed"; break;
        case 1: tx.buffers = rx.buffers = 17 + uint32_t(rng() % 100); expect = "buffers; 1..16 are allowed"; break;
        case 2: tx.packet_bytes = rx.packet_bytes = 16 * uint32_t(rng() % 100) + 1 + uint32_t(rng() % 15); expect = "must be a non-zero multiple of 16"; break;
        case 3: tx.packet_bytes = rx.packet_bytes = 0; expect = "must be a non-zero multiple of 16"; break;
        case 4: tx.workers.clear(); expect = "has 0 workers; 1..8 are allowed"; break;
        case 5: tx = spec(9, 0x100); expect = "has 9 workers; 1..8 are allowed"; break;
        case 6: rx.packet_bytes = 512; expect = "buffers/packet/buffer sizes differ between the ends"; break;
        case 7: rx.sharing = edm::Sharing::round_robin; expect = "both ends of a channel must use the same sharing mode"; break;
        case 8: rx.message_count = 11; expect = "both ends must move the same number of messages"; break;
        case 9: tx.workers[0].sem_addr = 0x102; expect = "is not 4-byte aligned"; break;
        case 10: tx.workers[0].y = 70000; expect = "must be at most 65535"; break;
        case 11: region.reserved = region.base + 16 * uint32_t(rng() % 64); expect = "overlaps the channel region"; break;
        case 12: tx.buffers = rx.buffers = 16; tx.packet_bytes = rx.packet_bytes = 16384; expect = "bytes of L1 but the region has"; break;
        default: tx.message_count = rx.message_count = 0; expect = "MESSAGE_COUNT_REACHED needs at least 1 message"; break;
    }
    a.add_sender(tx);
    b.add_receiver(rx);
    return expect;
}
}  // namespace

TEST_CASE("fuzz: random valid EDM configurations deliver every byte (bounded)", "[edm][fuzz][adversarial]") {
    fuzz_valid(40);
}

TEST_CASE("fuzz: random valid EDM configurations deliver every byte (long)", "[edm][fuzz][long]") {
    fuzz_valid(2000);
}

TEST_CASE("fuzz: random invalid EDM configurations get a named error", "[edm][fuzz][errors]") {
    for (uint64_t seed = 1; seed <= 500; ++seed) {
        std::mt19937_64 rng(seed);
        edm::host::EdmEnd a, b;
        edm::host::L1Region region;
        const std::string expect = break_one(rng, a, b, region);
        INFO("seed " << seed << ": expected an error containing \"" << expect << "\"");
        REQUIRE_THROWS_WITH(edm::host::build_link(a, b, region), Catch::Contains(expect));
    }
}
