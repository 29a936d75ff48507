// "auto" (include/wafer/auto.hpp) against the best of every pattern, every parameter and every
// root the model can evaluate, over the thesis's grid (P in 2..512, B in 1..4096; sampled in
// ctest, denser behind [long]). The model equals the reference simulator (cost_model_test.cpp),
// so the check stands for the simulated cycles too; the emulated check belongs with the fabric.
//
//   scripts/dev_test.sh tests/wafer/auto_test.cpp -- "[wafer][auto]"
#include <wafer/auto.hpp>
#include <wafer/host/model_patterns.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace kccl::wafer;
using namespace kccl::wafer::cost;

namespace {

// Best of everything, written without auto's candidate lists: every pattern x base x S x root.
uint64_t best_reduce_1d(uint32_t P, uint32_t B, uint32_t root, bool every_s) {
    uint64_t best = kCostInvalid;
    const Pattern leftmost[] = {Pattern::scalar, Pattern::chain, Pattern::tree, Pattern::two_phase, Pattern::optimal};
    auto s_values = [&](uint32_t n) {
        std::vector<uint32_t> v{0};
        if (every_s)
            for (uint32_t S = 1; S <= n; ++S) v.push_back(S);
        else
            v.push_back(best_s(n, B));
        return v;
    };
    for (Pattern p : leftmost)  // chapter 5 patterns reduce to PE 0 only
        for (uint32_t S : p == Pattern::two_phase ? s_values(P) : std::vector<uint32_t>{0})
            if (root == 0) best = std::min(best, t_reduce_1d(p, Pattern::chain, P, B, root, S));
    best = std::min(best, t_ring(P, B, root));
    for (Pattern b : leftmost)
        for (uint32_t S : b == Pattern::two_phase ? s_values(P) : std::vector<uint32_t>{0}) {
            best = std::min(best, t_left_right(P, B, root, b, S));
            best = std::min(best, t_jump(P, B, root, b, S));
        }
    return best;
}

uint64_t best_allreduce_1d(uint32_t P, uint32_t B, const std::vector<uint32_t>& roots, bool every_s) {
    uint64_t best = t_allreduce_ring(P, B);
    for (uint32_t r : roots) best = std::min(best, best_reduce_1d(P, B, r, every_s) + t_broadcast(P, B, r));
    return best;  // butterfly is never fastest (checked against the simulator below)
}

void check_within(uint64_t chosen, uint64_t best, const std::string& what) {
    INFO(what << ": auto " << chosen << " best " << best);
    REQUIRE(best != kCostInvalid);
    CHECK(chosen * 100 <= best * 105);
}

std::string name_of(const PatternArgs& a) {
    char buf[128] = {};
    describe(a, buf, sizeof buf);
    return buf;
}

}  // namespace

TEST_CASE("wafer auto: picks within 1.05x of the best, small rows exhaustively", "[wafer][auto]") {
    for (uint32_t P = 2; P <= 12; ++P)
        for (uint32_t B : {1u, 2u, 5u, 12u, 40u, 100u}) {
            for (uint32_t r = 0; r < P; ++r) {
                AutoRequest q;
                q.cols = P;
                q.B = B;
                q.root = r;
                const AutoChoice c = choose(q);
                check_within(c.cycles, best_reduce_1d(P, B, r, true), "reduce P=" + std::to_string(P) + " B=" +
                                                                          std::to_string(B) + " root=" + std::to_string(r));
                // What auto reports is what the simulator measures for that run.
                if (r == P / 2 && B <= 12) CHECK(kccl::wafer::host::simulate(c.args, 1, P, B) == c.cycles);
            }
            AutoRequest q;
            q.collective = kccl::coll::Op::all_reduce;
            q.cols = P;
            q.B = B;
            const AutoChoice c = choose(q);
            std::vector<uint32_t> roots;
            for (uint32_t r = 0; r < P; ++r) roots.push_back(r);
            check_within(c.cycles, best_allreduce_1d(P, B, roots, true), "allreduce P=" + std::to_string(P) + " B=" + std::to_string(B));
            CHECK(kccl::wafer::host::simulate(c.args, 1, P, B) == c.cycles);
            CHECK(pattern_info(c.args.pattern).collective == kccl::coll::Op::all_reduce);
        }
}

TEST_CASE("wafer auto: butterfly is never the simulator's fastest allreduce (Section 7.5)", "[wafer][auto]") {
    for (uint32_t P : {4u, 8u, 9u, 16u, 27u})
        for (uint32_t B : {1u, 8u, 27u, 64u}) {
            AutoRequest q;
            q.collective = kccl::coll::Op::all_reduce;
            q.cols = P;
            q.B = B;
            const AutoChoice c = choose(q);
            CHECK(c.args.pattern != Pattern::butterfly);
            for (uint32_t G = 2; G <= 3; ++G) {
                if (log_of(P, G) == 0) continue;
                PatternArgs b;
                b.pattern = Pattern::butterfly;
                b.g = G;
                INFO("P=" << P << " B=" << B << " G=" << G << " auto: " << name_of(c.args));
                CHECK(kccl::wafer::host::simulate(b, 1, P, B) > c.cycles);
            }
        }
}

TEST_CASE("wafer auto: the thesis's grid, sampled", "[wafer][auto]") {
    for (uint32_t P : {2u, 7u, 64u, 255u, 512u})
        for (uint32_t B : {1u, 16u, 512u, 4096u}) {
            AutoRequest q;
            q.cols = P;
            q.B = B;
            const AutoChoice c = choose(q);
            check_within(c.cycles, best_reduce_1d(P, B, 0, false), "reduce P=" + std::to_string(P) + " B=" + std::to_string(B));
            q.root = (P - 1) / 2;
            check_within(choose(q).cycles, best_reduce_1d(P, B, q.root, false), "reduce to the middle");
        }
    // 2D: reduce_2d's cost is the sum of its two axes, each with the same base.
    for (uint32_t M : {2u, 5u, 16u})
        for (uint32_t B : {1u, 1028u}) {
            AutoRequest q;
            q.rows = q.cols = M;
            q.B = B;
            const AutoChoice c = choose(q);
            CHECK(c.args.pattern == Pattern::reduce_2d);
            check_within(c.cycles, 2 * best_reduce_1d(M, B, 0, true), "reduce_2d M=" + std::to_string(M));
            q.collective = kccl::coll::Op::all_reduce;
            const AutoChoice a = choose(q);
            CHECK(a.args.pattern == Pattern::allreduce_2d);
            std::vector<uint32_t> roots{0, (M - 1) / 2};
            check_within(a.cycles, 2 * best_allreduce_1d(M, B, roots, true), "allreduce_2d M=" + std::to_string(M));
        }
}

TEST_CASE("wafer auto: reports what it chose", "[wafer][auto]") {
    AutoRequest q;
    q.cols = 512;
    q.B = 1;
    const AutoChoice c = choose(q);
    CHECK(c.candidates > 10);
    CHECK(c.cycles == t_optimal(512, 1));  // scalar ties with the optimal tree at B = 1 (Section 5.1)
    CHECK(c.args.pattern == Pattern::scalar);
    q.B = 4096;
    CHECK(name_of(choose(q).args).find("chain") != std::string::npos);
    PatternArgs a;
    a.pattern = Pattern::jump;
    a.base[0] = Pattern::two_phase;
    a.s = 23;
    a.root = 255;
    CHECK(name_of(a) == "jump(two_phase) S=23 root=255");
    AutoRequest bad;
    bad.cols = 0;
    CHECK(choose(bad).cycles == kCostInvalid);
}

TEST_CASE("wafer auto: the thesis's grid, dense", "[wafer][auto][long]") {
    for (uint32_t P = 2; P <= 512; P = P < 16 ? P + 1 : P * 2 - 1)
        for (uint32_t B = 1; B <= 4096; B = B < 8 ? B + 1 : B * 3 / 2) {
            AutoRequest q;
            q.cols = P;
            q.B = B;
            check_within(choose(q).cycles, best_reduce_1d(P, B, 0, P <= 64), "reduce P=" + std::to_string(P) + " B=" + std::to_string(B));
            q.collective = kccl::coll::Op::all_reduce;
            check_within(choose(q).cycles, best_allreduce_1d(P, B, {0, (P - 1) / 2, P / 4}, false),
                         "allreduce P=" + std::to_string(P) + " B=" + std::to_string(B));
        }
}
