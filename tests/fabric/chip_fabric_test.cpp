// The chip fabric (include/fabric/) on the emulation: every rank sends messages to every
// other rank through the routers (multi-hop on lines, rings and meshes), contents and order
// checked; dirty L1 and adversarial schedules.
#include <catch2/catch.hpp>

#include <emulation/fabric/fabric.hpp>

#include "chip_streams.hpp"

#include <cstring>
#include <string>

namespace cf = kccl::emu::fabric;
namespace fc = kccl::fabric;
namespace fh = kccl::fabric::host;
namespace emu = kccl::emu;

namespace {

/// Every rank sends `msgs` messages of varying length to every other rank (interleaving non-blocking
/// sends and receives) and checks what it receives. Returns "" or what failed.
std::string all_to_all_messages(cf::BedOptions o, uint32_t msgs, bool adversarial, uint64_t seed = 1) {
    cf::Bed bed(o);
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(10000);
    if (adversarial) {
        ro.adversary.enabled = true;
        ro.adversary.seed = seed;
    }
    return kccl::test::chip::run_streams(bed, msgs, ro);
}

}  // namespace

TEST_CASE("chip fabric: every rank reaches every other rank over 1D lines and rings, in order", "[fabric][chip]") {
    for (auto [topo, kind, n] : {std::tuple{"line", fh::FabricKind::line_1d, 2u}, std::tuple{"line", fh::FabricKind::line_1d, 5u},
                                 std::tuple{"ring", fh::FabricKind::ring_1d, 2u}, std::tuple{"ring", fh::FabricKind::ring_1d, 6u}}) {
        cf::BedOptions o;
        o.topology = topo;
        o.kind = kind;
        o.ranks = n;
        o.message_bytes = 256;
        for (bool adv : {false, true}) {
            INFO(topo << " " << n << (adv ? " adversarial" : ""));
            CHECK(all_to_all_messages(o, 6, adv, n * 11 + 3) == "");
        }
    }
}

TEST_CASE("chip fabric: every rank reaches every other rank over a 2D mesh (T3000 as 2 x 4)", "[fabric][chip]") {
    cf::BedOptions o;
    o.topology = "t3000";
    o.kind = fh::FabricKind::mesh_2d;
    o.message_bytes = 256;
    for (bool adv : {false, true}) {
        INFO((adv ? "adversarial" : "fifo"));
        CHECK(all_to_all_messages(o, 5, adv, 77) == "");
    }
}
