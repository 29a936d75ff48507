// NoC multicast (include/hal/contract.hpp: MULTICAST, M1-M3) on the emulation: bit-exact delivery
// to every core of rectangles of several shapes on dirty L1, in every delivery mode; the
// data-then-flag broadcast without a flush between them caught by the adversary (the stale data
// a receiver saw) and by the race detector (naming both operations), the flushed version clean;
// named errors for bad rectangles; the timed model's one-injection cost.
#include "emulation/util.hpp"

#include <hal/contract.hpp>

#include <string>
#include <vector>
#include "sweep.hpp"

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
        kccl::hal::l1_store_fence(h, kSrc, bytes);  // N7: the multicast reads the stores next
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

// ---- the data-then-flag broadcast (M1) --------------------------------------------------------------
namespace {

constexpr uint32_t kBcastBytes = 512;
uint32_t stale(uint32_t i) { return 0xDEAD0000u | i; }

/// A sender outside a 4 x 3 rectangle broadcasts kBcastBytes by a data multicast, then a semaphore
/// multicast of 1 into every receiver's flag (with or without noc_writes_flushed() between them),
/// and waits for every receiver's acknowledgement. Each receiver waits for its flag, checks the
/// data and returns (number of wrong words << 32) | the first wrong word. The host initialises the
/// flags (P2) and fills every receiver's landing area with the previous round's data (stale(i)).
RunReport broadcast(bool flush, const RunOptions& o) {
    Cluster c(topo::single_chip(grid_chip()));
    host_zero(c, kFlag, 16);
    const NocRect rect{1, 1, 4, 3};
    const CoreCoord sender = c.chip(0).worker(0, 0);
    std::vector<uint32_t> old(kBcastBytes / 4);
    for (uint32_t i = 0; i < old.size(); ++i) old[i] = stale(i);
    for (uint32_t y = rect.y0; y <= rect.y1; ++y)
        for (uint32_t x = rect.x0; x <= rect.x1; ++x) c.write(c.chip(0).worker(x, y), kDst, old.data(), kBcastBytes);
    Launcher L(c);
    L.add(sender, [&](auto& h) {
        for (uint32_t i = 0; i < kBcastBytes / 4; ++i) put(h, kSrc + 4 * i, pattern(i));
        put(h, kOne, uint32_t(1));
        kccl::hal::note_write(h, kSrc, kBcastBytes);
        kccl::hal::note_write(h, kOne, 4);
        kccl::hal::l1_store_fence(h, kSrc, kBcastBytes);  // N7: both multicasts read stored bytes
        kccl::hal::l1_store_fence(h, kOne, 4);
        h.noc_write_mcast(kSrc, rect, kDst, kBcastBytes, rect.cores(), false);
        if (flush) h.noc_writes_flushed();
        h.sem_set_mcast(kOne, rect, kFlag, rect.cores(), false);
        h.sem_wait(kAck, rect.cores());
        h.noc_write_barrier();
    });
    for (uint32_t y = rect.y0; y <= rect.y1; ++y)
        for (uint32_t x = rect.x0; x <= rect.x1; ++x)
            L.add(c.chip(0).worker(x, y), [&](auto& h) -> uint64_t {
                h.sem_wait(kFlag, 1);
                kccl::hal::note_read(h, kDst, kBcastBytes);
                uint64_t wrong = 0, first = 0;
                for (uint32_t i = 0; i < kBcastBytes / 4; ++i) {
                    const uint32_t v = get<uint32_t>(h, kDst + 4 * i);
                    if (v != pattern(i) && wrong++ == 0) first = v;
                }
                h.sem_inc(h.noc_addr(sender.x, sender.y, kAck), 1);
                h.noc_write_barrier();
                return wrong << 32 | first;
            });
    return L.run(o);
}

}  // namespace

TEST_CASE("multicast mutation: data multicast then flag multicast without a flush; a receiver reads the stale "
          "data under the adversary within 100 seeds",
          "[hal][multicast][mutation]") {
    uint64_t caught_at = 0;
    for (uint64_t seed = 1; seed <= 100 && !caught_at; ++seed) {
        RunOptions o = adversarial(seed);
        o.race = RunOptions::RaceCheck::off;  // the adversary alone: what the receivers saw
        const RunReport rep = broadcast(/*flush=*/false, o);
        for (const auto& core : rep.cores) {
            REQUIRE(core.status == kccl::emu::CoreStatus::ok);
            if (core.value == 0) continue;
            // The flag arrived before (all of) the data: what the receiver saw instead of the
            // broadcast is the previous round's data, word for word.
            const uint32_t first = uint32_t(core.value);
            INFO("seed " << seed << ": " << (core.value >> 32) << " wrong word(s), first " << std::hex << first);
            REQUIRE((first & 0xFFFF0000u) == 0xDEAD0000u);
            caught_at = seed;
        }
    }
    INFO("caught at seed " << caught_at);
    REQUIRE(caught_at != 0);
}

TEST_CASE("multicast mutation: the race detector reports the unflushed broadcast on the first run, naming the "
          "data multicast and the receiver's read",
          "[hal][multicast][mutation][race]") {
    RunOptions plain = normal();
    plain.race = RunOptions::RaceCheck::on;
    RunOptions threads = plain;
    threads.engine = kccl::emu::Engine::threads;
    RunOptions adv = adversarial(5);
    adv.race = RunOptions::RaceCheck::on;
    for (const RunOptions& o : {plain, threads, adv}) {
        const RunReport rep = broadcast(/*flush=*/false, o);
        INFO(rep.summary());
        REQUIRE_FALSE(rep.races.empty());
        const std::string s = failures(rep);
        CHECK(has(s, "note_read (a load through l1_ptr) at multicast_test.cpp"));
        CHECK(has(s, "last written by chip 0 worker (0,0) (noc_write_mcast at multicast_test.cpp"));
        CHECK(has(s, "unless a noc_writes_flushed() or noc_write_barrier() separates them (M1)"));
    }
}

TEST_CASE("multicast: the broadcast with noc_writes_flushed() between data and flag is correct over 200 seeds "
          "and race-free",
          "[hal][multicast]") {
    auto model = kccl::emu::wormhole_model();
    for (const RunOptions& o : every_mode(model.get())) {
        const RunReport rep = broadcast(/*flush=*/true, o);
        KCCL_REQUIRE_OK(rep);
        for (const auto& core : rep.cores) REQUIRE(core.value == 0);
    }
    for (uint64_t seed = 1; seed <= kccl_tests::sweep_seeds(200); ++seed) {
        RunOptions o = adversarial(seed);
        if (seed % 4 == 0) o.race = RunOptions::RaceCheck::on;
        const RunReport rep = broadcast(/*flush=*/true, o);
        KCCL_REQUIRE_OK(rep);
        for (const auto& core : rep.cores) REQUIRE(core.value == 0);
    }
}

// ---- bad rectangles ---------------------------------------------------------------------------------
namespace {

/// Runs one multicast call on worker (from_x, from_y) of the 6 x 5 chip; returns the core's error.
template <class Call>
std::string error_of(uint32_t from_x, uint32_t from_y, Call call) {
    Cluster c(topo::single_chip(grid_chip()));
    Launcher L(c);
    L.add(c.chip(0).worker(from_x, from_y), [&](auto& h) { call(h); });
    const RunReport rep = L.run(normal());
    REQUIRE_FALSE(rep.ok());
    return failures(rep);
}

}  // namespace

TEST_CASE("multicast: bad rectangles and counts give named errors", "[hal][multicast]") {
    // Inverted (x1 < x0) and empty in y.
    std::string e = error_of(0, 0, [](auto& h) { h.noc_write_mcast(kSrc, NocRect{3, 1, 2, 1}, kDst, 64, 0, false); });
    CHECK(has(e, "noc_write_mcast: empty or inverted rectangle (3,1)..(2,1)"));
    e = error_of(0, 0, [](auto& h) { h.sem_inc_mcast(NocRect{1, 4, 2, 3}, kFlag, 1, 0); });
    CHECK(has(e, "sem_inc_mcast: empty or inverted rectangle (1,4)..(2,3)"));
    // Outside the grid: x = 6 has no core (the chip is 6 x 5 workers, Ethernet row y = 5 has 4 cores).
    e = error_of(0, 0, [](auto& h) { h.noc_write_mcast(kSrc, NocRect{4, 0, 6, 1}, kDst, 64, 6, false); });
    CHECK(has(e, "rectangle (4,0)..(6,1) has core (6,0) outside the NoC grid of chip 0; workers are (x<6, y<5)"));
    // Non-Tensix: the rectangle reaches the Ethernet row (y = 5).
    e = error_of(0, 0, [](auto& h) { h.sem_set_mcast(kOne, NocRect{1, 4, 2, 5}, kFlag, 4, false); });
    CHECK(has(e, "sem_set_mcast: rectangle (1,4)..(2,5) contains chip 0 eth 1 (1,5)"));
    CHECK(has(e, "which is not a Tensix (worker) core"));
    // Count mismatch, without and with loopback.
    e = error_of(0, 0, [](auto& h) { h.noc_write_mcast(kSrc, NocRect{1, 1, 2, 2}, kDst, 64, 3, false); });
    CHECK(has(e, "num_dests is 3 but the rectangle (1,1)..(2,2) holds 4 core(s); allowed: num_dests == the number"));
    e = error_of(1, 1, [](auto& h) { h.noc_write_mcast(kSrc, NocRect{1, 1, 2, 2}, kDst, 64, 3, true); });
    CHECK(has(e, "num_dests is 3 but the rectangle (1,1)..(2,2) holds 4 core(s), the sender included"));
    // The sender inside without loopback, outside with it; sem_inc_mcast has no loopback.
    e = error_of(1, 1, [](auto& h) { h.noc_write_mcast(kSrc, NocRect{1, 1, 2, 2}, kDst, 64, 4, false); });
    CHECK(has(e, "the sender chip 0 worker (1,1) is inside the rectangle (1,1)..(2,2) without loopback"));
    e = error_of(0, 0, [](auto& h) { h.sem_set_mcast(kOne, NocRect{1, 1, 2, 2}, kFlag, 4, true); });
    CHECK(has(e, "loopback multicast, but the sender chip 0 worker (0,0) is outside the rectangle (1,1)..(2,2)"));
    e = error_of(2, 2, [](auto& h) { h.sem_inc_mcast(NocRect{1, 1, 2, 2}, kFlag, 1, 4); });
    CHECK(has(e, "(sem_inc_mcast has no loopback form)"));
    // A loopback write whose source and destination overlap on the sender.
    e = error_of(1, 1, [](auto& h) { h.noc_write_mcast(kDst + 32, NocRect{1, 1, 2, 2}, kDst, 64, 4, true); });
    CHECK(has(e, "loopback write: the source [0x6020, 0x6060) and the destination [0x6000, 0x6040) overlap"));
    // Semaphore words must be 4-byte aligned; the range must fit every destination's L1.
    e = error_of(0, 0, [](auto& h) { h.sem_set_mcast(kOne, NocRect{1, 1, 2, 2}, kFlag + 2, 4, false); });
    CHECK(has(e, "sem_set_mcast: semaphore address 0x102 is not 4-byte aligned"));
    e = error_of(0, 0, [](auto& h) { h.noc_write_mcast(kSrc, NocRect{1, 1, 2, 2}, 0xFFF0, 64, 4, false); });
    CHECK(has(e, "range [0xfff0, 0x10030) on chip 0 worker (1,1) exceeds its memory of 65536 bytes"));
}

TEST_CASE("multicast: sem_inc_mcast adds at every core of the rectangle, concurrent senders are not lost",
          "[hal][multicast]") {
    auto model = kccl::emu::wormhole_model();
    for (const RunOptions& o : every_mode(model.get())) {
        Cluster c(topo::single_chip(grid_chip()));
        host_zero(c, kFlag, 16);
        const NocRect rect{2, 1, 4, 4};
        Launcher L(c);
        // Two senders outside the rectangle, three increments each.
        for (uint32_t sx : {0u, 5u})
            L.add(c.chip(0).worker(sx, 0), [&](auto& h) {
                for (uint32_t k = 0; k < 3; ++k) h.sem_inc_mcast(rect, kFlag, k + 1, rect.cores());
                h.noc_write_barrier();
            });
        for (uint32_t y = rect.y0; y <= rect.y1; ++y)
            for (uint32_t x = rect.x0; x <= rect.x1; ++x)
                L.add(c.chip(0).worker(x, y), [&](auto& h) { h.sem_wait(kFlag, 12); });
        KCCL_REQUIRE_OK(L.run(o));
    }
}

// ---- the timed model: one injection, arrivals by hop distance ---------------------------------------
TEST_CASE("multicast on the Wormhole model: one injection, each destination at its hop distance; cheaper than "
          "unicasts to the same cores",
          "[hal][multicast][timing]") {
    const kccl::emu::WormholeOptions w{};
    const NocRect rect{1, 0, 5, 4};  // 25 cores; the sender (0,0) is outside
    constexpr uint32_t bytes = 4096;
    auto run = [&](bool multicast) {
        auto model = kccl::emu::wormhole_model();
        Cluster c(topo::single_chip(grid_chip()));
        Launcher L(c);
        L.add(c.chip(0).worker(0, 0), [&](auto& h) {
            if (multicast) {
                h.noc_write_mcast(kSrc, rect, kDst, bytes, rect.cores(), false);
            } else {
                for (uint32_t y = rect.y0; y <= rect.y1; ++y)
                    for (uint32_t x = rect.x0; x <= rect.x1; ++x) h.noc_write(kSrc, h.noc_addr(x, y, kDst), bytes);
            }
            h.noc_write_barrier();
        });
        RunOptions o = normal();
        o.timing = model.get();
        const RunReport rep = L.run(o);
        KCCL_REQUIRE_OK(rep);
        return rep.cores[0].modelled_end;
    };
    // Expected, from the model's figures: issue cost, then the packet (bytes / 32 B per cycle)
    // injected once; the farthest core (5,4) is 9 hops away; its ejection ends one serialisation
    // after the head arrives; the barrier's issue cost comes before the wait.
    const uint64_t ser = bytes / w.noc_bytes_per_cycle;
    const uint64_t expect_cycles = w.cost_noc_write + w.noc_endpoint_cycles + 9 * w.noc_hop_cycles + ser;
    const auto mc = run(true), uc = run(false);
    CHECK(mc == expect_cycles * 1000);  // ps at 1 GHz
    // 25 unicasts serialise at the sender's injection port: at least 25 serialisations.
    CHECK(uc >= 25 * ser * 1000);
    CHECK(mc * 10 < uc);
}

// ---- the example broadcast kernel -----------------------------------------------------------------
#include "examples/mcast_broadcast/mcast_broadcast_kernels.hpp"

namespace {

/// Runs examples/mcast_broadcast on the 6 x 5 grid: root `root`, rectangle `rect`, `bytes` in
/// chunks of `chunk`; checks every receiver's buffer bit for bit (dirty L1 elsewhere).
void run_example(CoreCoord root, NocRect rect, uint32_t bytes, uint32_t chunk, const RunOptions& o) {
    Cluster c(topo::single_chip(grid_chip()));
    host_zero(c, kFlag, 4);
    std::vector<uint32_t> data(bytes / 4);
    for (uint32_t i = 0; i < data.size(); ++i) data[i] = pattern(i + 7);
    c.write(root, kDst, data.data(), bytes);
    const std::vector<uint32_t> args{root.x, root.y, rect.x0, rect.y0, rect.x1, rect.y1, kDst, bytes, chunk, kFlag, kOne};
    Launcher L(c);
    L.add(root, [](auto& h) { mcast_broadcast::broadcast(h); }, args);
    for (uint32_t y = rect.y0; y <= rect.y1; ++y)
        for (uint32_t x = rect.x0; x <= rect.x1; ++x)
            if (!(x == root.x && y == root.y)) L.add(c.chip(0).worker(x, y), [](auto& h) { mcast_broadcast::broadcast(h); }, args);
    KCCL_REQUIRE_OK(L.run(o));
    std::vector<uint32_t> got(data.size());
    for (uint32_t y = rect.y0; y <= rect.y1; ++y)
        for (uint32_t x = rect.x0; x <= rect.x1; ++x) {
            c.read(c.chip(0).worker(x, y), kDst, got.data(), bytes);
            INFO("core (" << x << "," << y << ")");
            REQUIRE(got == data);
        }
}

}  // namespace

TEST_CASE("examples/mcast_broadcast: chunked multicast broadcast, root outside or inside the rectangle, every mode",
          "[hal][multicast][examples]") {
    auto model = kccl::emu::wormhole_model();
    for (const RunOptions& o : every_mode(model.get())) {
        run_example({0, 0, 0}, NocRect{1, 0, 5, 4}, 4096, 1024, o);  // 5 x 5, root outside
        run_example({0, 2, 3}, NocRect{0, 0, 5, 4}, 3000, 512, o);   // the whole grid, root inside (loopback)
    }
    for (uint64_t seed = 20; seed < 60; ++seed) run_example({0, 0, 0}, NocRect{1, 1, 3, 4}, 2048, 256, adversarial(seed));
}

TEST_CASE("multicast mutation: overwriting the flag's source word before the next flush is reported (N3)",
          "[hal][multicast][mutation][race]") {
    Cluster c(topo::single_chip(grid_chip()));
    host_zero(c, kFlag, 4);
    const NocRect rect{1, 1, 2, 2};
    Launcher L(c);
    L.add(c.chip(0).worker(0, 0), [&](auto& h) {
        put(h, kOne, uint32_t(1));
        kccl::hal::note_write(h, kOne, 4);
        kccl::hal::l1_store_fence(h, kOne, 4);  // N7 (the bug shown here is N3)
        h.sem_set_mcast(kOne, rect, kFlag, rect.cores(), false);
        put(h, kOne, uint32_t(2));  // the NoC may not have read the word yet
        kccl::hal::note_write(h, kOne, 4);
        h.noc_write_barrier();
    });
    RunOptions o = normal();
    o.race = RunOptions::RaceCheck::on;
    const RunReport rep = L.run(o);
    REQUIRE_FALSE(rep.ok());
    const std::string s = failures(rep);
    CHECK(has(s, "source overwritten in flight: chip 0 worker (0,0) note_write (a store through l1_ptr) at multicast_test.cpp"));
    CHECK(has(s, "the source of its sem_set_mcast at multicast_test.cpp"));
}
