// Cluster shapes: the canned topologies have the chips and links of Tenstorrent's systems, links join
// Ethernet cores one-to-one, and bad specs are rejected with a message naming the bound.
#include "util.hpp"

#include <set>

using namespace kccl::test;
namespace topo = kccl::emu::topology;

namespace {
// Every link is symmetric and every Ethernet core is on at most one link.
void check_links(Cluster& c) {
    std::set<CoreCoord> seen;
    for (uint32_t a = 0; a < c.num_chips(); ++a)
        for (uint32_t b = 0; b < c.num_chips(); ++b) {
            if (a == b) continue;
            for (auto [ea, eb] : c.links_between(a, b)) {
                REQUIRE(ea.chip == a);
                REQUIRE(eb.chip == b);
                REQUIRE(c.link_peer(ea) == eb);
                REQUIRE(c.link_peer(eb) == ea);
                seen.insert(ea);
            }
        }
    size_t n = 0;
    for (auto& s : c.cores()) n += s->link_peer != nullptr;
    REQUIRE(seen.size() == n);  // each linked core counted once from its own side
}
size_t links(Cluster& c, uint32_t a, uint32_t b) { return c.links_between(a, b).size(); }
}  // namespace

TEST_CASE("N300 is two chips joined by two links", "[topology]") {
    Cluster c(topo::n300(small_chip()));
    REQUIRE(c.num_chips() == 2);
    REQUIRE(links(c, 0, 1) == 2);
    REQUIRE(links(c, 1, 0) == 2);
    check_links(c);
}

TEST_CASE("T3000 is a 2x4 mesh with two links per neighbour pair", "[topology]") {
    kccl::emu::ChipSpec chip = small_chip();
    chip.eth_cores = 16;
    Cluster c(topo::t3000(chip));
    REQUIRE(c.num_chips() == 8);
    // chip = row * 4 + col
    REQUIRE(links(c, 0, 1) == 2);
    REQUIRE(links(c, 0, 4) == 2);
    REQUIRE(links(c, 3, 7) == 2);
    REQUIRE(links(c, 0, 5) == 0);  // no diagonals
    REQUIRE(links(c, 3, 4) == 0);  // no wrap
    check_links(c);
}

TEST_CASE("Galaxy is a 4x8 mesh whose interior chips use all 16 Ethernet cores", "[topology]") {
    kccl::emu::ChipSpec chip = small_chip();
    chip.eth_cores = 16;
    Cluster c(topo::galaxy(chip));
    REQUIRE(c.num_chips() == 32);
    const uint32_t interior = 1 * 8 + 1;
    uint32_t used = 0;
    for (uint32_t other = 0; other < 32; ++other)
        if (other != interior) used += uint32_t(links(c, interior, other));
    REQUIRE(used == 16);
    REQUIRE(links(c, 0, 1) == 4);
    REQUIRE(links(c, 0, 8) == 4);
    check_links(c);
}

TEST_CASE("ring and line of N", "[topology]") {
    for (uint32_t n : {2u, 3u, 8u}) {
        Cluster r(topo::ring(n, 1, small_chip()));
        for (uint32_t i = 0; i < n; ++i) REQUIRE(links(r, i, (i + 1) % n) >= 1);
        if (n > 2) REQUIRE(links(r, 0, n - 1) == 1);
        check_links(r);
        Cluster l(topo::line(n, 1, small_chip()));
        for (uint32_t i = 0; i + 1 < n; ++i) REQUIRE(links(l, i, i + 1) == 1);
        if (n > 2) REQUIRE(links(l, 0, n - 1) == 0);
        check_links(l);
    }
}

TEST_CASE("custom topology and its errors", "[topology][errors]") {
    auto spec = topo::custom(3, small_chip());
    spec.connect(0, 2, 2).connect(1, 2);
    Cluster c(spec);
    REQUIRE(links(c, 0, 2) == 2);
    REQUIRE(links(c, 1, 2) == 1);
    REQUIRE(links(c, 0, 1) == 0);

    auto s2 = topo::custom(2, small_chip());
    REQUIRE_THROWS_WITH(s2.connect(0, 0), Catch::Contains("cannot be linked to itself"));
    REQUIRE_THROWS_WITH(s2.connect(0, 5), Catch::Contains("out of range"));
    REQUIRE_THROWS_WITH(s2.connect(0, 1, 5), Catch::Contains("no free Ethernet core"));

    auto s3 = topo::custom(2, small_chip());
    s3.connect_eth(0, 1, 1, 1).connect_eth(0, 1, 1, 2);
    REQUIRE_THROWS_WITH(Cluster(s3), Catch::Contains("is on two links"));
    auto s4 = topo::custom(2, small_chip());
    s4.connect_eth(0, 9, 1, 1);
    REQUIRE_THROWS_WITH(Cluster(s4), Catch::Contains("Ethernet core 9"));
    REQUIRE_THROWS_WITH(topo::ring(1), Catch::Contains("at least 2 chips"));
}

TEST_CASE("cores / coordinates and memory sizes", "[topology]") {
    auto chip = small_chip();
    chip.dram_bytes = 1 << 20;
    Cluster c(topo::n300(chip));
    REQUIRE(c.l1(c.chip(1).worker(3, 1)).size() == chip.worker_l1_bytes);
    REQUIRE(c.l1(c.chip(1).eth(2)).size() == chip.eth_l1_bytes);
    REQUIRE(c.l1(c.chip(0).dram()).size() == chip.dram_bytes);
    REQUIRE_THROWS_WITH(c.l1({0, 4, 0}), Catch::Contains("no core at chip 0 (4,0)"));
    REQUIRE_THROWS_WITH(c.l1({2, 0, 0}), Catch::Contains("chip 2 does not exist"));
    // memory persists and is per core
    c.write32(c.chip(0).worker(0, 0), 64, 0xabcd);
    REQUIRE(c.read32(c.chip(0).worker(0, 0), 64) == 0xabcd);
    REQUIRE(c.read32(c.chip(1).worker(0, 0), 64) == 0);
    REQUIRE_THROWS_WITH(c.write32(c.chip(0).worker(0, 0), chip.worker_l1_bytes - 2, 1),
                        Catch::Contains("outside"));
}
