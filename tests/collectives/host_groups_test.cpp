// Communication groups in the host API (GroupOptions::groups): run_collective runs the collective
// on every group of the all / consecutive / orthogonal kinds at once, in one launch. Every output
// element is compared with a reference written here: the groups' members by their definition
// (Graphcore GCL's kinds, docs/host-api.md "Groups") and the operations by theirs — neither taken
// from the code under test. Runs start on dirty L1, in normal and adversarial mode.
#include <emulation/collective.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

namespace kc = kccl::emu::collective;
using namespace kccl::coll;
using SumU = Reducer<uint32_t, RedOp::sum>;

enum class Kind { consecutive, orthogonal };

/// The groups by definition: consecutive(k) = {0..k-1} {k..2k-1} ...; orthogonal(k) = the
/// ranks with stride m = n/k: {0, m, 2m, ...} {1, m+1, ...} ....
std::vector<std::vector<uint32_t>> groups_by_definition(Kind kind, uint32_t k, uint32_t n) {
    std::vector<std::vector<uint32_t>> t;
    const uint32_t m = n / k;
    for (uint32_t s = 0; s < m; ++s) {
        t.emplace_back();
        for (uint32_t i = 0; i < k; ++i) t.back().push_back(kind == Kind::consecutive ? s * k + i : s + i * m);
    }
    return t;
}

CommGroup comm_group(Kind kind, uint32_t k) { return kind == Kind::consecutive ? CommGroup::consecutive(k) : CommGroup::orthogonal(k); }

std::vector<std::vector<uint32_t>> distinct_inputs(uint32_t n, uint32_t count) {
    std::vector<std::vector<uint32_t>> in(n, std::vector<uint32_t>(count));
    for (uint32_t r = 0; r < n; ++r)
        for (uint32_t i = 0; i < count; ++i) in[r][i] = (r + 1) * 0x01000193u ^ (i * 2654435761u);  // differs per rank
    return in;
}

/// Compares every defined output element of every rank with the definition of `op` over the
/// members of the rank's group; returns a description of the first few differences ("" if none).
template <class R>
std::string compare(const R& res, Op op, const std::vector<std::vector<uint32_t>>& table, const std::vector<std::vector<uint32_t>>& in,
                    uint32_t root, uint32_t peer) {
    const uint32_t n = uint32_t(in[0].size()), F = res.layout.frag;
    std::string bad;
    uint32_t nbad = 0, checked = 0;
    auto expect = [&](uint32_t rank, size_t at, uint32_t want) {
        ++checked;
        const uint32_t got = res.outputs[rank][at];
        if (got != want && nbad++ < 5)
            bad += "rank " + std::to_string(rank) + " out[" + std::to_string(at) + "] = " + std::to_string(got) + ", want " +
                   std::to_string(want) + "; ";
    };
    for (const auto& mem : table) {
        const uint32_t k = uint32_t(mem.size());
        auto sum = [&](uint32_t i) {
            uint32_t s = 0;
            for (uint32_t q : mem) s += in[q][i];
            return s;
        };
        for (uint32_t j = 0; j < k; ++j) {
            const uint32_t r = mem[j];  // rank j of this group
            switch (op) {
                case Op::all_reduce: for (uint32_t i = 0; i < n; ++i) expect(r, i, sum(i)); break;
                case Op::reduce: if (j == root) for (uint32_t i = 0; i < n; ++i) expect(r, i, sum(i)); break;
                case Op::broadcast: for (uint32_t i = 0; i < n; ++i) expect(r, i, in[mem[root]][i]); break;
                case Op::send_recv: if (j == peer) for (uint32_t i = 0; i < n; ++i) expect(r, i, in[mem[root]][i]); break;
                case Op::all_gather:
                    for (uint32_t f = 0; f < k; ++f) for (uint32_t i = 0; i < n; ++i) expect(r, size_t(f) * F + i, in[mem[f]][i]);
                    break;
                case Op::gather:
                    if (j == root) for (uint32_t f = 0; f < k; ++f) for (uint32_t i = 0; i < n; ++i) expect(r, size_t(f) * F + i, in[mem[f]][i]);
                    break;
                case Op::reduce_scatter:
                    for (uint32_t i = 0; i < F; ++i) expect(r, i, j * F + i < n ? sum(j * F + i) : 0u);
                    break;
                case Op::scatter:
                    for (uint32_t i = 0; i < F && j * F + i < n; ++i) expect(r, i, in[mem[root]][j * F + i]);
                    break;
                case Op::all_to_all:
                    for (uint32_t f = 0; f < k; ++f)
                        for (uint32_t i = 0; i < F && j * F + i < n; ++i) expect(r, size_t(f) * F + i, in[mem[f]][j * F + i]);
                    break;
                default: break;
            }
        }
    }
    if (checked == 0) return "nothing was compared";
    return nbad ? std::to_string(nbad) + " wrong of " + std::to_string(checked) + ": " + bad : "";
}

struct Case {
    Transport transport;
    GroupShape shape;
    uint32_t ranks;
    Kind kind;
    uint32_t k;
    Op op;
    std::optional<Method> method;
    uint32_t count;
    uint32_t root = 0, peer = 0;
};

std::string describe(const Case& c) {
    return std::string(kc::name(c.transport)) + " " + (c.shape == GroupShape::all_pairs ? "all_pairs" : c.shape == GroupShape::line ? "line" : "ring") +
           ", " + std::to_string(c.ranks) + " ranks in " + (c.kind == Kind::consecutive ? "consecutive(" : "orthogonal(") +
           std::to_string(c.k) + ") groups: " + op_name(c.op) + (c.method ? std::string(" / ") + method_name(*c.method) : "") + " of " +
           std::to_string(c.count) + " root " + std::to_string(c.root);
}

void run_case(const Case& cs, uint64_t adversary_seed) {
    const auto table = groups_by_definition(cs.kind, cs.k, cs.ranks);
    kc::GroupOptions g;
    g.transport = cs.transport;
    g.shape = cs.shape;
    g.ranks = cs.ranks;
    g.message_bytes = 256;
    g.groups = comm_group(cs.kind, cs.k);
    kc::Collective c;
    c.op = cs.op;
    c.method = cs.method;
    c.count = cs.count;
    c.root = cs.root;
    c.peer = cs.peer;
    const auto in = distinct_inputs(cs.ranks, cs.count);
    kccl::emu::RunOptions ro = kc::default_run_options();
    ro.dirty_l1 = kccl::emu::RunOptions::DirtyL1::on;  // hardware never zeroes L1
    ro.adversary.enabled = adversary_seed != 0;
    ro.adversary.seed = adversary_seed;
    ro.schedule.seed = adversary_seed;
    INFO(describe(cs) << (adversary_seed ? ", adversarial seed " + std::to_string(adversary_seed) : std::string(", normal mode")));
    const auto r = kc::run_collective<SumU>(g, c, in, ro);
    INFO(method_name(r.method()) << "\n" << r.summary());
    REQUIRE(r.ok());
    CHECK(r.groups == table);
    CHECK(r.layout.shape.ranks == cs.k);
    REQUIRE(r.outputs.size() == cs.ranks);
    CHECK(compare(r, cs.op, table, in, cs.root, cs.peer) == "");
}

}  // namespace

TEST_CASE("run_collective on consecutive and orthogonal groups: every group's outputs as defined, in one launch",
          "[host_api][groups][collectives]") {
    const Transport I = Transport::ipcq, E = Transport::edm;
    const GroupShape ring = GroupShape::ring, line = GroupShape::line, ap = GroupShape::all_pairs;
    const std::vector<Case> cases = {
        {I, ring, 8, Kind::consecutive, 4, Op::all_reduce, std::nullopt, 150},
        {I, ring, 8, Kind::orthogonal, 4, Op::all_reduce, Method::ring_bidir, 150},
        {I, ring, 8, Kind::orthogonal, 2, Op::all_gather, Method::ring_cw, 33},
        {I, ring, 12, Kind::orthogonal, 3, Op::reduce_scatter, Method::ring_cw, 100},
        {I, ring, 8, Kind::consecutive, 2, Op::broadcast, std::nullopt, 64, 1},
        {I, line, 6, Kind::orthogonal, 3, Op::reduce, std::nullopt, 40, 2},
        {I, ap, 8, Kind::orthogonal, 4, Op::all_reduce, Method::recursive_doubling, 64},
        {I, ap, 8, Kind::consecutive, 4, Op::all_to_all, Method::pairwise, 40},
        {I, ring, 6, Kind::consecutive, 3, Op::gather, std::nullopt, 20, 1},
        {I, ring, 6, Kind::orthogonal, 3, Op::scatter, std::nullopt, 30, 2},
        {I, ring, 4, Kind::orthogonal, 2, Op::send_recv, std::nullopt, 30, 1, 0},
        {E, ring, 6, Kind::consecutive, 3, Op::all_reduce, std::nullopt, 200},
        {E, ring, 6, Kind::orthogonal, 2, Op::all_gather, Method::ring_bidir, 50},
        {E, line, 8, Kind::orthogonal, 4, Op::reduce_scatter, Method::line, 90},
        {E, ap, 6, Kind::orthogonal, 3, Op::all_reduce, Method::reduce_broadcast_tree, 48},
    };
    for (const Case& c : cases)
        for (uint64_t seed : {0ull, 0x5eedf00dull}) run_case(c, seed);
}

TEST_CASE("run_collective groups: all() and consecutive(ranks) are the whole group; size-1 groups keep their input",
          "[host_api][groups][collectives]") {
    run_case({Transport::ipcq, GroupShape::ring, 4, Kind::consecutive, 4, Op::all_reduce, std::nullopt, 64}, 3);
    run_case({Transport::edm, GroupShape::ring, 4, Kind::orthogonal, 4, Op::all_gather, std::nullopt, 16}, 3);  // stride 1: all
    run_case({Transport::ipcq, GroupShape::ring, 4, Kind::orthogonal, 1, Op::all_reduce, std::nullopt, 64}, 5);
    run_case({Transport::edm, GroupShape::ring, 3, Kind::consecutive, 1, Op::broadcast, std::nullopt, 64}, 5);
}

TEST_CASE("Group with groups: one's own kernel sees its rank in the group and among all ranks", "[host_api][groups][collectives]") {
    kc::GroupOptions g;
    g.transport = Transport::edm;
    g.ranks = 6;
    g.groups = CommGroup::orthogonal(3);  // {0, 2, 4} {1, 3, 5}
    kc::Group grp(g);
    REQUIRE(grp.num_groups() == 2);
    REQUIRE(grp.group_size() == 3);
    std::vector<uint32_t> in_group(6, 99), ranks_seen(6, 99), size_seen(6, 99);
    grp.add_ranked<kc::link_edm>([&](auto&, auto& link, const GroupArgs& ga, uint32_t r) -> uint64_t {
        in_group.at(r) = ga.rank;
        size_seen.at(r) = ga.ranks;
        ranks_seen.at(r) = r;
        link.quiesce();
        return 0;
    });
    const auto rep = grp.run(kc::default_run_options());
    INFO(rep.summary());
    REQUIRE(rep.ok());
    CHECK(in_group == std::vector<uint32_t>{0, 0, 1, 1, 2, 2});
    CHECK(ranks_seen == std::vector<uint32_t>{0, 1, 2, 3, 4, 5});
    CHECK(size_seen == std::vector<uint32_t>(6, 3));
    // rank r runs on chip r; the two groups use separate chips and links
    for (uint32_t r = 0; r < 6; ++r) CHECK(grp.worker(r).chip == r);
}

TEST_CASE("run_collective groups: bad group parameters are errors naming the value and what is allowed",
          "[host_api][groups][collectives]") {
    kc::GroupOptions g;
    g.transport = Transport::ipcq;
    g.ranks = 8;
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = 16;
    const std::vector<std::vector<uint32_t>> in(8, std::vector<uint32_t>(16, 1));
    g.groups = CommGroup::consecutive(3);
    CHECK_THROWS_WITH(kc::run_collective<SumU>(g, c, in),
                      Catch::Contains("run_collective: GroupOptions::groups: communication group consecutive(3) over 8 replicas") &&
                          Catch::Contains("does not divide") && Catch::Contains("Allowed sizes for N=8: 1, 2, 4, 8."));
    g.groups = CommGroup::orthogonal(0);
    CHECK_THROWS_WITH(kc::run_collective<SumU>(g, c, in),
                      Catch::Contains("orthogonal(0) over 8 replicas") && Catch::Contains("at least 1") &&
                          Catch::Contains("Allowed sizes for N=8: 1, 2, 4, 8."));
    g.groups = CommGroup::orthogonal(16);
    CHECK_THROWS_AS(kc::run_collective<SumU>(g, c, in), kccl::coll::host::BadGroup);
    CHECK_THROWS_WITH(kc::run_collective<SumU>(g, c, in), Catch::Contains("orthogonal(16) over 8 replicas"));
    // root and peer are ranks inside a group
    g.groups = CommGroup::consecutive(4);
    c.op = Op::broadcast;
    c.root = 4;
    CHECK_THROWS_WITH(kc::run_collective<SumU>(g, c, in),
                      Catch::Contains("root 4") && Catch::Contains("root and peer are ranks inside each group: 0..3"));
    c.root = 0;
    // shapes that several groups are not built as
    g.transport = Transport::edm;
    g.shape = GroupShape::mesh;
    g.mesh_cols = 2;
    CHECK_THROWS_WITH(kc::Group(g), Catch::Contains("GroupOptions::groups = consecutive(4) over 8 ranks") &&
                                        Catch::Contains("not shape mesh"));
    // the Group itself checks its groups too
    g.shape = GroupShape::ring;
    g.groups = CommGroup::consecutive(5);
    CHECK_THROWS_AS(kc::Group(g), kccl::coll::host::BadGroup);
    CHECK_THROWS_WITH(kc::Group(g), Catch::Contains("Group: GroupOptions::groups: communication group consecutive(5) over 8 replicas") &&
                                        Catch::Contains("Allowed sizes for N=8: 1, 2, 4, 8."));
}
