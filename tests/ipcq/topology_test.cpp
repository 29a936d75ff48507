// IPCQ host side: builtin topologies, custom neighbour maps, validation (I3, I4, sizes), the
// plan's endpoint records.
#include "ipcq_util.hpp"

using namespace kccl::test;
using namespace kccl::test::ipcq;
using iq::Nsew;
using iq::Tree;

namespace {

int32_t peer(const ih::Topology<Nsew>& t, uint32_t r, uint32_t d) { return t.at(r, d).peer; }

template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "<no error>";
}

uint32_t word(const ih::RankPlan& rp, uint32_t block, uint32_t addr) {
    uint32_t v;
    std::memcpy(&v, rp.image.data() + (addr - block), 4);
    return v;
}

}  // namespace

TEST_CASE("ipcq ring_1d: E is the next rank and W the previous one", "[ipcq][topology]") {
    auto t = ih::ring_1d(4);
    REQUIRE(t.world == 4);
    REQUIRE(peer(t, 0, Nsew::E) == 1);
    REQUIRE(peer(t, 0, Nsew::W) == 3);
    REQUIRE(peer(t, 3, Nsew::E) == 0);
    REQUIRE(peer(t, 2, Nsew::W) == 1);
    REQUIRE(t.at(1, Nsew::E).peer_dir == Nsew::W);
    REQUIRE_FALSE(t.at(1, Nsew::N).installed());
    REQUIRE(t.at(1, Nsew::E).roles == ih::both);
    REQUIRE_NOTHROW(t.validate());
    // Two ranks: both directions lead to the other rank, on two distinct links.
    auto two = ih::ring_1d(2);
    REQUIRE(peer(two, 0, Nsew::E) == 1);
    REQUIRE(peer(two, 0, Nsew::W) == 1);
    REQUIRE(two.at(0, Nsew::E).peer_dir == Nsew::W);
    REQUIRE(two.at(0, Nsew::W).peer_dir == Nsew::E);
    REQUIRE_THAT(error_of([] { ih::ring_1d(1); }), Catch::Contains("at least 2 ranks"));
}

TEST_CASE("ipcq ring_1d_unidir: E sends only and W receives only", "[ipcq][topology]") {
    auto t = ih::ring_1d_unidir(3);
    REQUIRE(peer(t, 0, Nsew::E) == 1);
    REQUIRE(peer(t, 1, Nsew::W) == 0);
    REQUIRE(t.at(0, Nsew::E).roles == ih::tx);
    REQUIRE(t.at(1, Nsew::W).roles == ih::rx);
    REQUIRE_NOTHROW(t.validate());
}

TEST_CASE("ipcq mesh_2d: torus neighbours and the non-rectangular error", "[ipcq][topology]") {
    auto t = ih::mesh_2d(4, 4);
    // rank = row * 4 + col; rank 5 is (1,1).
    REQUIRE(peer(t, 5, Nsew::N) == 1);
    REQUIRE(peer(t, 5, Nsew::S) == 9);
    REQUIRE(peer(t, 5, Nsew::E) == 6);
    REQUIRE(peer(t, 5, Nsew::W) == 4);
    // Wrap-around at the corners.
    REQUIRE(peer(t, 0, Nsew::N) == 12);
    REQUIRE(peer(t, 0, Nsew::W) == 3);
    REQUIRE(peer(t, 15, Nsew::S) == 3);
    REQUIRE(peer(t, 15, Nsew::E) == 12);
    REQUIRE(t.at(0, Nsew::N).peer_dir == Nsew::S);
    REQUIRE_NOTHROW(t.validate());
    REQUIRE(ih::mesh_2d(6, 2, 3).world == 6);
    REQUIRE(ih::mesh_2d_square(9).world == 9);
    REQUIRE_THAT(error_of([] { ih::mesh_2d(7, 2, 3); }), Catch::Contains("non-rectangular"));
    REQUIRE_THAT(error_of([] { ih::mesh_2d_square(8); }), Catch::Contains("non-rectangular"));
    REQUIRE_THAT(error_of([] { ih::mesh_2d(1, 4); }), Catch::Contains("rows and cols must both be >= 2"));
}

TEST_CASE("ipcq tree_binary: parent and children in heap order", "[ipcq][topology]") {
    auto t = ih::tree_binary(7);
    REQUIRE(t.at(0, Tree::left).peer == 1);
    REQUIRE(t.at(0, Tree::right).peer == 2);
    REQUIRE_FALSE(t.at(0, Tree::parent).installed());
    REQUIRE(t.at(1, Tree::parent).peer == 0);
    REQUIRE(t.at(1, Tree::parent).peer_dir == Tree::left);
    REQUIRE(t.at(2, Tree::parent).peer_dir == Tree::right);
    REQUIRE(t.at(2, Tree::left).peer == 5);
    REQUIRE(t.at(2, Tree::right).peer == 6);
    REQUIRE(t.at(6, Tree::parent).peer == 2);
    REQUIRE_FALSE(t.at(3, Tree::left).installed());
    REQUIRE_NOTHROW(t.validate());
}

TEST_CASE("ipcq custom topologies: neighbour maps and modified builtins", "[ipcq][topology]") {
    // A star: rank 0 in the middle, ranks 1..4 on its N, S, E, W.
    std::vector<std::array<int32_t, 4>> star = {
        {1, 2, 3, 4}, {-1, 0, -1, -1}, {0, -1, -1, -1}, {-1, -1, -1, 0}, {-1, -1, 0, -1}};
    auto t = ih::custom<Nsew>(star, "star");
    REQUIRE(t.at(0, Nsew::S).peer == 2);
    REQUIRE(t.at(2, Nsew::N).peer_dir == Nsew::S);
    // Tree directions have no fixed reverse: the peer direction is the one naming the rank.
    std::vector<std::array<int32_t, 3>> chain = {{-1, 1, -1}, {0, -1, 2}, {1, -1, -1}};
    auto c = ih::custom<Tree>(chain, "chain");
    REQUIRE(c.at(1, Tree::parent).peer_dir == Tree::left);
    REQUIRE(c.at(2, Tree::parent).peer_dir == Tree::right);
    // A star whose rank 1 does not point back (its S names rank 3): I3.
    auto bad = star;
    bad[1][Nsew::S] = 3;
    REQUIRE_THAT(error_of([&] { ih::custom<Nsew>(bad, "bad star"); }), Catch::Contains("I3"));
    // Modify a builtin: drop a link (both ends go) and it stays valid; break one end: I3.
    auto ring = ih::ring_1d(4);
    ring.disconnect(0, Nsew::E);
    REQUIRE_FALSE(ring.at(1, Nsew::W).installed());
    REQUIRE_NOTHROW(ring.validate());
    ring.links[2][Nsew::E].peer = 0;
    const std::string e = error_of([&] { ring.validate(); });
    REQUIRE_THAT(e, Catch::Contains("rank 2 direction E points to rank 0 direction W"));
    REQUIRE_THAT(e, Catch::Contains("I3"));
    // Out-of-range ranks and self links.
    std::vector<std::array<int32_t, 4>> oob = {{-1, -1, 5, -1}, {-1, -1, -1, -1}};
    REQUIRE_THAT(error_of([&] { ih::custom<Nsew>(oob); }), Catch::Contains("names peer rank 5; ranks are 0..1"));
    std::vector<std::array<int32_t, 4>> self = {{-1, -1, 0, 0}};
    REQUIRE_THAT(error_of([&] { ih::custom<Nsew>(self); }), Catch::Contains("points to its own rank"));
}

TEST_CASE("ipcq plan: validation of placement (I4) sizes and cores", "[ipcq][topology][plan]") {
    Cluster cl(kccl::emu::topology::single_chip(ipcq_chip()));
    const auto mem = memory_for(cl);
    auto t = ih::ring_1d(4);
    ih::QueueConfig l1, dram;
    l1.n_slots = 4, l1.slot_size = 256;
    dram = l1;
    dram.placement = iq::Placement::dram;
    std::vector<ih::QueueConfig> mixed = {l1, l1, dram, l1};
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), mixed, mem); }),
                 Catch::Contains("rank 2 uses placement dram but rank 0 uses l1 (I4"));
    auto big = l1;
    big.slot_size = 64 * 1024;
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), big, mem); }), Catch::Contains("but the core has 262144"));
    auto other = l1;
    other.n_slots = 8;
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), std::vector<ih::QueueConfig>{l1, other, l1, l1}, mem); }),
                 Catch::Contains("both ends of a link must agree"));
    auto odd = l1;
    odd.slot_size = 100;
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), odd, mem); }), Catch::Contains("multiple of 16"));
    auto dup = cores_for(4);
    dup[3] = dup[1];
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, dup, l1, mem); }), Catch::Contains("ranks 1 and 3 are both on core (1,0)"));
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(3), l1, mem); }), Catch::Contains("3 cores for 4 ranks"));
    auto nodram = mem;
    nodram.dram_bytes = 0;
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), dram, nodram); }), Catch::Contains("needs a DRAM region"));
    auto dram_huge = dram;
    dram_huge.n_slots = 1024, dram_huge.slot_size = 4096;
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), dram_huge, mem); }), Catch::Contains("DRAM rings need"));
    REQUIRE_NOTHROW(ih::build_plan(t, cores_for(4), dram, mem));
    auto batch = l1;
    batch.credit_batch = 5;
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), batch, mem); }),
                 Catch::Contains("credit_batch 5 is out of range (allowed 1..n_slots = 4)"));
}

TEST_CASE("ipcq plan: endpoint records agree at both ends and rings do not overlap", "[ipcq][topology][plan]") {
    Cluster cl(kccl::emu::topology::single_chip(ipcq_chip()));
    const auto mem = memory_for(cl);
    for (auto placement : {iq::Placement::l1, iq::Placement::dram}) {
        ih::QueueConfig qc;
        qc.n_slots = 4, qc.slot_size = 512, qc.placement = placement, qc.tx_ring = true;
        auto t = ih::mesh_2d(2, 2);
        auto plan = ih::build_plan(t, cores_for(4), qc, mem);
        namespace L = iq::layout;
        struct Range {
            uint64_t lo, hi;
            std::string what;
        };
        std::vector<Range> dram_ranges;
        for (uint32_t r = 0; r < 4; ++r) {
            const auto& rp = plan.ranks[r];
            REQUIRE(word(rp, kBlock, kBlock + L::kHdrMagic) == L::kMagic);
            REQUIRE(word(rp, kBlock, kBlock + L::kHdrRank) == r);
            std::vector<Range> l1 = {{kBlock, rp.meta_end, "block"}};
            for (uint32_t d = 0; d < 4; ++d) {
                const auto& l = t.at(r, d);
                const uint32_t rec = kBlock + L::record(d);
                REQUIRE(word(rp, kBlock, rec + L::kCfgFlags) == (L::kInstalled | L::kTx | L::kRx));
                const auto& pp = plan.ranks[uint32_t(l.peer)];
                const uint32_t prec = kBlock + L::record(l.peer_dir);
                // What this end believes about the peer is what the peer's own record says.
                REQUIRE(word(rp, kBlock, rec + L::kCfgPeerX) == pp.core.x);
                REQUIRE(word(rp, kBlock, rec + L::kCfgPeerY) == pp.core.y);
                REQUIRE(word(rp, kBlock, rec + L::kCfgPeerRecord) == prec);
                REQUIRE(word(rp, kBlock, rec + L::kCfgPeerRxBase) == word(pp, kBlock, prec + L::kCfgRxBase));
                REQUIRE(word(rp, kBlock, rec + L::kCfgPeerRxX) == word(pp, kBlock, prec + L::kCfgRxX));
                REQUIRE(word(rp, kBlock, rec + L::kCfgPeerDesc) == word(pp, kBlock, prec + L::kCfgDesc));
                REQUIRE(word(pp, kBlock, prec + L::kCfgPeerX) == rp.core.x);
                const uint32_t rx = word(rp, kBlock, rec + L::kCfgRxBase);
                if (placement == iq::Placement::l1) {
                    REQUIRE(word(rp, kBlock, rec + L::kCfgRxX) == rp.core.x);
                    l1.push_back({rx, rx + 4ull * 512, "rx ring"});
                } else {
                    REQUIRE(word(rp, kBlock, rec + L::kCfgRxY) == cl.chip(0).dram().y);
                    dram_ranges.push_back({rx, rx + 4ull * 512, "dram ring"});
                    const uint32_t st = word(rp, kBlock, rec + L::kCfgStage);
                    l1.push_back({st, st + 512, "stage"});
                }
                const uint32_t tx = word(rp, kBlock, rec + L::kCfgTxRing);
                l1.push_back({tx, tx + 4ull * 512, "tx ring"});
                const uint32_t desc = word(rp, kBlock, rec + L::kCfgDesc), sh = word(rp, kBlock, rec + L::kCfgShadow);
                REQUIRE(desc >= kBlock + L::records_end(4));
                REQUIRE(desc + 64 <= rp.meta_end);
                REQUIRE(sh + 64 <= rp.meta_end);
                REQUIRE(desc % 16 == 0);
                REQUIRE(rx % 16 == 0);
            }
            for (size_t a = 0; a < l1.size(); ++a) {
                REQUIRE(l1[a].hi <= mem.l1_bytes);
                for (size_t b = a + 1; b < l1.size(); ++b) {
                    INFO("rank " << r << ": " << l1[a].what << " vs " << l1[b].what);
                    REQUIRE((l1[a].hi <= l1[b].lo || l1[b].hi <= l1[a].lo));
                }
            }
        }
        for (size_t a = 0; a < dram_ranges.size(); ++a)
            for (size_t b = a + 1; b < dram_ranges.size(); ++b)
                REQUIRE((dram_ranges[a].hi <= dram_ranges[b].lo || dram_ranges[b].hi <= dram_ranges[a].lo));
        REQUIRE(plan.runtime_args(2) == std::vector<uint32_t>{kBlock});
    }
}

TEST_CASE("topology sizes beyond what can be built are named errors, not endless loops", "[ipcq][topology][errors]") {
    // Before: mesh_2d_square(UINT32_MAX) looped forever ((s + 1) * (s + 1) wrapped to 0).
    REQUIRE_THROWS_WITH(kccl::ipcq::host::mesh_2d_square(UINT32_MAX), Catch::Contains("at most 1048576 ranks are allowed"));
    REQUIRE_THROWS_WITH(kccl::ipcq::host::mesh_2d(UINT32_MAX, UINT32_MAX), Catch::Contains("at most 1048576 ranks"));
    REQUIRE_THROWS_WITH(kccl::ipcq::host::ring_1d(UINT32_MAX), Catch::Contains("world size 4294967295; at most 1048576"));
    REQUIRE(kccl::ipcq::host::mesh_2d_square(512 * 512).world == 512u * 512u);
}
