// The wafer cost model (include/wafer/cost.hpp) against the per-wavelet reference simulator of
// the thesis's model (include/wafer/host/model_sim.hpp, model_patterns.hpp), and the thesis's
// printed closed forms against the model, with the exact amount by which each off form is off.
//
//   scripts/dev_test.sh tests/wafer/cost_model_test.cpp -- "[wafer][cost]"
//   ... -- "[wafer][cost][long]"   the exhaustive sweeps (P <= 16, every B <= 64, every root/S/base)
#include <wafer/cost.hpp>
#include <wafer/host/model_patterns.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

using namespace kccl::wafer;
using namespace kccl::wafer::cost;
using kccl::wafer::host::ModelSim;
using kccl::wafer::host::ModelSimError;
using kccl::wafer::host::simulate;

namespace {

PatternArgs args(Pattern p, uint32_t root = 0, Pattern b0 = Pattern::chain, Pattern b1 = Pattern::chain,
                 Pattern b2 = Pattern::chain) {
    PatternArgs a;
    a.pattern = p;
    a.root = root;
    a.base[0] = b0;
    a.base[1] = b1;
    a.base[2] = b2;
    return a;
}

// Every 1D run description for a row of P PEs (all roots, all S, every base), with `f(a)`.
void each_1d_run(uint32_t P, const std::function<void(const PatternArgs&)>& f) {
    const Pattern leftmost[] = {Pattern::scalar, Pattern::chain, Pattern::tree, Pattern::two_phase, Pattern::optimal};
    for (Pattern p : leftmost) {
        if (p == Pattern::two_phase) {
            for (uint32_t S = 1; S <= P; ++S) {
                PatternArgs a = args(p);
                a.s = S;
                f(a);
            }
        } else {
            f(args(p));
        }
    }
    f(args(Pattern::allreduce_ring));
    for (uint32_t r = 0; r < P; ++r) {
        f(args(Pattern::ring, r));
        f(args(Pattern::bcast_1d, r));
        for (Pattern b : leftmost) {
            f(args(Pattern::left_right, r, b));
            f(args(Pattern::jump, r, b));
            f(args(Pattern::allreduce_naive, r, Pattern::jump, b));
        }
        f(args(Pattern::allreduce_naive, r, Pattern::left_right, Pattern::two_phase));
        f(args(Pattern::allreduce_naive, r, Pattern::ring));
    }
    f(args(Pattern::allreduce_naive, 0, Pattern::tree));
}

void model_equals_sim_1d(uint32_t max_p, const std::vector<uint32_t>& bs, uint32_t tr) {
    uint64_t runs = 0, differ = 0;
    for (uint32_t P = 1; P <= max_p; ++P)
        for (uint32_t B : bs)
            each_1d_run(P, [&](const PatternArgs& a) {
                const uint64_t m = t_pattern(a, 1, P, B, tr);
                const uint64_t s = simulate(a, 1, P, B, tr);
                ++runs;
                if (m != s) {
                    ++differ;
                    INFO(pattern_name(a.pattern) << " base " << pattern_name(a.base[0]) << "/" << pattern_name(a.base[1])
                                                 << " P=" << P << " B=" << B << " root=" << a.root << " S=" << a.s
                                                 << " T_R=" << tr);
                    CHECK(m == s);
                }
            });
    CHECK(differ == 0);
    CHECK(runs >= uint64_t(max_p) * bs.size());
}

void model_equals_sim_2d(uint32_t max_side, const std::vector<uint32_t>& bs, uint32_t tr) {
    uint64_t count = 0, differ = 0;
    for (uint32_t M = 1; M <= max_side; ++M)
        for (uint32_t N = 1; N <= max_side; ++N)
            for (uint32_t B : bs)
                for (uint32_t i = 0; i < M; ++i)
                    for (uint32_t j = 0; j < N; ++j) {
                        std::vector<PatternArgs> runs;
                        PatternArgs a = args(Pattern::bcast_2d, j);
                        a.root_y = i;
                        runs.push_back(a);
                        for (Pattern base : {Pattern::jump, Pattern::left_right}) {
                            a = args(Pattern::reduce_2d, j, base, Pattern::two_phase);
                            a.root_y = i;
                            runs.push_back(a);
                        }
                        a = args(Pattern::allreduce_2d, j, Pattern::allreduce_naive, Pattern::left_right, Pattern::chain);
                        a.root_y = i;
                        runs.push_back(a);
                        if (i == 0 && j == 0) {
                            runs.push_back(args(Pattern::reduce_2d, 0, Pattern::chain));
                            runs.push_back(args(Pattern::reduce_2d, 0, Pattern::tree));
                            runs.push_back(args(Pattern::allreduce_2d, 0, Pattern::allreduce_ring));
                            runs.push_back(args(Pattern::allreduce_2d, 0, Pattern::allreduce_naive, Pattern::chain));
                        }
                        for (const auto& r : runs) {
                            const uint64_t m = t_pattern(r, M, N, B, tr);
                            const uint64_t s = simulate(r, M, N, B, tr);
                            ++count;
                            if (m != s) {
                                ++differ;
                                INFO(pattern_name(r.pattern) << " base " << pattern_name(r.base[0]) << " M=" << M
                                                             << " N=" << N << " B=" << B << " root=(" << i << "," << j
                                                             << ")");
                                CHECK(m == s);
                            }
                        }
                    }
    CHECK(differ == 0);
    CHECK(count >= uint64_t(max_side) * max_side * bs.size());
}

}  // namespace

// The cost model is usable in constant evaluation. Values derived by hand from the rules:
// chain of 4, B = 1: 3 visits of 2 T_R + 2 = 6, plus B; binomial tree of 4, B = 1: PE 2 relays
// PE 3 (1 + 1 hop + 2 T_R + 1 = 7), PE 0 stores PE 1 (cycle 7), then takes PE 2's stream
// (7 + 2 hops + 2 T_R + 1 = 14).
static_assert(t_chain(4, 1) == 19, "T_chain(4, 1) = 3 * 6 + 1");
static_assert(t_tree<8>(4, 1) == 14, "the binomial tree of 4 PEs, B = 1");
static_assert(printed_t_tree(4, 1) == 14, "Corollary 5.5 at P = 4, B = 1");
static_assert(t_optimal<8>(2, 5) == t_message(2, 5), "two PEs: one message");

TEST_CASE("wafer model sim: a message and a chain take the thesis's cycles", "[wafer][cost]") {
    // Hand-derived from the model's rules (Lemma 3.2, Corollary 3.4): send 1 + T_R + hops + T_R + store 1.
    for (uint32_t tr : {1u, 2u, 3u})
        for (uint32_t P : {2u, 3u, 7u})
            for (uint32_t B : {1u, 4u}) {
                INFO("T_R=" << tr << " P=" << P << " B=" << B);
                // The scalar reduce over 2 PEs is one message over 1 hop.
                CHECK(simulate(args(Pattern::scalar), 1, 2, B, tr) == 1 + tr + 1 + tr + 1 + (B - 1));
                // A broadcast from PE 0 reaches PE P-1 after P-1 hops.
                CHECK(simulate(args(Pattern::bcast_1d), 1, P, B, tr) == 1 + tr + (P - 1) + tr + 1 + (B - 1));
                // The chain: P-1 visits of 2 T_R + 2 each, then one wavelet per cycle.
                CHECK(simulate(args(Pattern::chain), 1, P, B, tr) == (P - 1) * (2 * tr + 2) + B);
            }
}

TEST_CASE("wafer model sim: streams that would deadlock fail with a report, never hang", "[wafer][cost]") {
    // PE 0 waits for stream a before it sends c; PE 1 sends a only after it has received c.
    ModelSim sim(2, 1, 2);
    const uint32_t a = sim.add_stream(1, 4, 0);
    sim.deliver(a, sim.path(a, 0, 0));
    const uint32_t c = sim.add_stream(0, 4, 1);
    sim.deliver(c, sim.path(c, 0, 1));
    sim.op(0, ModelSim::OpKind::store, a, -1, 4);
    sim.phase(0);
    sim.op(0, ModelSim::OpKind::send, -1, c, 4);
    sim.op(1, ModelSim::OpKind::store, c, -1, 4);
    sim.phase(1);
    sim.op(1, ModelSim::OpKind::send, -1, a, 4);
    try {
        (void)sim.run();
        FAIL("the deadlock was not detected");
    } catch (const ModelSimError& e) {
        const std::string m = e.what();
        CHECK(m.find("no wavelet or operation moved") != std::string::npos);
        CHECK(m.find("PE 0 phase 0: store element 0/4 of stream 0") != std::string::npos);
        CHECK(m.find("PE 1 phase 0: store element 0/4 of stream 1") != std::string::npos);
    }
    CHECK_THROWS_WITH(ModelSim(0, 1, 2), Catch::Contains("at least 1 x 1"));
    CHECK_THROWS_WITH(simulate(args(Pattern::chain, 3), 1, 8, 4), Catch::Contains("reduces to PE 0"));
    CHECK_THROWS_WITH(simulate(args(Pattern::butterfly), 1, 8, 4), Catch::Contains("power of G"));
}

TEST_CASE("wafer cost model == reference simulator, small rows and grids", "[wafer][cost]") {
    model_equals_sim_1d(7, {1, 2, 3, 7, 16}, 2);
    model_equals_sim_1d(5, {1, 5}, 1);
    model_equals_sim_2d(3, {1, 6}, 2);
}

TEST_CASE("wafer cost model == reference simulator, exhaustive", "[wafer][cost][long]") {
    std::vector<uint32_t> all_b;
    for (uint32_t B = 1; B <= 64; ++B) all_b.push_back(B);
    model_equals_sim_1d(16, all_b, 2);
    model_equals_sim_1d(9, {1, 2, 3, 9, 20}, 3);
    model_equals_sim_2d(6, {1, 2, 5, 13, 40}, 2);
    // A few points at the thesis's scale.
    for (Pattern p : {Pattern::chain, Pattern::tree, Pattern::two_phase, Pattern::optimal})
        for (uint32_t B : {1u, 512u}) {
            INFO(pattern_name(p) << " P=512 B=" << B);
            CHECK(t_pattern(args(p), 1, 512, B) == simulate(args(p), 1, 512, B));
        }
}

TEST_CASE("wafer cost model: T_OPT is the best pre-order tree (brute force over all of them)", "[wafer][cost]") {
    // Every plane tree on P nodes numbered in pre-order (children closest first) is a pre-order
    // reduce; simulate each and compare the best with Lemma 5.9's recursion.
    for (uint32_t P = 2; P <= 7; ++P)
        for (uint32_t B : {1u, 4u, 16u}) {
            std::vector<kccl::wafer::host::ReduceTree> trees;
            std::function<void(kccl::wafer::host::ReduceTree&, uint32_t, uint32_t, std::function<void()>)> gen;
            // Children of `root` partition [root+1, end) into consecutive subtrees.
            gen = [&](kccl::wafer::host::ReduceTree& t, uint32_t root, uint32_t end, std::function<void()> k) {
                std::function<void(uint32_t)> blocks = [&](uint32_t from) {
                    if (from == end) {
                        k();
                        return;
                    }
                    for (uint32_t stop = from + 1; stop <= end; ++stop) {
                        t.children[root].push_back(from);
                        gen(t, from, stop, [&, stop] { blocks(stop); });
                        t.children[root].pop_back();
                    }
                };
                blocks(root + 1);
            };
            kccl::wafer::host::ReduceTree t;
            t.children.resize(P);
            gen(t, 0, P, [&] { trees.push_back(t); });
            uint64_t best = ~uint64_t(0);
            for (const auto& tr : trees) {
                ModelSim sim(P, 1, 2);
                kccl::wafer::host::PatternBuilder b(sim, B, 2);
                b.reduce(tr);
                best = std::min(best, sim.run().cycles);
            }
            const uint64_t catalan[] = {1, 1, 2, 5, 14, 42, 132, 429};
            INFO("P=" << P << " B=" << B << " trees=" << trees.size());
            CHECK(trees.size() == catalan[P - 1]);
            CHECK(t_optimal(P, B) == best);
        }
}

TEST_CASE("wafer cost model: which printed closed forms are exact, and by how much the others are off",
          "[wafer][cost]") {
    for (uint32_t tr : {1u, 2u, 3u})
        for (uint32_t P = 2; P <= 24; ++P)
            for (uint32_t B = 1; B <= 200; B += (B < 8 ? 1 : 23)) {
                INFO("T_R=" << tr << " P=" << P << " B=" << B);
                // Exact: T_message, T_scalar (5.1), T_chain (5.2).
                CHECK(printed_t_scalar(P, B, tr) == t_scalar(P, B, tr));
                CHECK(printed_t_chain(P, B, tr) == t_chain(P, B, tr));
                // Corollary 5.5 is exact for P a power of two (its assumption), not otherwise.
                if ((P & (P - 1)) == 0) CHECK(printed_t_tree(P, B, tr) == t_tree(P, B, tr));
                for (uint32_t S = 2; S + 1 < P; ++S) {
                    INFO("S=" << S);
                    const int64_t off = int64_t(printed_t_two_phase(P, B, S, tr)) - int64_t(t_two_phase(P, B, S, tr));
                    if (2 * S < P) {
                        // Lemmas 5.6/5.8 count S + ceil(P/S) - 1 visits; the path visits S + ceil(P/S) - 3.
                        CHECK(off == 2 * (2 * int64_t(tr) + 1));
                    } else {
                        // Lemma 5.7's T_visit(P, B, S) counts one visit too many (the max can hide part
                        // or all of it): the model is the same max with T_visit(P, B, S - 1).
                        CHECK(off >= 0);
                        CHECK(off <= 2 * int64_t(tr) + 1);
                        CHECK(t_two_phase(P, B, S, tr) ==
                              max2(printed_t_chain(P - S, B, tr) + B, printed_t_visit(P, B, S - 1, tr)));
                    }
                }
                for (uint32_t r = 0; r < P; ++r) {
                    INFO("root=" << r);
                    // Lemma 6.3 (ring = chain + P - 3) is one short when the ring chain keeps a 2-hop
                    // link instead of a 1-hop one: root 1 or the east end's turn, and P = 2.
                    const uint32_t turn = P % 2 == 0 ? P - 2 : P - 1;
                    const int64_t ring_off = int64_t(printed_t_ring(P, B, tr)) - int64_t(t_ring(P, B, r, tr));
                    CHECK(ring_off == ((P >= 3 && r != 1 && r != turn) ? 0 : -1));
                    if (P >= 3 && 2 * r + 1 < P + 1) {
                        // Lemma 6.4 forgets the hop over the root (and for root 0, the end PE is PE 1).
                        CHECK(t_jump(P, B, r, Pattern::chain, 0, tr) == printed_t_jump(t_chain(P - 1, B, tr), r, tr) + 1);
                        // Lemma 6.2 is exact for its range of roots.
                        if (r > 1 && 2 * r < P)
                            CHECK(printed_t_left_right_chain(P, B, r, tr) == t_left_right(P, B, r, Pattern::chain, 0, tr));
                    }
                }
                // Section 4.2's T_broadcast(M - i + N - j, B) counts one hop more than the farthest PE.
                for (uint32_t i = 0; 2 * i < P; i += 3)
                    CHECK(printed_t_broadcast_2d(P, P, B, i, i, tr) == t_broadcast_2d(P, P, B, i, i, tr) + 1);
                // Lemma 7.2 assumes every round costs a 2-hop message; two ring links are 1 hop.
                if (B % P == 0) {
                    const int64_t off = int64_t(printed_t_allreduce_ring(P, B, tr)) - int64_t(t_allreduce_ring(P, B, tr));
                    CHECK(off >= 1);
                    CHECK(off <= 3);
                }
            }
}

TEST_CASE("wafer cost model: butterfly's printed form ignores link sharing between groups", "[wafer][cost]") {
    // Groups of one round interleave (G^(i-1) apart) and share links; the simulator shows it.
    for (uint32_t G : {2u, 3u})
        for (uint32_t P = G * G; P <= 27; P *= G)
            for (uint32_t B : {G, 10 * G}) {
                INFO("G=" << G << " P=" << P << " B=" << B);
                PatternArgs a = args(Pattern::butterfly);
                a.g = G;
                const uint64_t s = simulate(a, 1, P, B);
                CHECK(s >= t_butterfly_no_contention(P, B, G));
                if (B >= 10 * G) CHECK(s > t_butterfly_no_contention(P, B, G));
            }
}
