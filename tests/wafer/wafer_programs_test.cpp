// The fabric emulation's program mode (every PE a step program, run without fibers) against the
// timed fiber engine running the same programs as kernels; spec_of (a PatternArgs run as the
// layout builder's spec); and "auto" against the *emulated* cycles of the implemented patterns.
//
//   scripts/dev_test.sh tests/wafer/wafer_programs_test.cpp -- "[wafer]"
#include <catch2/catch.hpp>

#include <emulation/wafer/run.hpp>

#include "wafer_program_util.hpp"
#include <wafer/auto.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace fh = kccl::wafer::host;
namespace kf = kccl::wafer;
using kccl::emu::wafer::Fabric;
using kccl::emu::wafer::WaferError;
using kccl::emu::wafer::Pe;

namespace {

struct Outcome {
    kccl::emu::vtime_t cycles = 0;
    uint64_t streams = 0;
    std::vector<std::vector<uint32_t>> buffers;  ///< every participating PE's vector after the run
};

/// Runs `spec`'s layout with every PE a program (program mode) or a run_steps kernel (fibers).
Outcome run_layout(const fh::PatternSpec& spec, bool programs) {
    fh::Built b = fh::build(spec, 2);
    fh::Layout::Result lr = b.layout.finalize(fh::wse2(), spec.type);
    Fabric f(std::move(lr.grid));
    for (auto& p : lr.programs) {
        if (programs) f.launch_program(p.pe, p.args, 4 * spec.B);
        else f.launch(p.pe, p.args, [](Pe& pe) { kf::run_steps(pe); }, 4 * spec.B);
    }
    for (size_t i = 0; i < b.expect.pes.size(); ++i) {
        uint32_t* v = f.pe(b.expect.pes[i])->ptr<uint32_t>(0, spec.B);
        for (uint32_t k = 0; k < spec.B; ++k) v[k] = kccl::emu::wafer::input_word(spec.type, 7, i, k);
    }
    const auto r = f.run();
    Outcome o{r.cycles, r.streams, {}};
    for (const auto& c : b.expect.pes) {
        const uint32_t* v = f.pe(c)->ptr<uint32_t>(0, spec.B);
        o.buffers.emplace_back(v, v + spec.B);
    }
    return o;
}

fh::PatternSpec spec(const std::string& name, uint32_t P, uint32_t B, uint32_t root = 0, const std::string& base = "chain") {
    fh::PatternSpec s;
    s.name = name;
    s.P = P;
    s.B = B;
    s.root = root;
    s.base = base;
    return s;
}
fh::PatternSpec spec2(const std::string& name, uint32_t M, uint32_t N, uint32_t B, uint32_t rx, uint32_t ry, const std::string& base = "chain") {
    fh::PatternSpec s;
    s.name = name;
    s.M = M;
    s.N = N;
    s.B = B;
    s.root_x = rx;
    s.root_y = ry;
    s.base = base;
    return s;
}

using kccl::test::wafer::program;
using kccl::test::wafer::step;

std::string name_of(const kf::PatternArgs& a) {
    char buf[160] = {};
    kf::describe(a, buf, sizeof buf);
    return buf;
}

uint64_t emulated(const kf::PatternArgs& a, uint32_t rows, uint32_t cols, uint32_t B) {
    const auto r = kccl::emu::wafer::run_pattern(kccl::emu::wafer::spec_of(a, rows, cols, B));
    REQUIRE(r.wrong == 0);
    return r.cycles;
}

/// Auto's choice, emulated, against the best emulated run of the implemented patterns with
/// their default parameters (and two_phase at the model's best S): within 1.05x.
void check_auto_emulated(kccl::coll::Op coll, uint32_t P, uint32_t B) {
    kf::AutoRequest q;
    q.collective = coll;
    q.cols = P;
    q.B = B;
    const kf::AutoChoice c = kf::choose(q);
    REQUIRE(c.cycles != kf::cost::kCostInvalid);
    const uint64_t chosen = emulated(c.args, 1, P, B);
    uint64_t best = chosen;
    std::string best_name = name_of(c.args) + " (auto)";
    auto offer = [&](const kf::PatternArgs& a) {
        uint64_t t = 0;
        try {
            t = emulated(a, 1, P, B);
        } catch (const std::invalid_argument&) {  // the layout runs out of colors (butterfly): not a candidate
            return;
        }
        if (t < best) best = t, best_name = name_of(a);
    };
    const kf::Pattern leftmost[] = {kf::Pattern::scalar, kf::Pattern::chain, kf::Pattern::tree, kf::Pattern::two_phase, kf::Pattern::optimal};
    for (kf::Pattern p : leftmost)
        for (uint32_t s : {0u, kf::cost::best_s(P, B)}) {
            if (s != 0 && p != kf::Pattern::two_phase) continue;
            kf::PatternArgs a;
            a.s = s;
            if (coll == kccl::coll::Op::reduce) {
                a.pattern = p;
            } else {
                a.pattern = kf::Pattern::allreduce_naive;
                a.base[0] = p;
                offer(a);
                a.root = (P - 1) / 2;  // the middle, over left_right
                a.base[0] = kf::Pattern::left_right;
                a.base[1] = p;
                if (a.root == 0) continue;
            }
            offer(a);
        }
    if (coll == kccl::coll::Op::all_reduce) {
        kf::PatternArgs a;
        a.pattern = kf::Pattern::allreduce_ring;
        offer(a);
        for (uint32_t G : {2u, 3u})
            if (kf::cost::log_of(P, G) != 0) {
                a.pattern = kf::Pattern::butterfly;
                a.g = G;
                offer(a);
            }
    }
    INFO(kccl::coll::op_name(coll) << " P=" << P << " B=" << B << ": auto chose " << name_of(c.args) << " (model " << c.cycles << ", emulated " << chosen
                                   << "); best implemented " << best_name << " at " << best);
    CHECK(chosen * 100 <= best * 105);
    // auto's own prediction is what the emulation measures (the ring allreduce included, for any
    // B: the layout splits segments as the cost model does).
    CHECK(chosen == c.cycles);
}

}  // namespace

TEST_CASE("fabric program mode: same cycles, streams and results as the timed fiber engine", "[wafer][programs]") {
    std::vector<fh::PatternSpec> specs = {
        spec("chain", 9, 33),           spec("scalar", 7, 20),        spec("tree", 16, 5),
        spec("two_phase", 30, 17),      spec("optimal", 23, 40),      spec("left_right", 12, 9, 5, "two_phase"),
        spec("ring", 11, 6, 4),         spec("jump", 10, 8, 3, "tree"), spec("bcast_1d", 9, 12, 4),
        spec("allreduce_naive", 8, 16, 3, "left_right"), spec("allreduce_ring", 8, 19), spec("butterfly", 9, 18),
        spec2("reduce_2d", 5, 6, 11, 2, 3, "left_right"), spec2("bcast_2d", 4, 7, 9, 3, 1), spec2("allreduce_2d", 4, 5, 10, 0, 0, "allreduce_ring"),
        spec2("allreduce_2d", 6, 3, 7, 0, 0, "chain"),
    };
    specs[11].G = 3;
    for (const auto& s : specs) {
        INFO(s.name << " P=" << s.P << " M=" << s.M << " N=" << s.N << " B=" << s.B);
        const Outcome fibers = run_layout(s, false), programs = run_layout(s, true);
        CHECK(programs.cycles == fibers.cycles);
        CHECK(programs.streams == fibers.streams);
        CHECK(programs.buffers == fibers.buffers);
    }
}

TEST_CASE("fabric program mode: a deadlock names the PEs, the colors and the parked streams", "[wafer][programs]") {
    // As the fiber engine's deadlock test: PE 1's router never leaves RAMP -> WEST.
    fh::Grid g(fh::wse2(), 3, 1);
    g.add_position({2, 0}, 5, kccl::Dir::ramp, kccl::Dir::W);
    g.add_position({1, 0}, 5, kccl::Dir::ramp, kccl::Dir::W);
    g.add_position({1, 0}, 5, kccl::Dir::E, kccl::Dir::W);
    g.add_position({0, 0}, 5, kccl::Dir::E, kccl::Dir::ramp);
    Fabric f(g);
    f.launch_program({2, 0}, program({step(kf::StepKind::send, 5, 4)}), 16);
    f.launch_program({0, 0}, program({step(kf::StepKind::recv, 5, 4)}), 16);
    CHECK_THROWS_WITH(f.run(), Catch::Contains("deadlock") && Catch::Contains("PE (0,0) blocked in recv on color 5 at cycle 0") &&
                                   Catch::Contains("needs 4 wavelets, has 0") &&
                                   Catch::Contains("stream from PE (2,0) (4 wavelets) parked at router (1,0) color 5: it arrives from EAST, position 0 accepts {RAMP}"));
}

TEST_CASE("fabric program mode: a step outside the PE's memory is named with its PE", "[wafer][programs]") {
    fh::Grid g(fh::wse2(), 2, 1);
    g.path(0, {1, 0}, {0, 0});
    Fabric f(g);
    f.launch_program({1, 0}, program({step(kf::StepKind::send, 0, 4, 60)}), 16);
    f.launch_program({0, 0}, program({step(kf::StepKind::recv, 0, 4)}), 16);
    CHECK_THROWS_WITH(f.run(), Catch::Contains("fabric: PE (1,0): memory [60, 76) is outside this PE's 16 bytes"));
}

TEST_CASE("spec_of: a PatternArgs run as the layout builder's spec, and what it refuses", "[wafer][programs]") {
    kf::PatternArgs a;
    a.pattern = kf::Pattern::allreduce_2d;
    a.base[0] = kf::Pattern::allreduce_naive;
    a.base[1] = kf::Pattern::jump;
    a.base[2] = kf::Pattern::two_phase;
    a.root = 2;
    a.root_y = 1;
    a.s = 3;
    const fh::PatternSpec s = kccl::emu::wafer::spec_of(a, 4, 6, 9);
    CHECK(s.name == "allreduce_2d");
    CHECK((s.M == 4 && s.N == 6 && s.P == 0 && s.B == 9));
    CHECK((s.base == "jump" && s.base2 == "two_phase" && s.S == 3));
    CHECK((s.root_x == 2 && s.root_y == 1));
    // And it runs: the emulated cycles are the cost model's.
    CHECK(emulated(a, 4, 6, 9) == kf::cost::t_pattern(a, 4, 6, 9));

    kf::PatternArgs e;
    e.pattern = kf::Pattern::reduce_2d;  // chain reduces to an end; the builder would run left_right
    e.root = 3;
    CHECK_THROWS_WITH(kccl::emu::wafer::spec_of(e, 8, 8, 4),
                      Catch::Contains("base chain reduces to an end of a line, but the root is inside the root's row (3 of 0..7)"));
    kf::PatternArgs bf;
    bf.pattern = kf::Pattern::allreduce_2d;
    bf.base[0] = kf::Pattern::butterfly;
    CHECK_THROWS_WITH(kccl::emu::wafer::spec_of(bf, 4, 4, 4), Catch::Contains("builds allreduce_2d over allreduce_naive or allreduce_ring only"));
    kf::PatternArgs r;
    r.pattern = kf::Pattern::chain;
    r.root = 2;
    CHECK_THROWS_WITH(kccl::emu::wafer::spec_of(r, 1, 8, 4), Catch::Contains("this pattern reduces to PE 0"));
}

TEST_CASE("wafer auto vs emulated cycles: within 1.05x of the best implemented pattern, sampled", "[wafer][auto][programs][sweep]") {
    for (uint32_t P : {2u, 7u, 27u, 64u})
        for (uint32_t B : {1u, 40u, 1024u}) {
            check_auto_emulated(kccl::coll::Op::reduce, P, B);
            check_auto_emulated(kccl::coll::Op::all_reduce, P, B);
        }
}

TEST_CASE("wafer auto vs emulated cycles: the thesis's grid, dense", "[wafer][auto][programs][long]") {
    for (uint32_t P : {2u, 3u, 4u, 5u, 8u, 9u, 16u, 27u, 32u, 64u, 81u, 100u, 128u, 243u, 256u, 400u, 512u})
        for (uint32_t B : {1u, 4u, 16u, 64u, 256u, 1024u, 4096u}) {
            check_auto_emulated(kccl::coll::Op::reduce, P, B);
            check_auto_emulated(kccl::coll::Op::all_reduce, P, B);
        }
}

namespace {

/// 2D: auto's choice (reduce to (rx, ry), or allreduce) on an M x N grid, emulated, against the
/// best emulated run of every implemented 2D pattern: reduce_2d over every 1D reduce base (the
/// leftmost five where the root is a corner, left_right, jump and ring over each of them; two_phase
/// at the default S and the model's best S for the longer axis); allreduce_2d over allreduce_ring
/// and over allreduce_naive with each of those bases, rooted at (0, 0), the middles and the far
/// corner. Within 1.05x, and auto's prediction equal to its emulated cycles.
void check_auto_emulated_2d(kccl::coll::Op coll, uint32_t M, uint32_t N, uint32_t B, uint32_t rx = 0, uint32_t ry = 0) {
    kf::AutoRequest q;
    q.collective = coll;
    q.rows = M;
    q.cols = N;
    q.B = B;
    q.root = rx;
    q.root_y = ry;
    const kf::AutoChoice c = kf::choose(q);
    REQUIRE(c.cycles != kf::cost::kCostInvalid);
    INFO(kccl::coll::op_name(coll) << " " << M << " x " << N << " B=" << B << " root=(" << rx << "," << ry << "): auto chose " << name_of(c.args)
                                   << " (model " << c.cycles << ")");
    const uint64_t chosen = emulated(c.args, M, N, B);
    uint64_t best = chosen;
    std::string best_name = name_of(c.args) + " (auto)";
    auto offer = [&](const kf::PatternArgs& a) {
        uint64_t t = 0;
        try {
            t = emulated(a, M, N, B);
        } catch (const std::invalid_argument&) {  // an end base with its root inside a line: not a candidate
            return;
        }
        if (t < best) best = t, best_name = name_of(a);
    };
    const uint32_t longer = std::max(M, N);
    // Every 1D reduce base chain, written at depth d of a (d = 1: a.base[0] is the line pattern).
    auto each_base = [&](kf::PatternArgs a, uint32_t d, auto&& f) {
        const kf::Pattern leftmost[] = {kf::Pattern::scalar, kf::Pattern::chain, kf::Pattern::tree, kf::Pattern::two_phase, kf::Pattern::optimal};
        for (kf::Pattern p : leftmost)
            for (uint32_t sv : {0u, kf::cost::best_s(longer, B)}) {
                if (sv != 0 && p != kf::Pattern::two_phase) continue;
                a.s = sv;
                a.base[d - 1] = p;
                f(a);
                for (kf::Pattern outer : {kf::Pattern::left_right, kf::Pattern::jump}) {
                    a.base[d - 1] = outer;
                    a.base[d] = p;
                    f(a);
                }
            }
        a.s = 0;
        a.base[d - 1] = kf::Pattern::ring;
        f(a);
    };
    kf::PatternArgs a;
    if (coll == kccl::coll::Op::reduce) {
        a.pattern = kf::Pattern::reduce_2d;
        a.root = rx;
        a.root_y = ry;
        each_base(a, 1, offer);
    } else {
        a.pattern = kf::Pattern::allreduce_2d;
        a.base[0] = kf::Pattern::allreduce_ring;
        offer(a);
        a.base[0] = kf::Pattern::allreduce_naive;
        const uint32_t roots[][2] = {{0, 0}, {(N - 1) / 2, (M - 1) / 2}, {N - 1, M - 1}};
        for (const auto& r : roots) {
            a.root = r[0];
            a.root_y = r[1];
            each_base(a, 2, offer);
        }
    }
    INFO("emulated " << chosen << "; best implemented " << best_name << " at " << best);
    CHECK(chosen * 100 <= best * 105);
    CHECK(chosen == c.cycles);
}

}  // namespace

TEST_CASE("wafer auto vs emulated cycles in 2D: within 1.05x of the best implemented pattern, sampled", "[wafer][auto][programs][sweep]") {
    for (uint32_t M : {2u, 3u, 5u})
        for (uint32_t B : {1u, 40u}) {
            check_auto_emulated_2d(kccl::coll::Op::reduce, M, M, B);
            check_auto_emulated_2d(kccl::coll::Op::reduce, M, M, B, M / 2, M - 1);
            check_auto_emulated_2d(kccl::coll::Op::all_reduce, M, M, B);
        }
    check_auto_emulated_2d(kccl::coll::Op::reduce, 2, 7, 12, 3, 1);
    check_auto_emulated_2d(kccl::coll::Op::all_reduce, 4, 9, 12);
    check_auto_emulated_2d(kccl::coll::Op::reduce, 16, 16, 1, 8, 8);
    check_auto_emulated_2d(kccl::coll::Op::all_reduce, 16, 16, 1);
    check_auto_emulated_2d(kccl::coll::Op::all_reduce, 8, 8, 1028);
}

TEST_CASE("wafer auto vs emulated cycles in 2D: grids up to 64 x 64 (dense)", "[wafer][auto][programs][long]") {
    struct G {
        uint32_t M, N;
    };
    for (G g : {G{2, 2}, G{3, 3}, G{4, 4}, G{7, 7}, G{8, 8}, G{13, 13}, G{16, 16}, G{27, 27}, G{32, 32}, G{64, 64}, G{2, 64}, G{64, 3}, G{9, 16}})
        for (uint32_t B : {1u, 4u, 64u, 1028u, 4096u}) {
            if (uint64_t(g.M) * g.N * B > 64ull * 64 * 1028) continue;  // the biggest runs: 64 x 64 up to B = 1028
            check_auto_emulated_2d(kccl::coll::Op::reduce, g.M, g.N, B);
            check_auto_emulated_2d(kccl::coll::Op::reduce, g.M, g.N, B, g.N / 2, g.M / 2);
            check_auto_emulated_2d(kccl::coll::Op::reduce, g.M, g.N, B, g.N - 1, 0);
            check_auto_emulated_2d(kccl::coll::Op::all_reduce, g.M, g.N, B);
        }
}

TEST_CASE("fill_inputs writes input_word's values (the per-PE part hoisted)", "[wafer][programs]") {
    for (auto t : {kccl::coll::DataType::f32, kccl::coll::DataType::i32, kccl::coll::DataType::u32})
        for (uint64_t seed : {1ull, 7ull, 123456789ull})
            for (size_t pe : {size_t(0), size_t(5), size_t(745499)}) {
                std::vector<uint32_t> v(300);
                kccl::emu::wafer::fill_inputs(t, seed, pe, v.data(), 300);
                for (uint32_t k = 0; k < 300; ++k) REQUIRE(v[k] == kccl::emu::wafer::input_word(t, seed, pe, k));
            }
}

TEST_CASE("combine_span gives combine_word's result per element, in place too (NaN and wrap included)", "[wafer][programs]") {
    std::vector<uint32_t> a(37), b(37);
    for (uint32_t k = 0; k < 37; ++k) {
        a[k] = kccl::emu::wafer::input_word(kccl::coll::DataType::u32, 3, 1, k);
        b[k] = kccl::emu::wafer::input_word(kccl::coll::DataType::u32, 4, 2, k);
    }
    const float nan = __builtin_nanf("");
    std::memcpy(&a[3], &nan, 4);  // a quiet NaN on either side
    std::memcpy(&b[8], &nan, 4);
    for (auto t : {kccl::coll::DataType::f32, kccl::coll::DataType::i32, kccl::coll::DataType::u32})
        for (auto op : {kf::kCopy, kccl::coll::RedOp::sum, kccl::coll::RedOp::max, kccl::coll::RedOp::min}) {
            const kf::Combine c{op, t};
            std::vector<uint32_t> out(37), in_place = a;
            kccl::emu::wafer::combine_span(c, out.data(), a.data(), b.data(), 37);
            kccl::emu::wafer::combine_span(c, in_place.data(), in_place.data(), b.data(), 37);
            for (uint32_t k = 0; k < 37; ++k) {
                INFO("type " << kccl::coll::dtype_name(t) << " op " << int(op) << " k " << k);
                REQUIRE(out[k] == kf::combine_word(c, a[k], b[k]));
                REQUIRE(in_place[k] == out[k]);
            }
        }
}
