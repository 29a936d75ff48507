// Tensors in tt-metal's layouts (collectives/tensor.hpp) gathered and reduce-scattered over the
// chip fabric (include/fabric/): execute_tensor_slice on a FabricLink, one worker per chip,
// the collective's group a communication group of the fabric's ranks (CommGroupDirs), so a
// group's ranks need not be neighbours (strided groups on a ring, a mesh's rows whose ring closes
// across the mesh). The mesh tensor on the T3000 mesh (2D routing): row all_gathers along W into a
// width-sharded output and column all_gathers along H into an interleaved one. Sharded inputs and
// outputs with in-flight resharding on 1D lines and rings. Every output element (pad elements
// too) checked against the logical-coordinate reference (tests/collectives/tensor_check.hpp),
// nothing written outside the elements; dirty L1, adversarial schedules, race detector.
#include <catch2/catch.hpp>

#include "collectives/tensor_check.hpp"

#include <collectives/collectives.hpp>
#include <collectives/tensor_sliced.hpp>
#include <emulation/fabric/fabric.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <cstring>
#include <string>
#include <vector>

using namespace kccl::coll;
using namespace kccl::coll::tensor_check;
namespace cf = kccl::emu::fabric;
namespace fh = kccl::fabric::host;
namespace emu = kccl::emu;

namespace {

using Red = Reducer<uint32_t, RedOp::sum>;

emu::RunOptions adversarial(uint64_t seed) {
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(20000);
    ro.adversary.enabled = true;
    ro.adversary.seed = seed * 131 + 7;
    ro.dirty_l1 = emu::RunOptions::DirtyL1::on;
    ro.race = emu::RunOptions::RaceCheck::on;
    return ro;
}

uint32_t align16(uint32_t v) { return (v + 15u) & ~15u; }

/// A tensor case on a fabric: every group of `group` (over the fabric's ranks) runs `c` at once,
/// group g with seed c.seed + g.
struct FabricTensorCase {
    TensorCase c;
    std::string topology;
    fh::FabricKind kind;
    uint32_t ranks;  // line / ring chips
    CommGroup group = CommGroup::all();
    bool host_checks = true;  // false: run a group whose size is not the split's parts (device error test)
};

/// Runs the case on the chip fabric bed: each chip's one worker runs the case's worker bands one
/// after another on its FabricLink. "" if every rank's output is right and nothing outside its
/// elements was written; "not supported: ..." for a shape validate() refuses.
std::string run_fabric_tensor(const FabricTensorCase& fc) {
    const TensorCase& c = fc.c;
    const TensorSplit& t = c.split;
    if (check(t) != SplitError::ok) return std::string("bad split: ") + split_error_text(check(t));
    const uint32_t W = c.workers;
    const CaseLayout L = layout_of(c);
    if (!L.error.empty()) return L.error;
    const uint32_t small_stride = L.small_stride, big_stride = L.big_stride, small_bytes = L.small_bytes,
                   big_bytes = L.big_bytes, work = L.work;
    const Shape sh = L.shape;
    cf::BedOptions o;
    o.topology = fc.topology;
    o.kind = fc.kind;
    o.ranks = fc.ranks;
    o.message_bytes = c.packet_bytes;
    o.buffer_bytes = small_bytes + big_bytes + work + 16;  // [small | big | work] from the input buffer on
    cf::Bed bed(o);
    const uint32_t N = bed.ranks();
    const CommGroup g = fc.group;
    if (validate(g, N) != GroupError::ok) return std::string("bad group: ") + group_error_message(validate(g, N));
    if (fc.host_checks && group_size(g, N) != t.parts) return "the group size is not the split's parts";
    const uint64_t seed = c.seed;
    const bool gather = c.op == Op::all_gather;
    bed.add([=](auto& hal, auto& link, const cf::RankBuffers& b) -> uint64_t {
        const uint32_t grp = group_of(g, N, b.rank), rank = rank_in_group(g, N, b.rank);
        const uint32_t base = b.input_l1;
        std::memset(hal.l1_ptr(base, small_bytes + big_bytes), kSentinel, small_bytes + big_bytes);
        TensorSliceParams tp;
        tp.shape = sh;
        tp.split = t;
        tp.workers = W;
        tp.rank = rank;
        tp.small = {base, small_stride};
        tp.big = {base + small_bytes, big_stride};
        tp.work = align16(base + small_bytes + big_bytes);
        tp.packet_bytes = c.packet_bytes;
        write_input(t, c.op, seed + grp, rank, gather ? tp.small : tp.big,
                    [&](uint32_t addr, uint32_t v) { std::memcpy(hal.l1_ptr(addr, 4), &v, 4); });
        for (uint32_t w = 0; w < W; ++w) {  // the bands one after another on this chip's worker
            tp.worker = w;
            execute_tensor_slice<Red>(link, tp, CommGroupDirs{g, N, b.rank});
        }
        link.quiesce();
        return 0;
    });
    const emu::RunReport rep = bed.run(adversarial(seed));
    if (!rep.ok()) return "run failed: " + rep.summary();
    OutputCheck res;
    for (uint32_t r = 0; r < N; ++r) {
        const uint8_t* image = bed.input(r) + (gather ? small_bytes : 0);
        check_output(t, c.op, seed + group_of(g, N, r), rank_in_group(g, N, r), W, false, gather ? big_stride : small_stride,
                     [&](uint32_t) { return image; }, res);
    }
    const TensorGeom outs = geometry(gather ? t.big : t.small);
    if (res.checked != uint64_t(N) * (gather ? t.big : t.small).shape[0] * (gather ? t.big : t.small).shape[1] * outs.hp * outs.wp)
        return "not every output element was checked";
    if (res.bad || res.strays)
        return std::to_string(res.bad) + " wrong elements, " + std::to_string(res.strays) + " stray bytes:" + res.what;
    return "";
}

std::string describe(const FabricTensorCase& fc) {
    const char* kinds[] = {"all", "consecutive", "orthogonal"};
    return fc.c.describe() + " on a " + fc.topology + " (" + fh::kind_name(fc.kind) + ", " + std::to_string(fc.ranks) +
           " chips), groups " + kinds[uint32_t(fc.group.kind)] + "(" + std::to_string(fc.group.size) + ")";
}

}  // namespace

TEST_CASE("fabric tensor: mesh tensor on the T3000 (2 x 4, 2D routing): row and column all_gathers",
          "[fabric][tensor]") {
    // The mesh tensor (tensor_check.hpp) on the T3000's 2 x 4 mesh, fabric rank = chip (i, j) =
    // i * 4 + j. Each chip's worker runs its row's all_gather along W (CommGroup::consecutive(4):
    // ring_bidir over the 4 chips of the row, whose ring closes across 3 hops; 2 worker bands, one
    // tile column each) into a width-sharded [1,1,32,256], then its column's all_gather along H
    // (CommGroup::orthogonal(2): a line of the 2 chips) into an interleaved [1,1,64,64], both from
    // the same interleaved [1,1,32,64] shard: the output layouts differ from the input's.
    constexpr uint32_t R = 2, C = 4, N = R * C;
    const MeshTensor mt(R, C, 91);
    REQUIRE(check(mt.row_split) == SplitError::ok);
    REQUIRE(check(mt.col_split) == SplitError::ok);
    const TensorGeom gl = geometry(mt.local), grb = geometry(mt.row_split.big), gcb = geometry(mt.col_split.big);
    const uint32_t ls = gl.unit_bytes, rs = grb.unit_bytes, cs = gcb.unit_bytes;
    const uint32_t l_bytes = gl.units * ls, r_bytes = grb.units * rs, c_bytes = gcb.units * cs;
    constexpr uint32_t packet = 4096, row_bands = 2;
    auto params = [&](bool row, uint32_t band) {
        TensorSliceParams tp;
        tp.shape.op = Op::all_gather;
        tp.shape.topo = row ? Topology::ring : Topology::line;
        tp.shape.method = row ? Method::ring_bidir : Method::line;
        tp.shape.ranks = row ? C : R;
        tp.shape.window = 1;
        tp.split = row ? mt.row_split : mt.col_split;
        tp.workers = row ? row_bands : 1;
        tp.worker = band;
        tp.packet_bytes = packet;
        return tp;
    };
    uint32_t work = 0;
    for (uint32_t w = 0; w < row_bands; ++w) work = std::max(work, tensor_work_bytes(params(true, w)));
    work = std::max(work, tensor_work_bytes(params(false, 0)));
    REQUIRE(validate(slice_shape(params(true, 0).shape, detail::tensor_work(params(true, 0)).sl, 0)) == nullptr);
    REQUIRE(validate(slice_shape(params(false, 0).shape, detail::tensor_work(params(false, 0)).sl, 0)) == nullptr);

    cf::BedOptions o;
    o.topology = "t3000";
    o.kind = fh::FabricKind::mesh_2d;
    o.message_bytes = packet;
    o.buffer_bytes = l_bytes + r_bytes + c_bytes + work + 16;  // [local | row output | column output | work]
    for (const uint64_t adv : {9u, 23u}) {  // two adversarial schedules and dirty-L1 patterns
        INFO("adversary seed " << adv);
        cf::Bed bed(o);
        REQUIRE(bed.ranks() == N);
        bed.add([=](auto& hal, auto& link, const cf::RankBuffers& b) -> uint64_t {
            const uint32_t i = b.rank / C, j = b.rank % C, base = b.input_l1;
            std::memset(hal.l1_ptr(base, l_bytes + r_bytes + c_bytes), kSentinel, l_bytes + r_bytes + c_bytes);
            mt.write_local(i, j, TensorMem{base, ls}, [&](uint32_t addr, uint32_t v) { std::memcpy(hal.l1_ptr(addr, 4), &v, 4); });
            const uint32_t wk = align16(base + l_bytes + r_bytes + c_bytes);
            for (uint32_t w = 0; w < row_bands; ++w) {
                TensorSliceParams tp = params(true, w);
                tp.rank = rank_in_group(CommGroup::consecutive(C), N, b.rank);
                tp.small = {base, ls};
                tp.big = {base + l_bytes, rs};
                tp.work = wk;
                execute_tensor_slice<Red>(link, tp, CommGroupDirs{CommGroup::consecutive(C), N, b.rank});
            }
            TensorSliceParams tp = params(false, 0);
            tp.rank = rank_in_group(CommGroup::orthogonal(R), N, b.rank);
            tp.small = {base, ls};
            tp.big = {base + l_bytes + r_bytes, cs};
            tp.work = wk;
            execute_tensor_slice<Red>(link, tp, CommGroupDirs{CommGroup::orthogonal(R), N, b.rank});
            link.quiesce();
            return 0;
        });
        const emu::RunReport rep = bed.run(adversarial(adv));
        REQUIRE(rep.ok());
        uint64_t bad = 0, checked = 0, strays = 0;
        for (uint32_t r = 0; r < N; ++r) {
            const uint8_t* l1 = bed.input(r);
            bad += mt.check(true, r / C, r % C, l1 + l_bytes, rs, checked);
            bad += mt.check(false, r / C, r % C, l1 + l_bytes + r_bytes, cs, checked);
            strays += mt.strays(true, l1 + l_bytes, rs) + mt.strays(false, l1 + l_bytes + r_bytes, cs);
        }
        CHECK(checked == N * (32 * 256) + N * (64 * 64));
        CHECK(bad == 0);
        CHECK(strays == 0);  // the column output's third bank has a free tile slot: nothing lands there
    }
}

TEST_CASE("fabric tensor: sharded all_gather / reduce_scatter with resharding on 1D lines and rings, strided groups",
          "[fabric][tensor]") {
    const auto rmo = ShardOrientation::row_major, cmo = ShardOrientation::col_major;
    const auto ring = fh::FabricKind::ring_1d, line = fh::FabricKind::line_1d;
    std::vector<FabricTensorCase> cases;
    // an 8-chip ring, strided groups orthogonal(4): {0,2,4,6} and {1,3,5,7}, no two members neighbours
    {
        TensorCase c;  // width-sharded row-major in, interleaved out, along W (a strided copy)
        c.split = gather_split(spec(1, 1, 4, 32, 4, RM, WS, 1, {2, 1, 4, 16, rmo}), 3, 4, IL, 2);
        c.seed = 41;
        cases.push_back({c, "ring", ring, 8, CommGroup::orthogonal(4)});
    }
    {
        TensorCase c;  // reduce_scatter along H, tiles interleaved in, height-sharded out
        c.op = Op::reduce_scatter;
        c.split = gather_split(spec(1, 1, 32, 64, 4, TL, IL, 3), 2, 4, HS, 1, {4, 1, 32, 64, rmo});
        c.method = Method::ring_bidir;
        c.packet_bytes = 4096;
        c.seed = 47;
        cases.push_back({c, "ring", ring, 8, CommGroup::orthogonal(4)});
    }
    // a 6-chip line, groups orthogonal(3): {0,2,4} and {1,3,5}
    {
        TensorCase c;  // interleaved in, width-sharded out whose 9-column shards cut the 12-column blocks
        c.split = gather_split(spec(1, 2, 2, 12, 4, RM, IL, 2), 3, 3, WS, 1, {1, 4, 4, 9, cmo});
        c.method = Method::line;
        c.seed = 43;
        cases.push_back({c, "line", line, 6, CommGroup::orthogonal(3)});
    }
    // a 4-chip line, one group of every chip
    {
        TensorCase c;  // tiles: block-sharded in (2 x 2 one-tile shards), width-sharded out, along W
        c.split = gather_split(spec(1, 1, 64, 64, 4, TL, BS, 1, {2, 2, 32, 32, rmo}), 3, 4, WS, 1, {8, 1, 64, 32, rmo});
        c.packet_bytes = 4096;
        c.seed = 44;
        cases.push_back({c, "line", line, 4, CommGroup::all()});
    }
    {
        TensorCase c;  // padded tiles [1,2,40,20] along C: the pad elements travel with their tiles
        c.split = gather_split(spec(1, 2, 40, 20, 4, TL, IL, 2), 1, 4, IL, 3);
        c.method = Method::line;
        c.packet_bytes = 4096;
        c.workers = 1;
        c.seed = 31;
        cases.push_back({c, "line", line, 4, CommGroup::all()});
    }
    {
        TensorCase c;  // reduce_scatter along N, row-major interleaved in, block-sharded out
        c.op = Op::reduce_scatter;
        c.split = gather_split(spec(2, 1, 2, 6, 4, RM, IL, 1), 0, 4, BS, 1, {2, 4, 4, 3, rmo});
        c.method = Method::ring_bidir;
        c.seed = 48;
        cases.push_back({c, "ring", ring, 4, CommGroup::all()});
    }
    for (const FabricTensorCase& fc : cases) {
        INFO(describe(fc));
        CHECK(run_fabric_tensor(fc) == "");
    }
}

TEST_CASE("fabric tensor: several workers per chip are a named error", "[fabric][tensor]") {
    cf::BedOptions o;
    o.topology = "line";
    o.kind = fh::FabricKind::line_1d;
    o.workers_per_chip = 2;
    CHECK_THROWS_WITH(cf::Bed(o), Catch::Contains("chip fabric bed: 2 workers per chip; the fabric link has one worker core per chip") &&
                                      Catch::Contains("Allowed: 1"));
    // the builder: a fabric spec with two worker cores for one position's chip
    o.workers_per_chip = 1;
    cf::Bed bed(o);
    fh::FabricSpec s = bed.plan.spec;
    s.workers.push_back({0, 1, 0});
    CHECK_THROWS_WITH(fh::build_fabric(s), Catch::Contains("one worker per position is needed (4 positions, 5 workers)") &&
                                               Catch::Contains("several link workers per chip are not supported"));
}

TEST_CASE("fabric tensor: a collective over more ranks than its group is a named device error", "[fabric][tensor]") {
    // The collective names group ranks 0..3, the group orthogonal(2) of a 4-chip line has 2
    // members: CommGroupDirs gives no direction to a rank outside the group, and the executor says
    // which rank wanted which peer.
    TensorCase c;
    c.split = gather_split(spec(1, 1, 4, 8, 4, RM, IL, 2), 3, 4, IL, 2);
    c.workers = 1;
    FabricTensorCase fc{c, "line", fh::FabricKind::line_1d, 4, CommGroup::orthogonal(2)};
    CHECK(run_fabric_tensor(fc) == "the group size is not the split's parts");
    fc.host_checks = false;
    CHECK_THAT(run_fabric_tensor(fc), Catch::Contains("run failed") && Catch::Contains("has no link direction to rank 2"));
}

TEST_CASE("fabric tensor: CommGroupDirs maps group ranks to the fabric's directions", "[fabric][tensor]") {
    // orthogonal(4) of 8 replicas: replica 2 is rank 1 of {0, 2, 4, 6}; the fabric link of rank 2
    // reaches replica q on direction q < 2 ? q : q - 1
    const CommGroupDirs d{CommGroup::orthogonal(4), 8, 2};
    CHECK(d(0, true) == 0);
    CHECK(d(2, false) == 3);
    CHECK(d(3, true) == 5);
    CHECK(d(1, true) == no_dir);  // itself
    CHECK(d(4, true) == no_dir);  // outside the group
    const CommGroupDirs e{CommGroup::consecutive(4), 8, 5};  // {4, 5, 6, 7}
    CHECK(e(0, true) == 4);
    CHECK(e(3, true) == 6);
    CHECK(CommGroupDirs{CommGroup::consecutive(3), 8, 0}(1, true) == no_dir);  // 3 does not divide 8
    CHECK(CommGroupDirs{CommGroup::all(), 4, 4}(0, true) == no_dir);          // no such replica
}

TEST_CASE("fabric tensor sweep: random shapes, dims, layouts and groups on lines and rings", "[fabric][tensor][long]") {
    std::mt19937 rng(4242);
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    uint32_t runs = 0;
    for (uint32_t it = 0; it < 80; ++it) {
        const uint32_t chips = 4 + 2 * pick(3);  // 4, 6, 8
        std::vector<uint32_t> ks;
        for (uint32_t k = 2; k <= 4; ++k)
            if (chips % k == 0) ks.push_back(k);
        const uint32_t k = ks[pick(uint32_t(ks.size()))];
        const CommGroup g = k == chips ? CommGroup::all() : pick(2) ? CommGroup::orthogonal(k) : CommGroup::consecutive(k);
        const bool is_ring = pick(2);
        FabricTensorCase fc{{}, is_ring ? "ring" : "line", is_ring ? fh::FabricKind::ring_1d : fh::FabricKind::line_1d, chips, g};
        if (!random_case(rng, k, fc.c)) continue;
        // 8 KiB packets do not fit the router's 16 receiver and 8 sender slots in 256 KiB of
        // Ethernet L1 (a named builder error); the fabric moves at most a 4 KiB tile per packet
        fc.c.packet_bytes = std::min(fc.c.packet_bytes, 4096u);
        fc.c.seed = 5000 + it;
        INFO(describe(fc));
        const std::string r = run_fabric_tensor(fc);
        if (r.rfind("not supported", 0) == 0) continue;
        CHECK(r == "");
        ++runs;
    }
    CHECK(runs > 50);
}
