// Multi-hop collectives end to end on the emulation: every method whose peers are not topology
// neighbours (binomial trees for reduce / broadcast / gather / scatter, parent-array trees of
// the Cerebras thesis, reduce_broadcast_tree / recursive doubling / Rabenseifner all_reduce, pairwise
// all_to_all, direct send_recv, recursive-doubling barrier) runs on an all_pairs group — every
// rank one hop from every other — over both transports: IPCQ (a queue pair per PE pair on one
// chip) and EDM (an emulated cluster with one Ethernet link per chip pair). Rank counts include
// non-powers of two; sizes 0, 1, odd and large; adversarial mode with dirty L1. Each rank's output
// is compared bit for bit with the plain host reference of testing/inputs.hpp (written from the
// operations' definitions, not from the schedules); the run itself is e2e_bed.hpp's.
//
// CI runs a bounded cross-section ("[collectives][e2e]"); "[long]" runs the whole matrix.
#include <catch2/catch.hpp>

#include "e2e_bed.hpp"

#include <sstream>
#include <string>
#include <vector>

using namespace kccl::coll;
namespace cb = kccl::emu::collective;
namespace ch = kccl::coll::host;
namespace emu = kccl::emu;

namespace {

/// Parent arrays for Method::tree (the Cerebras thesis's patterns), re-rooted at `root` by relabelling rank
/// i as (i + root) mod p.
enum class TreeKind { none, chain, binomial, two_phase };
const char* tree_name(TreeKind k) {
    return k == TreeKind::chain ? "chain" : k == TreeKind::binomial ? "binomial" : k == TreeKind::two_phase ? "two-phase" : "-";
}
std::vector<uint32_t> make_tree(TreeKind k, uint32_t p, uint32_t root) {
    std::vector<uint32_t> base(p), out(p);
    if (k == TreeKind::chain) tree_chain(base.data(), p);
    else if (k == TreeKind::binomial) tree_binomial(base.data(), p);
    else tree_two_phase(base.data(), p, 2);
    for (uint32_t i = 0; i < p; ++i) out[(i + root) % p] = (base[i] + root) % p;
    return out;
}

struct Case {
    Op op;
    Method method;
    Transport transport;
    uint32_t ranks;
    DataType dtype;
    RedOp redop;
    uint32_t count;
    uint64_t seed = 1;
    TreeKind tree = TreeKind::none;
    bool adversarial = true;
    uint32_t message_bytes = 256;
    GroupShape group = GroupShape::all_pairs;
    bool interleave = false;  // execute_any_interleaved

    std::string describe() const {
        std::ostringstream s;
        s << op_name(op) << " " << method_name(method) << (tree != TreeKind::none ? std::string(" (") + tree_name(tree) + ")" : "")
          << " on a " << ch::shape_name(group) << " group of " << ranks << " over " << cb::name(transport) << ", " << dtype_name(dtype) << " "
          << redop_name(redop) << ", count " << count << (adversarial ? ", adversarial" : "")
          << (interleave ? ", lanes interleaved" : "");
        return s.str();
    }
};

Shape shape_of(const Case& c) {
    Shape sh;
    sh.op = c.op;
    sh.method = c.method;
    sh.topo = Topology::ring;  // multi-hop methods take any topology; the group decides who is reachable
    sh.ranks = c.ranks;
    sh.root = c.ranks > 1 ? 1 : 0;
    sh.peer = c.ranks > 2 ? c.ranks - 1 : 0;
    return sh;
}

std::string run_any(const Case& c) {
    Shape sh = shape_of(c);
    std::vector<uint32_t> parent;
    if (c.tree != TreeKind::none) {
        parent = make_tree(c.tree, c.ranks, sh.root);
        sh.tree = parent.data();
    }
    cb::GroupOptions bo;
    bo.transport = c.transport;
    bo.shape = c.group;
    bo.ranks = c.ranks;
    bo.message_bytes = c.message_bytes;
    bo.slots = 4;
    const e2e::Run run{c.count, c.seed, c.redop, c.adversarial};
    return e2e::run_standard(c.op, c.dtype, c.redop, sh, bo, run,
                             c.interleave ? e2e::Dirs::group_interleaved : e2e::Dirs::group);
}

constexpr Op kOps[] = {Op::all_reduce, Op::broadcast, Op::reduce, Op::gather, Op::scatter, Op::all_to_all,
                       Op::send_recv, Op::barrier};
constexpr Method kMethods[] = {Method::reduce_broadcast_tree, Method::binomial_tree, Method::tree,
                               Method::recursive_doubling,    Method::rabenseifner,  Method::pairwise,
                               Method::direct};
using e2e::kTypes;
using e2e::kRedOps;

/// (method, tree kind) pairs of `op` that are multi-hop and valid for p ranks.
std::vector<std::pair<Method, TreeKind>> multihop_methods(Op op, uint32_t p) {
    std::vector<std::pair<Method, TreeKind>> v;
    for (Method m : kMethods) {
        const std::vector<TreeKind> kinds = m == Method::tree
            ? std::vector<TreeKind>{TreeKind::chain, TreeKind::binomial, TreeKind::two_phase}
            : std::vector<TreeKind>{TreeKind::none};
        for (TreeKind k : kinds) {
            Case c{op, m, Transport::ipcq, p, DataType::f32, RedOp::sum, 1};
            Shape sh = shape_of(c);
            std::vector<uint32_t> parent;
            if (k != TreeKind::none) {
                parent = make_tree(k, p, sh.root);
                sh.tree = parent.data();
            }
            if (validate(sh) == nullptr && multi_hop(sh)) v.push_back({m, k});
        }
    }
    return v;
}

/// Counts the cases run and failed by a sweep (printed, so the coverage is visible).
struct Tally {
    uint32_t run = 0, failed = 0;
    void add(const Case& c) {
        INFO(c.describe());
        const std::string r = run_any(c);
        ++run;
        if (!r.empty()) ++failed;
        CHECK(r == "");
    }
};

}  // namespace

TEST_CASE("multihop: every multi-hop op x method on all_pairs groups over IPCQ and EDM, float sum, sizes 0/1/odd/large",
          "[collectives][e2e]") {
    Tally t;
    for (Transport tr : {Transport::ipcq, Transport::edm})
        for (uint32_t p : {3u, 5u, 6u})
            for (Op op : kOps)
                for (auto [m, k] : multihop_methods(op, p))
                    for (uint32_t count : {0u, 1u, 37u, 700u}) {
                        Case c{op, m, tr, p, DataType::f32, RedOp::sum, count, count + p};
                        c.tree = k;
                        t.add(c);
                    }
    WARN("multihop bounded sweep: " << t.run << " runs, " << t.failed << " failed");
    CHECK(t.run > 100);
}

TEST_CASE("multihop: every dtype x operator through the reducing multi-hop methods, 8 ranks", "[collectives][e2e]") {
    // One transport per dtype (alternating) keeps this bounded; [long] runs both.
    uint32_t i = 0;
    for (DataType d : kTypes)
        for (RedOp r : kRedOps) {
            if (!is_valid_op(d, r)) continue;
            const Transport tr = (i++ % 2) ? Transport::edm : Transport::ipcq;
            for (Method m : {Method::rabenseifner, Method::recursive_doubling}) {
                const Case c{Op::all_reduce, m, tr, 8, d, r, 131, 17};
                INFO(c.describe());
                CHECK(run_any(c) == "");
            }
            const Case c{Op::reduce, Method::binomial_tree, tr, 5, d, r, 77, 19};
            INFO(c.describe());
            CHECK(run_any(c) == "");
        }
}

TEST_CASE("multihop: ring methods also run on an all_pairs group (next / prev are directions of it)", "[collectives][e2e]") {
    for (Transport tr : {Transport::ipcq, Transport::edm})
        for (uint32_t p : {2u, 5u})
            for (Method m : {Method::ring_cw, Method::ring_bidir, Method::ring_meet_middle}) {
                const Case c{Op::all_reduce, m, tr, p, DataType::bf16, RedOp::sum, 99, 23};
                INFO(c.describe());
                CHECK(run_any(c) == "");
            }
}

TEST_CASE("multihop: all_pairs plan — directions, peers and its named limits", "[collectives][e2e]") {
    SECTION("direction d of rank r reaches (d < r ? d : d + 1), next / prev follow the ring order") {
        ch::GroupSpec g;
        g.transport = Transport::ipcq;
        g.shape = GroupShape::all_pairs;
        for (uint32_t r = 0; r < 5; ++r) g.workers.push_back({0, r, 0});
        g.buffer_bytes = 64;
        g.worker_l1 = {0x10000, 0x100000, 0};
        const ch::GroupPlan plan = ch::build_group(g);
        for (uint32_t r = 0; r < 5; ++r) {
            CHECK(plan.ranks[r].directions == 4);
            for (uint32_t d = 0; d < 4; ++d) CHECK(plan.ranks[r].peer_of_dir[d] == (d < r ? d : d + 1));
            CHECK(plan.ranks[r].peer_of_dir[4] == no_dir);
            CHECK(plan.ranks[r].peer_of_dir[plan.ranks[r].next_dir] == (r + 1) % 5);
            CHECK(plan.ranks[r].peer_of_dir[plan.ranks[r].prev_dir] == (r + 4) % 5);
        }
        CHECK(ch::group_edges(g).size() == 10);  // one link per pair
    }
    SECTION("more ranks than directions: a PlanError naming the limit") {
        ch::GroupSpec g;
        g.shape = GroupShape::all_pairs;
        for (uint32_t r = 0; r < 10; ++r) g.workers.push_back({0, r, 0});
        g.buffer_bytes = 64;
        g.worker_l1 = {0x10000, 0x100000, 0};
        CHECK_THROWS_WITH(ch::build_group(g), Catch::Contains("all_pairs group of 10 ranks needs 9 directions") &&
                                                  Catch::Contains("at most 9 ranks"));
        g.workers.pop_back();
        CHECK_NOTHROW(ch::build_group(g));
    }
    SECTION("L1 too small for p - 1 directions: a PlanError naming the bytes") {
        for (Transport tr : {Transport::ipcq, Transport::edm}) {
            ch::GroupSpec g;
            g.transport = tr;
            g.shape = GroupShape::all_pairs;
            g.message_bytes = 4096;
            g.slots = 4;
            g.buffer_bytes = 1024;
            // Enough for a 2-direction ring (EDM: 2 landing buffers + 3 KiB), not for 8 directions.
            g.worker_l1 = {0x10000, 0x10000 + 20 * 1024, 0};
            g.eth_l1 = {0x1000, 256 * 1024, 0x800};
            for (uint32_t r = 0; r < 9; ++r) g.workers.push_back({tr == Transport::edm ? r : 0, tr == Transport::edm ? 0 : r, 0});
            if (tr == Transport::edm) {
                // one link per chip pair, Ethernet core (k, 0) on each chip
                std::vector<uint32_t> used(9, 0);
                for (const ch::Edge& e : ch::group_edges(g))
                    g.hops.push_back({{e.a, used[e.a]++, 0}, {e.b, used[e.b]++, 0}});
            }
            INFO(cb::name(tr));
            CHECK_THROWS_WITH(ch::build_group(g), Catch::Contains("worker_l1 ends at") || Catch::Contains("IPCQ queues (all_pairs: 8 queue pairs per rank)"));
        }
    }
    SECTION("an EDM all_pairs group on a ring of chips has no link for the non-neighbour pairs") {
        emu::ChipSpec chip;
        chip.grid_w = 1;
        chip.grid_h = 1;
        chip.eth_cores = 2;
        const emu::Cluster cluster(emu::topology::ring(4, 1, chip));
        ch::GroupSpec g;
        g.transport = Transport::edm;
        g.shape = GroupShape::all_pairs;
        for (uint32_t r = 0; r < 4; ++r) g.workers.push_back({r, 0, 0});
        CHECK_THROWS_WITH(ch::edm_hops_from(cluster, g), Catch::Contains("no free Ethernet link between chips 0 and 2"));
    }
}

TEST_CASE("multihop: the same multi-hop method on a ring group still fails with the named device error", "[collectives][e2e]") {
    // Guard: the ring plan must not silently grow links; only all_pairs reaches non-neighbours.
    cb::GroupOptions bo;
    bo.transport = Transport::ipcq;
    bo.shape = GroupShape::ring;
    bo.ranks = 4;
    bo.message_bytes = 256;
    bo.buffer_bytes = 256;
    cb::Group bed(bo);
    Shape sh;
    sh.op = Op::all_reduce;
    sh.method = Method::recursive_doubling;
    sh.ranks = 4;
    const cb::Layout L = cb::make_layout(sh, 8, 64);
    bed.add([L](auto&, auto& link, const GroupArgs& g) -> uint64_t {
        execute_any<Reducer<float, RedOp::sum>>(link, e2e::exec_params(L, g), cb::dirs_of(g));
        link.quiesce();
        return 0;
    });
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(5000);
    const emu::RunReport rep = bed.run(ro);
    CHECK_FALSE(rep.ok());
    CHECK_THAT(rep.summary(), Catch::Contains("has no link direction to rank"));
}

TEST_CASE("multihop: full matrix — every multi-hop op x method x dtype x operator x size x transport, 1-9 ranks",
          "[collectives][e2e][long]") {
    Tally t;
    for (Transport tr : {Transport::ipcq, Transport::edm})
        for (uint32_t p : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u})
            for (Op op : kOps)
                for (auto [m, k] : multihop_methods(op, p))
                    for (DataType d : kTypes)
                        for (RedOp r : kRedOps) {
                            if (!is_valid_op(d, r)) continue;
                            if (!op_reduces(op) && r != cb::any_valid_op(d)) continue;  // the operator does not matter
                            if (op == Op::barrier && (d != DataType::f32 || r != RedOp::sum)) continue;
                            for (uint32_t count : {0u, 1u, 37u, 4099u}) {
                                Case c{op, m, tr, p, d, r, count, uint64_t(count) * 7 + p};
                                c.tree = k;
                                t.add(c);
                            }
                        }
    WARN("multihop full matrix: " << t.run << " runs, " << t.failed << " failed");
    CHECK(t.failed == 0);
}

TEST_CASE("interleaved lanes: bidirectional ring pair run piece by piece, bit-identical to the reference",
          "[collectives][e2e]") {
    // execute_any_interleaved advances both lanes of ring_bidir a piece at a time; on a 2-rank
    // all_pairs group the lanes share the one direction and it falls back to serial lanes.
    for (Transport tr : {Transport::ipcq, Transport::edm})
        for (GroupShape gs : {GroupShape::ring, GroupShape::all_pairs})
            for (uint32_t p : {2u, 3u, 5u})
                for (Op op : {Op::all_gather, Op::reduce_scatter, Op::all_reduce})
                    for (uint32_t count : {0u, 1u, 37u, 2000u}) {
                        Case c{op, Method::ring_bidir, tr, p, DataType::bf16, RedOp::sum, count, count + 5 * p};
                        c.group = gs;
                        c.interleave = true;
                        c.message_bytes = 64;  // many pieces per chunk: the interleaving is fine-grained
                        INFO(c.describe());
                        CHECK(run_any(c) == "");
                    }
}

TEST_CASE("interleaved lanes: every dtype x operator of all_reduce ring_bidir", "[collectives][e2e][long]") {
    for (Transport tr : {Transport::ipcq, Transport::edm})
        for (DataType d : kTypes)
            for (RedOp r : kRedOps) {
                if (!is_valid_op(d, r)) continue;
                for (uint32_t p : {2u, 4u, 7u}) {
                    Case c{Op::all_reduce, Method::ring_bidir, tr, p, d, r, 4099, 31};
                    c.group = GroupShape::ring;
                    c.interleave = true;
                    INFO(c.describe());
                    CHECK(run_any(c) == "");
                }
            }
}
