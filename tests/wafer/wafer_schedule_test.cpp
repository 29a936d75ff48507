// The Cerebras WSE reduce/allreduce thesis's patterns written as collective schedules
// (wafer/host/collectives.hpp pattern_schedule: a Shape with parent arrays and a rank -> PE
// placement), checked by the symbolic checker and lowered to fabric layouts (wafer/host/lower.hpp):
// the lowered layout runs bit-exact and in exactly the cycles of the layout written by hand
// (build_by_hand), which the reference simulator of the thesis's model reproduces
// (wafer_vs_model_test.cpp). The same Shapes on the Tenstorrent side: wafer_schedule_tt_test.cpp.
#include <catch2/catch.hpp>

#include <collectives/host/checker.hpp>
#include <emulation/wafer/run.hpp>
#include <wafer/host/collectives.hpp>
#include <wafer/host/lower.hpp>

#include "wafer/wafer_by_hand.hpp"

#include <string>
#include <vector>

namespace fh = kccl::wafer::host;
namespace coll = kccl::coll;
using kccl::emu::wafer::run_built;

namespace {

bool rootable(const std::string& nm) {
    return nm == "ring" || nm == "left_right" || nm == "jump" || nm == "bcast_1d" || nm == "allreduce_naive";
}
bool takes_base(const std::string& nm) { return nm == "left_right" || nm == "jump" || nm == "allreduce_naive"; }

/// Checks one spec: the schedule passes the checker; its lowered layout runs bit-exact in the
/// hand-built layout's cycles (or, `at_most`, in no more).
void same_as_by_hand(const fh::PatternSpec& s, bool at_most = false) {
    INFO(s.name << " base=" << s.base << " P=" << s.P << " M=" << s.M << " N=" << s.N << " B=" << s.B << " root=" << s.root << " root_x=" << s.root_x
                << " root_y=" << s.root_y);
    const fh::PatternSchedule ps = fh::pattern_schedule(s);
    const coll::host::CheckResult cr = coll::host::check(ps.shape());
    INFO(cr.summary());
    CHECK(cr.ok);
    const auto sched = run_built(fh::build_from_schedule(s), s);
    const auto hand = run_built(fh::build_by_hand(s), s);
    CHECK(sched.wrong == 0);
    CHECK(hand.wrong == 0);
    if (at_most) CHECK(sched.cycles <= hand.cycles);
    else CHECK(sched.cycles == hand.cycles);
}

void sweep_1d(const std::vector<uint32_t>& Ps, const std::vector<uint32_t>& Bs) {
    for (const std::string nm : {"scalar", "chain", "tree", "two_phase", "optimal", "left_right", "jump", "ring", "bcast_1d", "allreduce_naive"})
        for (uint32_t P : Ps)
            for (uint32_t B : Bs)
                for (uint32_t root : {0u, 1u, P / 2, P - 1}) {
                    if (!rootable(nm) && root != 0 && root + 1 != P) continue;
                    for (const std::string base : {"chain", "tree", "two_phase", "optimal", "scalar"}) {
                        if (!takes_base(nm) && base != "chain") continue;
                        fh::PatternSpec s;
                        s.name = nm;
                        s.P = P;
                        s.B = B;
                        s.root = root;
                        s.base = base;
                        same_as_by_hand(s);
                    }
                }
}

}  // namespace

TEST_CASE("wafer schedules: the 1D patterns lowered run in the hand-built layouts' cycles", "[wafer][schedule]") {
    sweep_1d({2u, 5u, 13u}, {1u, 7u, 64u});
    // A few large ones.
    for (const std::string nm : {"two_phase", "optimal", "scalar", "ring", "allreduce_naive", "bcast_1d"}) {
        fh::PatternSpec s;
        s.name = nm;
        s.P = 64;
        s.B = 1024;
        s.root = nm == "ring" || nm == "allreduce_naive" ? 21 : 0;
        s.base = nm == "allreduce_naive" ? "optimal" : "chain";
        same_as_by_hand(s);
    }
}

TEST_CASE("wafer schedules: sweep of the 1D patterns (P 2..64, B 1..1024)", "[wafer][schedule][long]") {
    sweep_1d({2u, 3u, 4u, 5u, 8u, 13u, 32u, 37u, 64u}, {1u, 7u, 64u, 1024u});
}

namespace {
void ring_sweep(const std::vector<uint32_t>& Ps, const std::vector<uint32_t>& Bs) {
    for (uint32_t P : Ps)
        for (uint32_t B : Bs) {
            fh::PatternSpec s;
            s.name = "allreduce_ring";
            s.P = P;
            s.B = B;
            same_as_by_hand(s);
        }
}
}  // namespace

TEST_CASE("wafer schedules: allreduce_ring is the ring all_reduce, its rounds fused into exchanges", "[wafer][schedule]") {
    // The collectives' clockwise ring all_reduce over the thesis's ring order: every lowered round
    // is one exchange (a segment out, another in), as the hand-built layout has it; B not a
    // multiple of P included (the first B % P segments one element longer).
    ring_sweep({2u, 3u, 4u, 5u, 8u, 13u}, {1u, 7u, 64u});
    ring_sweep({16u, 37u}, {1024u});
    const fh::PatternSchedule ps = fh::pattern_schedule([] {
        fh::PatternSpec s;
        s.name = "allreduce_ring";
        s.P = 5;
        s.B = 7;
        return s;
    }());
    const fh::Layout L = fh::lower(ps.shape(), ps.place, 7, kccl::coll::RedOp::sum, ps.width, ps.height);
    fh::PatternSpec s;
    s.name = "allreduce_ring";
    s.P = 5;
    s.B = 7;
    const fh::Layout H = fh::build_by_hand(s).layout;
    for (const fh::Coord& c : ps.place) {
        const auto st = L.steps_at(c), hs = H.steps_at(c);
        REQUIRE(st.size() == 8);  // 2 (P - 1) rounds
        REQUIRE(hs.size() == 8);
        for (size_t i = 0; i < st.size(); ++i) {  // the same exchanges: segments and combines
            CHECK(st[i].kind == kccl::wafer::StepKind::exchange);
            CHECK(st[i].kind == hs[i].kind);
            CHECK(st[i].op == hs[i].op);
            CHECK(st[i].offset == hs[i].offset);
            CHECK(st[i].n == hs[i].n);
        }
    }
}

TEST_CASE("wafer schedules: allreduce_ring sweep (P 2..16, 37, 64; B 1, 7, 64, 1024)", "[wafer][schedule][long]") {
    ring_sweep({2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 14u, 15u, 16u, 37u, 64u}, {1u, 7u, 64u, 1024u});
}

namespace {
/// A pattern made of several schedules: each passes the checker; their layouts lowered one after
/// the other run bit-exact in the hand-built layout's cycles.
void parts_same_as_by_hand(const fh::PatternSpec& s) {
    INFO(s.name << " base=" << s.base << " P=" << s.P << " G=" << s.G << " M=" << s.M << " N=" << s.N << " B=" << s.B << " root_x=" << s.root_x << " root_y=" << s.root_y);
    const auto parts = fh::pattern_parts(s);
    CHECK(!parts.empty());
    for (const auto& ps : parts) {
        const coll::host::CheckResult cr = coll::host::check(ps.shape());
        INFO(cr.summary());
        CHECK(cr.ok);
    }
    const auto sched = run_built(fh::build_from_schedule(s), s);
    const auto hand = run_built(fh::build_by_hand(s), s);
    CHECK(sched.wrong == 0);
    CHECK(hand.wrong == 0);
    CHECK(sched.cycles == hand.cycles);
}
}  // namespace

TEST_CASE("wafer schedules: butterfly and allreduce_2d as ring (or naive) allreduces one after the other", "[wafer][schedule]") {
    for (uint32_t G : {2u, 3u, 4u})
        for (uint32_t P : {G, G * G, G * G * G})
            for (uint32_t B : {1u, 7u, 64u}) {
                if (P > 16) continue;  // the interleaved groups run out of colors beyond (as the hand-built layout does)
                fh::PatternSpec s;
                s.name = "butterfly";
                s.P = P;
                s.G = G;
                s.B = B;
                parts_same_as_by_hand(s);
            }
    for (const std::string base : {"allreduce_ring", "chain", "optimal", "left_right"})
        for (uint32_t M : {1u, 2u, 3u, 5u})
            for (uint32_t N : {2u, 4u, 7u})
                for (uint32_t B : {1u, 7u, 64u}) {
                    fh::PatternSpec s;
                    s.name = "allreduce_2d";
                    s.M = M;
                    s.N = N;
                    s.B = B;
                    s.root_x = N / 2;
                    s.root_y = M / 2;
                    s.base = base;
                    parts_same_as_by_hand(s);
                }
}

TEST_CASE("wafer schedules: bcast_2d is one multicast down a star", "[wafer][schedule]") {
    for (uint32_t M : {2u, 3u, 5u})
        for (uint32_t N : {2u, 4u, 7u})
            for (uint32_t B : {1u, 64u})
                for (uint32_t rx : {0u, N / 2, N - 1})
                    for (uint32_t ry : {0u, M - 1}) {
                        fh::PatternSpec s;
                        s.name = "bcast_2d";
                        s.M = M;
                        s.N = N;
                        s.B = B;
                        s.root_x = rx;
                        s.root_y = ry;
                        same_as_by_hand(s);
                    }
}

TEST_CASE("wafer schedules: reduce_2d finishes the columns, then reduces the row (thesis 6.4)", "[wafer][schedule]") {
    // A column's root that is a leaf of the row tree stores its column (Shape::tree_store) and
    // then sends, as the hand-built layout does; one tree alone (single_tree) relays that column's
    // last child straight into the row: correct, never slower, and not the thesis's pattern.
    uint32_t faster = 0;
    for (const std::string base : {"chain", "tree", "two_phase", "optimal", "left_right", "jump", "ring"})
        for (uint32_t M : {1u, 2u, 5u})
            for (uint32_t N : {2u, 3u, 4u, 7u})
                for (uint32_t B : {1u, 7u, 64u})
                    for (int root = 0; root < 2; ++root) {
                        fh::PatternSpec s;
                        s.name = "reduce_2d";
                        s.M = M;
                        s.N = N;
                        s.B = B;
                        s.root_x = root ? N / 2 : 0;
                        s.root_y = root ? M / 2 : 0;
                        s.base = base;
                        same_as_by_hand(s);
                        const auto one = run_built(fh::build_from_schedule(s, 2, true), s);
                        const auto hand = run_built(fh::build_by_hand(s), s);
                        CHECK(one.wrong == 0);
                        CHECK(one.cycles <= hand.cycles);
                        faster += one.cycles < hand.cycles;
                    }
    CHECK(faster > 0);
    CHECK(fh::built_from_schedule("reduce_2d"));
}

TEST_CASE("wafer schedules: Shape::tree_store is for a Method::tree reduce only", "[wafer][schedule]") {
    std::vector<uint32_t> par(4);
    coll::tree_chain(par.data(), 4);
    const uint8_t store[4] = {0, 1, 0, 0};
    coll::Shape sh;
    sh.op = coll::Op::reduce;
    sh.method = coll::Method::tree;
    sh.topo = coll::Topology::line;
    sh.ranks = 4;
    sh.tree = par.data();
    sh.tree_store = store;
    CHECK(coll::validate(sh) == nullptr);
    CHECK(coll::host::check(sh).ok);
    std::vector<coll::Verb> v;  // rank 1 stores its child's partial, then sends
    coll::for_each_step(sh, 1, 0, [&](const coll::Step& s) { v.push_back(s.verb); });
    CHECK(v == std::vector<coll::Verb>{coll::Verb::recv_reduce_copy, coll::Verb::send});
    sh.op = coll::Op::all_reduce;
    REQUIRE(coll::validate(sh) != nullptr);
    CHECK_THAT(coll::validate(sh), Catch::Contains("tree_store"));
}

TEST_CASE("wafer schedules: build() takes the scheduled patterns from their schedule", "[wafer][schedule]") {
    for (const std::string nm : {"scalar", "chain", "tree", "two_phase", "optimal", "left_right", "jump", "ring", "bcast_1d", "bcast_2d", "allreduce_naive", "allreduce_ring", "reduce_2d"})
        CHECK(fh::built_from_schedule(nm));
    for (const std::string nm : {"butterfly", "allreduce_2d"}) {
        CHECK(fh::built_from_schedule(nm));
        fh::PatternSpec s;
        s.name = nm;
        s.P = 4;
        if (nm == "allreduce_2d") s.P = 0, s.M = 2;
        try {
            fh::pattern_schedule(s);
            FAIL("pattern_schedule accepted " << nm);
        } catch (const std::invalid_argument& e) {
            CHECK_THAT(e.what(), Catch::Contains("is not written as a schedule"));
        }
    }
}

TEST_CASE("wafer schedules: the parent-array builders", "[wafer][schedule]") {
    // tree_optimal against the hand-built layout's own construction of the thesis's Lemma 5.9.
    for (uint32_t n : {1u, 2u, 3u, 7u, 20u, 64u})
        for (uint64_t B : {1ull, 10ull, 1000ull}) {
            fh::Tree t{n};
            fh::detail::optimal_tree(t, int(n), B, 2);
            std::vector<uint32_t> par(n);
            std::vector<uint64_t> work(2 * (n + 1));
            REQUIRE(coll::tree_optimal(par.data(), n, B, 2, work.data()));
            for (uint32_t i = 1; i < n; ++i) CHECK(par[i] == uint32_t(t.parent[i]));
            CHECK(par[0] == 0);
        }
    uint32_t star[4] = {9, 9, 9, 9};
    REQUIRE(coll::tree_star(star, 4, 2));
    CHECK((star[0] == 2 && star[1] == 2 && star[2] == 2 && star[3] == 2));
    CHECK_FALSE(coll::tree_star(star, 4, 4));
    // left_right over chains: own side {0, 1}, other side {2, 3, 4} hanging off rank 0 last.
    const uint32_t own[2] = {0, 0}, other[3] = {0, 0, 1};
    uint32_t j[5] = {};
    REQUIRE(coll::tree_join(j, 2, own, 3, other));
    CHECK((j[0] == 0 && j[1] == 0 && j[2] == 0 && j[3] == 2 && j[4] == 3));
}

TEST_CASE("wafer schedules: a wrong parent or a missing child is caught by the checker", "[wafer][schedule]") {
    fh::PatternSpec s;
    s.name = "two_phase";
    s.P = 9;
    s.B = 8;
    fh::PatternSchedule ps = fh::pattern_schedule(s);
    REQUIRE(coll::host::check(ps.shape()).ok);
    SECTION("a rank that is its own parent (a second root): no path to the root") {
        ps.tree[5] = 5;
        const auto r = coll::host::check(ps.shape());
        CHECK(r.has("invalid"));
        CHECK_THAT(r.summary(), Catch::Contains("cycle"));
    }
    SECTION("a parent outside the ranks") {
        ps.tree[3] = 9;
        const auto r = coll::host::check(ps.shape());
        CHECK_THAT(r.summary(), Catch::Contains("Every parent in the tree must be a rank"));
    }
    SECTION("a child that never sends: its parent waits forever") {
        const coll::Shape sh = ps.shape();
        coll::host::Streams st = coll::host::collect(sh);
        REQUIRE(st[8][0].size() == 1);
        REQUIRE(st[8][0][0].verb == coll::Verb::send);
        st[8][0].clear();
        coll::host::CheckOptions o;
        o.multi_hop = true;
        const auto r = coll::host::check_streams(sh, st, o);
        CHECK(r.has("deadlock"));
    }
    SECTION("a parent that skips a child: the child's partial is missing at the root") {
        const coll::Shape sh = ps.shape();
        coll::host::Streams st = coll::host::collect(sh);
        // Rank 7 (a chain node of the last group) relays 8; make it send its own value instead.
        auto& v = st[7][0];
        REQUIRE(v.size() == 1);
        REQUIRE(v[0].verb == coll::Verb::recv_reduce_send);
        v[0] = coll::mk::send(v[0].send_peer, coll::mk::in(0));
        coll::host::CheckOptions o;
        o.multi_hop = true;
        const auto r = coll::host::check_streams(sh, st, o);
        CHECK(r.has("unreceived"));
        CHECK(r.has("wrong_value"));
    }
}

TEST_CASE("wafer schedules: the lowering refuses what the fabric cannot run", "[wafer][schedule]") {
    fh::PatternSpec s;
    s.name = "chain";
    s.P = 4;
    s.B = 4;
    fh::PatternSchedule ps = fh::pattern_schedule(s);
    auto fails_with = [&](const std::vector<fh::Coord>& place, const char* text) {
        try {
            fh::lower(ps.shape(), place, 4, kccl::coll::RedOp::sum);
            FAIL("lowered");
        } catch (const std::invalid_argument& e) {
            CHECK_THAT(e.what(), Catch::Contains(text));
        }
    };
    fails_with({{0, 0}, {1, 0}, {1, 0}, {3, 0}}, "both placed on PE (1,0)");
    fails_with({{0, 0}, {1, 0}, {2, 0}}, "names 3 PEs for 4 ranks");
    // A shape with two lanes (a bidirectional ring).
    coll::Shape ring;
    ring.op = coll::Op::all_reduce;
    ring.topo = coll::Topology::ring;
    ring.method = coll::Method::ring_bidir;
    ring.ranks = 4;
    ring.chunks = 2;
    try {
        fh::lower(ring, {{0, 0}, {1, 0}, {2, 0}, {3, 0}}, 8, kccl::coll::RedOp::sum);
        FAIL("lowered");
    } catch (const std::invalid_argument& e) {
        CHECK_THAT(e.what(), Catch::Contains("2 lanes"));
    }
    // Colors: left_right over chains needs two colors at the root; a profile with one has not.
    fh::PatternSpec lr;
    lr.name = "left_right";
    lr.P = 6;
    lr.root = 2;
    lr.B = 4;
    fh::Profile one = fh::wse2();
    one.colors = 1;
    try {
        fh::build_from_schedule(lr).layout.finalize(one, kccl::coll::DataType::f32);
        FAIL("finalized");
    } catch (const std::invalid_argument& e) {
        CHECK_THAT(e.what(), Catch::Contains("too many colors"));
    }
}
