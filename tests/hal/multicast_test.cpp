// NoC multicast (include/hal/contract.hpp: MULTICAST, M1-M3) on the emulation: bit-exact delivery
// to every core of rectangles of several shapes on dirty L1, in every delivery mode; the
// data-then-flag broadcast without a flush between them caught by the adversary (the stale data
// a receiver saw) and by the race detector (naming both operations), the flushed version clean;
// named errors for bad rectangles; the timed model's one-injection cost.
#include "emulation/util.hpp"

#include <hal/contract.hpp>

#include <string>
#include <vector>

using namespace kccl::test;
namespace topo = kccl::emu::topology;
using kccl::hal::NocRect;

namespace {

/// 6 x 5 Tensix workers (room for rectangles of several shapes and a sender outside them).
kccl::emu::ChipSpec grid_chip() {
    kccl::emu::ChipSpec c = small_chip();
    c.grid_w = 6;
    c.grid_h = 5;
    return c;
}

constexpr uint32_t kSrc = 0x2000, kDst = 0x6000, kFlag = 0x100, kAck = 0x104, kOne = 0x108;

uint32_t pattern(uint32_t i) { return 0x5A000000u ^ (i * 0x9E3779B9u); }

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::string failures(const RunReport& r) {
    std::string s;
    for (const auto& c : r.cores)
        if (c.status != kccl::emu::CoreStatus::ok) s += c.message + "\n";
    for (const auto& x : r.races) s += x + "\n";
    return s;
}

std::vector<RunOptions> every_mode(kccl::emu::TimingModel* model) {
    RunOptions plain = normal();
    plain.dirty_l1 = RunOptions::DirtyL1::on;
    RunOptions threads = plain;
    threads.engine = kccl::emu::Engine::threads;
    RunOptions timed = plain;
    timed.timing = model;
    RunOptions raced = plain;
    raced.race = RunOptions::RaceCheck::on;
    return {plain, threads, timed, raced, adversarial(3), adversarial(11)};
}

/// The sender at `from` multicasts `bytes` to rect (loopback if it is inside), then a barrier;
/// the host then checks every core of the chip: the rectangle's cores hold the pattern exactly,
/// no other core does.
void check_delivery(NocRect rect, CoreCoord from, uint32_t bytes, const RunOptions& o) {
    Cluster c(topo::single_chip(grid_chip()));
    const bool loopback = rect.contains(from.x, from.y);
    Launcher L(c);
    L.add(from, [&](auto& h) {
        for (uint32_t i = 0; i < bytes / 4; ++i) put(h, kSrc + 4 * i, pattern(i));
        kccl::hal::note_write(h, kSrc, bytes);
        h.noc_write_mcast(kSrc, rect, kDst, bytes, rect.cores(), loopback);
        h.noc_write_barrier();
    });
    const RunReport rep = L.run(o);
    KCCL_REQUIRE_OK(rep);
    std::vector<uint8_t> got(bytes);
    for (uint32_t y = 0; y < grid_chip().grid_h; ++y)
        for (uint32_t x = 0; x < grid_chip().grid_w; ++x) {
            c.read(c.chip(0).worker(x, y), kDst, got.data(), bytes);
            uint32_t same = 0;
            for (uint32_t i = 0; i < bytes / 4; ++i) {
                uint32_t v;
                std::memcpy(&v, got.data() + 4 * i, 4);
                same += v == pattern(i);
            }
            INFO("core (" << x << "," << y << ") rect (" << rect.x0 << "," << rect.y0 << ")..(" << rect.x1 << ","
                          << rect.y1 << ") " << bytes << " bytes");
            if (rect.contains(x, y)) REQUIRE(same == bytes / 4);
            else REQUIRE(same < bytes / 4);  // dirty L1 garbage, not the pattern
        }
}

}  // namespace

TEST_CASE("multicast: bit-exact delivery to every core of rectangles of several shapes on dirty L1",
          "[hal][multicast]") {
    auto model = kccl::emu::wormhole_model();
    struct Shape {
        NocRect rect;
        CoreCoord from;
        uint32_t bytes;
    };
    const Shape shapes[] = {
        {{2, 2, 2, 2}, {0, 0, 0}, 64},     // one core
        {{0, 1, 5, 1}, {0, 0, 0}, 1024},   // a full row
        {{3, 0, 3, 4}, {0, 0, 0}, 260},    // a full column, bytes not a multiple of 16
        {{1, 1, 4, 3}, {0, 4, 0}, 4096},   // 4 x 3 block, sender (4,0) outside
        {{0, 0, 5, 4}, {0, 2, 3}, 2048},   // the whole grid, sender inside (loopback)
        {{1, 2, 2, 4}, {0, 1, 2}, 512},    // 2 x 3, sender in its corner (loopback)
    };
    for (const RunOptions& o : every_mode(model.get()))
        for (const Shape& s : shapes) check_delivery(s.rect, s.from, s.bytes, o);
}
