// The thesis's patterns on the emulated fabric: results bit-exact against a host reference on
// dirty memory, and cycle counts equal to the thesis's model where it gives them exactly.
// Expected cycle counts are the thesis's formulas written out here (T_R = 2), never taken from the
// code under test.
#include <catch2/catch.hpp>

#include <emulation/wafer/run.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace kccl;
namespace fh = kccl::wafer::host;
using kccl::emu::wafer::run_pattern;

namespace {

constexpr uint64_t TR = 2;

// Lemma 5.2: T_chain(P, B) = 2 (P-1)(T_R+1) + B (a single PE: nothing to do).
uint64_t t_chain(uint64_t P, uint64_t B) { return P < 2 ? 0 : 2 * (P - 1) * (TR + 1) + B; }
// Corollary 3.4: T_message(P, B) = 2 T_R + P + B.
uint64_t t_message(uint64_t P, uint64_t B) { return 2 * TR + P + B; }
// Corollary 5.5 (P a power of two): (2 T_R + 1) log2 P + P - 1 + B + sum_{i=0}^{log2 P - 2} max(0, B - 2 (2^i + T_R) - 1).
uint64_t t_tree(uint64_t P, uint64_t B) {
    uint64_t lg = 0;
    while ((1ull << lg) < P) ++lg;
    int64_t stall = 0;
    for (uint64_t i = 0; i + 2 <= lg; ++i) stall += std::max<int64_t>(0, int64_t(B) - 2 * (int64_t(1ull << i) + int64_t(TR)) - 1);
    return (2 * TR + 1) * lg + P - 1 + B + uint64_t(stall);
}
// Lemma 5.9, written out independently of the pattern builder: T(1) = 0,
// T(P) = min over i in [1, P-1) of max(T(i) + B, T(P-i) + i + 2 T_R + 1), and for i = P-1
// max(T(P-1) + B, B + P + 2 T_R).
uint64_t t_opt(uint64_t P, uint64_t B) {
    std::vector<uint64_t> T(P + 1, 0);
    for (uint64_t m = 2; m <= P; ++m) {
        uint64_t best = std::max(T[m - 1] + B, B + m + 2 * TR);
        for (uint64_t i = 1; i + 1 < m; ++i) best = std::min(best, std::max(T[i] + B, T[m - i] + i + 2 * TR + 1));
        T[m] = best;
    }
    return T[P];
}

fh::PatternSpec spec1(const std::string& name, uint32_t P, uint32_t B, uint32_t root = 0) {
    fh::PatternSpec s;
    s.name = name;
    s.P = P;
    s.B = B;
    s.root = root;
    return s;
}

}  // namespace

TEST_CASE("fabric patterns: every pattern gives the reference result on dirty memory", "[wafer][patterns]") {
    const std::vector<std::string> one_d = {"scalar", "chain", "tree", "two_phase", "optimal", "left_right", "ring", "jump", "bcast_1d", "allreduce_naive", "allreduce_ring"};
    for (const auto& nm : one_d)
        for (uint32_t P : {2u, 3u, 5u, 8u})
            for (uint32_t root : {0u, 1u, P / 2, P - 1}) {
                if ((nm == "scalar" || nm == "chain" || nm == "tree" || nm == "two_phase" || nm == "optimal") && root != 0 && root != P - 1) continue;
                for (uint32_t B : {1u, 7u}) {
                    auto s = spec1(nm, P, B, root);
                    const auto r = run_pattern(s, fh::wse2(), 7 + P + B);
                    INFO(nm << " P=" << P << " root=" << root << " B=" << B);
                    CHECK(r.wrong == 0);
                    CHECK(r.cycles > 0);
                }
            }
    for (const std::string nm : {"reduce_2d", "bcast_2d", "allreduce_2d"})
        for (const std::string base : {"scalar", "chain", "tree", "two_phase", "optimal", "left_right", "ring", "jump", "allreduce_ring"})
            for (auto [M, N] : {std::pair<uint32_t, uint32_t>{2, 2}, {3, 3}, {4, 4}, {2, 5}, {5, 3}}) {
                if (base == "allreduce_ring" && nm == "reduce_2d") continue;  // not a reduce
                fh::PatternSpec s;
                s.name = nm;
                s.M = M;
                s.N = N;
                s.B = 5;
                s.base = base;
                s.root_x = N / 2;
                s.root_y = M - 1;
                const auto r = run_pattern(s);
                INFO(nm << "/" << base << " M=" << M << " N=" << N);
                CHECK(r.wrong == 0);
            }
}

TEST_CASE("fabric patterns: butterfly with any G", "[wafer][patterns]") {
    for (auto [P, G] : {std::pair<uint32_t, uint32_t>{2, 2}, {4, 2}, {8, 2}, {9, 3}, {4, 4}, {5, 5}})
        for (uint32_t B : {1u, 10u, 64u}) {
            auto s = spec1("butterfly", P, B);
            s.G = G;
            const auto r = run_pattern(s, fh::wse2(), P * 100 + B);
            INFO("P=" << P << " G=" << G << " B=" << B);
            CHECK(r.wrong == 0);
            // One round is a ring allreduce over G PEs; with P = G it is exactly allreduce_ring.
            if (P == G) CHECK(r.cycles == run_pattern(spec1("allreduce_ring", P, B)).cycles);
        }
}

TEST_CASE("fabric patterns: element types and operators", "[wafer][patterns]") {
    for (auto t : {kccl::coll::DataType::f32, kccl::coll::DataType::i32, kccl::coll::DataType::u32})
        for (auto op : {kccl::coll::RedOp::sum, kccl::coll::RedOp::max, kccl::coll::RedOp::min})
            for (const std::string nm : {"chain", "tree", "jump", "allreduce_ring"}) {
                auto s = spec1(nm, 6, 9, nm == "jump" ? 2 : 0);
                s.type = t;
                s.op = op;
                const auto r = run_pattern(s, fh::wse2(), 3);
                INFO(nm << " " << kccl::coll::dtype_name(t) << " " << wafer::op_name(op));
                CHECK(r.wrong == 0);
            }
}

TEST_CASE("fabric patterns: cycles equal the thesis's closed forms (chain, tree, optimal, broadcast, 2D chain)", "[wafer][patterns]") {
    for (uint32_t P : {2u, 4u, 8u, 16u, 32u})
        for (uint32_t B : {1u, 3u, 16u, 100u}) {
            INFO("P=" << P << " B=" << B);
            CHECK(run_pattern(spec1("chain", P, B)).cycles == t_chain(P, B));
            CHECK(run_pattern(spec1("tree", P, B)).cycles == t_tree(P, B));
            CHECK(run_pattern(spec1("optimal", P, B)).cycles == t_opt(P, B));
            // Lemma 4.1 from the root at either end; from a root inside, the farther side.
            CHECK(run_pattern(spec1("bcast_1d", P, B, P - 1)).cycles == t_message(P, B));
            const uint32_t r = P / 3;
            CHECK(run_pattern(spec1("bcast_1d", P, B, r)).cycles == t_message(std::max(r, P - 1 - r) + 1, B));
        }
    for (uint32_t P : {3u, 5u, 13u, 20u})
        for (uint32_t B : {1u, 9u, 64u}) {
            INFO("P=" << P << " B=" << B);
            // Lemma 5.1: T_scalar(P, B) = 1 + T_R + 1 + T_R + (P-1) B.
            CHECK(run_pattern(spec1("scalar", P, B)).cycles == 2 + 2 * TR + (P - 1) * B);
            CHECK(run_pattern(spec1("optimal", P, B)).cycles == t_opt(P, B));
            // Lemma 6.3: the ring reduce to PE 0 costs T_chain + P - 3 (every hop but two is 2 long).
            CHECK(run_pattern(spec1("ring", P, B, 0)).cycles == t_chain(P, B) + P - 3);
            // Lemma 6.1 with chain on both sides, root in the left half (root with the left group):
            // max(T_chain(root+1) + B, T_chain(P-root-1) + 2 T_R + 2).
            for (uint32_t root = 1; 2 * root < P - 1; ++root)
                CHECK(run_pattern(spec1("left_right", P, B, root)).cycles == std::max(t_chain(root + 1, B) + B, t_chain(P - root - 1, B) + 2 * TR + 2));
        }
    // Lemma 7.2 (B a multiple of P): 2 (P-1)(B/P + T_R + 2 + T_R + 1) counts every ring edge as 2
    // hops; the ring order has two edges of 1 hop (at its two ends), and each round waits for
    // the previous one over the edge behind it, so the slowest chain of 2 (P-1) consecutive edges
    // is two whole turns minus two adjacent edges of 1 + 2 hops: 3 cycles less.
    for (uint32_t P : {4u, 8u, 16u})
        for (uint32_t B : {P, 4 * P, 64 * P}) {
            INFO("allreduce_ring P=" << P << " B=" << B);
            CHECK(run_pattern(spec1("allreduce_ring", P, B)).cycles == 2 * (P - 1) * (B / P + 2 * TR + 3) - 3);
        }
    for (uint32_t M : {2u, 3u, 5u, 8u})
        for (uint32_t B : {1u, 20u}) {
            INFO("M=" << M << " B=" << B);
            fh::PatternSpec s;
            s.M = M;
            s.B = B;
            s.name = "reduce_2d";  // 6.4: columns then the row, chain on each: T_chain(M) + T_chain(M)
            CHECK(run_pattern(s).cycles == 2 * t_chain(M, B));
            s.name = "bcast_2d";  // 4.2 from a corner: one multicast over 2 M - 2 hops
            CHECK(run_pattern(s).cycles == t_message(2 * M - 1, B));
        }
}

TEST_CASE("fabric patterns: on the WSE-3 profile, switched groups take switch-capable colors", "[wafer][patterns]") {
    // Same model figures, so the same cycles; the tree's groups use switch positions, which the
    // WSE-3 allows only on some colors (the layout skips the others).
    for (const std::string nm : {"scalar", "tree", "optimal", "two_phase"}) {
        const auto a = run_pattern(spec1(nm, 64, 16), fh::wse2());
        const auto b = run_pattern(spec1(nm, 64, 16), fh::wse3());
        INFO(nm);
        CHECK(b.wrong == 0);
        CHECK(a.cycles == b.cycles);
    }
}

TEST_CASE("fabric patterns: bad specs are named", "[wafer][patterns]") {
    CHECK_THROWS_WITH(run_pattern(spec1("chain", 8, 4, 3)), Catch::Contains("reduces to an end of the row") && Catch::Contains("left_right, ring or jump"));
    CHECK_THROWS_WITH(run_pattern(spec1("nope", 8, 4)), Catch::Contains("'nope' is unknown") && Catch::Contains("two_phase"));
    CHECK_THROWS_WITH(run_pattern(spec1("tree", 8, 4, 8)), Catch::Contains("root 8 is not a PE of the row (0..7)"));
    CHECK_THROWS_WITH(run_pattern(spec1("reduce_2d", 8, 4)), Catch::Contains("runs on an M x N grid"));
    auto bf = spec1("butterfly", 12, 4);
    bf.G = 3;
    CHECK_THROWS_WITH(run_pattern(bf), Catch::Contains("P = 12 is not a power of G = 3"));
    bf.P = 243;  // the last round's 81 interleaved groups need more colors than a router has
    CHECK_THROWS_WITH(run_pattern(bf), Catch::Contains("too many colors"));
    auto s = spec1("left_right", 8, 4, 3);
    s.base = "ring";
    CHECK_THROWS_WITH(run_pattern(s), Catch::Contains("base 'ring' is not a reduce-to-an-end pattern"));
    auto big = spec1("chain", 4, 20000);  // 80000 bytes per PE
    CHECK_THROWS_WITH(run_pattern(big), Catch::Contains("uses 80000 bytes of memory; WSE-2 has 49152 per PE"));
}

TEST_CASE("fabric patterns: the thesis's grids (1D P = 512, 2D 64 x 64)", "[wafer][patterns][long]") {
    for (uint32_t B : {1u, 64u, 512u, 4096u}) {
        INFO("P=512 B=" << B);
        const auto c = run_pattern(spec1("chain", 512, B));
        CHECK(c.wrong == 0);
        CHECK(c.cycles == t_chain(512, B));
        const auto t = run_pattern(spec1("tree", 512, B));
        CHECK(t.wrong == 0);
        CHECK(t.cycles == t_tree(512, B));
        const auto o = run_pattern(spec1("optimal", 512, B));
        CHECK(o.wrong == 0);
        CHECK(o.cycles == t_opt(512, B));
        for (const std::string nm : {"two_phase", "ring", "allreduce_naive", "allreduce_ring"}) CHECK(run_pattern(spec1(nm, 512, B)).wrong == 0);
        for (const std::string nm : {"left_right", "jump"}) CHECK(run_pattern(spec1(nm, 512, B, 255)).wrong == 0);
    }
    for (uint32_t M : {16u, 64u}) {
        fh::PatternSpec s;
        s.M = M;
        s.B = 1028;
        s.name = "reduce_2d";
        const auto r = run_pattern(s);
        CHECK(r.wrong == 0);
        CHECK(r.cycles == 2 * t_chain(M, 1028));
        s.name = "allreduce_2d";
        CHECK(run_pattern(s).wrong == 0);
    }
}
