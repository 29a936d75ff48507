// The chip fabric across the 2^32 counter wrap: every counter of the fabric (workers' sent /
// credit / arrival / done, routers' channel fill / taken / released, link sent / freed / acked /
// processed, forwarded / given back) starts just below 2^32 through FabricSpec::initial_counter,
// and point-to-point streams between every pair of ranks (multi-hop on rings, lines and a 2D mesh;
// slot counts 3, 5 and 16) cross the wrap with every payload checked, on dirty L1 with adversarial
// schedules. A router mutation that compares two counters as plain unsigned numbers must stall at
// the wrap (and only there).
#include <catch2/catch.hpp>

#include <emulation/fabric/fabric.hpp>

#include "chip_streams.hpp"

#include <string>

namespace cf = kccl::emu::fabric;
namespace fc = kccl::fabric;
namespace fh = kccl::fabric::host;
namespace emu = kccl::emu;

namespace {

struct WrapRouter : fc::RouterConfig {
    static constexpr bool mutation_unsafe_compare = true;
};

/// Every rank streams `msgs` messages to every other rank (non-blocking sends and receives
/// interleaved), checks each payload word and its order. Returns "" or what failed; `wrapped`
/// counts the routers whose link counters ended past the wrap.
template <class RConfig = fc::RouterConfig>
std::string streams(const cf::BedOptions& o, uint32_t msgs, uint64_t seed, uint32_t* wrapped = nullptr) {
    cf::Bed bed(o);
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(3000);
    ro.adversary.enabled = true;
    ro.adversary.seed = seed;
    ro.dirty_l1 = emu::RunOptions::DirtyL1::on;
    ro.race = emu::RunOptions::RaceCheck::on;
    if (std::string r = kccl::test::chip::run_streams<RConfig>(bed, msgs, ro); !r.empty()) return r;
    if (wrapped) {
        *wrapped = 0;
        for (const auto& r : bed.plan.routers) {
            uint32_t s[fc::status_words];
            bed.cluster->read({r.core.chip, r.core.x, r.core.y}, bed.plan.router.status(), s, sizeof s);
            *wrapped += s[fc::st::tx_sent] < o.initial_counter && s[fc::st::rx_processed] < o.initial_counter;
        }
    }
    return "";
}

}  // namespace

TEST_CASE("chip fabric: streams between every pair of ranks cross the 2^32 counter wrap", "[fabric][chip][wrap]") {
    struct C {
        const char* topo;
        fh::FabricKind kind;
        uint32_t ranks, rows, cols, slots, rx;
    };
    for (const C c : {C{"ring", fh::FabricKind::ring_1d, 5, 0, 0, 3, 3}, C{"line", fh::FabricKind::line_1d, 4, 0, 0, 5, 5},
                      C{"mesh", fh::FabricKind::mesh_2d, 0, 2, 3, 16, 16}, C{"t3000", fh::FabricKind::mesh_2d, 8, 0, 0, 3, 5}}) {
        cf::BedOptions o;
        o.topology = c.topo;
        o.kind = c.kind;
        o.ranks = c.ranks;
        o.rows = c.rows;
        o.cols = c.cols;
        o.message_bytes = 128;
        o.peer_slots = c.slots;
        o.tx_slots = c.slots;
        o.rx_slots = c.rx;
        o.initial_counter = 0xFFFFFFFFu - 5;  // every counter passes 2^32 after 6 steps
        for (uint64_t seed : {uint64_t(c.slots * 13 + 1), uint64_t(0xBADC0DEu + c.rx)}) {
            INFO(c.topo << " slots " << c.slots << " rx " << c.rx << " seed " << seed);
            uint32_t wrapped = 0;
            CHECK(streams(o, 9, seed, &wrapped) == "");
            CHECK(wrapped > 0);  // the traffic did cross the wrap on the links
        }
    }
}

TEST_CASE("chip fabric mutation: a plain unsigned counter compare stalls at the wrap", "[fabric][chip][wrap][mutation]") {
    cf::BedOptions o;
    o.topology = "ring";
    o.kind = fh::FabricKind::ring_1d;
    o.ranks = 4;
    o.message_bytes = 64;
    o.peer_slots = 3;
    o.tx_slots = 3;
    o.rx_slots = 5;
    SECTION("from 0 the mutated router still works (the compare is only wrong at the wrap)") {
        CHECK(streams<WrapRouter>(o, 6, 3) == "");
    }
    SECTION("across the wrap it stalls, with a router waiting for link credits the stuck receiver never returns") {
        o.initial_counter = 0xFFFFFFFFu - 2;
        const std::string r = streams<WrapRouter>(o, 6, 3);
        INFO(r);
        CHECK(r.find("WAITS for link credits") != std::string::npos);
    }
}
