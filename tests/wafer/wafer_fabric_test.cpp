// The routed PE fabric on the emulation: the thesis's model's basic operations cycle-exactly,
// parking at switch positions, and the errors it names.
#include <catch2/catch.hpp>

#include <emulation/wafer/wafer.hpp>
#include <wafer/host/layout.hpp>
#include <wafer/program.hpp>

#include <cstring>

using namespace kccl;
using kccl::wafer::host::Coord;
using kccl::Dir;
using kccl::wafer::host::DirSet;
using kccl::wafer::host::Grid;
using kccl::emu::wafer::Fabric;
using kccl::emu::wafer::WaferError;
using kccl::emu::wafer::Pe;

namespace {

// A 1 x P row with the kernel `body(pe, i)` on chosen PEs.
Grid row(uint32_t p) { return Grid(kccl::wafer::host::wse2(), p, 1); }

uint32_t* words(Pe& pe, uint32_t n) { return pe.ptr<uint32_t>(0, n); }

}  // namespace

TEST_CASE("fabric: one message costs T_message(P,B) = 2 T_R + P + B", "[wafer]") {
    // Derivation (T_R = 2): wavelet k is issued in cycle k, reaches the source's router at k+1+T_R,
    // crosses P-1 hops, the off-ramp (T_R) and is stored in one cycle: k + 2 T_R + P + 1; the last
    // (k = B-1) is stored at 2 T_R + P + B (thesis, Corollary 3.4).
    for (uint32_t P : {2u, 5u, 64u})
        for (uint32_t B : {1u, 7u, 100u}) {
            Grid g = row(P);
            g.path(0, Coord{P - 1, 0}, Coord{0, 0});
            Fabric f(g);
            Pe& src = f.launch({P - 1, 0}, {}, [B](Pe& pe) {
                for (uint32_t k = 0; k < B; ++k) words(pe, B)[k] = 1000 + k;
                wafer::send(pe, wafer::Route{0}, words(pe, B), B);
            }, 4 * B);
            (void)src;
            Pe& dst = f.launch({0, 0}, {}, [B](Pe& pe) { wafer::recv(pe, wafer::Route{0}, words(pe, B), B); }, 4 * B);
            const auto r = f.run();
            INFO("P=" << P << " B=" << B);
            CHECK(r.cycles == 2 * 2 + P + B);
            for (uint32_t k = 0; k < B; ++k) CHECK(dst.ptr<uint32_t>(0, B)[k] == 1000 + k);
        }
}

TEST_CASE("fabric: a relayed chain reduce runs at 1 cycle per element: T_chain = 2(P-1)(T_R+1) + B", "[wafer]") {
    // Derivation: the chain is T_visit(P, B, P-2) (thesis, Lemma 5.2): each of the P-2 relaying PEs
    // adds the off-ramp, one cycle and the on-ramp (2 T_R + 1) to T_message(P, B), so
    // 2 T_R + P + B + (P-2)(2 T_R + 1) = 2 (P-1)(T_R + 1) + B. Colors alternate (PE i sends on i % 2).
    for (uint32_t P : {2u, 3u, 8u, 33u})
        for (uint32_t B : {1u, 16u, 300u}) {
            Grid g = row(P);
            for (uint32_t i = 1; i < P; ++i) g.path(i % 2, Coord{i, 0}, Coord{i - 1, 0});
            Fabric f(g);
            for (uint32_t i = 0; i < P; ++i)
                f.launch({i, 0}, {}, [i, P, B](Pe& pe) {
                    int32_t* v = pe.ptr<int32_t>(0, B);
                    for (uint32_t k = 0; k < B; ++k) v[k] = int32_t(i * 7 + k);
                    if (i == P - 1) wafer::send(pe, wafer::Route{i % 2}, v, B);
                    else if (i == 0) wafer::recv(pe, wafer::Route{1}, v, B, kccl::coll::RedOp::sum);
                    else wafer::relay(pe, wafer::Route{(i + 1) % 2}, wafer::Route{i % 2}, v, B, kccl::coll::RedOp::sum);
                }, 4 * B);
            const auto r = f.run();
            INFO("P=" << P << " B=" << B);
            CHECK(r.cycles == 2 * (P - 1) * (2 + 1) + B);
            for (uint32_t k = 0; k < B; ++k) CHECK(f.pe({0, 0})->ptr<int32_t>(0, B)[k] == int32_t(7 * P * (P - 1) / 2 + P * k));
        }
}

TEST_CASE("fabric: a 1D broadcast by multicast costs T_message(P,B)", "[wafer]") {
    // Thesis, Lemma 4.1: the root's stream is copied to every PE on the way at no cost; the
    // farthest PE stores the last element at 2 T_R + P + B.
    const uint32_t P = 16, B = 40;
    Grid g = row(P);
    g.line_multicast(3, Coord{P - 1, 0}, Coord{0, 0});
    Fabric f(g);
    for (uint32_t i = 0; i < P; ++i)
        f.launch({i, 0}, {}, [i, P](Pe& pe) {
            float* v = pe.ptr<float>(0, B);
            if (i == P - 1) {
                for (uint32_t k = 0; k < B; ++k) v[k] = float(k) * 0.5f;
                wafer::send(pe, wafer::Route{3}, v, B);
            } else {
                wafer::recv(pe, wafer::Route{3}, v, B);
            }
        }, 4 * B);
    const auto r = f.run();
    CHECK(r.cycles == 2 * 2 + P + B);
    for (uint32_t i = 0; i + 1 < P; ++i) {
        // PE i is P-1-i hops away: it stores its last element at 2 T_R + (P-i) + B.
        for (uint32_t k = 0; k < B; ++k) CHECK(f.pe({i, 0})->ptr<float>(0, B)[k] == float(k) * 0.5f);
    }
}

TEST_CASE("fabric: the thesis's 4-PE tree on one color: a stream parks at a switch until the advance", "[wafer]") {
    // One color, westwards. PE 3 sends to PE 2; PE 2 relays it (adding its own) to PE 0 through
    // router 1; PE 1 sends to PE 0 first. Router 1 has two positions: RAMP -> WEST (PE 1's own
    // send), then EAST -> WEST (PE 2's stream passes); PE 1's advance moves it on. Router 2 has
    // EAST -> RAMP (receive PE 3), then RAMP -> WEST (relay out); PE 3's advance moves it on.
    // Hand derivation (T_R = 2), wavelet k = 0..B-1:
    //   PE 3 issues k in cycle k: router 3 at k+3, router 2 at k+4, PE 2's processor at k+6. Its
    //   advance passes router 2 right after its last wavelet (B+3), so router 2 takes RAMP from B+4.
    //   PE 2 relays k in cycle k+6: at router 2 at k+9, passing it at max(k+9, B+4+k).
    //   PE 1: its last wavelet passes router 1 at B+2; its advance lets EAST through from B+3.
    //   PE 2's wavelet k then passes router 1 at max(k+10, B+5+k), reaches PE 0's processor 3
    //   cycles later and is stored 1 cycle after that, once PE 0 has stored PE 1's B wavelets
    //   (k+7, the last at B+6).
    // B = 20: stored at k+29, the last at 48 (the relay waited at router 2 for PE 3's advance:
    //   sending and receiving on one color costs this; the tree pattern uses a second color there).
    // B = 1: router 1 at 10, stored at 14 = T_tree(4, 1) of the thesis (Corollary 5.5: 5*2 + 3 + 1).
    for (auto [B, expect] : {std::pair<uint32_t, uint64_t>{20, 48}, {1, 14}}) {
        Grid g = row(4);
        g.add_position({3, 0}, 0, Dir::ramp, Dir::W);
        g.add_position({2, 0}, 0, Dir::E, Dir::ramp);
        g.add_position({2, 0}, 0, Dir::ramp, Dir::W);
        g.add_position({1, 0}, 0, Dir::ramp, Dir::W);
        g.add_position({1, 0}, 0, Dir::E, Dir::W);
        g.add_position({0, 0}, 0, Dir::E, Dir::ramp);
        Fabric f(g);
        const wafer::Route c{0};
        auto fill = [B](Pe& pe, uint32_t base) {
            for (uint32_t k = 0; k < B; ++k) pe.ptr<uint32_t>(0, B)[k] = base + k;
            return pe.ptr<uint32_t>(0, B);
        };
        f.launch({3, 0}, {}, [&, c](Pe& pe) {
            wafer::send(pe, c, fill(pe, 3000), B);
            wafer::advance(pe, c);
        }, 4 * B);
        f.launch({2, 0}, {}, [&, c](Pe& pe) { wafer::relay(pe, c, c, fill(pe, 2000), B, kccl::coll::RedOp::sum); }, 4 * B);
        f.launch({1, 0}, {}, [&, c](Pe& pe) {
            wafer::send(pe, c, fill(pe, 1000), B);
            wafer::advance(pe, c);
        }, 4 * B);
        f.launch({0, 0}, {}, [&, c](Pe& pe) {
            uint32_t* v = fill(pe, 0);
            wafer::recv(pe, c, v, B, kccl::coll::RedOp::sum);
            wafer::recv(pe, c, v, B, kccl::coll::RedOp::sum);
        }, 4 * B);
        const auto r = f.run();
        INFO("B=" << B);
        CHECK(r.cycles == expect);
        for (uint32_t k = 0; k < B; ++k) CHECK(f.pe({0, 0})->ptr<uint32_t>(0, B)[k] == 6000 + 4 * k);
    }
}

TEST_CASE("fabric: a deadlock names the PEs, the colors and the parked streams", "[wafer]") {
    // PE 1's router never leaves RAMP -> WEST (nobody advances it): PE 2's stream parks there and
    // PE 0 waits for it forever.
    Grid g = row(3);
    g.add_position({2, 0}, 5, Dir::ramp, Dir::W);
    g.add_position({1, 0}, 5, Dir::ramp, Dir::W);
    g.add_position({1, 0}, 5, Dir::E, Dir::W);
    g.add_position({0, 0}, 5, Dir::E, Dir::ramp);
    Fabric f(g);
    f.launch({2, 0}, {}, [](Pe& pe) { wafer::send(pe, wafer::Route{5}, words(pe, 4), 4); }, 16);
    f.launch({0, 0}, {}, [](Pe& pe) { wafer::recv(pe, wafer::Route{5}, words(pe, 4), 4); }, 16);
    CHECK_THROWS_WITH(f.run(), Catch::Contains("deadlock") && Catch::Contains("PE (0,0) blocked in recv on color 5") &&
                                   Catch::Contains("needs 4 wavelets, has 0") &&
                                   Catch::Contains("stream from PE (2,0) (4 wavelets) parked at router (1,0) color 5: it arrives from EAST, position 0 accepts {RAMP}"));
}

TEST_CASE("fabric: two inputs overlapping on one color at one router is reported with the PE, color and cycle", "[wafer]") {
    // Color 2 merges RAMP and EAST at router 1 (allowed by allow_merge only if the streams never
    // overlap). PE 1 and PE 2 both send 4 wavelets at cycle 0: PE 1's reach router 1 at 3..6,
    // PE 2's at 4..7: they overlap from cycle 4.
    Grid g = row(3);
    g.allow_merge(2);
    g.add_position({2, 0}, 2, Dir::ramp, Dir::W);
    g.add_position({1, 0}, 2, DirSet{Dir::ramp, Dir::E}, Dir::W);
    g.add_position({0, 0}, 2, Dir::E, Dir::ramp);
    Fabric f(g);
    f.launch({2, 0}, {}, [](Pe& pe) { wafer::send(pe, wafer::Route{2}, words(pe, 4), 4); }, 16);
    f.launch({1, 0}, {}, [](Pe& pe) { wafer::send(pe, wafer::Route{2}, words(pe, 4), 4); }, 16);
    f.launch({0, 0}, {}, [](Pe& pe) { wafer::recv(pe, wafer::Route{2}, words(pe, 8), 8); }, 32);
    CHECK_THROWS_WITH(f.run(), Catch::Contains("two inputs overlap on color 2 at PE (1,0) at cycle 4"));
    // One wavelet each never overlaps (PE 1's at cycle 3, PE 2's at 4): the thesis's scalar reduce.
    Fabric ok(g);
    ok.launch({2, 0}, {}, [](Pe& pe) { wafer::send(pe, wafer::Route{2}, words(pe, 1), 1); }, 4);
    ok.launch({1, 0}, {}, [](Pe& pe) { wafer::send(pe, wafer::Route{2}, words(pe, 1), 1); }, 4);
    ok.launch({0, 0}, {}, [](Pe& pe) {
        pe.ptr<uint32_t>(0, 1)[0] = 0;
        wafer::recv(pe, wafer::Route{2}, words(pe, 1), 1, kccl::coll::RedOp::sum);
        wafer::recv(pe, wafer::Route{2}, pe.ptr<uint32_t>(4, 1), 1, wafer::kCopy);
    }, 8);
    // PE 1's wavelet reaches PE 0's processor at 6 (stored by 7), PE 2's at 7 (stored by 8): the
    // run ends at T_message(3, 1) = 2 T_R + 3 + 1. (PEs starting in one cycle issue in row-major
    // order, so PE 1's stream is queued first, as it arrives first.)
    CHECK(ok.run().cycles == 2 * 2 + 3 + 1);
}

TEST_CASE("fabric: data left in the fabric at the end is an error", "[wafer]") {
    Grid g = row(2);
    g.path(0, {1, 0}, {0, 0});
    Fabric f(g);
    f.launch({1, 0}, {}, [](Pe& pe) { wafer::send(pe, wafer::Route{0}, words(pe, 3), 3); }, 12);
    CHECK_THROWS_WITH(f.run(), Catch::Contains("3 wavelets delivered to PE (0,0) on color 0, which runs no kernel"));
    Fabric f2(g);
    f2.launch({1, 0}, {}, [](Pe& pe) { wafer::send(pe, wafer::Route{0}, words(pe, 3), 3); }, 12);
    f2.launch({0, 0}, {}, [](Pe& pe) { wafer::recv(pe, wafer::Route{0}, words(pe, 2), 2); }, 12);
    CHECK_THROWS_WITH(f2.run(), Catch::Contains("1 wavelets delivered to PE (0,0) on color 0 were never received"));
}

TEST_CASE("fabric: kernel mistakes are named with their PE", "[wafer]") {
    Grid g = row(2);
    Fabric f(g);
    f.launch({1, 0}, {7}, [](Pe& pe) { (void)pe.arg(1); });
    CHECK_THROWS_WITH(f.run(), Catch::Contains("PE (1,0): kernel argument 1 does not exist; this PE has 1"));
    Fabric f2(g);
    f2.launch({0, 0}, {}, [](Pe& pe) { (void)pe.mem(8, 16); }, 16);
    CHECK_THROWS_WITH(f2.run(), Catch::Contains("PE (0,0): memory [8, 24) is outside this PE's 16 bytes"));
    Fabric f3(g);
    f3.launch({0, 0}, {}, [](Pe& pe) { wafer::send(pe, wafer::Route{30}, words(pe, 1), 1); }, 4);
    CHECK_THROWS_WITH(f3.run(), Catch::Contains("route color 30 is not routable (WSE-2 has colors 0..23)"));
    // A reduction the PEs cannot do (coll::RedOp has more than the wafer's three) is named, never
    // run as a plain copy.
    Grid g4 = row(2);
    g4.path(0, {1, 0}, {0, 0});
    Fabric f4(g4);
    f4.launch({1, 0}, {}, [](Pe& pe) { wafer::send(pe, wafer::Route{0}, reinterpret_cast<float*>(words(pe, 2)), 2); }, 8);
    f4.launch({0, 0}, {}, [](Pe& pe) {
        wafer::recv(pe, wafer::Route{0}, reinterpret_cast<float*>(words(pe, 2)), 2, coll::RedOp::prod);
    }, 8);
    CHECK_THROWS_WITH(f4.run(), Catch::Contains("recv: combine prod on float is not one the wafer's PEs do (allowed: copy, sum, max, min"));
}

TEST_CASE("fabric grid: validation errors name what is wrong and what is allowed", "[wafer][grid]") {
    using kccl::wafer::host::wse2;
    Grid g(wse2(), 4, 3);
    CHECK_THROWS_WITH(g.add_position({0, 0}, 24, Dir::ramp, Dir::E), Catch::Contains("color 24 is not routable; WSE-2 has 24 routable colors (0..23): too many colors"));
    CHECK_THROWS_WITH(g.add_position({4, 0}, 0, Dir::ramp, Dir::E), Catch::Contains("PE (4,0) is outside the 4 x 3 grid (x < 4, y < 3)"));
    CHECK_THROWS_WITH(g.add_position({3, 0}, 0, Dir::ramp, Dir::E), Catch::Contains("PE (3,0) color 0: tx EAST leaves the 4 x 3 grid"));
    CHECK_THROWS_WITH(g.add_position({1, 1}, 0, DirSet{Dir::E, Dir::W}, Dir::ramp), Catch::Contains("PE (1,1) color 0: two inputs {EAST, WEST} on one color in one position"));
    for (int i = 0; i < 4; ++i) g.add_position({1, 1}, 1, Dir::E, Dir::ramp);
    CHECK_THROWS_WITH(g.add_position({1, 1}, 1, Dir::E, Dir::ramp), Catch::Contains("a 5th switch position; WSE-2 allows 4 per color"));
    // A loop: (0,0) -> (1,0) -> (1,1) -> (0,1) -> (0,0) on color 3.
    Grid l(wse2(), 2, 2);
    l.add_position({0, 0}, 3, Dir::S, Dir::E);
    l.add_position({1, 0}, 3, Dir::W, Dir::S);
    l.add_position({1, 1}, 3, Dir::N, Dir::W);
    l.add_position({0, 1}, 3, Dir::E, Dir::N);
    CHECK_THROWS_WITH(l.validate(), Catch::Contains("the route on color 3 loops") && Catch::Contains("a route must be a path or a tree"));
    CHECK_THROWS_WITH(Fabric{l}, Catch::Contains("loops"));
    Grid m(wse2(), 2, 1);
    m.use_memory({1, 0}, 40000);
    m.use_memory({1, 0}, 10000);
    CHECK_THROWS_WITH(m.validate(), Catch::Contains("PE (1,0) uses 50000 bytes of memory; WSE-2 has 49152 per PE"));
    CHECK_THROWS_WITH(Grid(wse2(), 0, 3), Catch::Contains("at least 1 x 1"));
    CHECK_THROWS_WITH(g.path(0, {0, 0}, {2, 2}), Catch::Contains("along one row or column"));
    kccl::wafer::host::Profile noring = wse2();
    noring.ring_mode = false;
    Grid nr(noring, 2, 1);
    CHECK_THROWS_WITH(nr.set_ring({0, 0}, 0), Catch::Contains("has no ring mode"));
    // WSE-3: switch positions only on colors 0-9, 12, 13, 16, 17, 20, 21 (Cerebras SDK docs).
    Grid w3(kccl::wafer::host::wse3(), 3, 1);
    w3.add_position({1, 0}, 10, Dir::ramp, Dir::W);
    CHECK_THROWS_WITH(w3.add_position({1, 0}, 10, Dir::E, Dir::W),
                      Catch::Contains("color 10: a second switch position, but WSE-3 supports switch positions only on some colors (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 20, 21)"));
    w3.add_position({1, 0}, 12, Dir::ramp, Dir::W);
    CHECK(w3.add_position({1, 0}, 12, Dir::E, Dir::W) == 1);
    // Too many colors from a layout: 25 streams all crossing PE (1,0).
    kccl::wafer::host::Layout lay(30, 1);
    for (uint32_t i = 2; i < 27; ++i) lay.path({i, 0}, {0, 0});
    CHECK_THROWS_WITH(lay.finalize(wse2(), kccl::coll::DataType::u32), Catch::Contains("too many colors") && Catch::Contains("already uses 24 of the 24 routable colors of WSE-2"));
}

TEST_CASE("fabric: exchange sends and receives in the same cycles; sends on one route arrive in order", "[wafer]") {
    // Two PEs swap B elements over one hop. exchange: wavelet k leaves at cycle k and arrives at
    // the other processor at k + 1 + T_R + 1 + T_R = k + 6, stored at k + 7: both finish at B + 6 =
    // T_message(2, B), as a one-way message (the processor sends and receives one wavelet per
    // cycle). A send followed by a recv starts storing only at cycle B, when the send is done;
    // element k arrived at k + 6 <= B, so the stores take cycles B .. 2 B - 1: done at 2 B. That
    // needs the fabric to hold both whole vectors: it runs with unbounded router queues (the
    // thesis's model); with the profile's bounded queues both senders block (wafer_buffer_test.cpp).
    const uint32_t B = 50;
    for (bool concurrent : {true, false}) {
        kccl::wafer::host::Profile prof = kccl::wafer::host::wse2();
        if (!concurrent) prof.router_queue_wavelets = 0;
        Grid g(prof, 2, 1);
        g.path(0, {0, 0}, {1, 0});
        g.path(1, {1, 0}, {0, 0});
        Fabric f(g);
        for (uint32_t i = 0; i < 2; ++i)
            f.launch({i, 0}, {}, [i, concurrent](Pe& pe) {
                uint32_t* out = pe.ptr<uint32_t>(0, B);
                uint32_t* in = pe.ptr<uint32_t>(4 * B, B);
                for (uint32_t k = 0; k < B; ++k) out[k] = i * 1000 + k;
                if (concurrent) {
                    wafer::exchange(pe, wafer::Route{i}, out, B, wafer::Route{1 - i}, in, B, wafer::kCopy);
                } else {
                    wafer::send(pe, wafer::Route{i}, out, B);
                    wafer::recv(pe, wafer::Route{1 - i}, in, B);
                }
            }, 8 * B);
        const auto r = f.run();
        CHECK(r.cycles == (concurrent ? B + 6 : 2 * B));
        for (uint32_t i = 0; i < 2; ++i)
            for (uint32_t k = 0; k < B; ++k) CHECK(f.pe({i, 0})->ptr<uint32_t>(4 * B, B)[k] == (1 - i) * 1000 + k);
    }
    // Per source, per route, in order: three sends arrive as one stream, in order.
    Grid g = row(3);
    g.path(4, {2, 0}, {0, 0});
    Fabric f(g);
    f.launch({2, 0}, {}, [](Pe& pe) {
        uint32_t* v = words(pe, 9);
        for (uint32_t k = 0; k < 9; ++k) v[k] = 100 + k;
        wafer::send(pe, wafer::Route{4}, v, 2);
        wafer::send(pe, wafer::Route{4}, v + 2, 3);
        wafer::send(pe, wafer::Route{4}, v + 5, 4);
    }, 36);
    f.launch({0, 0}, {}, [](Pe& pe) { wafer::recv(pe, wafer::Route{4}, words(pe, 9), 9); }, 36);
    CHECK(f.run().cycles == 2 * 2 + 3 + 9);  // back to back: T_message(3, 9)
    for (uint32_t k = 0; k < 9; ++k) CHECK(f.pe({0, 0})->ptr<uint32_t>(0, 9)[k] == 100 + k);
}
