// The NoC-multicast broadcast from the host API (run_collective, Collective::multicast and the
// automatic choice, ch::choose_broadcast): every rank's output compared element by element with
// the root's input as the test wrote it, on dirty L1, with the race detector on and an
// adversarial schedule, on IPCQ groups whose ranks are rectangles of several shapes (a row, two
// and three rows of the grid, one rank, groups of consecutive ranks), several roots and counts;
// which method ran; and the errors where it is not available.
#include <emulation/collective.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace kc = kccl::emu::collective;
using namespace kccl::coll;
using SumI = Reducer<int32_t, RedOp::sum>;

/// Rank r's input: distinct per rank, element and seed, so a wrong source or offset shows.
std::vector<std::vector<int32_t>> inputs(uint32_t ranks, uint32_t count, uint32_t seed) {
    std::vector<std::vector<int32_t>> in(ranks, std::vector<int32_t>(count));
    for (uint32_t r = 0; r < ranks; ++r)
        for (uint32_t i = 0; i < count; ++i) in[r][i] = int32_t((seed * 0x9E3779B9u) ^ (r * 0x01000193u + i * 0x2545F491u));
    return in;
}

kccl::emu::RunOptions checked(uint64_t seed) {
    kccl::emu::RunOptions o = kc::default_run_options();
    o.dirty_l1 = kccl::emu::RunOptions::DirtyL1::on;
    o.race = kccl::emu::RunOptions::RaceCheck::on;
    o.adversary.enabled = true;
    o.adversary.seed = seed;
    return o;
}

kc::GroupOptions ipcq(uint32_t ranks) {
    kc::GroupOptions g;
    g.transport = Transport::ipcq;
    g.ranks = ranks;
    g.message_bytes = 256;
    return g;
}

/// Runs the broadcast and checks every rank's first `count` elements against the root's input
/// (root: the rank inside each group; with several groups, each group's own root).
void run_and_check(kc::GroupOptions g, kc::Collective c, uint64_t seed, bool want_multicast) {
    const auto in = inputs(g.ranks, c.count, uint32_t(seed));
    const auto res = kc::run_collective<SumI>(g, c, in, checked(seed));
    INFO(res.summary());
    REQUIRE(res.ok());
    CHECK(res.report.races.empty());
    CHECK(res.multicast == want_multicast);
    CHECK(res.method_name() == (want_multicast ? std::string("multicast") : std::string(method_name(res.method()))));
    uint64_t wrong = 0;
    for (const auto& members : res.groups)
        for (uint32_t r : members) {
            const uint32_t src = members[c.root];
            REQUIRE(res.outputs[r].size() >= c.count);
            for (uint32_t i = 0; i < c.count; ++i)
                if (res.outputs[r][i] != in[src][i] && wrong++ < 3)
                    FAIL_CHECK("rank " << r << " out[" << i << "] = " << res.outputs[r][i] << ", want " << in[src][i]);
        }
    CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("run_collective multicast: outputs equal the root's input on rectangles of several shapes, roots and counts; "
          "dirty L1, race detector, adversary", "[host_api][collectives][mcast_broadcast]") {
    struct Case {
        uint32_t ranks, root, count;
    };
    // The IPCQ group puts rank r at (r % w, r / w), w = 4 up to 4 ranks, else 8: 1 rank, a row of
    // 3, a row of 8, 8 x 2 and 8 x 3. Counts: one element, not a multiple of 4 elements (16
    // bytes), one chunk (4096 bytes) and several chunks with a partial last one.
    const Case cases[] = {{1, 0, 5}, {3, 2, 1}, {3, 1, 1027}, {8, 0, 7}, {8, 5, 3000}, {16, 9, 1024}, {16, 15, 2500}, {24, 13, 333}};
    uint64_t seed = 1;
    for (const Case& k : cases) {
        kc::Collective c;
        c.op = Op::broadcast;
        c.count = k.count;
        c.root = k.root;
        c.multicast = true;
        INFO("ranks " << k.ranks << " root " << k.root << " count " << k.count << " seed " << seed);
        run_and_check(ipcq(k.ranks), c, seed++, true);
    }
}

TEST_CASE("run_collective multicast: several groups of consecutive ranks, each a rectangle, at once",
          "[host_api][collectives][mcast_broadcast]") {
    kc::GroupOptions g = ipcq(16);
    g.groups = CommGroup::consecutive(4);  // rows of 4 in the 8-wide grid
    kc::Collective c;
    c.op = Op::broadcast;
    c.count = 1500;
    c.root = 3;
    c.multicast = true;
    run_and_check(g, c, 77, true);
}

TEST_CASE("run_collective broadcast, automatic: multicast where choose_broadcast takes it, the method table elsewhere",
          "[host_api][collectives][mcast_broadcast]") {
    kc::Collective c;
    c.op = Op::broadcast;
    c.count = 600;
    c.root = 2;
    // A row of 8 cores: a rectangle, so the rule takes multicast.
    run_and_check(ipcq(8), c, 5, true);
    // 12 ranks: a row of 8 and 4 more, not a rectangle: the method table's choice.
    run_and_check(ipcq(12), c, 6, false);
    // EDM (chips over Ethernet): never.
    kc::GroupOptions e = ipcq(4);
    e.transport = Transport::edm;
    run_and_check(e, c, 7, false);
    // In place: the multicast broadcast needs the root's input and output disjoint.
    kc::Collective inplace = c;
    inplace.in_place = true;
    const auto in = inputs(8, c.count, 8);
    const auto r = kc::run_collective<SumI>(ipcq(8), inplace, in, checked(8));
    REQUIRE(r.ok());
    CHECK_FALSE(r.multicast);
    // The rule itself on the same groups (its own answer, which run_collective must follow).
    CHECK(kccl::coll::host::choose_broadcast(Transport::ipcq, {{0, 0, 0}, {0, 1, 0}, {0, 2, 0}}, Topology::ring, 2400, false).multicast);
    // An explicit method is never replaced.
    kc::Collective chain = c;
    chain.method = Method::line;
    const auto rl = kc::run_collective<SumI>(ipcq(8), chain, inputs(8, c.count, 9), checked(9));
    REQUIRE(rl.ok());
    CHECK_FALSE(rl.multicast);
    CHECK(rl.method_name() == "line");
}

TEST_CASE("run_collective multicast: where it is not available the error names the reason and what is allowed",
          "[host_api][collectives][mcast_broadcast]") {
    kc::Collective c;
    c.op = Op::broadcast;
    c.count = 64;
    c.multicast = true;
    auto error_of = [&](const kc::GroupOptions& g, const kc::Collective& cc) -> std::string {
        try {
            kc::run_collective<SumI>(g, cc, inputs(g.ranks, cc.count, 1));
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "no error";
    };
    kc::GroupOptions e = ipcq(4);
    e.transport = Transport::edm;
    const std::string edm = error_of(e, c);
    CHECK_THAT(edm, Catch::Contains("method multicast") && Catch::Contains("needs the IPCQ transport") &&
                        Catch::Contains("binomial_tree"));
    const std::string notrect = error_of(ipcq(12), c);
    CHECK_THAT(notrect, Catch::Contains("do not form a rectangle") && Catch::Contains("(0,0)..(7,1)"));
    kc::GroupOptions orth = ipcq(8);
    orth.groups = CommGroup::orthogonal(2);  // {0, 4}: cores (0,0) and (4,0)
    CHECK_THAT(error_of(orth, c), Catch::Contains("group 0: ") && Catch::Contains("do not form a rectangle"));
    kc::Collective inplace = c;
    inplace.in_place = true;
    CHECK_THAT(error_of(ipcq(4), inplace), Catch::Contains("in place") && Catch::Contains("disjoint"));
    kc::Collective ar = c;
    ar.op = Op::all_reduce;
    CHECK_THAT(error_of(ipcq(4), ar), Catch::Contains("all_reduce does not take it (only broadcast does)"));
    kc::Collective both = c;
    both.method = Method::binomial_tree;
    CHECK_THAT(error_of(ipcq(4), both), Catch::Contains("set one of them"));
}

TEST_CASE("run_collective multicast: IPCQ mesh groups whose ranks are a rectangle of cores, asked for and automatic",
          "[host_api][collectives][mcast_broadcast][mesh]") {
    // A mesh group's ranks sit where the IPCQ group puts any rank: (r % w, r / w), w = 8 above 4
    // ranks. 2 x 3 and 2 x 4 meshes: a row of 6 / 8 cores; a 4 x 4 mesh: the 8 x 2 rectangle; a
    // 3 x 3 torus: the same row of 8 plus one core, not a rectangle.
    struct Case {
        uint32_t ranks, cols, root, count;
        bool wrap, ask;
    };
    uint64_t seed = 40;
    for (const Case& k : {Case{6, 3, 4, 1000, false, true}, Case{8, 4, 0, 2500, false, false}, Case{8, 4, 7, 5, false, true},
                          Case{16, 4, 10, 1500, false, false}, Case{6, 3, 1, 700, true, false}}) {
        kc::GroupOptions g = ipcq(k.ranks);
        g.shape = GroupShape::mesh;
        g.mesh_cols = k.cols;
        g.mesh_wrap = k.wrap;
        kc::Collective c;
        c.op = Op::broadcast;
        c.count = k.count;
        c.root = k.root;
        c.multicast = k.ask;
        INFO(k.ranks / k.cols << " x " << k.cols << (k.wrap ? " torus" : " mesh") << " root " << k.root << " count " << k.count
                                << (k.ask ? " (asked for)" : " (automatic)"));
        run_and_check(g, c, seed++, true);
    }
    // Where the mesh's ranks are not a rectangle of cores the error says why multicast is not
    // available, and that the method table has no broadcast on a mesh without routes.
    kc::GroupOptions t = ipcq(9);
    t.shape = GroupShape::mesh;
    t.mesh_cols = 3;
    t.mesh_wrap = true;
    kc::Collective c;
    c.op = Op::broadcast;
    c.count = 64;
    for (const bool ask : {true, false}) {
        c.multicast = ask;
        std::string what = "no error";
        try {
            kc::run_collective<SumI>(t, c, inputs(9, 64, 1));
        } catch (const std::invalid_argument& e) {
            what = e.what();
        }
        INFO(what);
        CHECK_THAT(what, Catch::Contains("do not form a rectangle"));
        if (!ask) CHECK_THAT(what, Catch::Contains("torus"));
    }
}
