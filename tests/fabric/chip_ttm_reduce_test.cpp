// tt-metal's op structure for reduce_scatter and all_reduce on the chip fabric
// (include/fabric/ops/{reduce_scatter,all_reduce}.hpp): tt-metal's workers per direction (reader,
// compute-engine sum, writer; each its share of every slice and its own mux channel) behind the
// mux, partial sums as unicast packet streams into the neighbour's DRAM
// intermediate tensor, announced every `sync` chunks; the ring's one-shot algorithm up to 512 KiB;
// all_reduce as reduce_scatter + all_gather. Every output element of every chip is checked against
// the host reference (testing/inputs.hpp: bfloat16 sums of the seeded inputs) on dirty L1,
// stale DRAM tensors, adversarial schedules and the race detector. [long]: the fidelity grid's
// shapes at 1 MiB on the timed engine, bit-exact.
#include <catch2/catch.hpp>

#include "ttm_check.hpp"

#include <string>

namespace tf = kccl::tools::ttm_fabric;
namespace emu = kccl::emu;
namespace ops = kccl::fabric::ops;

namespace {

using tf::test::check;
using tf::test::throw_handler;

ops::ReducePlan plan(uint32_t rank, uint32_t ranks, bool ring, bool all_reduce, uint32_t slice, bool one_shot = true,
                     uint32_t workers = 1) {
    ops::ReducePlan p;
    ops::plan_common(p.ag, rank, ranks, 0, 0, 0, 1 << 20, 2048, 2, 0x1000, 48);
    ops::make_reduce(p, ring, all_reduce, slice, 1 << 24, 1, 1 | 1 << 16, workers, 0x8000, 0x8000 + ops::ReducePlan::words_bytes,
                     ops::ttm_chunk_pages(ops::ttm_rs_pages_per_packet(6144, 2048)), one_shot);
    return p;
}

}  // namespace

TEST_CASE("ttm reduce: the plans (steps, partials, one-shot streams, chunks per sync)", "[fabric][ttm]") {
    // line of 4, chip 1: E handles slices 3, 2 (adding chip 0's partial), W slice 0 (adding chips 2-3's);
    // the final sum of slice 1: E input + chip 0's partial, then W adds chips 2-3's partial to the output
    ops::ReducePlan p = plan(1, 4, false, false, 96 * 1024);
    REQUIRE(p.nsteps[0] == 3);
    CHECK(p.steps[0][0].slice == 3);
    CHECK(p.steps[0][1].slice == 2);
    CHECK(p.steps[0][0].partials == 1);
    CHECK(p.steps[0][2].final);
    CHECK(p.steps[0][2].slice == 1);
    CHECK(p.steps[0][2].partials == 1);
    CHECK_FALSE(p.steps[0][2].accumulate);
    REQUIRE(p.nsteps[1] == 2);
    CHECK(p.steps[1][0].slice == 0);
    CHECK(p.steps[1][0].partials == 2);
    CHECK(p.sender_xy[1] == (1u | 1u << 16));  // the W worker (chip 0's receives from it on the same core)
    CHECK(p.steps[1][1].final);
    CHECK(p.steps[1][1].partials == 2);
    CHECK(p.steps[1][1].accumulate);
    CHECK(p.chunk == 8 * 2048);          // tt-metal's tile_granularity: 4 x the 2 pages of a packet
    CHECK(p.sync[0] == 3);               // line: 20 chunks, at most half a step's 6 chunks
    // line chip 0 has no partials to add going E, and its W worker sums input + partial (no E side);
    // chip 3 has no E steps but the final one, and no W final
    p = plan(0, 4, false, false, 4096);
    CHECK(p.steps[0][0].partials == 0);
    REQUIRE(p.nsteps[1] == 1);
    CHECK_FALSE(p.steps[1][0].accumulate);
    p = plan(3, 4, false, false, 4096);
    CHECK(p.nsteps[0] == 1);
    CHECK(p.steps[0][0].final);
    CHECK(p.nsteps[1] == 3);
    CHECK_FALSE(p.steps[1][2].final);
    // ring of 8, above the one-shot size: n steps per direction, each a half of the slice
    p = plan(5, 8, true, false, 1 << 20);
    CHECK_FALSE(p.use_direct);
    REQUIRE(p.nsteps[0] == 8);
    REQUIRE(p.nsteps[1] == 8);
    CHECK(p.steps[0][0].slice == 4);
    CHECK(p.steps[1][0].slice == 6);
    CHECK(p.steps[0][7].slice == 5);
    CHECK(p.steps[0][7].final);
    CHECK(p.steps[1][7].final);
    CHECK(p.steps[0][0].bytes + p.steps[1][0].bytes == 1u << 20);
    CHECK(p.steps[0][1].partials == 1);
    CHECK(p.steps[1][1].partials == 2);
    CHECK(p.sync[0] == 4);  // ring: every 4 chunks
    // ring of 8 at 512 KiB per chip: the one-shot algorithm, 8 streams out (the half-way peer split)
    p = plan(5, 8, true, false, 64 * 1024);
    CHECK(p.use_direct);
    CHECK(p.direct.nstreams == 8);
    CHECK(p.direct.expect == 8);
    CHECK(p.nsteps[0] == 1);
    // the one-shot algorithm moves 16 / 7 of the pipelined ring's bytes over the links at n = 8 (bytes x hops)
    uint64_t direct_hops = 0, ring_hops = 0;
    for (uint32_t i = 0; i < p.direct.nstreams; ++i) direct_hops += uint64_t(p.direct.s[i].bytes) * p.direct.s[i].route[0];
    const ops::ReducePlan q = plan(5, 8, true, false, 64 * 1024, false);
    for (uint32_t d = 0; d < 2; ++d)
        for (uint32_t j = 0; j < q.nsteps[d]; ++j) ring_hops += q.steps[d][j].final ? 0 : q.steps[d][j].bytes;
    CHECK(double(direct_hops) / double(ring_hops) == Approx(16.0 / 7.0));
    // all_reduce: the all_gather of the own slice of the output, no local copy
    p = plan(2, 4, false, true, 8192);
    CHECK(p.ag.nstreams == 1);
    CHECK(p.ag.s[0].src == 2 * 8192);
    CHECK(p.ag.input == p.ag.output);
    CHECK((p.ag.s[0].targets & ops::tgt_local) == 0);
    CHECK(p.ag.expect == 3);
    // an even ring's all_gather goes as two halves (split forwarding): both read the own slice
    p = plan(2, 8, true, true, 8192);
    REQUIRE(p.ag.nstreams == 2);
    CHECK(p.ag.s[0].src == 2 * 8192);
    CHECK(p.ag.s[1].src == 2 * 8192 + 4096);
    CHECK((p.ag.s[1].targets & ops::tgt_local) == 0);
    // 3 workers per direction on the 8-ring, 1 MiB slices of 512 pages: worker k has pages
    // [512 k / 3, 512 (k + 1) / 3) of every slice (170, 171, 171), its first half E, the rest W
    p = plan(5, 8, true, false, 1 << 20, true, 3);
    REQUIRE(p.workers == 3);
    CHECK(p.channels() == 6);
    CHECK(p.woff[0] == 0);
    CHECK(p.wbytes[0] == 85 * 2048);
    CHECK(p.woff[3] == 85 * 2048);
    CHECK(p.wbytes[3] == 85 * 2048);
    CHECK(p.woff[1] == 170 * 2048);
    CHECK(p.wbytes[1] == 86 * 2048);
    CHECK(p.woff[5] == (341 + 86) * 2048);  // worker 2 has pages 341..511: 86 E, 85 W
    CHECK(p.woff[5] + p.wbytes[5] == 1u << 20);
    CHECK(p.sender_xy[2] == 3u);
    CHECK(p.sender_xy[4] == (2u | 1u << 16));
    CHECK(p.sync[0] == 4);
    CHECK(p.steps[0][0].bytes + p.steps[1][0].bytes == 1u << 20);
    // the one-shot sizes run one worker per direction
    CHECK(plan(5, 8, true, false, 64 * 1024, true, 4).workers == 1);
    // a line's workers share the whole slice, and the line's chunks per sync apply to each share
    p = plan(1, 4, false, false, 96 * 1024, true, 2);
    CHECK(p.wbytes[0] == 24 * 2048);
    CHECK(p.woff[3] == 24 * 2048);
    CHECK(p.sync[0] == 1);  // 3 chunks of 8 pages per share
    // tt-metal's pages per packet: 2 (its scatter write's NoC addresses), also in a 6144 B payload
    CHECK(ops::ttm_rs_pages_per_packet(6144, 2048) == 2);
    CHECK(ops::ttm_rs_pages_per_packet(4096, 4096) == 1);
    // tt-metal's workers per direction as its default_workers runs: the bytes a link moves against
    // thresholds of 0.5 and 4 (line), 1 and 50 (ring)
    CHECK(ops::ttm_rs_workers(64 * 1024, 2, false) == 8);   // every size of the grid: 8
    CHECK(ops::ttm_rs_workers(1 << 20, 8, true) == 8);
    CHECK(ops::ttm_rs_workers(256u << 20, 4, false) == 8);
    CHECK(ops::ttm_rs_workers(8, 2, false) == 4);           // a line moving 4 bytes
    CHECK(ops::ttm_rs_workers(1, 2, false) == 2);           // ... 0 bytes (the integer division)
    CHECK(ops::ttm_rs_workers(160, 2, true) == 4);          // a ring moving 40 bytes per direction
    CHECK(ops::ttm_rs_workers(2, 2, true) == 2);
}

TEST_CASE("ttm reduce: reduce_scatter and all_reduce bit-exact on lines of 2, 4 and 8 and a ring of 8", "[fabric][ttm]") {
    struct Case {
        const char* op;
        bool ring;
        uint32_t ranks;
        uint64_t size;
        bool one_shot;
    };
    // slices with a partial last chunk and a partial last page (multiples of 16 bytes, not of pages)
    const Case cases[] = {
        {"reduce_scatter", false, 2, 2 * 37904, true}, {"reduce_scatter", false, 4, 4 * 9232, true},
        {"reduce_scatter", false, 8, 8 * 5136, true},  {"reduce_scatter", true, 8, 8 * 9232, false},
        {"reduce_scatter", true, 8, 8 * 5136, true},   {"all_reduce", false, 2, 2 * 9232, true},
        {"all_reduce", false, 4, 4 * 5136, true},      {"all_reduce", false, 8, 8 * 2064, true},
        {"all_reduce", true, 8, 8 * 9232, false},      {"all_reduce", true, 8, 8 * 2064, true},
    };
    uint64_t seed = 5;
    for (const Case& c : cases) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;  // a schedule of its own per case
        {
            tf::Options o;
            o.op = c.op;
            o.ring = c.ring;
            o.ranks = c.ranks;
            o.size = c.size;
            o.one_shot = c.one_shot;
            o.rs_workers = (seed >> 33) % 2 ? 1 : 3;  // mux slots of the reduce_scatter phase
            o.iters = 3;  // ops back to back: one intermediate tensor ordered by the start barriers, the counters across ops
            INFO(c.op << (c.ring ? " ring " : " line ") << c.ranks << " size " << c.size << (c.one_shot ? "" : " pipelined")
                      << " seed " << seed);
            CHECK(check(o, seed) == "");
        }
    }
}

TEST_CASE("ttm reduce: tt-metal's several workers per direction, each its own core and mux channel, bit-exact",
          "[fabric][ttm]") {
    // line of 2 at 1 MiB: tt-metal's rule gives 8 workers per direction. Slice 512 KiB = 256 pages,
    // 32 per worker: 4 chunks of 8 pages, 2 pages per packet -> 16 packets per worker and op; chip 0
    // sends E only, chip 1 W only.
    {
        tf::Options o;
        o.op = "reduce_scatter";
        o.ranks = 2;
        o.size = 1 << 20;
        o.iters = 1;
        REQUIRE(ops::ttm_rs_workers(o.size, 2, false) == 8);
        REQUIRE(tf::pages_per_packet_of(o) == 2);
        tf::Result r;
        CHECK(check(o, 77, std::chrono::milliseconds(60000), &r) == "");
        REQUIRE(r.channel_packets.size() == 2);
        for (uint32_t q = 0; q < 2; ++q) {
            REQUIRE(r.channel_packets[q].size() == 16);  // 8 E and 8 W workers, a mux channel each
            for (uint32_t k = 0; k < 8; ++k) {
                INFO("chip " << q << " worker " << k);
                CHECK(r.channel_packets[q][(q == 0 ? 0 : 8) + k] == 16);  // the sending direction's worker k
                CHECK(r.channel_packets[q][(q == 0 ? 8 : 0) + k] == 0);   // the other direction only sums
            }
        }
    }
    // 8 workers per direction on the 8-ring (pipelined; slices of 17 pages, at least 2 per worker) and on
    // an all_reduce line of 4 (19 pages): every worker core of every chip hands packets to the mux
    // wherever its direction has a neighbour; the all_gather phase goes from worker 0 of each direction
    for (auto [op, ring, n, size] : {std::tuple{"reduce_scatter", true, 8u, 8u * 33808u}, {"all_reduce", false, 4u, 4u * 37904u}}) {
        tf::Options o;
        o.op = op;
        o.ring = ring;
        o.ranks = n;
        o.size = size;
        o.one_shot = false;
        o.rs_workers = 8;
        o.iters = 2;
        INFO(op << (ring ? " ring " : " line ") << n);
        tf::Result r;
        CHECK(check(o, 78 + n, std::chrono::milliseconds(60000), &r) == "");
        REQUIRE(r.channel_packets.size() == n);
        for (uint32_t q = 0; q < n; ++q) {
            REQUIRE(r.channel_packets[q].size() == 16);
            for (uint32_t c = 0; c < 16; ++c) {
                INFO("chip " << q << " channel " << c);
                const bool sends = ring || (c < 8 ? q + 1 < n : q > 0);  // a line's end chip has no neighbour one way
                if (sends) CHECK(r.channel_packets[q][c] > 0);
                else CHECK(r.channel_packets[q][c] == 0);
            }
        }
    }
}

TEST_CASE("ttm reduce: mutation, the final sum without one side's partial is found", "[fabric][ttm]") {
    kccl::set_assert_handler(&throw_handler);
    tf::Options o;
    o.op = "reduce_scatter";
    o.ranks = 4;
    o.size = 4 * 8192;
    o.mutation_no_final_partial = true;
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(20000);
    ro.dirty_l1 = emu::RunOptions::DirtyL1::on;
    const tf::Result r = tf::run(o, ro);
    REQUIRE(r.error == "");
    // chips 1..3 miss the partial of the chips before them: most of their 3 x 4096 elements are wrong
    // (a sum without the missing part can equal the full one, e.g. when the part is 0 or an infinity rules)
    CHECK(r.wrong > 3 * 4096 / 2);
    CHECK(r.wrong <= 3 * 4096);
    CHECK_THAT(r.first_wrong, Catch::Contains("chip 1 output element"));
}

TEST_CASE("ttm reduce: named errors for options the reducing ops do not take", "[fabric][ttm]") {
    tf::Options o;
    o.op = "reduce_scatter";
    o.structure = "one_core";
    CHECK_THROWS_WITH(tf::validate(o), Catch::Contains("structure per_direction"));
    o.structure = "per_direction";
    o.op = "reduce";
    CHECK_THROWS_WITH(tf::validate(o), Catch::Contains("allowed: all_gather, all_to_all, reduce_scatter, all_reduce"));
    o.op = "all_reduce";
    o.size = 4 * 1000 + 4;
    CHECK_THROWS_WITH(tf::validate(o), Catch::Contains("parts of a multiple of 16"));
}

TEST_CASE("ttm reduce: the fidelity grid's shapes at 1 MiB and the ring's one-shot size, bit-exact on the timed engine",
          "[fabric][ttm][long]") {
    for (const char* op : {"reduce_scatter", "all_reduce"})
        for (auto [ring, n, size] : {std::tuple{false, 2u, 1u << 20}, {false, 4u, 1u << 20}, {false, 8u, 1u << 20},
                                     {true, 8u, 1u << 20}, {true, 8u, 512u << 10}}) {
            tf::Options o;
            o.op = op;
            o.ring = ring;
            o.ranks = n;
            o.size = size;
            tf::Result r;
            const double us = tf::timed_us(o, r);
            INFO(op << (ring ? " ring " : " line ") << n << " size " << size);
            REQUIRE(r.error == "");
            CHECK(r.wrong == 0);
            CHECK(us > 0);
        }
}
