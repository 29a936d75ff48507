// Collectives over the chip fabric: every multi-hop method (trees, recursive doubling,
// Rabenseifner, pairwise all_to_all, direct send_recv, barrier) and the ring methods run on a
// FabricLink, where every rank is one direction away and the routers forward through the chips
// in between: rings and lines of chips (1D routing) and the T3000 and Galaxy meshes (2D routing).
// Dirty L1, adversarial schedules; every rank's output compared bit for bit with the plain host
// reference of testing/inputs.hpp (written from the operations' definitions).
//
// ctest runs a bounded cross-section ("[fabric][coll]"); "[long]" runs the whole matrix.
#include <catch2/catch.hpp>

#include "collectives/e2e_bed.hpp"

#include <emulation/fabric/fabric.hpp>

#include "fabric/chip_exec.hpp"

#include <sstream>
#include <string>
#include <vector>

using namespace kccl::coll;
namespace cb = kccl::emu::collective;
namespace cf = kccl::emu::fabric;
namespace fh = kccl::fabric::host;
namespace emu = kccl::emu;

namespace {

struct Case {
    Op op;
    Method method;
    std::string topology;
    fh::FabricKind kind;
    uint32_t ranks;  // line / ring
    DataType dtype = DataType::f32;
    RedOp redop = RedOp::sum;
    uint32_t count = 100;
    uint64_t seed = 1;
    bool adversarial = true;
    uint32_t initial_counter = 0;  // FabricSpec::initial_counter (runs across the 2^32 wrap)
    uint32_t slots = 4;            // peer_slots
    uint32_t tx_slots = 8;         // router sender channel slots
    std::string describe() const {
        std::ostringstream s;
        s << op_name(op) << " " << method_name(method) << " on " << topology << " (" << fh::kind_name(kind) << ", "
          << ranks << ") " << dtype_name(dtype) << " " << redop_name(redop) << " count " << count
          << (adversarial ? " adversarial" : "") << " slots " << slots << "/" << tx_slots << " counters from " << initial_counter;
        return s.str();
    }
};

std::vector<uint32_t> binomial_parent(uint32_t p, uint32_t root) {
    std::vector<uint32_t> base(p), out(p);
    tree_binomial(base.data(), p);
    for (uint32_t i = 0; i < p; ++i) out[(i + root) % p] = (base[i] + root) % p;
    return out;
}

template <class Red>
std::string run_case(const Case& c, Shape sh) {
    using T = typename Red::value_type;
    constexpr uint32_t eb = sizeof(T);
    cf::BedOptions o;
    o.topology = c.topology;
    o.kind = c.kind;
    o.ranks = c.ranks;
    o.message_bytes = 256;
    o.peer_slots = c.slots;
    o.tx_slots = c.tx_slots;
    o.initial_counter = c.initial_counter;
    const cb::Layout L = cb::make_layout(sh, c.count, cb::ChunkLimit{o.message_bytes / eb, o.peer_slots});
    if (const char* err = validate(L.shape)) return std::string("not supported: ") + err;
    o.buffer_bytes = cb::buffer_bytes_for(L, eb);
    cf::Bed bed(o);
    const bool reduces = op_reduces(sh.op);
    const uint64_t seed = c.seed;
    const RedOp redop = c.redop;
    bed.add(kccl::coll::test::seeded_fabric_kernel<Red>(L, seed, redop, reduces));
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(20000);
    if (c.adversarial) {
        ro.adversary.enabled = true;
        ro.adversary.seed = seed * 131 + 7;
    }
    const emu::RunReport rep = bed.run(ro);
    if (!rep.ok()) return "run failed: " + rep.summary();
    const auto [nbad, bad] = kccl::testing::check_outputs<T>(L, redop, seed, [&](uint32_t r) { return bed.output(r); });
    if (nbad) return std::to_string(nbad) + " wrong elements:" + bad;
    return "";
}

std::string run(const Case& c) {
    const uint32_t p = c.topology == "galaxy" ? 32 : c.topology == "t3000" ? 8 : c.ranks;
    Shape sh;
    sh.op = c.op;
    sh.method = c.method;
    sh.topo = Topology::ring;
    sh.ranks = p;
    if (c.method == Method::mesh_2d) {  // the chips' mesh, ranks row-major (T3000 2 x 4, Galaxy 4 x 8)
        sh.topo = Topology::mesh;
        sh.rows = c.topology == "galaxy" ? 4 : 2;
        sh.cols = p / sh.rows;
    }
    sh.root = p > 1 ? 1 : 0;
    sh.peer = p > 2 ? p - 1 : 0;
    std::vector<uint32_t> parent;
    if (c.method == Method::tree) {
        parent = binomial_parent(p, sh.root);
        sh.tree = parent.data();
    }
    return e2e::with_case_reducer(c.op, c.dtype, c.redop, [&](auto red) { return run_case<decltype(red)>(c, sh); });
}

constexpr Op kOps[] = {Op::all_reduce, Op::broadcast, Op::reduce, Op::gather, Op::scatter,
                       Op::all_to_all, Op::send_recv, Op::barrier, Op::all_gather, Op::reduce_scatter};
constexpr Method kMethods[] = {Method::reduce_broadcast_tree, Method::binomial_tree, Method::tree,
                               Method::recursive_doubling,    Method::rabenseifner,  Method::pairwise,
                               Method::direct,                Method::ring_cw,       Method::ring_bidir};

/// The methods valid for `op` on p ranks.
std::vector<Method> methods_for(Op op, uint32_t p) {
    std::vector<Method> v;
    for (Method m : kMethods) {
        Shape sh;
        sh.op = op;
        sh.method = m;
        sh.topo = Topology::ring;
        sh.ranks = p;
        sh.root = 1;
        sh.peer = p - 1;
        std::vector<uint32_t> parent;
        if (m == Method::tree) {
            parent = binomial_parent(p, 1);
            sh.tree = parent.data();
        }
        if (validate(sh) == nullptr) v.push_back(m);
    }
    return v;
}

}  // namespace

TEST_CASE("fabric collectives: multi-hop methods on a 1D ring and line of chips", "[fabric][coll]") {
    const Case cases[] = {
        {Op::all_reduce, Method::recursive_doubling, "ring", fh::FabricKind::ring_1d, 6},
        {Op::all_reduce, Method::rabenseifner, "line", fh::FabricKind::line_1d, 5, DataType::bf16},
        {Op::broadcast, Method::binomial_tree, "ring", fh::FabricKind::ring_1d, 5},
        {Op::all_to_all, Method::pairwise, "line", fh::FabricKind::line_1d, 4, DataType::i32},
        {Op::send_recv, Method::direct, "ring", fh::FabricKind::ring_1d, 7},
        {Op::reduce, Method::tree, "line", fh::FabricKind::line_1d, 6, DataType::f32, RedOp::max},
    };
    for (const Case& c : cases) {
        INFO(c.describe());
        CHECK(run(c) == "");
    }
}

TEST_CASE("fabric collectives across the 2^32 counter wrap (every fabric counter starts at 2^32 - 6)", "[fabric][coll][wrap]") {
    constexpr uint32_t w = 0xFFFFFFFFu - 5;
    const Case cases[] = {
        {Op::all_reduce, Method::recursive_doubling, "ring", fh::FabricKind::ring_1d, 6, DataType::f32, RedOp::sum, 300, 11, true, w, 3, 3},
        {Op::all_to_all, Method::pairwise, "line", fh::FabricKind::line_1d, 5, DataType::i32, RedOp::sum, 100, 12, true, w, 5, 5},
        {Op::all_reduce, Method::rabenseifner, "t3000", fh::FabricKind::mesh_2d, 8, DataType::f32, RedOp::sum, 200, 13, true, w, 3, 3},
        {Op::broadcast, Method::binomial_tree, "t3000", fh::FabricKind::mesh_2d, 8, DataType::u32, RedOp::sum, 500, 14, true, w, 16, 16},
    };
    for (const Case& c : cases) {
        INFO(c.describe());
        CHECK(run(c) == "");
    }
}

TEST_CASE("fabric collectives: T3000 (2 x 4 mesh, 2D routing) and Galaxy (4 x 8 mesh)", "[fabric][coll]") {
    const Case cases[] = {
        {Op::all_reduce, Method::rabenseifner, "t3000", fh::FabricKind::mesh_2d, 8},
        {Op::all_to_all, Method::pairwise, "t3000", fh::FabricKind::mesh_2d, 8, DataType::u32},
        {Op::all_reduce, Method::recursive_doubling, "t3000", fh::FabricKind::ring_1d, 8, DataType::bf16},
        {Op::all_reduce, Method::recursive_doubling, "galaxy", fh::FabricKind::mesh_2d, 32, DataType::f32, RedOp::sum, 300},
        {Op::broadcast, Method::binomial_tree, "galaxy", fh::FabricKind::mesh_2d, 32},
        // a 32-chip ring (1D, bubble flow control): all-to-all traffic of up to 16 hops per route
        {Op::all_to_all, Method::pairwise, "galaxy", fh::FabricKind::ring_1d, 32, DataType::f32, RedOp::sum, 37},
    };
    for (const Case& c : cases) {
        INFO(c.describe());
        CHECK(run(c) == "");
    }
}

TEST_CASE("fabric collectives: mesh_2d (rows, then columns) on the T3000 and Galaxy meshes", "[fabric][coll]") {
    // The mesh method's neighbours are mesh neighbours, so on a 2D fabric each of its messages
    // crosses one link; on a 1D ring through the chips the fabric forwards them.
    const Case cases[] = {
        {Op::all_gather, Method::mesh_2d, "t3000", fh::FabricKind::mesh_2d, 8, DataType::f32, RedOp::sum, 100, 21},
        {Op::all_reduce, Method::mesh_2d, "t3000", fh::FabricKind::mesh_2d, 8, DataType::bf16, RedOp::sum, 300, 22},
        {Op::all_reduce, Method::mesh_2d, "t3000", fh::FabricKind::ring_1d, 8, DataType::f32, RedOp::max, 77, 23},
        // the Galaxy without the adversary (its cost grows with 32 chips' routers; the T3000 rows have it)
        {Op::all_gather, Method::mesh_2d, "galaxy", fh::FabricKind::mesh_2d, 32, DataType::u32, RedOp::sum, 37, 24, false},
        {Op::all_reduce, Method::mesh_2d, "galaxy", fh::FabricKind::mesh_2d, 32, DataType::f32, RedOp::sum, 96, 25, false},
    };
    for (const Case& c : cases) {
        INFO(c.describe());
        CHECK(run(c) == "");
    }
}

TEST_CASE("fabric collectives: every op x method on T3000 and Galaxy, 1D and 2D", "[fabric][coll][long]") {
    uint32_t n = 0, failed = 0;
    struct Topo {
        const char* name;
        fh::FabricKind kind;
        uint32_t p;
    };
    for (const Topo t : {Topo{"t3000", fh::FabricKind::mesh_2d, 8}, Topo{"t3000", fh::FabricKind::ring_1d, 8},
                         Topo{"galaxy", fh::FabricKind::mesh_2d, 32}, Topo{"galaxy", fh::FabricKind::ring_1d, 32},
                         Topo{"galaxy", fh::FabricKind::line_1d, 32}})
        for (Op op : kOps)
            for (Method m : methods_for(op, t.p))
                for (uint32_t count : {1u, 37u, 700u}) {
                    Case c{op, m, t.name, t.kind, t.p, DataType::f32, RedOp::sum, count, count + t.p};
                    INFO(c.describe());
                    const std::string r = run(c);
                    ++n;
                    failed += !r.empty();
                    CHECK(r == "");
                }
    WARN("fabric collectives matrix: " << n << " runs, " << failed << " failed");
}
