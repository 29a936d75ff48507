// The host API of emulation/collective.hpp: run_collective's outputs against plain loops written
// here from the operations' definitions, its errors, its times and trace, the lower level (a
// kernel body of one's own around the executor), and which collectives may run in place
// (input == output; docs/host-api.md states the list this test checks).
#include <emulation/collective.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

namespace {

namespace kc = kccl::emu::collective;
using namespace kccl::coll;
using SumF = Reducer<float, RedOp::sum>;

std::vector<std::vector<float>> small_ints(uint32_t ranks, uint32_t count) {
    std::vector<std::vector<float>> in(ranks, std::vector<float>(count));
    for (uint32_t r = 0; r < ranks; ++r)
        for (uint32_t i = 0; i < count; ++i) in[r][i] = float(int((r * 7 + i * 3) % 11) - 5);
    return in;
}

kc::GroupOptions group(Transport t, uint32_t ranks, GroupShape shape = GroupShape::ring) {
    kc::GroupOptions g;
    g.transport = t;
    g.ranks = ranks;
    g.shape = shape;
    g.message_bytes = 256;
    return g;
}

/// Expected output of rank r for `op` on inputs `in`, written from the definitions (frag: the
/// layout's fragment stride; out_elems: the output buffer's length; elements not defined are NaN
/// and not compared).
std::vector<float> expected(Op op, const std::vector<std::vector<float>>& in, uint32_t r, uint32_t root, uint32_t peer,
                            uint32_t frag, uint32_t out_elems) {
    const uint32_t p = uint32_t(in.size()), n = uint32_t(in[0].size());
    std::vector<float> e(out_elems, NAN);
    auto sum = [&](uint32_t i) {
        float s = 0;
        for (uint32_t q = 0; q < p; ++q) s += in[q][i];
        return s;
    };
    switch (op) {
        case Op::all_reduce: for (uint32_t i = 0; i < n; ++i) e[i] = sum(i); break;
        case Op::reduce: if (r == root) for (uint32_t i = 0; i < n; ++i) e[i] = sum(i); break;
        case Op::broadcast: for (uint32_t i = 0; i < n; ++i) e[i] = in[root][i]; break;
        case Op::send_recv: if (r == peer) for (uint32_t i = 0; i < n; ++i) e[i] = in[root][i]; break;
        case Op::all_gather:
            for (uint32_t f = 0; f < p; ++f) for (uint32_t j = 0; j < n; ++j) e[f * frag + j] = in[f][j];
            break;
        case Op::gather:
            if (r == root) for (uint32_t f = 0; f < p; ++f) for (uint32_t j = 0; j < n; ++j) e[f * frag + j] = in[f][j];
            break;
        case Op::reduce_scatter:
            for (uint32_t j = 0; j < frag; ++j) e[j] = r * frag + j < n ? sum(r * frag + j) : 0.f;
            break;
        case Op::scatter:
            for (uint32_t j = 0; j < frag && r * frag + j < n; ++j) e[j] = in[root][r * frag + j];
            break;
        case Op::all_to_all:
            for (uint32_t f = 0; f < p; ++f)
                for (uint32_t j = 0; j < frag && r * frag + j < n; ++j) e[f * frag + j] = in[f][r * frag + j];
            break;
        case Op::barrier: break;
    }
    return e;
}

/// Number of elements of the result that differ from expected().
template <class R>
uint32_t wrong(const R& res, Op op, const std::vector<std::vector<float>>& in, uint32_t root, uint32_t peer) {
    uint32_t bad = 0;
    for (uint32_t r = 0; r < in.size(); ++r) {
        const auto e = expected(op, in, r, root, peer, res.layout.frag, res.layout.out_elems);
        for (size_t i = 0; i < e.size(); ++i)
            if (!std::isnan(e[i]) && res.outputs[r][i] != e[i]) ++bad;
    }
    return bad;
}

}  // namespace

TEST_CASE("run_collective: all_reduce over EDM and all_gather over IPCQ, outputs as defined", "[host_api][collectives]") {
    {
        const auto in = small_ints(4, 300);
        kc::Collective c;
        c.op = Op::all_reduce;
        c.count = 300;
        const auto r = kc::run_collective<SumF>(group(Transport::edm, 4), c, in);
        INFO(r.summary());
        REQUIRE(r.ok());
        CHECK(r.method() == choose_method(Op::all_reduce, Topology::ring, 4, 300 * 4));
        CHECK(wrong(r, Op::all_reduce, in, 0, 3) == 0);
        CHECK(r.outputs[2][7] == in[0][7] + in[1][7] + in[2][7] + in[3][7]);
        CHECK(r.host_us > 0);
        CHECK(r.modelled_us == 0);  // untimed
    }
    {
        const auto in = small_ints(5, 37);
        kc::Collective c;
        c.op = Op::all_gather;
        c.method = Method::ring_cw;
        c.count = 37;
        const auto r = kc::run_collective<SumF>(group(Transport::ipcq, 5), c, in);
        INFO(r.summary());
        REQUIRE(r.ok());
        CHECK(r.method() == Method::ring_cw);
        CHECK(wrong(r, Op::all_gather, in, 0, 4) == 0);
    }
}

TEST_CASE("run_collective: every op on a ring and the routed methods on all_pairs", "[host_api][collectives]") {
    const uint32_t p = 4, n = 50;
    const auto in = small_ints(p, n);
    for (Op op : {Op::all_gather, Op::reduce_scatter, Op::all_reduce, Op::broadcast, Op::reduce, Op::gather, Op::scatter,
                  Op::all_to_all, Op::send_recv}) {
        for (GroupShape shape : {GroupShape::ring, GroupShape::all_pairs}) {
            kc::Collective c;
            c.op = op;
            c.count = n;
            c.root = 1;
            c.peer = 2;
            INFO(op_name(op) << (shape == GroupShape::all_pairs ? " all_pairs" : " ring"));
            const auto r = kc::run_collective<SumF>(group(Transport::ipcq, p, shape), c, in);
            INFO(method_name(r.method()) << "\n" << r.summary());
            REQUIRE(r.ok());
            CHECK(wrong(r, op, in, 1, 2) == 0);
        }
    }
}

TEST_CASE("run_collective: bad collectives are errors naming what is wrong", "[host_api][collectives]") {
    const auto in = small_ints(4, 16);
    kc::Collective c;
    c.op = Op::all_gather;
    c.count = 16;
    c.method = Method::pairwise;
    CHECK_THROWS_WITH(kc::run_collective<SumF>(group(Transport::edm, 4), c, in),
                      Catch::Contains("all_gather does not take method pairwise (it takes: ring_cw, ring_ccw"));
    c.op = Op::all_reduce;
    c.method = Method::recursive_doubling;
    CHECK_THROWS_WITH(kc::run_collective<SumF>(group(Transport::edm, 4), c, in),
                      Catch::Contains("method recursive_doubling sends to ranks that are not neighbours: it needs a routed link"));
    c.method.reset();
    c.count = 17;
    CHECK_THROWS_WITH(kc::run_collective<SumF>(group(Transport::edm, 4), c, in),
                      Catch::Contains("input of rank 0 has 16 elements; the collective's count is 17"));
    c.count = 16;
    c.root = 4;
    c.op = Op::broadcast;
    CHECK_THROWS_WITH(kc::run_collective<SumF>(group(Transport::edm, 4), c, in),
                      Catch::Contains("is not a rank of a group of 4"));
}

TEST_CASE("run_collective: timed run, trace and the replay string of a failed run", "[host_api][collectives][trace]") {
    const auto in = small_ints(4, 256);
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = 256;
    auto model = kccl::emu::wormhole_model();
    kccl::emu::Trace trace;
    kccl::emu::RunOptions ro = kc::default_run_options();
    ro.timing = model.get();
    ro.trace = &trace;
    ro.dirty_l1 = kccl::emu::RunOptions::DirtyL1::off;
    const auto r = kc::run_collective<SumF>(group(Transport::edm, 4), c, in, ro);
    INFO(r.summary());
    REQUIRE(r.ok());
    CHECK(wrong(r, Op::all_reduce, in, 0, 3) == 0);
    CHECK(r.modelled_us > 1.0);  // 4 Ethernet hops of a few µs each at least
    CHECK(trace.json().find("\"traceEvents\"") != std::string::npos);
    CHECK(r.replay().find("policy=") == 0);

    // A run the watchdog stops: a group whose ranks do not all run the collective.
    kc::GroupOptions g = group(Transport::ipcq, 3);
    g.buffer_bytes = 4096;
    kc::Group grp(g);
    const kc::Layout L = kc::make_layout(kc::plan_collective(g, c, 4).shape, 64, kc::max_chunk_elems(g, 4));
    grp.add<kc::link_ipcq>([L](auto&, auto& link, const GroupArgs& ga) -> uint64_t {
        if (ga.rank != 0) execute_any<SumF>(link, kc::exec_params(L, ga), kc::group_dirs_of(ga));
        return 0;
    });
    kccl::emu::RunOptions adv = kc::default_run_options();
    adv.watchdog = std::chrono::milliseconds(500);
    adv.adversary.enabled = true;
    adv.adversary.seed = 5;
    const kccl::emu::RunReport rep = grp.run(adv);
    REQUIRE_FALSE(rep.ok());
    CHECK_THAT(rep.summary(), Catch::Contains("KCCL_EMU_REPLAY=\"policy=random,seed=5,"));
}

namespace user_handler {
int calls = 0;
void count(const char*, const char*, const char*, int) { ++calls; }
}  // namespace user_handler

TEST_CASE("the host API leaves the user's device-check handler installed", "[host_api][collectives]") {
    // Group, plan_collective and run_collective make host-side device checks throw while they
    // build, then put back the handler that was installed before (here the user's own).
    const kccl::assert_handler_t before = kccl::set_assert_handler(&user_handler::count);
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = 64;
    const kc::GroupOptions g = group(Transport::ipcq, 3);
    (void)kc::plan_collective(g, c, 4);
    CHECK(kccl::assert_handler() == &user_handler::count);
    {
        kc::Group grp(g);
        CHECK(kccl::assert_handler() == &user_handler::count);
        grp.add<kc::link_ipcq>([](auto&, auto&, const GroupArgs&) -> uint64_t { return 0; });
        grp.next_program();
        CHECK(kccl::assert_handler() == &user_handler::count);
    }
    const auto r = kc::run_collective<SumF>(g, c, small_ints(3, 64));
    REQUIRE(r.ok());
    CHECK(kccl::assert_handler() == &user_handler::count);
    CHECK_THROWS(kc::run_collective<SumF>(g, c, small_ints(2, 64)));  // two inputs for three ranks
    CHECK(kccl::assert_handler() == &user_handler::count);
    CHECK(user_handler::calls == 0);
    kccl::set_assert_handler(before);
}

TEST_CASE("A failed device check's summary carries the replay string", "[host_api][collectives]") {
    kc::GroupOptions g = group(Transport::ipcq, 2);
    kc::Group grp(g);
    grp.add<kc::link_ipcq>([](auto&, auto&, const GroupArgs& ga) -> uint64_t {
        KCCL_ASSERT(ga.rank != 1, "rank 1 refuses");
        return 0;
    });
    kccl::emu::RunOptions ro = kc::default_run_options();
    ro.adversary.enabled = true;
    ro.adversary.seed = 9;
    const kccl::emu::RunReport rep = grp.run(ro);
    REQUIRE_FALSE(rep.ok());
    CHECK_THAT(rep.summary(), Catch::Contains("rank 1 refuses") && Catch::Contains("replay: KCCL_EMU_REPLAY=\"policy=random,seed=9,"));
}

TEST_CASE("Group: one's own kernel body around the executor (fused compute before and after)", "[host_api][collectives]") {
    // Each rank scales its input by (rank + 1) in L1, all_reduces it, then adds 1 to the result:
    // compute fused with the collective in one kernel.
    const uint32_t p = 4, n = 64;
    kc::GroupOptions g = group(Transport::edm, p);
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = n;
    const kc::Layout L = kc::plan_collective(g, c, sizeof(float));
    g.buffer_bytes = kc::buffer_bytes_for(L, sizeof(float));
    kc::Group grp(g);
    grp.add<kc::link_edm>([L](auto& hal, auto& link, const GroupArgs& ga) -> uint64_t {
        float* in = reinterpret_cast<float*>(hal.l1_ptr(ga.input_l1, L.in_elems * 4));
        for (uint32_t i = 0; i < L.count; ++i) in[i] = float(ga.rank + 1) * float(i);  // compute before
        execute_any<SumF>(link, kc::exec_params(L, ga), kc::group_dirs_of(ga));
        float* out = reinterpret_cast<float*>(hal.l1_ptr(ga.output_l1, L.out_elems * 4));
        for (uint32_t i = 0; i < L.count; ++i) out[i] += 1.f;  // compute after
        link.quiesce();
        return 0;
    });
    const kccl::emu::RunReport rep = grp.run(kc::default_run_options());
    INFO(rep.summary());
    REQUIRE(rep.ok());
    for (uint32_t r = 0; r < p; ++r) {
        const float* out = reinterpret_cast<const float*>(grp.output(r));
        for (uint32_t i = 0; i < n; ++i) REQUIRE(out[i] == float(1 + 2 + 3 + 4) * float(i) + 1.f);
    }
}

namespace {

struct InPlaceConfig {
    Transport transport;
    uint32_t count;
    uint64_t seed;
};
constexpr InPlaceConfig kInPlaceConfigs[] = {{Transport::ipcq, 50, 1}, {Transport::edm, 700, 2}, {Transport::ipcq, 700, 2},
                                             {Transport::edm, 50, 1},  {Transport::ipcq, 50, 2},  {Transport::edm, 700, 1},
                                             {Transport::ipcq, 700, 1}, {Transport::edm, 50, 2}};

/// Runs op / method in place (4 ranks; routed methods on all_pairs, line on a line) under the
/// adversary: "OK", "WRONG" or "run failed: ...".
std::string in_place_verdict(Op op, Method m, const InPlaceConfig& cfg) {
    const uint32_t p = 4;
    const auto in = small_ints(p, cfg.count);
    kc::Collective c;
    c.op = op;
    c.count = cfg.count;
    c.root = 1;
    c.peer = 2;
    c.method = m;
    c.in_place = true;
    Shape probe;
    probe.op = op;
    probe.method = m;
    probe.ranks = p;
    const GroupShape shape = m == Method::line ? GroupShape::line : multi_hop(probe) ? GroupShape::all_pairs : GroupShape::ring;
    auto ro = kc::default_run_options();
    ro.adversary.enabled = true;
    ro.adversary.seed = cfg.seed;
    const auto r = kc::run_collective<SumF>(group(cfg.transport, p, shape), c, in, ro);
    if (!r.ok()) return "run failed: " + r.summary();
    return wrong(r, op, in, 1, 2) == 0 ? "OK" : "WRONG";
}

}  // namespace

// docs/host-api.md, "In place": the list stated there.
TEST_CASE("run_collective in place: the collectives docs/host-api.md lists as safe give the defined outputs, the others do not",
          "[host_api][collectives][in_place]") {
    using M = Method;
    const std::vector<std::pair<Op, std::vector<M>>> safe = {
        {Op::all_reduce, {M::ring_cw, M::ring_ccw, M::ring_bidir, M::ring_meet_middle, M::line, M::reduce_broadcast_chain,
                          M::reduce_broadcast_tree, M::recursive_doubling, M::rabenseifner}},
        {Op::all_gather, {M::ring_cw, M::ring_ccw, M::ring_bidir}},
        {Op::reduce_scatter, {M::ring_cw, M::ring_ccw, M::ring_bidir, M::ring_meet_middle}},
        {Op::broadcast, {M::ring_cw, M::ring_ccw, M::ring_meet_middle, M::line, M::binomial_tree}},
        {Op::reduce, {M::ring_cw, M::ring_ccw, M::ring_meet_middle, M::line, M::binomial_tree}},
        {Op::gather, {M::ring_cw, M::ring_ccw, M::ring_meet_middle, M::line, M::binomial_tree}},
        {Op::send_recv, {M::ring_cw, M::ring_ccw, M::ring_meet_middle, M::line, M::direct}},
    };
    const std::vector<std::pair<Op, std::vector<M>>> unsafe = {
        {Op::all_reduce, {M::broadcast_local_reduce}},
        {Op::all_gather, {M::ring_meet_middle, M::line}},
        {Op::reduce_scatter, {M::line}},
        {Op::scatter, {M::ring_cw, M::ring_ccw, M::ring_meet_middle, M::line, M::binomial_tree}},
        {Op::all_to_all, {M::ring_cw, M::ring_ccw, M::ring_meet_middle, M::line, M::pairwise}},
    };
    for (const auto& [op, methods] : safe)
        for (M m : methods)
            for (const InPlaceConfig& cfg : {kInPlaceConfigs[0], kInPlaceConfigs[1]}) {
                INFO(op_name(op) << " / " << method_name(m) << (cfg.transport == Transport::edm ? " edm" : " ipcq") << " count "
                                 << cfg.count);
                CHECK(in_place_verdict(op, m, cfg) == "OK");
            }
    for (const auto& [op, methods] : unsafe)
        for (M m : methods) {
            INFO(op_name(op) << " / " << method_name(m));
            bool wrong_somewhere = false;
            for (const InPlaceConfig& cfg : kInPlaceConfigs) {
                const std::string v = in_place_verdict(op, m, cfg);
                // The executor refuses in place where it would give wrong outputs.
                CHECK_THAT(v, Catch::StartsWith("run failed") && Catch::Contains("overlap (allowed: disjoint buffers"));
                if (v.rfind("run failed", 0) == 0) wrong_somewhere = true;
            }
            CHECK(wrong_somewhere);
        }
}

// ---- tori, bool, 64-bit layout sizes, dirty L1 by default, one-rank interleaved lanes ----

TEST_CASE("run_collective on a torus (mesh_wrap): all_reduce and all_gather equal plain loops", "[host_api][collectives][torus]") {
    // 3 x 3 (both dimensions wrap) and 2 x 3 (the columns wrap; a dimension of 2 has no wrap link).
    struct Case {
        Transport t;
        uint32_t ranks, cols;
    };
    for (const Case& k : {Case{Transport::edm, 9, 3}, Case{Transport::ipcq, 9, 3}, Case{Transport::edm, 6, 3}}) {
        const uint32_t p = k.ranks, n = 100;
        kc::GroupOptions g = group(k.t, p, GroupShape::mesh);
        g.mesh_cols = k.cols;
        g.mesh_wrap = true;
        const auto in = small_ints(p, n);
        for (Op op : {Op::all_reduce, Op::all_gather}) {
            INFO((k.t == Transport::edm ? "edm " : "ipcq ") << p << " ranks, " << k.cols << " columns, " << op_name(op));
            kc::Collective c;
            c.op = op;
            c.count = n;
            auto ro = kc::default_run_options();
            ro.adversary.enabled = true;
            ro.adversary.seed = 3;
            const auto r = kc::run_collective<SumF>(g, c, in, ro);
            INFO(r.summary());
            REQUIRE(r.ok());
            CHECK(r.layout.shape.topo == Topology::torus);
            CHECK(r.layout.shape.rows * r.layout.shape.cols == p);
            CHECK(r.method() == Method::mesh_2d);
            uint32_t bad = 0;
            for (uint32_t q = 0; q < p; ++q)
                for (uint32_t i = 0; i < n; ++i) {
                    if (op == Op::all_reduce) {
                        float s = 0;
                        for (uint32_t f = 0; f < p; ++f) s += in[f][i];
                        bad += r.outputs[q][i] != s;
                    } else {
                        for (uint32_t f = 0; f < p; ++f) bad += r.outputs[q][f * r.layout.frag + i] != in[f][i];
                    }
                }
            CHECK(bad == 0);
        }
    }
}

TEST_CASE("run_collective: layout sizes are 64-bit, so buffers above 1 GiB per rank are refused, not wrapped",
          "[host_api][collectives][layout]") {
    kc::GroupOptions g = group(Transport::ipcq, 16);
    g.message_bytes = 1024;  // 256 floats per chunk
    const std::vector<std::vector<float>> none(16);  // never read: the size error comes first
    auto error_of = [&](const kc::Collective& c) -> std::string {
        try {
            kc::run_collective<SumF>(g, c, none);
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "no error";
    };
    // all_gather, 2^28 floats per rank on 16 ranks: a 16 GiB output (2^32 elements, which wrapped to 0).
    kc::Collective ag;
    ag.op = Op::all_gather;
    ag.count = 1u << 28;
    CHECK_THAT(error_of(ag), Catch::Contains("above 1 GiB per rank") && Catch::Contains("17179869184 bytes"));
    // all_reduce by broadcast_local_reduce, 2^28 floats: the input is 1 GiB, the scratch (every
    // rank's input) 16 GiB (2^32 elements).
    kc::Collective blr;
    blr.op = Op::all_reduce;
    blr.method = Method::broadcast_local_reduce;
    blr.count = 1u << 28;
    CHECK_THAT(error_of(blr), Catch::Contains("above 1 GiB per rank") && Catch::Contains("scratch"));
    // all_to_all of 2^32 - 1 floats: input, output and scratch all 2^32 elements or more.
    kc::Collective a2a;
    a2a.op = Op::all_to_all;
    a2a.count = 0xFFFFFFFFu;
    CHECK_THAT(error_of(a2a), Catch::Contains("above 1 GiB per rank"));
    // all_to_all of 2^30 one-byte elements: a 1 GiB input, a 4 GiB scratch (2^32 elements).
    kc::Collective a2b;
    a2b.op = Op::all_to_all;
    a2b.count = 1u << 30;
    CHECK_THROWS_WITH(kc::plan_collective(g, a2b, 1), Catch::Contains("above 1 GiB per rank") && Catch::Contains("scratch"));
    // The layout itself (make_layout) never wraps, and buffer_bytes_for refuses it.
    Shape sh;
    sh.op = Op::all_gather;
    sh.method = Method::ring_cw;
    sh.ranks = 16;
    const kc::Layout L = kc::make_layout(sh, 1u << 28, kc::max_chunk_elems(g, 4));
    CHECK(L.out_elems >= L.in_elems);
    CHECK(uint64_t(L.out_elems) >= (1ull << 31));  // 2^32 elements, not 0
    CHECK_THROWS_WITH(kc::buffer_bytes_for(L, 4), Catch::Contains("above 1 GiB per rank"));
}

TEST_CASE("run_collective: every op plans at coll_perf's largest size, 512 MiB; scratch is what limits it",
          "[host_api][collectives][layout]") {
    // A method may use scratch of twice the largest tensor buffer (schedule.hpp scratch_chunks), and
    // every buffer is at most 1 GiB: so coll_perf's -b/-e stop at 512M, where all_reduce (512 MiB
    // tensor) and all_gather (512 MiB output) plan with a 1 GiB scratch, and 1 GiB is refused with
    // the scratch buffer named.
    kc::GroupOptions g = group(Transport::ipcq, 8);
    g.message_bytes = 1024;
    for (Op op : {Op::all_reduce, Op::all_gather, Op::reduce_scatter}) {
        INFO(op_name(op));
        kc::Collective c;
        c.op = op;
        c.method = Method::ring_bidir;
        c.count = op == Op::all_gather ? 1u << 24 : 1u << 27;  // 512 MiB of floats in the largest tensor buffer
        const kc::Layout L = kc::plan_collective(g, c, 4);
        CHECK(kc::buffer_bytes_for(L, 4) == (1ull << 30));
        kc::Collective twice = c;
        twice.count *= 2;
        CHECK_THROWS_WITH(kc::plan_collective(g, twice, 4), Catch::Contains("needs a scratch buffer of 536870912 elements (2147483648 bytes)"));
    }
}

TEST_CASE("run_collective on bool: logical_or and logical_and all_reduce, broadcast, all_gather equal plain loops",
          "[host_api][collectives][bool]") {
    const uint32_t p = 5, n = 77;
    std::vector<std::vector<bool>> in(p, std::vector<bool>(n));
    for (uint32_t r = 0; r < p; ++r)
        for (uint32_t i = 0; i < n; ++i) in[r][i] = ((i * 7 + r * 3) % 5) == 0 || (i % 11) == 10;  // some all-true columns
    kc::GroupOptions g = group(Transport::ipcq, p);
    auto check = [&](const auto& r, Op op, bool is_and) {
        INFO(op_name(op) << (is_and ? " logical_and" : " logical_or") << "\n" << r.summary());
        REQUIRE(r.ok());
        uint32_t bad = 0;
        for (uint32_t q = 0; q < p; ++q) {
            REQUIRE(r.outputs[q].size() == r.layout.out_elems);
            for (uint32_t i = 0; i < n; ++i) {
                if (op == Op::all_reduce) {
                    bool acc = is_and;
                    for (uint32_t f = 0; f < p; ++f) acc = is_and ? (acc && in[f][i]) : (acc || in[f][i]);
                    bad += r.outputs[q][i] != acc;
                } else if (op == Op::broadcast) {
                    bad += r.outputs[q][i] != in[2][i];
                } else {
                    for (uint32_t f = 0; f < p; ++f) bad += r.outputs[q][f * r.layout.frag + i] != in[f][i];
                }
            }
        }
        CHECK(bad == 0);
    };
    for (Op op : {Op::all_reduce, Op::broadcast, Op::all_gather}) {
        kc::Collective c;
        c.op = op;
        c.count = n;
        c.root = 2;
        check(kc::run_collective<Reducer<bool, RedOp::logical_or>, kc::link_ipcq>(g, c, in), op, false);
        check(kc::run_collective<Reducer<bool, RedOp::logical_and>, kc::link_ipcq>(g, c, in), op, true);
    }
    // Not every value of every column is the same: both operators have something to decide.
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = n;
    const auto o = kc::run_collective<Reducer<bool, RedOp::logical_or>, kc::link_ipcq>(g, c, in);
    const auto a = kc::run_collective<Reducer<bool, RedOp::logical_and>, kc::link_ipcq>(g, c, in);
    REQUIRE((o.ok() && a.ok()));
    uint32_t differ = 0;
    for (uint32_t i = 0; i < n; ++i) differ += o.outputs[0][i] != a.outputs[0][i];
    CHECK(differ > 0);
}

TEST_CASE("default_run_options starts the cores on dirty L1 (seeded garbage), as documented",
          "[host_api][collectives][dirty_l1]") {
    const kccl::emu::RunOptions d = kc::default_run_options();
    CHECK(kccl::emu::resolved_dirty_l1(d));
    CHECK_THAT(kccl::emu::replay_string(d), Catch::Contains("dirty=1"));
    // A kernel that reads its scratch buffer before anything wrote it sees the garbage.
    for (const bool dirty : {true, false}) {
        kc::GroupOptions g = group(Transport::ipcq, 2);
        g.buffer_bytes = 1024;
        kc::Group grp(g);
        std::vector<uint32_t> nonzero(2, 0);
        grp.add<kc::link_ipcq>([&nonzero](auto& hal, auto&, const GroupArgs& ga) -> uint64_t {
            const uint32_t* w = reinterpret_cast<const uint32_t*>(hal.l1_ptr(ga.scratch_l1, 1024));
            uint32_t k = 0;
            for (uint32_t i = 0; i < 256; ++i) k += w[i] != 0;
            nonzero[ga.rank] = k;
            return 0;
        });
        kccl::emu::RunOptions ro = kc::default_run_options();
        if (!dirty) ro.dirty_l1 = kccl::emu::RunOptions::DirtyL1::off;
        const kccl::emu::RunReport rep = grp.run(ro);
        INFO(rep.summary() << (dirty ? "default options" : "dirty_l1 off"));
        REQUIRE(rep.ok());
        for (uint32_t r = 0; r < 2; ++r) {
            if (dirty) CHECK(nonzero[r] > 128);  // garbage: most words are not 0
            else CHECK(nonzero[r] == 0);
        }
    }
}

TEST_CASE("execute_any_interleaved on a one-rank group: the output is the input, as with execute_any",
          "[host_api][collectives][interleaved]") {
    struct Case {
        Op op;
        Method m;
    };
    const uint32_t n = 300;
    // ring_bidir: two lanes (both directions) even on one rank, so the interleaved path runs
    for (const Case& k : {Case{Op::all_reduce, Method::ring_bidir}, Case{Op::all_gather, Method::ring_bidir},
                          Case{Op::reduce_scatter, Method::ring_bidir}}) {
        for (const bool interleaved : {true, false}) {
            INFO(op_name(k.op) << " / " << method_name(k.m) << (interleaved ? " interleaved" : " execute_any"));
            kc::GroupOptions g = group(Transport::ipcq, 1);
            kc::Collective c;
            c.op = k.op;
            c.method = k.m;
            c.count = n;
            const kc::Layout L = kc::plan_collective(g, c, sizeof(float));
            REQUIRE(lanes(L.shape) == 2);  // two lanes: the interleaved path, not execute_any's
            g.buffer_bytes = kc::buffer_bytes_for(L, sizeof(float));
            kc::Group grp(g);
            grp.add<kc::link_ipcq>([L, interleaved](auto& hal, auto& link, const GroupArgs& ga) -> uint64_t {
                float* in = reinterpret_cast<float*>(hal.l1_ptr(ga.input_l1, L.in_elems * 4));
                for (uint32_t i = 0; i < L.count; ++i) in[i] = float(i % 97) - 40.f;
                if (interleaved) execute_any_interleaved<SumF>(link, kc::exec_params(L, ga), kc::group_dirs_of(ga));
                else execute_any<SumF>(link, kc::exec_params(L, ga), kc::group_dirs_of(ga));
                link.quiesce();
                return 0;
            });
            const kccl::emu::RunReport rep = grp.run(kc::default_run_options());
            INFO(rep.summary());
            REQUIRE(rep.ok());
            const float* out = reinterpret_cast<const float*>(grp.output(0));
            uint32_t bad = 0;
            for (uint32_t i = 0; i < n; ++i) bad += out[i] != float(i % 97) - 40.f;
            CHECK(bad == 0);
        }
    }
}
