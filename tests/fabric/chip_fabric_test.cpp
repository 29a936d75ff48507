// The chip fabric (include/fabric/chip/) on the emulation: every rank sends messages to every
// other rank through the routers (multi-hop on lines, rings and meshes), contents and order
// checked; dirty L1 and adversarial schedules.
#include <catch2/catch.hpp>

#include <emulation/chip_fabric.hpp>

#include <cstring>
#include <string>

namespace cf = kccl::emu::chip_fabric;
namespace fc = kccl::fabric::chip;
namespace fh = kccl::fabric::chip::host;
namespace emu = kccl::emu;

namespace {

void throw_handler(const char*, const char* msg, const char*, int) { throw emu::EmulationError(msg); }

uint32_t word(uint32_t src, uint32_t dst, uint32_t msg, uint32_t i) { return (src * 7919u) ^ (dst << 20) ^ (msg << 12) ^ i; }

/// Every rank sends `msgs` messages of varying length to every other rank (interleaving non-blocking
/// sends and receives) and checks what it receives. Returns "" or what failed.
std::string all_to_all_messages(cf::BedOptions o, uint32_t msgs, bool adversarial, uint64_t seed = 1) {
    kccl::set_assert_handler(&throw_handler);
    cf::Bed bed(o);
    const uint32_t maxb = o.message_bytes;
    bed.add([msgs, maxb](auto& hal, auto& link, const cf::RankBuffers& b) -> uint64_t {
        const uint32_t p = link.ranks(), me = link.rank(), dirs = link.directions();
        auto len = [&](uint32_t src, uint32_t dst, uint32_t m) { return ((src + 3 * dst + 5 * m) * 52u) % (maxb + 1) & ~3u; };
        uint32_t sent[64] = {}, got[64] = {};
        uint64_t bad = 0;
        for (bool busy = true; busy;) {
            busy = false;
            bool moved = false;
            for (uint32_t d = 0; d < dirs; ++d) {
                const uint32_t q = link.peer(d);
                if (sent[d] < msgs) {
                    busy = true;
                    const uint32_t n = len(me, q, sent[d]);
                    uint32_t* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(b.input_l1, maxb + 4));
                    for (uint32_t i = 0; i < n / 4; ++i) w[i] = word(me, q, sent[d], i);
                    if (link.try_send(d, b.input_l1, n)) {
                        ++sent[d];
                        moved = true;
                    }
                }
                if (got[d] < msgs) {
                    busy = true;
                    kccl::coll::View v;
                    if (link.try_recv(d, v)) {
                        const uint32_t n = len(q, me, got[d]);
                        if (v.bytes != n) ++bad;
                        const uint32_t* w = reinterpret_cast<const uint32_t*>(hal.l1_ptr(v.l1, v.bytes + 4));
                        for (uint32_t i = 0; i < v.bytes / 4 && i < n / 4; ++i) bad += w[i] != word(q, me, got[d], i);
                        link.release(v);
                        ++got[d];
                        moved = true;
                    }
                }
            }
            if (busy && !moved) hal.idle();
        }
        (void)p;
        link.quiesce();
        return bad;
    });
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(10000);
    if (adversarial) {
        ro.adversary.enabled = true;
        ro.adversary.seed = seed;
    }
    const emu::RunReport rep = bed.run(ro);
    if (!rep.ok()) return rep.summary();
    for (uint32_t r = 0; r < bed.ranks(); ++r)
        if (rep.at(bed.worker(r)).value != 0) return "rank " + std::to_string(r) + ": " + std::to_string(rep.at(bed.worker(r)).value) + " bad words";
    return "";
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
