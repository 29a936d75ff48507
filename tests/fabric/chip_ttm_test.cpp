// tt-metal's op structure on the chip fabric (include/fabric/chip/ops/ttm.hpp): all_gather sent as
// 1D multicast streams, all_to_all as unicast streams, DRAM tensors written page by page by the
// receiving routers, completion by fused write + increment. Every output byte of every chip is
// checked against values computed by the test from the seed (tools/ttm_fabric_ops.hpp), on dirty
// L1 with adversarial schedules and the race detector; the output tensor starts stale, so a page
// never written is found. [long]: the timed fidelity sizes, bit-exact.
#include <catch2/catch.hpp>

#include "tools/ttm_fabric_ops.hpp"

#include <string>

namespace tf = kccl::tools::ttm_fabric;
namespace emu = kccl::emu;
namespace ops = kccl::fabric::chip::ops;

namespace {

void throw_handler(const char*, const char* msg, const char*, int) { throw emu::EmulationError(msg); }

std::string check(tf::Options o, uint64_t seed) {
    kccl::set_assert_handler(&throw_handler);
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(20000);
    ro.adversary.enabled = true;
    ro.adversary.seed = seed;
    ro.dirty_l1 = emu::RunOptions::DirtyL1::on;
    ro.race = emu::RunOptions::RaceCheck::on;
    o.seed = seed;
    const tf::Result r = tf::run(o, ro);
    if (!r.error.empty()) return "run failed: " + r.error;
    if (r.wrong) return std::to_string(r.wrong) + " wrong bytes; first:" + r.first_wrong;
    return "";
}

}  // namespace

TEST_CASE("ttm ops: the plans' routes (multicast ranges, all_to_all directions)", "[fabric][ttm]") {
    ops::Plan p;
    // line of 4, chip 1: forward range 2 (chips 2, 3), backward range 1 (chip 0)
    ops::plan_common(p, 1, 4, 0, 0, 0, 0, 2048, 2, 0x1000, 48);
    CHECK(ops::detail::packets_to(p, 0) == 0);
    ops::make_all_gather(p, false, 8192);
    REQUIRE(p.nstreams == 1);
    CHECK(p.s[0].route[0] == (1u | (2u << 16)));
    CHECK(p.s[0].route[1] == (1u | (1u << 16)));
    CHECK(p.s[0].dst == 8192);
    CHECK(p.expect == 3);
    CHECK(ops::detail::packets_to(p, 0) == 2);  // 8192 B in packets of 2 pages
    CHECK(ops::detail::packets_to(p, 1) == 2);
    // ring of 8: 4 forward, 3 backward
    ops::plan_common(p, 5, 8, 0, 0, 0, 0, 2048, 2, 0x1000, 48);
    ops::make_all_gather(p, true, 4096);
    CHECK(p.s[0].route[0] >> 16 == 4);
    CHECK(p.s[0].route[1] >> 16 == 3);
    // all_to_all on a ring of 8 from chip 6: one local stream, 7 remote, the distance-4 peer (chip 2) forward
    ops::plan_common(p, 6, 8, 0, 0, 0, 0, 2048, 2, 0x1000, 48);
    ops::make_all_to_all(p, true, 1024);
    REQUIRE(p.nstreams == 8);
    uint32_t fwd = 0, bwd = 0, local = 0;
    for (uint32_t i = 0; i < p.nstreams; ++i) {
        const auto& s = p.s[i];
        fwd += s.targets == ops::tgt_fwd, bwd += s.targets == ops::tgt_bwd, local += s.targets == ops::tgt_local;
        CHECK(s.dst == 6 * 1024);
        if (s.src == 2 * 1024) CHECK((s.targets == ops::tgt_fwd && s.route[0] == 4));
    }
    CHECK(fwd == 4);
    CHECK(bwd == 3);
    CHECK(local == 1);
    CHECK(ops::ttm_pages_per_packet(6144, 2048) == 2);  // tt-metal's scatter write: 2 NoC addresses
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
        for (uint64_t seed : {3ull, 0xBADC0FFEEull, 77ull}) {  // a sender per direction with 1 and 3 mux slots; one core
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
    o.structure = "two_cores";
    CHECK_THROWS_WITH(tf::validate(o), Catch::Contains("allowed: per_direction, one_core"));
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
