// The timing models alone (no engine): closed-form arrivals checked against arithmetic written
// here from the published formulas (the Cerebras thesis, tt-metal's Ethernet guide), not from the models' code.
#include "emulation/timing.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace kccl::emu;

namespace {

ClusterSpec row_of_pes(uint32_t p) {  // a 1 x P row; the model does not need a Cluster
    ClusterSpec s;
    s.num_chips = 1;
    s.chip.grid_w = p;
    s.chip.grid_h = 1;
    s.chip.eth_cores = 0;
    return s;
}

// The Cerebras WSE reduce/allreduce thesis, Corollary 3.4 and Lemma 5.2.
uint64_t t_message(uint64_t p, uint64_t b, uint64_t tr) { return 2 * tr + p + b; }
uint64_t t_chain(uint64_t p, uint64_t b, uint64_t tr) { return 2 * (p - 1) * (tr + 1) + b; }

/// PE P-1 sends a vector of B wavelets to PE 0 as one message; PE 0 stores it (T_store = 1 for
/// the last wavelet). Returns the cycle at which the last element is stored.
uint64_t drive_message(WaferModel& m, uint32_t p, uint32_t b) {
    m.reset(row_of_pes(p));
    const CoreCoord src{0, p - 1, 0}, dst{0, 0, 0};
    vtime_t sender = 0;
    sender += m.issue_cost(src, Op::noc_write, 4 * b);
    const vtime_t arrival = m.noc_arrival(src, dst, 4 * b, sender);
    vtime_t root = arrival;  // the root was idle: its wait returns at the arrival
    root += m.issue_cost(dst, Op::l1_access, 4);
    return root;
}

/// The event sequence of a chain reduce onto PE 0 (the Cerebras thesis, Figure 5.2), one wavelet per
/// message: PE P-1 sends element k; every PE i in (0, P-1) waits for element k from PE i+1, adds
/// its own (one O-class operation ending with a send: issue cost of one wavelet) and sends it to
/// PE i-1; PE 0 waits and stores (one cycle). Returns the cycle the root stores the last element.
uint64_t drive_chain(WaferModel& m, uint32_t p, uint32_t b) {
    m.reset(row_of_pes(p));
    std::vector<vtime_t> now(p, 0);
    std::vector<vtime_t> arrival(p, 0);  // arrival at PE i of the current element
    for (uint32_t k = 0; k < b; ++k) {
        for (uint32_t i = p - 1; i >= 1; --i) {
            const CoreCoord me{0, i, 0}, next{0, i - 1, 0};
            if (i < p - 1) now[i] = std::max(now[i], arrival[i]);
            now[i] += m.issue_cost(me, Op::noc_write, 4);
            arrival[i - 1] = m.noc_arrival(me, next, 4, now[i]);
        }
        now[0] = std::max(now[0], arrival[0]);
        now[0] += m.issue_cost({0, 0, 0}, Op::l1_access, 4);
    }
    return now[0];
}

}  // namespace

TEST_CASE("wafer model: T_message(P,B) = 2 T_R + P + B exactly for P up to 512", "[timing][wafer]") {
    for (uint32_t tr : {0u, 1u, 2u, 5u}) {
        WaferModel m(WaferOptions{.t_r = tr});
        for (uint32_t p : {2u, 3u, 7u, 64u, 255u, 256u, 511u, 512u})
            for (uint32_t b : {1u, 2u, 31u, 512u, 4096u}) {
                INFO("T_R=" << tr << " P=" << p << " B=" << b);
                CHECK(drive_message(m, p, b) == t_message(p, b, tr));
            }
    }
}

TEST_CASE("wafer model: T_chain(P,B) = 2 (P-1)(T_R+1) + B exactly for P up to 512", "[timing][wafer]") {
    for (uint32_t tr : {1u, 2u, 4u}) {
        WaferModel m(WaferOptions{.t_r = tr});
        for (uint32_t p : {2u, 3u, 16u, 100u, 512u})
            for (uint32_t b : {1u, 2u, 64u, 512u}) {
                INFO("T_R=" << tr << " P=" << p << " B=" << b);
                CHECK(drive_chain(m, p, b) == t_chain(p, b, tr));
            }
    }
    // Every P from 2 to 512 at the default T_R = 2 with a short vector.
    WaferModel m;
    for (uint32_t p = 2; p <= 512; ++p) {
        INFO("P=" << p);
        REQUIRE(drive_chain(m, p, 3) == t_chain(p, 3, 2));
    }
}

TEST_CASE("wafer model: a message in a 2D mesh takes 2 T_R + Manhattan distance + wavelets", "[timing][wafer]") {
    WaferModel m;  // T_R = 2
    ClusterSpec s = row_of_pes(8);
    s.chip.grid_h = 8;
    m.reset(s);
    // (1,6) -> (5,2): 4 hops east, 4 north; 10 wavelets (40 B) issued in cycles 0..9.
    const vtime_t t = m.issue_cost({0, 1, 6}, Op::noc_write, 40);
    CHECK(t == 10);
    CHECK(m.noc_arrival({0, 1, 6}, {0, 5, 2}, 40, t) == 10 + 2 * 2 + 8);
    // X first, then Y: the train crossed (1..4,6) eastwards and (5,6..3) northwards.
    CHECK(m.port_busy({0, 1, 6}, kccl::Dir::E) == 10);
    CHECK(m.port_busy({0, 4, 6}, kccl::Dir::E) == 10);
    CHECK(m.port_busy({0, 5, 6}, kccl::Dir::N) == 10);
    CHECK(m.port_busy({0, 5, 3}, kccl::Dir::N) == 10);
    CHECK(m.port_busy({0, 5, 6}, kccl::Dir::E) == 0);
    CHECK(m.port_busy({0, 5, 2}, kccl::Dir::off_ramp) == 10);
}

TEST_CASE("wafer model: messages sharing a port queue one wavelet per cycle", "[timing][wafer]") {
    WaferModel m;  // T_R = 2
    m.reset(row_of_pes(5));
    const uint32_t w = 6, bytes = 4 * w;
    // PE 0 and PE 4 both send 6 wavelets to PE 2 (two hops each), issued in cycles 0..5.
    const vtime_t a = m.noc_arrival({0, 0, 0}, {0, 2, 0}, bytes, w);
    const vtime_t b = m.noc_arrival({0, 4, 0}, {0, 2, 0}, bytes, w);
    CHECK(a == w + 2 * 2 + 2);
    // Both heads reach PE 2's router in the same cycle; its off-ramp takes one wavelet per cycle,
    // so the second train follows the first one's last wavelet.
    CHECK(b == a + w);
    // Back-to-back messages from one PE on one route: the second's wavelets follow the first's.
    m.reset(row_of_pes(5));
    const vtime_t first = m.noc_arrival({0, 0, 0}, {0, 3, 0}, bytes, w);
    const vtime_t second = m.noc_arrival({0, 0, 0}, {0, 3, 0}, bytes, 2 * w);
    CHECK(second == first + w);
    // A message that finds the link still busy waits: issued 2 cycles after the previous one
    // started (impossible for one processor, possible for a read response), it queues.
    m.reset(row_of_pes(5));
    const vtime_t x = m.noc_arrival({0, 1, 0}, {0, 3, 0}, bytes, w);       // crosses (1,0)->(2,0)
    const vtime_t y = m.noc_arrival({0, 0, 0}, {0, 3, 0}, bytes, w + 1);   // head reaches (1,0) at 2 + T_R + 1
    // x's head entered link (1,0)east at cycle 1 + T_R and holds it 6 cycles (to 1 + T_R + 6);
    // y's head arrives there at 2 + T_R + 1 = 5 < 9, so it starts at 9 and is 9 - 5 = 4 cycles late.
    CHECK(x == w + 2 * 2 + 2);
    CHECK(y == (w + 1) + 2 * 2 + 3 + 4);
}

TEST_CASE("wafer model: reads, costs and errors", "[timing][wafer]") {
    WaferModel m;
    m.reset(row_of_pes(10));
    // The request wavelet 0 -> 9 sent at t=1 arrives at 1 + 2 T_R + 9 (T_message with B = 1); the
    // 8-wavelet answer starts leaving PE 9 then, its last wavelet 7 cycles later, and takes
    // 2 T_R + 9 more to reach PE 0.
    const vtime_t req_arrival = 1 + 2 * 2 + 9;
    const vtime_t done = m.noc_read_done({0, 0, 0}, {0, 9, 0}, 32, 1);
    CHECK(done == req_arrival + 7 + 2 * 2 + 9);
    CHECK(m.issue_cost({0, 0, 0}, Op::noc_write, 0) == 1);  // a zero-byte signal is one wavelet
    CHECK(m.issue_cost({0, 0, 0}, Op::sem_inc, 4) == 1);
    CHECK(m.issue_cost({0, 0, 0}, Op::noc_write, 4096) == 1024);
    CHECK_THROWS_WITH(m.eth_arrival({0, 0, 1}, 0, 16, 0), Catch::Contains("no Ethernet"));
    CHECK_THROWS_WITH(m.issue_cost({0, 0, 0}, Op::eth_send, 16), Catch::Contains("no Ethernet"));
    CHECK_THROWS_WITH(m.noc_arrival({0, 0, 0}, {0, 10, 0}, 4, 0), Catch::Contains("is not a PE"));
    std::vector<LinkBusy> links;
    m.link_usage(links);
    CHECK(links.empty());
    CHECK(std::string(m.unit()) == "cycle");
}

// ------------------------------------------------------------------------------------------------
// Wormhole

namespace {
// tt-metal's Ethernet guide: 12.5 GB/s per direction, ~50 B per <= 1500 B frame. In picoseconds.
double wire_ps(double bytes) {
    const double frames = std::max(1.0, std::ceil(bytes / 1500.0));
    return (bytes + 50.0 * frames) / 12.5e9 * 1e12;
}
ClusterSpec two_chips() { return topology::line(2); }
}  // namespace

TEST_CASE("wormhole model: one Ethernet packet arrives after serialisation plus link latency", "[timing][wormhole]") {
    WormholeModel m;
    m.reset(two_chips());
    const CoreCoord eth{0, 0, 8};  // Ethernet core 0 of chip 0 (grid_h = 8)
    for (uint32_t bytes : {16u, 1024u, 1500u, 1501u, 4096u, 16384u}) {
        m.reset(two_chips());
        const vtime_t t0 = 1'000'000;
        const vtime_t arr = m.eth_arrival(eth, 0, bytes, t0);
        INFO("bytes=" << bytes);
        CHECK(double(arr) == Approx(double(t0) + wire_ps(bytes) + 540'000.0).margin(1));
        CHECK(double(m.eth_txq_empty(eth, 0)) == Approx(double(t0) + wire_ps(bytes)).margin(1));
        CHECK(m.eth_txq_free(eth, 0) == 0);  // depth 2: one packet on the wire, room for the next
        CHECK(m.eth_txq_free(eth, 1) == 0);
    }
    // A 16 B flit: 66 B on the wire = 5.28 ns; the link latency is the chosen 540 ns.
    m.reset(two_chips());
    CHECK(m.eth_arrival(eth, 0, 16, 0) == 5280 + 540'000);
}

TEST_CASE("wormhole model: back-to-back packets serialise on the link direction", "[timing][wormhole]") {
    WormholeModel m;
    m.reset(two_chips());
    const CoreCoord eth{0, 0, 8}, peer_side{1, 0, 8};
    const double s = wire_ps(4096);
    // Four packets queued at t = 0 on queue 0, then one on queue 1: all share the link.
    for (int k = 0; k < 4; ++k)
        CHECK(double(m.eth_arrival(eth, 0, 4096, 0)) == Approx((k + 1) * s + 540'000.0).margin(2));
    CHECK(double(m.eth_arrival(eth, 1, 4096, 0)) == Approx(5 * s + 540'000.0).margin(2));
    // The other direction of the link (sent by chip 1) is free.
    CHECK(double(m.eth_arrival(peer_side, 0, 4096, 0)) == Approx(s + 540'000.0).margin(2));
    // A packet sent after the link went idle does not wait.
    const vtime_t late = 100'000'000;
    CHECK(double(m.eth_arrival(eth, 0, 4096, late)) == Approx(double(late) + s + 540'000.0).margin(2));
    std::vector<LinkBusy> links;
    m.link_usage(links);
    REQUIRE(links.size() == 3);
    CHECK(links[0].eth == eth);
    CHECK(links[0].queue == 0);
    CHECK(links[0].packets == 5);
    CHECK(links[0].bytes == 5 * 4096);
    CHECK(double(links[0].busy) == Approx(5 * s).margin(5));
    CHECK(links[1].queue == 1);
    CHECK(links[2].eth == peer_side);
}

TEST_CASE("wormhole model: a tx queue holds eth_txq_depth packets, the one on the wire included", "[timing][wormhole]") {
    const CoreCoord eth{0, 0, 8};
    const double s = wire_ps(2048);
    WormholeModel m;  // depth 2
    m.reset(two_chips());
    m.eth_arrival(eth, 0, 2048, 0);
    CHECK(m.eth_txq_free(eth, 0) == 0);  // one unfinished packet: room
    m.eth_arrival(eth, 0, 2048, 0);
    CHECK(double(m.eth_txq_free(eth, 0)) == Approx(s).margin(1));  // full until the first has left
    m.eth_arrival(eth, 0, 2048, 0);
    CHECK(double(m.eth_txq_free(eth, 0)) == Approx(2 * s).margin(2));
    CHECK(double(m.eth_txq_empty(eth, 0)) == Approx(3 * s).margin(3));
    WormholeOptions o;
    o.eth_txq_depth = 1;
    WormholeModel one(o);
    one.reset(two_chips());
    one.eth_arrival(eth, 0, 2048, 0);
    CHECK(double(one.eth_txq_free(eth, 0)) == Approx(s).margin(1));  // busy while its packet is on the wire
    o.eth_txq_depth = 0;
    CHECK_THROWS_WITH(WormholeModel(o), Catch::Contains("eth_txq_depth"));
}

TEST_CASE("wormhole model: streaming bandwidth over packet sizes follows the frame overhead", "[timing][wormhole]") {
    // Payload rate of a saturated link: 12.5 GB/s * bytes / (bytes + 50 * frames).
    for (uint32_t bytes : {1024u, 2048u, 4096u, 8192u, 16384u}) {
        WormholeModel m;
        m.reset(two_chips());
        const int n = 64;
        vtime_t last = 0;
        for (int k = 0; k < n; ++k) last = m.eth_arrival({0, 0, 8}, 0, bytes, 0);
        const double first = double(m.options().eth_link_latency_ps) + wire_ps(bytes);
        const double gbps = double(n - 1) * bytes / ((double(last) - first) * 1e-12) / 1e9;
        const double frames = std::ceil(bytes / 1500.0);
        INFO("bytes=" << bytes);
        CHECK(gbps == Approx(12.5 * bytes / (bytes + 50.0 * frames)).epsilon(0.001));
    }
}

TEST_CASE("wormhole model: NoC latency by hops plus 32 B per cycle at the ports", "[timing][wormhole]") {
    WormholeModel m;  // 1 GHz: 1000 ps per cycle; assumptions: 9 cycles per hop, 20 at the ends
    m.reset(topology::single_chip());
    const CoreCoord a{0, 1, 1}, b{0, 4, 6};  // 3 + 5 = 8 hops
    CHECK(m.noc_arrival(a, b, 2048, 0) == (20 + 9 * 8 + 2048 / 32) * 1000);
    // A second write from a, issued at once, leaves a's port after the first (64 cycles later).
    CHECK(m.noc_arrival(a, b, 2048, 0) == (20 + 9 * 8 + 64 + 64) * 1000);
    // A 4 B semaphore increment is one flit.
    m.reset(topology::single_chip());
    CHECK(m.noc_arrival(a, b, 4, 5000) == 5000 + (20 + 72 + 1) * 1000);
    // Read: one-flit request a -> b, then the data b -> a.
    m.reset(topology::single_chip());
    CHECK(m.noc_read_done(a, b, 64, 0) == (20 + 72 + 1) * 1000 + (20 + 72 + 2) * 1000);
    CHECK_THROWS_WITH(m.noc_arrival(a, {1, 0, 0}, 4, 0), Catch::Contains("is not a NoC endpoint"));
}

TEST_CASE("wormhole model: DRAM endpoint at the channel rate plus the access latency, channels interleaved", "[timing][wormhole]") {
    WormholeOptions o;  // tt-npe: DRAM injection 23.2 B/cycle, absorption 24.0 B/cycle; 12 channels
    o.dram_read_cycles = 300;
    o.dram_write_cycles = 200;
    o.dram_channels = 2;
    WormholeModel m(o);
    ChipSpec chip;
    chip.dram_bytes = 1 << 20;
    m.reset(topology::single_chip(chip));
    const CoreCoord w{0, 1, 1}, dram{0, 0, chip.grid_h + 1};
    const uint64_t hops = 1 + chip.grid_h;  // (1,1) -> (0, grid_h + 1)
    const uint64_t lat = 20 + 9 * hops;
    // Write of 2400 B: leaves the worker at 32 B/cycle (75 cycles), enters a channel at 24 B/cycle
    // (100 cycles, from the head's arrival), then commits after 200 cycles.
    CHECK(m.noc_arrival(w, dram, 2400, 0) == (lat + 100 + 200) * 1000);
    // A second write at once takes the other channel: it only waits for the worker's port (75 cycles).
    CHECK(m.noc_arrival(w, dram, 2400, 0) == (75 + lat + 100 + 200) * 1000);
    // Read of 2320 B: one-flit request (lat + 1), the access (300), 100 cycles out of a channel at
    // 23.2 B/cycle, the head at the reader after lat; the reader's port (73 cycles) keeps up.
    m.reset(topology::single_chip(chip));
    CHECK(m.noc_read_done(w, dram, 2320, 0) == ((lat + 1) + 300 + lat + 100) * 1000);
    // Without DRAM latency a DRAM read costs what the NoC and the channel rate give.
    WormholeModel z;
    z.reset(topology::single_chip(chip));
    CHECK(z.noc_read_done(w, dram, 2320, 0) == ((lat + 1) + lat + 100) * 1000);
    // Ordinary NoC endpoints are untouched by the DRAM figures.
    m.reset(topology::single_chip(chip));
    CHECK(m.noc_arrival(w, {0, 2, 1}, 64, 0) == (20 + 9 + 2) * 1000);
}

TEST_CASE("wormhole model: issue costs are cycles at 1 GHz; bad coordinates are named", "[timing][wormhole]") {
    WormholeModel m;
    m.reset(two_chips());
    CHECK(m.issue_cost({0, 0, 0}, Op::noc_write, 4096) == 24 * 1000);
    CHECK(m.issue_cost({0, 0, 0}, Op::sem_wait_check, 0) == 6 * 1000);
    CHECK(m.issue_cost({0, 0, 0}, Op::l1_access, 64) == (2 + 16) * 1000);
    WormholeOptions o;
    o.clock_hz = 2e9;
    WormholeModel fast(o);
    CHECK(fast.issue_cost({0, 0, 0}, Op::noc_write, 0) == 24 * 500);
    CHECK_THROWS_WITH(m.eth_arrival({0, 0, 0}, 0, 16, 0), Catch::Contains("is not an Ethernet core"));
    CHECK_THROWS_WITH(m.eth_arrival({0, 0, 8}, 2, 16, 0), Catch::Contains("tx queue 2 does not exist"));
    CHECK(std::string(m.unit()) == "ps");
    CHECK(m.ticks_per_second() == 1e12);
}
