// EDM where programs meet: back-to-back programs with changing layouts on dirty L1, the shared
// reserved area (handshake), teardown without any help from the caller, and the worker adapters'
// size checks and message lengths.
#include "edm/harness.hpp"

#include <atomic>
#include <vector>

using namespace kccl::test;
using namespace kccl::test::edm_harness;
namespace edm = kccl::edm;

namespace {
struct WorkerInitiated : edm::DefaultConfig {
    static constexpr auto termination = edm::Termination::worker_initiated;
};

RunOptions skewed(uint64_t seed) {
    RunOptions o = adversarial(seed, std::chrono::milliseconds(10000));  // dirty L1 is on with the adversary
    o.random_skew_max = std::chrono::microseconds(2000);
    o.skew_seed = seed;
    return o;
}

/// Six programs that change everything a layout has: packet size, direction, channel count,
/// buffers, workers and sharing, and the region base (so one program's slots, semaphores and
/// sync words sit where the previous one had payload, and the other way round).
std::vector<Scenario> changing_layouts(uint32_t messages) {
    std::vector<Scenario> v;
    auto add = [&](uint32_t channels, uint32_t buffers, uint32_t packet, uint32_t workers, edm::Sharing sharing,
                   bool flip, uint32_t base) {
        Scenario s;
        s.channels = channels, s.buffers = buffers, s.packet_bytes = packet, s.workers = workers;
        s.sharing = sharing, s.flip = flip, s.region_base = base, s.messages = messages;
        v.push_back(s);
    };
    add(2, 2, 1024, 1, edm::Sharing::not_shared, false, 0x1000);
    add(1, 3, 256, 2, edm::Sharing::round_robin, true, 0x1040);
    add(3, 2, 4096, 1, edm::Sharing::not_shared, false, 0x2000);
    add(2, 4, 64, 2, edm::Sharing::not_shared, true, 0x1000);
    add(1, 2, 2048, 1, edm::Sharing::round_robin, false, 0x1400);
    add(4, 1, 512, 1, edm::Sharing::not_shared, true, 0x1010);
    return v;
}
}  // namespace

TEST_CASE("six back-to-back EDM programs with changing layouts on dirty L1 deliver every byte",
          "[edm][e2e][adversarial][dirty]") {
    // Measured on the code before the fix (receiver slots not cleared at init): 1-3 of 6
    // programs intact; phantom packets show as corrupted words or a hang.
    for (uint64_t seed : {1ull, 2ull, 3ull}) {
        Cluster cluster(two_chips());
        const auto programs = changing_layouts(30);
        auto r = run_programs<edm::DefaultConfig>(cluster, programs, skewed(seed));
        INFO("seed " << seed);
        KCCL_REQUIRE_OK(r.report);
        REQUIRE(r.errors == 0);
        REQUIRE(r.length_errors == 0);
        REQUIRE(r.received == r.expected_received);
    }
    // Worker-initiated termination ends each program by a signal instead of a count.
    for (uint64_t seed : {4ull, 5ull}) {
        Cluster cluster(two_chips());
        auto programs = changing_layouts(20);
        for (size_t i = 0; i < programs.size(); i += 2) programs[i].end_with_terminate = true;
        auto r = run_programs<WorkerInitiated>(cluster, programs, skewed(seed));
        INFO("seed " << seed);
        KCCL_REQUIRE_OK(r.report);
        REQUIRE(r.errors == 0);
        REQUIRE(r.received == r.expected_received);
    }
}

TEST_CASE("a stale packet left in a receiver slot by an earlier op is never taken for a packet",
          "[edm][e2e][dirty]") {
    // The worst leftovers for a receiver: every slot's sync word says "a packet of the right
    // size is here" (an earlier op's data, or the previous program's last packets).
    for (uint64_t seed : {1ull, 2ull}) {
        Cluster cluster(two_chips());
        Scenario s;
        s.channels = 2, s.buffers = 4, s.packet_bytes = 256, s.messages = 40;
        const uint32_t slot_bytes = s.packet_bytes + 16;
        const auto [eth_a, eth_b] = cluster.links_between(0, 1).at(0);
        // Channel layout from the region base: semaphore 16 B, 8 note slots 32 B, then slots.
        for (const auto e : {eth_a, eth_b})
            for (uint32_t c = 0; c < s.channels; ++c)
                for (uint32_t b = 0; b < s.buffers; ++b) {
                    const uint32_t ch_base = s.region_base + c * (48 + s.buffers * slot_bytes);
                    const uint32_t sync = ch_base + 48 + b * slot_bytes + s.packet_bytes;
                    const uint32_t word[4] = {s.packet_bytes, 0, b, uint32_t(edm::make_note(edm::Signal::next, 256))};
                    cluster.write(e, sync, word, 16);
                }
        auto r = run<edm::DefaultConfig>(cluster, s, skewed(seed));
        INFO("seed " << seed);
        KCCL_REQUIRE_OK(r.report);
        REQUIRE(r.errors == 0);
        REQUIRE(r.received == r.expected_received);
    }
}

TEST_CASE("receiver teardown is safe without a drain: the next op may reuse the region at once",
          "[edm][e2e][adversarial][teardown]") {
    // Program 0: an EDM link, end a sends, end b receives. Program 1 on both Ethernet cores: the
    // next op fills the old channel region with its own data at once, without waiting for any
    // send still queued. On the code before the fix (completion source word inside the region),
    // b's last completion read the next op's bytes and a waited forever for it.
    const uint32_t base = 0x1000, bytes = 0x4000, pattern = 0xA5A5A5A5u;
    for (uint64_t seed = 1; seed <= 6; ++seed) {
        Cluster cluster(two_chips());
        Scenario s;
        s.channels = 1, s.buffers = 2, s.packet_bytes = 256, s.messages = 50;
        auto next_op = [&](kccl::emu::Hal& hal, int) -> uint64_t {
            uint32_t* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(base, bytes));
            for (uint32_t i = 0; i < bytes / 4; ++i) w[i] = pattern;
            return 0;
        };
        auto r = run<edm::DefaultConfig>(cluster, s, adversarial(seed, std::chrono::milliseconds(3000)), 1, next_op);
        INFO("seed " << seed);
        KCCL_REQUIRE_OK(r.report);
        REQUIRE(r.errors == 0);
        REQUIRE(r.received == r.expected_received);
        // After the run everything in flight has landed: nothing of the EDM program may have
        // landed in the next op's data on either core.
        const auto [eth_a, eth_b] = cluster.links_between(0, 1).at(0);
        uint64_t changed = 0;
        for (const auto e : {eth_a, eth_b}) {
            std::vector<uint32_t> got(bytes / 4);
            cluster.read(e, base, got.data(), bytes);
            for (uint32_t v : got) changed += v != pattern;
        }
        REQUIRE(changed == 0);
    }
}

namespace {
constexpr uint32_t kSem = 0x100, kBuf = 0x1000;

/// One channel a -> b, 256-byte packets, one worker each side; `sender` and `receiver` are the
/// worker kernels (args: adapter args at 0).
template <class Send, class Recv>
RunReport one_channel(Cluster& cluster, Send sender, Recv receiver, uint32_t messages) {
    edm::host::ChannelSpec c;
    c.packet_bytes = 256;
    c.message_count = messages;
    c.workers = {{0, 0, kSem}};
    edm::host::EdmEnd a, b;
    a.add_sender(c);
    b.add_receiver(c);
    const auto plan = edm::host::build_link(a, b, {0x1000, 0x8000, 0x800});
    const auto [eth_a, eth_b] = cluster.links_between(0, 1).at(0);
    Launcher L(cluster);
    L.add(eth_a, [](auto& hal) { edm::Edm<> e; (void)e.run(hal); }, plan.edm_args(edm::host::Side::a));
    L.add(eth_b, [](auto& hal) { edm::Edm<> e; (void)e.run(hal); }, plan.edm_args(edm::host::Side::b));
    L.init_word(cluster.chip(0).worker(0, 0), kSem, 0).init_word(cluster.chip(1).worker(0, 0), kSem, 0);
    L.add(cluster.chip(0).worker(0, 0), sender, plan.worker_args(edm::host::Side::a, 0, 0, eth_a.x, eth_a.y));
    L.add(cluster.chip(1).worker(0, 0), receiver, plan.worker_args(edm::host::Side::b, 0, 0, eth_b.x, eth_b.y));
    return L.run(adversarial(5, std::chrono::milliseconds(3000)));
}
}  // namespace

TEST_CASE("recv returns the message length and copies no more than the message holds", "[edm][e2e][errors]") {
    Cluster cluster(two_chips());
    const uint32_t lengths[3] = {64, 256, 16};
    auto r = one_channel(cluster, [&](auto& hal) {
        edm::SenderAdapter<> tx(edm::load_worker_channel(hal, 0));
        for (uint32_t m = 0; m < 3; ++m) {
            for (uint32_t i = 0; i < 64; ++i) put(hal, kBuf + 4 * i, 1000 * m + i);
            tx.send(hal, kBuf, lengths[m]);
        }
        tx.close(hal);
    }, [&](auto& hal) {
        edm::ReceiverAdapter<> rx(edm::load_worker_channel(hal, 0));
        uint64_t bad = 0;
        for (uint32_t m = 0; m < 3; ++m) {
            for (uint32_t i = 0; i < 64 + 16; ++i) put(hal, kBuf + 4 * i, 0xDEADBEEFu);  // sentinel
            const edm::Received got = rx.recv(hal, kBuf, 256 + 64);  // more than any message
            bad += got.bytes != lengths[m];
            bad += got.signal != edm::Signal::next;
            for (uint32_t i = 0; i < 64 + 16; ++i)
                bad += get<uint32_t>(hal, kBuf + 4 * i) != (4 * i < lengths[m] ? 1000 * m + i : 0xDEADBEEFu);
        }
        rx.close(hal);
        return bad;
    }, 3);
    KCCL_REQUIRE_OK(r);
    REQUIRE(r.at(cluster.chip(1).worker(0, 0)).value == 0);
}

TEST_CASE("a send larger than the packet is a named device error, not a corrupted slot", "[edm][e2e][errors]") {
    // Before the check: the write ran over the slot's sync word, the run hung with no hint.
    Cluster cluster(two_chips());
    auto r = one_channel(cluster, [&](auto& hal) {
        edm::SenderAdapter<> tx(edm::load_worker_channel(hal, 0));
        tx.send(hal, kBuf, 256, /*offset=*/16);  // 16 + 256 > 256
    }, [&](auto& hal) {
        edm::ReceiverAdapter<> rx(edm::load_worker_channel(hal, 0));
        rx.recv(hal, kBuf, 256);
    }, 1);
    REQUIRE_FALSE(r.ok());
    REQUIRE_FALSE(r.watchdog_fired);
    const auto& w = r.at(cluster.chip(0).worker(0, 0));
    REQUIRE(w.status == kccl::emu::CoreStatus::failed);
    REQUIRE_THAT(w.message, Catch::Contains("chip 0 worker (0,0)") &&
                                Catch::Contains("offset + bytes exceed the channel's packet size"));
}

TEST_CASE("EDM runtime args it cannot use fail the core with the reason", "[edm][errors]") {
    Cluster cluster(two_chips());
    const auto [eth_a, eth_b] = cluster.links_between(0, 1).at(0);
    Launcher L(cluster);
    std::vector<uint32_t> args(edm::args::first_channel, 0);  // zero channels
    L.add(eth_a, [](auto& hal) { edm::Edm<> e; (void)e.run(hal); }, args);
    auto r = L.run(normal(std::chrono::milliseconds(2000)));
    REQUIRE_FALSE(r.ok());
    REQUIRE_THAT(r.first_error(), Catch::Contains("device check failed: EDM runtime args: bad layout (zero channels"));
}

namespace {
/// Chip 0's Ethernet core still runs an earlier op ("op A", program 0) that keeps live data in
/// [0x1000, 0x2000); chip 1 has nothing to do in program 0, so it starts program 1 (an EDM link
/// whose master is chip 1's end) at once, and its handshake reaches chip 0 while op A still runs
/// (op A waits for it). Returns how many of op A's words changed under it.
uint64_t early_handshake_hits_op_a(uint32_t reserved) {
    Cluster cluster(two_chips());
    const auto [eth_a, eth_b] = cluster.links_between(0, 1).at(0);
    edm::host::ChannelSpec c;
    c.packet_bytes = 256;
    c.message_count = 4;
    c.workers = {{0, 0, kWorkerSem}};
    edm::host::EdmEnd a, b;
    a.add_receiver(c);
    b.add_sender(c);  // chip 1's end leads the handshake
    const auto plan = edm::host::build_link(a, b, {0x2000, 0x8000, reserved});
    Launcher L(cluster);
    std::atomic<bool> op_a_filled{false};
    L.add(eth_a, [&op_a_filled](auto& hal) {
        uint32_t* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(0x1000, 0x1000));
        for (uint32_t i = 0; i < 0x400; ++i) w[i] = 0x0A0A0000u + i;
        op_a_filled.store(true, std::memory_order_release);
        // Op A runs until the next program's handshake has reached this core (it watches the
        // reserved area's inbox), then checks its own data.
        const uint32_t inbox = hal.arg(0) + edm::reserved_slave_inbox;
        while (hal.sem_read(inbox + 12) != edm::handshake_magic[3]) hal.idle();
        uint64_t changed = 0;
        for (uint32_t i = 0; i < 0x400; ++i) changed += hal.sem_read(0x1000 + 4 * i) != 0x0A0A0000u + i;
        return changed;
    }, {reserved});
    // Chip 1's program 0 ends once op A holds its data, so the handshake comes after that.
    L.add(eth_b, [&op_a_filled](auto& hal) {
        while (!op_a_filled.load(std::memory_order_acquire)) hal.idle();
    });
    L.next_program();
    L.add(eth_a, [](auto& hal) { edm::Edm<> e; (void)e.run(hal); }, plan.edm_args(edm::host::Side::a));
    L.add(eth_b, [](auto& hal) { edm::Edm<> e; (void)e.run(hal); }, plan.edm_args(edm::host::Side::b));
    L.init_word(cluster.chip(0).worker(0, 0), kWorkerSem, 0).init_word(cluster.chip(1).worker(0, 0), kWorkerSem, 0);
    L.add(cluster.chip(1).worker(0, 0), [](auto& hal) {
        edm::SenderAdapter<> tx(edm::load_worker_channel(hal, 0));
        for (int m = 0; m < 4; ++m) tx.send(hal, kBuf, 256);
        tx.close(hal);
    }, plan.worker_args(edm::host::Side::b, 0, 0, eth_b.x, eth_b.y));
    L.add(cluster.chip(0).worker(0, 0), [](auto& hal) {
        edm::ReceiverAdapter<> rx(edm::load_worker_channel(hal, 0));
        for (int m = 0; m < 4; ++m) rx.recv(hal, kBuf, 256);
        rx.close(hal);
    }, plan.worker_args(edm::host::Side::a, 0, 0, eth_a.x, eth_a.y));
    auto r = L.run(normal(std::chrono::milliseconds(5000)));
    KCCL_REQUIRE_OK(r);
    return r.at(eth_a, 0).value;
}
}  // namespace

TEST_CASE("the next program's handshake lands in the reserved area, never in an op still running",
          "[edm][e2e][handshake]") {
    // The reserved area is outside every program's buffers: op A is untouched.
    REQUIRE(early_handshake_hits_op_a(0x800) == 0);
}

TEST_CASE("mutation: a handshake inside an op's live buffer corrupts it", "[edm][handshake][mutation]") {
    // What a handshake at a program's own region did before the reserved area: it overwrites
    // exactly one 16-byte word (4 words) of op A's data. (A race on purpose: not run under TSan.)
    REQUIRE(early_handshake_hits_op_a(0x1800) == 4);
}
