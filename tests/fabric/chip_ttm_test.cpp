// tt-metal's op structure on the chip fabric (include/fabric/ops/{all_gather,all_to_all}.hpp): all_gather relayed
// (1-hop unicasts, forwarding from the output tensor) or sent as 1D multicast streams, all_to_all
// as unicast streams, DRAM tensors written page by page by the receiving routers, completion by
// relay semaphores or fused write + increment. Every output byte of every chip is
// checked against values computed by the test from the seed (tools/ttm_fabric_ops.hpp), on dirty
// L1 with adversarial schedules and the race detector; the output tensor starts stale, so a page
// never written is found. [long]: the timed fidelity sizes, bit-exact.
#include <catch2/catch.hpp>

#include "ttm_check.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace tf = kccl::tools::ttm_fabric;
namespace emu = kccl::emu;
namespace ops = kccl::fabric::ops;

namespace {

using tf::test::throw_handler;
std::string check(tf::Options o, uint64_t seed) { return tf::test::check(o, seed, std::chrono::milliseconds(20000)); }

}  // namespace

TEST_CASE("ttm ops: the plans' routes (multicast ranges, all_to_all directions)", "[fabric][ttm]") {
    ops::Plan p;
    // line of 4, chip 1: forward range 2 (chips 2, 3), backward range 1 (chip 0)
    ops::plan_common(p, 1, 4, 0, 0, 0, 0, 2048, 2, 0x1000, 48);
    ops::make_all_gather(p, false, 8192);
    REQUIRE(p.nstreams == 1);
    CHECK(p.s[0].route[0] == (1u | (2u << 16)));
    CHECK(p.s[0].route[1] == (1u | (1u << 16)));
    CHECK(p.s[0].dst == 8192);
    CHECK(p.expect == 3);
    CHECK(ops::detail::packets_to(p, 0) == 2);  // 8192 B in packets of 2 pages
    CHECK(ops::detail::packets_to(p, 1) == 2);
    // ring of 8: tt-metal's split forwarding, the first half of the slice 4 forward and 3 backward,
    // the second half 3 forward and 4 backward; every other chip counts both halves
    ops::plan_common(p, 5, 8, 0, 0, 0, 0, 2048, 2, 0x1000, 48);
    ops::make_all_gather(p, true, 5 * 2048);
    REQUIRE(p.nstreams == 2);
    CHECK(p.s[0].src == 0);
    CHECK(p.s[0].bytes == 2 * 2048);  // 5 pages: 2 in the first half
    CHECK(p.s[1].src == 2 * 2048);
    CHECK(p.s[1].dst == 5 * 5 * 2048 + 2 * 2048);
    CHECK(p.s[1].bytes == 3 * 2048);
    CHECK(p.s[0].route[0] >> 16 == 4);
    CHECK(p.s[0].route[1] >> 16 == 3);
    CHECK(p.s[1].route[0] >> 16 == 3);
    CHECK(p.s[1].route[1] >> 16 == 4);
    CHECK(p.expect == 14);
    // a slice of one page is not split (tt-metal: split forwarding needs at least 2 tiles)
    ops::plan_common(p, 5, 8, 0, 0, 0, 0, 2048, 2, 0x1000, 48);
    ops::make_all_gather(p, true, 2048);
    REQUIRE(p.nstreams == 1);
    CHECK(p.s[0].route[0] >> 16 == 4);
    CHECK(p.s[0].route[1] >> 16 == 3);
    CHECK(p.expect == 7);
    // all_to_all on a ring of 8 from chip 6: one local stream, 7 remote, the distance-4 peer (chip 2)
    // backward (tt-metal's all_to_all_async_generic: distance (d + 1) / 2, odd d backward)
    ops::plan_common(p, 6, 8, 0, 0, 0, 0, 2048, 2, 0x1000, 48);
    ops::make_all_to_all(p, true, 1024);
    REQUIRE(p.nstreams == 8);
    uint32_t fwd = 0, bwd = 0, local = 0;
    for (uint32_t i = 0; i < p.nstreams; ++i) {
        const auto& s = p.s[i];
        fwd += s.targets == ops::tgt_fwd, bwd += s.targets == ops::tgt_bwd, local += s.targets == ops::tgt_local;
        CHECK(s.dst == 6 * 1024);
        if (s.src == 2 * 1024) CHECK((s.targets == ops::tgt_bwd && s.route[1] == 4));
    }
    CHECK(fwd == 3);
    CHECK(bwd == 4);
    CHECK(local == 1);
    CHECK(ops::ttm_pages_per_packet(6144, 2048) == 3);   // all_gather: min(4 scatter addresses, packet / page)
    CHECK(ops::ttm_pages_per_packet(16384, 2048) == 4);
    CHECK(ops::ttm_a2a_pages_per_packet(6144, 2048) == 3);  // all_to_all_async_generic: min(4, payload / page)
    CHECK(ops::ttm_a2a_pages_per_packet(4352, 2048) == 2);
}

TEST_CASE("ttm ops: all_to_all_async_generic's schedule (destination order, workers per direction, the local core)", "[fabric][ttm]") {
    // workers per direction: 3 (a line: at most n - 1) once the output holds 16 packets per worker
    // on a line, 4 on a ring; below, 0 (one core for every remote destination)
    CHECK(ops::ttm_a2a_workers_per_direction(144 * 2048, 2048, 4, false, 3) == 3);
    CHECK(ops::ttm_a2a_workers_per_direction(143 * 2048, 2048, 4, false, 3) == 0);
    CHECK(ops::ttm_a2a_workers_per_direction(48 * 2048, 2048, 2, false, 3) == 1);
    CHECK(ops::ttm_a2a_workers_per_direction(47 * 2048, 2048, 2, false, 3) == 0);
    CHECK(ops::ttm_a2a_workers_per_direction(36 * 2048, 2048, 8, true, 3) == 3);
    CHECK(ops::ttm_a2a_workers_per_direction(35 * 2048, 2048, 8, true, 3) == 0);
    ops::Plan p;
    // line of 8, chip 2, 3 workers: order 0, 7, 1, 6, 2 (local), 5, 3, 4; forward 7, 6, 5, 3, 4 to
    // workers 0, 1, 2, 0, 1; backward 0, 1 to workers 3, 4; the local copy on channel 6
    ops::plan_common(p, 2, 8, 0, 0, 0, 0, 2048, 3, 0x1000, 48);
    ops::make_all_to_all_generic(p, false, 4096, 3);
    REQUIRE(p.nstreams == 8);
    CHECK(p.channels() == 7);
    const uint32_t src[8] = {0, 7, 1, 6, 2, 5, 3, 4}, ch[8] = {3, 0, 4, 1, 6, 2, 0, 1}, hops[8] = {2, 5, 1, 4, 0, 3, 1, 2};
    for (uint32_t i = 0; i < 8; ++i) {
        INFO("stream " << i);
        CHECK(p.s[i].src == src[i] * 4096);
        CHECK(p.s[i].dst == 2 * 4096);
        CHECK(p.s[i].channel == ch[i]);
        CHECK(p.s[i].route[0] == hops[i]);
        CHECK(p.s[i].targets == (src[i] == 2 ? ops::tgt_local : src[i] > 2 ? ops::tgt_fwd : ops::tgt_bwd));
    }
    CHECK(ops::detail::packets_to(p, 0) == 2);  // chips 7 and 3: a packet each (4096 B fit a 6144 B packet)
    CHECK(ops::detail::packets_to(p, 6) == 0);  // the local copy sends nothing
    CHECK(p.expect == 7);
    // ring of 8, chip 6: order 0..7, the shorter way; the opposite chip (2) backward (2 - 6 < 0)
    ops::plan_common(p, 6, 8, 0, 0, 0, 0, 2048, 3, 0x1000, 48);
    ops::make_all_to_all_generic(p, true, 1024, 0);
    REQUIRE(p.nstreams == 8);
    CHECK(p.direct);
    CHECK(p.channels() == 1);
    for (uint32_t i = 0; i < 8; ++i) {
        INFO("stream " << i);
        CHECK(p.s[i].src == i * 1024);
        CHECK(p.s[i].channel == (i == 6 ? 0u : ops::fabric_worker_channel));
    }
    CHECK((p.s[2].targets == ops::tgt_bwd && p.s[2].route[1] == 4));
    CHECK((p.s[7].targets == ops::tgt_fwd && p.s[7].route[0] == 1));
    CHECK((p.s[0].targets == ops::tgt_fwd && p.s[0].route[0] == 2));
    // chip 1: the opposite chip (5) forward
    ops::plan_common(p, 1, 8, 0, 0, 0, 0, 2048, 3, 0x1000, 48);
    ops::make_all_to_all_generic(p, true, 1024, 3);
    CHECK((p.s[5].targets == ops::tgt_fwd && p.s[5].route[0] == 4));
}

TEST_CASE("ttm ops: the all_gather relay's items (tt-metal's minimal default: forward, split forwarding, workers)", "[fabric][ttm]") {
    ops::Plan p;
    // ring of 8, chip 5, 12 pages per slice, 2 workers per direction (6 pages each), a sync every 2 packets
    ops::plan_common(p, 5, 8, 0, 0, 0, 0, 2048, 3, 0x1000, 48);
    ops::make_all_gather_relay(p, true, 12 * 2048, 2, 2);
    REQUIRE(p.channels() == 4);
    CHECK(p.expect == 0);
    struct It {
        uint32_t chip, off_pages, pages;
        bool own, recv, send;
    };
    auto same = [&](uint32_t c, std::initializer_list<It> want) {
        INFO("channel " << c);
        REQUIRE(p.nitems[c] == want.size());
        uint32_t i = 0;
        for (const It& w : want) {
            const ops::RelayItem& x = p.items[c][i++];
            INFO("item " << i - 1);
            CHECK(x.chip == w.chip);
            CHECK(x.off == w.off_pages * 2048);
            CHECK(x.bytes == w.pages * 2048);
            CHECK(x.own == w.own);
            CHECK(x.recv == w.recv);
            CHECK(x.send == w.send);
        }
    };
    // forward, worker 0 (pages 0..5): the own part, then chips 4, 3 forwarded whole, chip 2's first
    // half forwarded (it goes on to distance 4), chip 1's first half only received
    same(0, {{5, 0, 6, true, false, true}, {4, 0, 6, false, true, true}, {3, 0, 6, false, true, true},
             {2, 0, 6, false, true, false}, {2, 0, 3, false, false, true}, {1, 0, 3, false, true, false}});
    // backward, worker 1 (pages 6..11): the second halves travel backward
    same(3, {{5, 6, 6, true, false, true}, {6, 6, 6, false, true, true}, {7, 6, 6, false, true, true},
             {0, 6, 6, false, true, false}, {0, 9, 3, false, false, true}, {1, 9, 3, false, true, false}});
    // packets of channel 0: 2 + 2 + 2 + 1 data packets, one sync per item (2 packets per sync)
    CHECK(ops::detail::packets_to(p, 0) == 7 + 4);
    // a line of 4: chip 1 forwards chip 0's slice east and chips 2 and 3's west; the last chip
    // (3) only receives eastward and sends its own slice west (with the local copy)
    ops::plan_common(p, 1, 4, 0, 0, 0, 0, 2048, 3, 0x1000, 48);
    ops::make_all_gather_relay(p, false, 3 * 2048, 1, 1);
    same(0, {{1, 0, 3, true, false, true}, {0, 0, 3, false, true, true}});
    same(1, {{1, 0, 3, true, false, true}, {2, 0, 3, false, true, true}, {3, 0, 3, false, true, true}});
    ops::plan_common(p, 3, 4, 0, 0, 0, 0, 2048, 3, 0x1000, 48);
    ops::make_all_gather_relay(p, false, 3 * 2048, 1, 1);
    same(0, {{2, 0, 3, false, true, false}, {1, 0, 3, false, true, false}, {0, 0, 3, false, true, false}});
    same(1, {{3, 0, 3, true, false, true}});
    CHECK(ops::detail::packets_to(p, 0) == 0);
    // tt-metal's worker count and sync interval
    CHECK(ops::ttm_workers_per_direction(4096, 2, false) == 1);
    CHECK(ops::ttm_workers_per_direction(65536, 8, true) == 2);
    CHECK(ops::ttm_workers_per_direction(1u << 20, 8, true) == 4);
    CHECK(ops::ttm_chunks_per_sync(64, 4, 3) == 5);
    CHECK(ops::ttm_chunks_per_sync(1u << 16, 4, 3) == 160);
    CHECK(ops::ttm_chunks_per_sync(2, 4, 3) == 1);
}

TEST_CASE("ttm ops: all_gather and all_to_all bit-exact on lines of 2 and 4 and a ring of 8", "[fabric][ttm]") {
    struct Case {
        const char* op;
        bool ring;
        uint32_t ranks;
        uint64_t size;
    };
    // sizes with a partial last packet and a partial last page (parts of 16 bytes, not whole pages)
    const Case cases[] = {{"all_gather", false, 2, 2 * 9232},  {"all_gather", false, 4, 4 * 5136},
                          {"all_gather", true, 8, 8 * 4112},   {"all_to_all", false, 2, 2 * 9232},
                          {"all_to_all", false, 4, 4 * 5136},  {"all_to_all", true, 8, 8 * 2064}};
    for (const Case& c : cases)
        for (uint64_t seed : {3ull, 0xBADC0FFEEull, 77ull}) {  // senders (relay: tt-metal's worker count) with 1 and 3 mux slots; one core
            tf::Options o;
            o.structure = seed == 77 ? "one_core" : "per_direction";
            o.mux_slots = seed == 3 ? 1 : 3;
            o.op = c.op;
            o.ring = c.ring;
            o.ranks = c.ranks;
            o.size = c.size;
            o.iters = 3;  // ops back to back: even and odd ops count on their own semaphores
            INFO(c.op << (c.ring ? " ring " : " line ") << c.ranks << " size " << c.size << " seed " << seed << " " << o.structure);
            CHECK(check(o, seed) == "");
        }
    // all_to_all_async_generic's direction-owned schedule: workers per direction behind the mux
    // (4: the most; with the local-copy core that is 9 sender cores, ops::max_channels)
    for (const Case& c : cases)
        for (uint32_t workers : {2u, 3u, 4u}) {
            if (std::string(c.op) != "all_to_all" || c.ranks == 2) continue;
            tf::Options o;
            o.op = c.op;
            o.ring = c.ring;
            o.ranks = c.ranks;
            o.size = c.size;
            o.workers = workers;
            o.mux_slots = workers == 3 ? 3 : 1;
            o.iters = 3;
            INFO(c.op << (c.ring ? " ring " : " line ") << c.ranks << " size " << c.size << " workers " << workers);
            CHECK(check(o, 5) == "");
        }
}

TEST_CASE("ttm ops: mutation, no local copy: the check finds the own part of every chip", "[fabric][ttm]") {
    kccl::set_assert_handler(&throw_handler);
    for (const char* op : {"all_gather", "all_to_all"}) {
        tf::Options o;
        o.op = op;
        o.ranks = 4;
        o.size = 4 * 4096;
        o.mutation_no_local_copy = true;
        emu::RunOptions ro;
        ro.watchdog = std::chrono::milliseconds(20000);
        ro.dirty_l1 = emu::RunOptions::DirtyL1::on;
        const tf::Result r = tf::run(o, ro);
        INFO(op);
        REQUIRE(r.error == "");
        // exactly the 4 own parts of 4096 B are stale (a stale byte equals the expected one ~1 in 256)
        CHECK(r.wrong > 4 * 4096 * 9 / 10);
        CHECK(r.wrong <= 4 * 4096);
        CHECK_THAT(r.first_wrong, Catch::Contains("chip 0 output byte 0 (from chip 0)"));
    }
}

TEST_CASE("ttm ops: named errors for options the structure does not take", "[fabric][ttm]") {
    tf::Options o;
    o.op = "broadcast";
    CHECK_THROWS_WITH(tf::validate(o), Catch::Contains("allowed: all_gather, all_to_all, reduce_scatter, all_reduce"));
    o.op = "all_gather";
    o.size = 4 * 1000 + 4;
    CHECK_THROWS_WITH(tf::validate(o), Catch::Contains("parts of a multiple of 16"));
    o.size = 65536;
    o.page = 4096;
    o.message = 2048;
    CHECK_THROWS_WITH(tf::validate(o), Catch::Contains("does not fit"));
    o = tf::Options{};
    o.workers = 5;
    CHECK_THROWS_WITH(tf::validate(o), Catch::Contains("allowed: 0 = tt-metal's default, 1..4"));
    o = tf::Options{};
    o.structure = "two_cores";
    CHECK_THROWS_WITH(tf::validate(o), Catch::Contains("allowed: auto, per_direction, one_core"));
    o = tf::Options{};
    o.ranks = 33;
    CHECK_THROWS_WITH(tf::validate(o), Catch::Contains("33 chips (allowed: 2..32)"));
    // the device-side plan rejects a chip count its arrays do not hold, before writing any of it
    kccl::set_assert_handler(&throw_handler);
    ops::Plan p;
    CHECK_THROWS_WITH(ops::plan_common(p, 0, 33, 0, 0, 0, 0, 2048, 3, 0x1000, 48),
                      Catch::Contains("ttm op: rank 0 of 33 chips (allowed: 2..32 chips, rank below the chips)"));
    CHECK_THROWS_WITH(ops::plan_common(p, 4, 4, 0, 0, 0, 0, 2048, 3, 0x1000, 48), Catch::Contains("rank 4 of 4 chips"));
    // more workers per direction than the plan holds
    ops::plan_common(p, 1, 4, 0, 0, 0, 0, 2048, 3, 0x1000, 48);
    CHECK_THROWS_WITH(ops::make_all_gather_relay(p, false, 8192, 1, 5),
                      Catch::Contains("make_all_gather_relay with 5 workers per direction (allowed: at most 4)"));
    CHECK_THROWS_WITH(ops::make_all_to_all_generic(p, false, 8192, 5),
                      Catch::Contains("make_all_to_all_generic with 5 workers per direction (allowed: at most 4)"));
    // a plan on a runner it cannot run
    ops::make_all_gather_relay(p, false, 8192, 1, 1);
    CHECK_THROWS_WITH(ops::detail::check_runner(p, ops::detail::Runner::one_core), Catch::Contains("a relay plan"));
    CHECK_NOTHROW(ops::detail::check_runner(p, ops::detail::Runner::mux));
    ops::plan_common(p, 1, 4, 0, 0, 0, 0, 2048, 3, 0x1000, 48);
    ops::make_all_to_all_generic(p, false, 8192, 0);
    CHECK_THROWS_WITH(ops::detail::check_runner(p, ops::detail::Runner::mux), Catch::Contains("runs on run_direct, not run_mux"));
    CHECK_NOTHROW(ops::detail::check_runner(p, ops::detail::Runner::direct));
    ops::plan_common(p, 1, 4, 0, 0, 0, 0, 2048, 3, 0x1000, 48);
    ops::make_all_to_all_generic(p, false, 8192, 3);
    CHECK_THROWS_WITH(ops::detail::check_runner(p, ops::detail::Runner::direct), Catch::Contains("run_direct runs a direct plan"));
    CHECK_NOTHROW(ops::detail::check_runner(p, ops::detail::Runner::one_core));
}

TEST_CASE("ttm ops: the fidelity grid's shapes at 1 MiB, bit-exact on the timed engine", "[fabric][ttm][long]") {
    for (const char* op : {"all_gather", "all_to_all"})
        for (auto [ring, n] : {std::pair{false, 2u}, {false, 4u}, {false, 8u}, {true, 8u}}) {
            tf::Options o;
            o.op = op;
            o.ring = ring;
            o.ranks = n;
            o.size = 1 << 20;
            tf::Result r;
            const double us = tf::timed_us(o, r);
            INFO(op << (ring ? " ring " : " line ") << n);
            REQUIRE(r.error == "");
            CHECK(r.wrong == 0);
            CHECK(us > 0);
        }
}

TEST_CASE("ttm ops: the mux serves a direction's channels in turns (all_to_all, 4-chip line, timed)", "[fabric][ttm]") {
    // all_to_all_async_generic on a 4-chip line at 1 MiB: 3 workers per direction, each sending one
    // 256 KiB destination into the mux. While the middle links are congested the router frees a
    // slot at a time; a mux whose scan restarts at channel 0 after every wait gives every freed slot
    // to channel 0 (chip 0's workers then finished at 47%, 72% and 88% of the op, the middle link
    // busy 75% of it). Taking turns, a direction's workers finish together and the links stay busy.
    tf::Options o;
    o.op = "all_to_all";
    o.ranks = 4;
    o.size = 1 << 20;
    REQUIRE(ops::ttm_a2a_workers_per_direction(o.size, o.page, 4, false, 3) == 3);
    auto model = emu::wormhole_model();
    emu::Trace trace;
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(60000);
    ro.timing = model.get();
    ro.trace = &trace;
    const tf::Result r = tf::run(o, ro);
    REQUIRE(r.error == "");
    CHECK(r.wrong == 0);
    const emu::vtime_t span = r.report.makespan;
    REQUIRE(span > 0);
    // the last NoC write of every sender core (chip, channel): its last packet handed to the mux
    // (the senders of channel c sit at x = 1 + c of row 0; channels 0-2 E, 3-5 W, 6 the local copy)
    std::map<std::pair<uint32_t, uint32_t>, emu::vtime_t> last;
    for (const auto& e : trace.event_list()) {
        if (e.kind != emu::Trace::Kind::slice || trace.name_of(e) != "noc_write") continue;
        const emu::CoreCoord c = trace.tracks()[e.track].core;
        if (c.y != 0 || c.x < 1 || c.x > 6) continue;
        auto& t = last[{c.chip, c.x - 1}];
        t = std::max(t, e.end);
    }
    uint32_t groups = 0;
    for (uint32_t chip = 0; chip < 4; ++chip)
        for (uint32_t d = 0; d < 2; ++d) {
            emu::vtime_t lo = span, hi = 0;
            uint32_t active = 0;
            for (uint32_t k = 0; k < 3; ++k) {
                auto it = last.find({chip, 3 * d + k});
                if (it == last.end()) continue;
                ++active;
                lo = std::min(lo, it->second);
                hi = std::max(hi, it->second);
            }
            if (active < 2) continue;
            ++groups;
            INFO("chip " << chip << (d ? " W" : " E") << ": " << active << " workers finish between " << 100.0 * double(lo) / double(span)
                         << "% and " << 100.0 * double(hi) / double(span) << "% of the op");
            CHECK(double(hi - lo) < 0.1 * double(span));
        }
    CHECK(groups == 4);  // chip 0 E, chip 1 E, chip 2 W, chip 3 W: 2 or 3 workers each
    uint64_t middle = 0;
    for (const auto& l : r.report.links)
        if (l.queue == 0 && l.eth.chip == 1 && l.bytes > (1u << 20)) middle = l.busy;  // chip 1 -> 2: four chunks
    INFO("the middle link busy " << 100.0 * double(middle) / double(span) << "% of the op");
    CHECK(double(middle) > 0.85 * double(span));
}

TEST_CASE("ttm ops: first-level acknowledgements on the ring only (tt-metal's FABRIC_1D_RING), one credit per packet on a line",
          "[fabric][ttm]") {
    // Every Ethernet send of a router is counted by the timing model per tx queue: queue 0 carries
    // the packets (and the one handshake flit per router), queue 1 the credit messages. A line
    // router returns one completion per packet it received; a ring router also a first-level ack.
    for (bool ring : {false, true}) {
        tf::Options o;
        o.op = "all_gather";
        o.ring = ring;
        o.ranks = ring ? 4 : 2;
        o.size = uint64_t(o.ranks) * 5 * 2048;
        auto model = emu::wormhole_model();
        emu::RunOptions ro;
        ro.watchdog = std::chrono::milliseconds(20000);
        ro.timing = model.get();
        const tf::Result r = tf::run(o, ro);
        REQUIRE(r.error == "");
        CHECK(r.wrong == 0);
        uint64_t q0 = 0, q1 = 0, routers = 0;
        for (const auto& l : r.report.links) {
            if (l.queue == 0) q0 += l.packets, ++routers;
            else q1 += l.packets;
        }
        INFO((ring ? "ring" : "line") << ": " << routers << " routers, " << q0 << " sends on queue 0, " << q1 << " on queue 1");
        REQUIRE(q0 > routers);
        CHECK(q1 == (ring ? 2 : 1) * (q0 - routers));
    }
}

TEST_CASE("ttm ops: the all_gather relay bit-exact with 4 workers per direction, partial pages, and the multicast streams", "[fabric][ttm]") {
    struct Case {
        bool ring;
        uint32_t ranks, workers;
        uint64_t size;
        bool relay;
    };
    // 4 workers of 1 or 2 pages (a 1-page worker is not split on the ring), a partial last page,
    // and the multicast streams (relay off) on a line and a ring
    const Case cases[] = {{true, 8, 4, 8 * (6 * 2048 + 16), true}, {false, 4, 4, 4 * (5 * 2048 + 48), true},
                          {true, 6, 3, 6 * (7 * 2048), true},      {false, 4, 0, 4 * 5136, false},
                          {true, 8, 0, 8 * 4112, false}};
    for (const Case& c : cases) {
        tf::Options o;
        o.op = "all_gather";
        o.ring = c.ring;
        o.ranks = c.ranks;
        o.size = c.size;
        o.relay = c.relay;
        o.workers = c.workers;
        o.structure = "per_direction";
        o.iters = 2;
        INFO((c.ring ? "ring " : "line ") << c.ranks << " size " << c.size << " workers " << c.workers << " relay " << c.relay);
        CHECK(check(o, 11) == "");
    }
}
