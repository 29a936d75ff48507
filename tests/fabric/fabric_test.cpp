// The routed PE fabric on the emulation: the thesis's model's basic operations cycle-exactly,
// parking at switch positions, and the errors it names.
#include <catch2/catch.hpp>

#include <emulation/fabric/fabric.hpp>
#include <fabric/program.hpp>

#include <cstring>

using namespace kccl;
using kccl::fabric::host::Coord;
using kccl::fabric::host::Dir;
using kccl::fabric::host::DirSet;
using kccl::fabric::host::Grid;
using kccl::emu::fabric::Fabric;
using kccl::emu::fabric::FabricError;
using kccl::emu::fabric::Pe;

namespace {

// A 1 x P row with the kernel `body(pe, i)` on chosen PEs.
Grid row(uint32_t p) { return Grid(kccl::fabric::host::wse2(), p, 1); }

uint32_t* words(Pe& pe, uint32_t n) { return pe.ptr<uint32_t>(0, n); }

}  // namespace

TEST_CASE("fabric: one message costs T_message(P,B) = 2 T_R + P + B", "[fabric]") {
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
                fabric::send(pe, fabric::Route{0}, words(pe, B), B);
            }, 4 * B);
            (void)src;
            Pe& dst = f.launch({0, 0}, {}, [B](Pe& pe) { fabric::recv(pe, fabric::Route{0}, words(pe, B), B); }, 4 * B);
            const auto r = f.run();
            INFO("P=" << P << " B=" << B);
            CHECK(r.cycles == 2 * 2 + P + B);
            for (uint32_t k = 0; k < B; ++k) CHECK(dst.ptr<uint32_t>(0, B)[k] == 1000 + k);
        }
}

TEST_CASE("fabric: a relayed chain reduce runs at 1 cycle per element: T_chain = 2(P-1)(T_R+1) + B", "[fabric]") {
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
                    if (i == P - 1) fabric::send(pe, fabric::Route{i % 2}, v, B);
                    else if (i == 0) fabric::recv(pe, fabric::Route{1}, v, B, fabric::Op::add);
                    else fabric::relay(pe, fabric::Route{(i + 1) % 2}, fabric::Route{i % 2}, v, B, fabric::Op::add);
                }, 4 * B);
            const auto r = f.run();
            INFO("P=" << P << " B=" << B);
            CHECK(r.cycles == 2 * (P - 1) * (2 + 1) + B);
            for (uint32_t k = 0; k < B; ++k) CHECK(f.pe({0, 0})->ptr<int32_t>(0, B)[k] == int32_t(7 * P * (P - 1) / 2 + P * k));
        }
}

TEST_CASE("fabric: a 1D broadcast by multicast costs T_message(P,B)", "[fabric]") {
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
                fabric::send(pe, fabric::Route{3}, v, B);
            } else {
                fabric::recv(pe, fabric::Route{3}, v, B);
            }
        }, 4 * B);
    const auto r = f.run();
    CHECK(r.cycles == 2 * 2 + P + B);
    for (uint32_t i = 0; i + 1 < P; ++i) {
        // PE i is P-1-i hops away: it stores its last element at 2 T_R + (P-i) + B.
        for (uint32_t k = 0; k < B; ++k) CHECK(f.pe({i, 0})->ptr<float>(0, B)[k] == float(k) * 0.5f);
    }
}
