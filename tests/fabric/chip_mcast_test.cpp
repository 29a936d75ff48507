// The chip fabric's NoC multicast write command (tt-metal's NOC_MULTICAST_WRITE): a worker sends
// one packet; the router that delivers it on the destination chip writes the payload to the same
// L1 address of every Tensix core of a rectangle there. Bit-exact on remote chips 1 and 3 hops
// away (1D ring and 2D mesh), on dirty L1 with adversarial schedules and the race detector on;
// the message sent after a multicast on the same route finds it landed; named errors for
// rectangles outside the chip or with non-Tensix cores.
#include <catch2/catch.hpp>

#include <emulation/fabric/fabric.hpp>

#include <string>
#include <vector>

namespace cf = kccl::emu::fabric;
namespace fc = kccl::fabric;
namespace fh = kccl::fabric::host;
namespace emu = kccl::emu;
using kccl::hal::NocRect;

namespace {

void throw_handler(const char*, const char* msg, const char*, int) { throw emu::EmulationError(msg); }

uint8_t pat(uint32_t target, uint32_t k, uint32_t i) { return uint8_t((target * 37u) ^ (k * 101u) ^ (i * 13u) ^ (i >> 8)); }

const NocRect rects[] = {{0, 0, 2, 2}, {1, 1, 2, 2}, {2, 0, 2, 2}, {0, 1, 1, 1}};  // 3 x 3 Tensix grid; the worker is (0, 0)
constexpr uint32_t nrects = 4, bytes = 200, stride = 256;

/// Rank 0 multicasts to rectangles on the chips of `targets`, then sends each target a message;
/// a target whose worker is in a rectangle checks it when the message arrives. The host then
/// checks every core of every rectangle, and that cores outside did not get the data.
std::string mcast(cf::BedOptions o, const std::vector<uint32_t>& targets, uint64_t seed) {
    kccl::set_assert_handler(&throw_handler);
    o.grid_w = 3;
    o.grid_h = 3;
    o.message_bytes = 256;
    o.buffer_bytes = nrects * stride;
    cf::Bed bed(o);
    bed.add([targets](auto& hal, auto& link, const cf::RankBuffers& b) -> uint64_t {
        uint64_t bad = 0;
        const uint32_t me = link.rank();
        if (me == 0) {
            for (uint32_t t : targets)
                for (uint32_t k = 0; k < nrects; ++k) {
                    uint8_t* src = reinterpret_cast<uint8_t*>(hal.l1_ptr(b.input_l1, bytes));
                    for (uint32_t i = 0; i < bytes; ++i) src[i] = pat(t, k, i);
                    link.multicast_write(t - 1, b.input_l1, bytes, rects[k], b.output_l1 + k * stride);
                }
            for (uint32_t t : targets) link.send(t - 1, b.input_l1, 16);  // after the multicasts, same route
        } else {
            bool target = false;
            for (uint32_t t : targets) target = target || t == me;
            if (target) {
                const kccl::coll::View v = link.recv(0);  // rank 0 is direction 0
                for (uint32_t k = 0; k < nrects; ++k) {
                    if (!rects[k].contains(0, 0)) continue;
                    const uint8_t* d = reinterpret_cast<const uint8_t*>(hal.l1_ptr(b.output_l1 + k * stride, bytes));
                    for (uint32_t i = 0; i < bytes; ++i) bad += d[i] != pat(me, k, i);
                }
                link.release(v);
            }
        }
        link.quiesce();
        return bad;
    });
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(5000);
    ro.adversary.enabled = true;
    ro.adversary.seed = seed;
    ro.dirty_l1 = emu::RunOptions::DirtyL1::on;
    ro.race = emu::RunOptions::RaceCheck::on;
    const emu::RunReport rep = bed.run(ro);
    if (!rep.ok()) return rep.summary();
    for (uint32_t r = 0; r < bed.ranks(); ++r)
        if (rep.at(bed.worker(r)).value != 0)
            return "rank " + std::to_string(r) + " saw " + std::to_string(rep.at(bed.worker(r)).value) + " wrong bytes on arrival";
    const uint32_t out = bed.buffers(0).output_l1;
    for (uint32_t t : targets) {
        const uint32_t chip = bed.plan.spec.chips[t];
        for (uint32_t k = 0; k < nrects; ++k)
            for (uint32_t y = 0; y < 3; ++y)
                for (uint32_t x = 0; x < 3; ++x) {
                    const uint8_t* d = bed.cluster->l1({chip, x, y}).data() + out + k * stride;
                    uint32_t wrong = 0;
                    for (uint32_t i = 0; i < bytes; ++i) wrong += d[i] != pat(t, k, i);
                    const bool in = rects[k].contains(x, y);
                    if (in && wrong)
                        return "rank " + std::to_string(t) + " core (" + std::to_string(x) + "," + std::to_string(y) + ") rectangle " +
                               std::to_string(k) + ": " + std::to_string(wrong) + " wrong bytes";
                    if (!in && wrong < bytes / 2)
                        return "rank " + std::to_string(t) + " core (" + std::to_string(x) + "," + std::to_string(y) +
                               ") outside rectangle " + std::to_string(k) + " holds its data";
                }
    }
    return "";
}

}  // namespace

TEST_CASE("chip fabric: NoC multicast write to rectangles on chips 1 and 3 hops away, bit-exact", "[fabric][chip][mcast]") {
    SECTION("1D ring of 6 chips") {
        cf::BedOptions o;
        o.topology = "ring";
        o.kind = fh::FabricKind::ring_1d;
        o.ranks = 6;
        for (uint64_t seed : {uint64_t(5), uint64_t(0xFEEDu), uint64_t(0xBAD5EEDu)}) {
            INFO("seed " << seed);
            CHECK(mcast(o, {1, 3}, seed) == "");
        }
    }
    SECTION("2D mesh (T3000 as 2 x 4)") {
        cf::BedOptions o;
        o.topology = "t3000";
        o.kind = fh::FabricKind::mesh_2d;
        for (uint64_t seed : {uint64_t(7), uint64_t(0xC0FFEEu)}) {
            INFO("seed " << seed);
            CHECK(mcast(o, {1, 3, 5}, seed) == "");  // 1, 3 and 2 hops
        }
    }
}

TEST_CASE("chip fabric: NoC multicast rectangles outside the chip or with non-Tensix cores are named errors", "[fabric][chip][mcast]") {
    cf::BedOptions o;
    o.topology = "ring";
    o.kind = fh::FabricKind::ring_1d;
    o.ranks = 4;
    o.grid_w = 3;
    o.grid_h = 3;
    cf::Bed bed(o);
    auto err = [&](NocRect r) {
        try {
            fh::check_mcast_rect(bed.plan, 1, r);
        } catch (const fh::FabricError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(err({0, 0, 2, 2}) == "accepted");
    CHECK_THAT(err({2, 0, 1, 0}), Catch::Contains("empty or inverted"));
    CHECK_THAT(err({0, 0, 40, 2}), Catch::Contains("rectangle outside the chip"));
    CHECK_THAT(err({0, 0, 1, 3}), Catch::Contains("holds non-Tensix cores"));  // row 3: the Ethernet cores
    CHECK_THAT(err({0, 0, 1, 1}), !Catch::Contains("non-Tensix"));

    SECTION("on the device: FabricLink::multicast_write") {
        kccl::set_assert_handler(&throw_handler);
        bed.add([](auto&, auto& link, const cf::RankBuffers& b) -> uint64_t {
            if (link.rank() == 0) link.multicast_write(0, b.input_l1, 16, NocRect{0, 0, 1, 3}, b.output_l1);
            link.quiesce();
            return 0;
        });
        emu::RunOptions ro;
        ro.watchdog = std::chrono::milliseconds(3000);
        const emu::RunReport rep = bed.run(ro);
        CHECK_FALSE(rep.ok());
        CHECK_THAT(rep.summary(), Catch::Contains("multicast_write") && Catch::Contains("not inside the chip's Tensix cores"));
    }
}
