// Tensors in tt-metal's layouts (tensor.hpp) and their all_gather / reduce_scatter along a
// fracture dim (tensor_sliced.hpp): the address math against hand-derived positions and a naive
// tilize written here, every element at a distinct byte of its unit, the named errors, the
// worker slicer's bands, and the collectives end to end on the emulation, checked element by
// element against the logical-coordinate reference (dims 0..3, row-major and tile, interleaved and
// sharded, resharding between input and output layouts).
#include <catch2/catch.hpp>

#include "e2e_bed.hpp"
#include "tensor_check.hpp"

#include <collectives/host/groups.hpp>
#include <collectives/host/tensor_plan.hpp>
#include <collectives/tensor_sliced.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <vector>

using namespace kccl::coll;
namespace cb = kccl::emu::collective;
namespace ch = kccl::coll::host;
namespace emu = kccl::emu;

namespace {

using namespace kccl::coll::tensor_check;

TensorLoc at(const TensorSpec& s, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    return locate_element(s, geometry(s), n, c, h, w);
}

}  // namespace

TEST_CASE("tensor: address math at hand-derived positions", "[collectives][tensor]") {
    // faces inside a tile: (0,17) is face 1 element 1; (17,0) face 2 row 1; (31,31) the last
    const TensorSpec t1 = spec(1, 1, 32, 32, 2, TL, IL);
    CHECK(at(t1, 0, 0, 0, 17).offset == (256 + 1) * 2);
    CHECK(at(t1, 0, 0, 17, 0).offset == (512 + 16) * 2);
    CHECK(at(t1, 0, 0, 31, 31).offset == 1023 * 2);
    CHECK(at(t1, 0, 0, 15, 15).offset == 255 * 2);
    // interleaved tiles over 4 banks: [1,1,64,96] bf16 is 2 x 3 tiles; (40,70) is tile 5 -> bank 1,
    // its second page there (offset 2048), face 0 row 8 column 6
    const TensorSpec t2 = spec(1, 1, 64, 96, 2, TL, IL, 4);
    CHECK(at(t2, 0, 0, 40, 70).unit == 1);
    CHECK(at(t2, 0, 0, 40, 70).offset == 2048 + (8 * 16 + 6) * 2);
    CHECK(geometry(t2).unit_bytes == 2 * 2048);
    // row-major interleaved [2,3,4,10] fp32 over 8 banks: [1,2,3,7] is row 23 -> bank 7, page 2
    const TensorSpec r1 = spec(2, 3, 4, 10, 4, RM, IL, 8);
    CHECK(at(r1, 1, 2, 3, 7).unit == 7);
    CHECK(at(r1, 1, 2, 3, 7).offset == 2 * 40 + 7 * 4);
    // height-sharded row-major [1,1,64,16] bf16, 16-row shards on a 2x2 grid: row 37 is shard 2:
    // core (0,1) in row-major orientation, core (1,0) in column-major; shard row 5
    const TensorSpec h1 = spec(1, 1, 64, 16, 2, RM, HS, 1, ShardSpec{2, 2, 16, 16, ShardOrientation::row_major});
    CHECK(at(h1, 0, 0, 37, 3).unit == 2);
    CHECK(at(h1, 0, 0, 37, 3).x == 0);
    CHECK(at(h1, 0, 0, 37, 3).y == 1);
    CHECK(at(h1, 0, 0, 37, 3).offset == 5 * 32 + 3 * 2);
    TensorSpec h2 = h1;
    h2.shard.orientation = ShardOrientation::col_major;
    CHECK(at(h2, 0, 0, 37, 3).unit == 1);
    // width-sharded tiles [1,1,64,128], 64x32 shards on 4x1 cores: (33,70) in shard 2, its 2nd tile
    const TensorSpec w1 = spec(1, 1, 64, 128, 2, TL, WS, 1, ShardSpec{4, 1, 64, 32, ShardOrientation::row_major});
    CHECK(at(w1, 0, 0, 33, 70).unit == 2);
    CHECK(at(w1, 0, 0, 33, 70).offset == 2048 + (1 * 16 + 6) * 2);
    // block-sharded row-major [1,1,8,12] 1-byte, 4x6 shards on 2x2: (5,7) on core (1,1), page = shard row
    const TensorSpec b1 = spec(1, 1, 8, 12, 1, RM, BS, 1, ShardSpec{2, 2, 4, 6, ShardOrientation::row_major});
    CHECK(at(b1, 0, 0, 5, 7).unit == 3);
    CHECK(at(b1, 0, 0, 5, 7).offset == 1 * 6 + 1);
    CHECK(geometry(b1).page_bytes == 6);
    // tile padding: [1,2,40,50] is stored as [1,2,64,64]: 2 x 2 tiles per channel
    const TensorGeom gp = geometry(spec(1, 2, 40, 50, 2, TL, IL));
    CHECK(gp.hp == 64);
    CHECK(gp.wp == 64);
    CHECK(gp.pages() == 8);
    CHECK(at(spec(1, 2, 40, 50, 2, TL, IL), 0, 1, 0, 0).offset == 4 * 2048);  // channel 1 starts at tile 4
}

TEST_CASE("tensor: tiles match a naive tilize, every element has its own bytes", "[collectives][tensor]") {
    // naive tilize of a [1,1,64,64] uint16 tensor, one bank: tiles row-major, faces 0..3, face rows
    const TensorSpec s = spec(1, 1, 64, 64, 2, TL, IL);
    std::vector<uint16_t> naive;
    for (uint32_t tr = 0; tr < 2; ++tr)
        for (uint32_t tc = 0; tc < 2; ++tc)
            for (uint32_t fr = 0; fr < 2; ++fr)
                for (uint32_t fc = 0; fc < 2; ++fc)
                    for (uint32_t r = 0; r < 16; ++r)
                        for (uint32_t c = 0; c < 16; ++c)
                            naive.push_back(uint16_t((tr * 32 + fr * 16 + r) * 64 + tc * 32 + fc * 16 + c));
    std::vector<uint16_t> mine(64 * 64, 0xFFFF);
    for (uint32_t h = 0; h < 64; ++h)
        for (uint32_t w = 0; w < 64; ++w) mine[at(s, 0, 0, h, w).offset / 2] = uint16_t(h * 64 + w);
    CHECK(mine == naive);

    // a sweep of specs: every (padded) element at a distinct, in-bounds byte range of its unit
    const ShardSpec g4{2, 2, 0, 0, ShardOrientation::row_major};
    std::vector<TensorSpec> specs = {
        spec(2, 3, 5, 7, 4, RM, IL, 3),   spec(2, 1, 40, 50, 2, TL, IL, 5),
        spec(1, 2, 8, 6, 2, RM, HS, 1, {2, 2, 4, 6, ShardOrientation::col_major}),
        spec(1, 1, 64, 128, 2, TL, WS, 1, {2, 2, 64, 32, ShardOrientation::col_major}),
        spec(2, 1, 32, 64, 4, TL, BS, 1, {2, 2, 32, 32, ShardOrientation::row_major}),
        spec(1, 1, 6, 12, 1, RM, BS, 1, {2, 3, 3, 4, ShardOrientation::col_major}),
    };
    (void)g4;
    for (const TensorSpec& t : specs) {
        REQUIRE(check(t) == TensorError::ok);
        const TensorGeom g = geometry(t);
        std::set<std::pair<uint32_t, uint32_t>> seen;
        bool bounds = true;
        for (uint32_t n = 0; n < t.shape[0]; ++n)
            for (uint32_t c = 0; c < t.shape[1]; ++c)
                for (uint32_t h = 0; h < g.hp; ++h)
                    for (uint32_t w = 0; w < g.wp; ++w) {
                        const TensorLoc l = locate_element(t, g, n, c, h, w);
                        bounds &= l.unit < g.units && l.offset + t.elem_bytes <= g.unit_bytes && l.offset % t.elem_bytes == 0;
                        seen.insert({l.unit, l.offset});
                    }
        CHECK(bounds);
        CHECK(seen.size() == size_t(g.rows) * g.cols);
    }
}

TEST_CASE("tensor: impossible specs and splits are named errors", "[collectives][tensor]") {
    using E = TensorError;
    CHECK(check(spec(1, 0, 4, 4, 2, RM, IL)) == E::zero_dim);
    CHECK(check(spec(1, 1, 4, 4, 0, RM, IL)) == E::zero_elem_bytes);
    CHECK(check(spec(1, 1, 4, 4, 2, RM, IL, 0)) == E::no_banks);
    CHECK(check(spec(1024, 1024, 64, 64, 4, RM, IL)) == E::too_large);
    CHECK(check(spec(1, 1, 64, 64, 2, TL, HS, 1, {2, 2, 0, 64, ShardOrientation::row_major})) == E::zero_shard);
    CHECK(check(spec(1, 1, 64, 64, 2, TL, HS, 1, {2, 2, 16, 64, ShardOrientation::row_major})) == E::shard_not_tiles);
    CHECK(check(spec(1, 1, 60, 8, 2, RM, HS, 1, {4, 4, 7, 8, ShardOrientation::row_major})) == E::shard_not_dividing);
    CHECK(check(spec(1, 1, 64, 64, 2, RM, HS, 1, {2, 2, 16, 32, ShardOrientation::row_major})) ==
          E::height_shard_not_full_width);
    CHECK(check(spec(1, 1, 64, 64, 2, RM, WS, 1, {2, 2, 32, 16, ShardOrientation::row_major})) ==
          E::width_shard_not_full_height);
    CHECK(check(spec(1, 1, 64, 64, 2, RM, HS, 1, {1, 3, 16, 64, ShardOrientation::row_major})) == E::too_many_shards);
    CHECK(check(spec(1, 1, 64, 64, 2, RM, BS, 1, {4, 1, 16, 16, ShardOrientation::row_major})) == E::too_many_shards);
    CHECK(check(spec(1, 1, 64, 64, 2, RM, BS, 1, {4, 4, 16, 16, ShardOrientation::row_major})) == E::ok);
    CHECK(check(spec(1, 1, 64, 64, 2, RM, BS, 1, {0, 4, 16, 16, ShardOrientation::row_major})) == E::empty_core_grid);
    CHECK(std::string(tensor_error_text(E::shard_not_dividing)).find("does not divide") != std::string::npos);

    using S = SplitError;
    TensorSplit t{spec(1, 1, 32, 64, 2, TL, IL), spec(1, 1, 32, 128, 2, TL, IL), 3, 2};
    CHECK(check(t) == S::ok);
    t.dim = 4;
    CHECK(check(t) == S::bad_dim);
    t.dim = 2;
    CHECK(check(t) == S::shape_mismatch);
    t = {spec(1, 1, 32, 40, 2, TL, IL), spec(1, 1, 32, 80, 2, TL, IL), 3, 2};
    CHECK(check(t) == S::tile_dim_padded);
    t = {spec(1, 1, 32, 64, 2, TL, IL), spec(1, 1, 32, 128, 2, RM, IL), 3, 2};
    CHECK(check(t) == S::layout_mismatch);
    t = {spec(1, 1, 32, 64, 2, TL, IL), spec(1, 1, 32, 128, 4, TL, IL), 3, 2};
    CHECK(check(t) == S::elem_bytes_mismatch);
    t = {spec(1, 1, 32, 64, 2, TL, IL), spec(1, 1, 32, 128, 2, TL, IL), 3, 0};
    CHECK(check(t) == S::zero_parts);
    t = {spec(1, 1, 32, 64, 2, TL, IL, 0), spec(1, 1, 32, 128, 2, TL, IL), 3, 2};
    CHECK(check(t) == S::small_invalid);
}

TEST_CASE("tensor: the slicer's worker bands", "[collectives][tensor]") {
    // tiles [1,1,64,256]: 2 x 8 tiles, 4 workers -> 2 tile columns each, all rows
    const TensorGeom g = geometry(spec(1, 1, 64, 256, 2, TL, IL));
    for (uint32_t w = 0; w < 4; ++w) {
        const PageRect r = worker_rect(g, 4, w);
        CHECK(r.row0 == 0);
        CHECK(r.rows == 2);
        CHECK(r.col0 == 2 * w);
        CHECK(r.cols == 2);
    }
    // row-major interleaved [1,1,10,16]: one page per row, 4 workers -> rows 2, 3, 2, 3
    const TensorGeom gr = geometry(spec(1, 1, 10, 16, 4, RM, IL));
    const uint32_t rows[] = {2, 3, 2, 3}, row0[] = {0, 2, 5, 7};
    for (uint32_t w = 0; w < 4; ++w) {
        CHECK(worker_rect(gr, 4, w).rows == rows[w]);
        CHECK(worker_rect(gr, 4, w).row0 == row0[w]);
        CHECK(worker_rect(gr, 4, w).cols == 1);
    }
    // more workers than pages: the extra ones get nothing
    const TensorGeom g1 = geometry(spec(1, 1, 2, 16, 4, RM, IL));
    CHECK(worker_rect(g1, 3, 0).pages() == 0);
    CHECK(worker_rect(g1, 3, 1).pages() == 1);
    CHECK(worker_rect(g1, 3, 2).pages() == 1);
}

namespace {

/// Runs the case on IPCQ (one chip; worker w of rank r on its own PE, each worker its own ring),
/// uint32 sum; "" if every rank's output tensor, element by element (pad elements included),
/// equals the reference and no byte outside the elements was written.
std::string run_tensor(const TensorCase& c) {
    using Red = Reducer<uint32_t, RedOp::sum>;
    const TensorSplit& t = c.split;
    if (check(t) != SplitError::ok) return std::string("bad split: ") + split_error_text(check(t));
    const uint32_t p = t.parts, W = c.workers;
    const CaseLayout L = layout_of(c);
    if (!L.error.empty()) return L.error;
    const uint32_t small_stride = L.small_stride, big_stride = L.big_stride, small_bytes = L.small_bytes,
                   big_bytes = L.big_bytes, work = L.work;
    const Shape sh = L.shape;
    // L1 of a worker: [small tensor | big tensor | work], handed to the group as its "buffers"
    const uint32_t buffer_bytes = (std::max({small_bytes + big_bytes + work, 16u}) + 15u) & ~15u;
    const uint32_t slots = 3;
    const uint64_t need = 0x10000ull + 3ull * (buffer_bytes + 16) + 4ull * slots * (c.packet_bytes + 64) * 8 + 0x10000;
    const uint32_t l1 = uint32_t((need + 0xFFFF) & ~0xFFFFull);
    emu::ChipSpec chip;
    chip.worker_l1_bytes = l1;
    chip.grid_w = 8;
    chip.grid_h = (p * W + 7) / 8;
    chip.eth_cores = 1;
    chip.eth_l1_bytes = 16 * 1024;
    emu::Cluster cluster(emu::topology::single_chip(chip));
    emu::Launcher launch(cluster);
    std::vector<ch::GroupPlan> plans;
    for (uint32_t w = 0; w < W; ++w) {
        ch::GroupSpec g;
        g.transport = Transport::ipcq;
        g.shape = GroupShape::ring;
        g.message_bytes = c.packet_bytes;
        g.slots = slots;
        g.buffer_bytes = buffer_bytes;
        g.worker_l1 = {0x10000, l1, 0};
        for (uint32_t r = 0; r < p; ++r) g.workers.push_back(ch::Core{0, (r * W + w) % 8, (r * W + w) / 8});
        plans.push_back(ch::build_group(g));
        ch::install_on(plans.back(), cluster, launch);
    }
    const uint64_t seed = c.seed;
    const bool gather = c.op == Op::all_gather;
    for (uint32_t w = 0; w < W; ++w)
        ch::add_worker_kernels(plans[w], launch, 0, [=](auto& hal) -> uint64_t {
            using H = std::remove_reference_t<decltype(hal)>;
            const GroupArgs g = load_group_args(hal, 0);
            const uint32_t base = g.input_l1;  // small | big | work
            uint8_t* all = static_cast<uint8_t*>(hal.l1_ptr(base, small_bytes + big_bytes));
            std::memset(all, kSentinel, small_bytes + big_bytes);
            TensorSliceParams tp;
            tp.shape = sh;
            tp.split = t;
            tp.workers = W;
            tp.worker = w;
            tp.rank = g.rank;
            tp.small = {base, small_stride};
            tp.big = {base + small_bytes, big_stride};
            tp.work = (base + small_bytes + big_bytes + 15) & ~15u;
            tp.packet_bytes = c.packet_bytes;
            // the input: every element (pad elements too) holds its value
            write_input(t, c.op, seed, g.rank, gather ? tp.small : tp.big,
                        [&](uint32_t addr, uint32_t v) { std::memcpy(hal.l1_ptr(addr, 4), &v, 4); });
            IpcqLink<H> link(hal, g.link_args);
            execute_tensor_slice<Red>(link, tp, cb::dirs_of(g));
            link.quiesce();
            return 0;
        });
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(5000);
    ro.adversary.enabled = true;
    ro.adversary.seed = seed * 131 + 7;
    const emu::RunReport rep = launch.run(ro);
    if (!rep.ok()) return "run failed: " + rep.summary();

    // every element against the logical-coordinate reference, read from the worker whose band
    // holds its page; no worker wrote a byte it does not own
    OutputCheck res;
    for (uint32_t r = 0; r < p; ++r) {
        auto l1_of = [&](uint32_t w) { return cluster.l1({0, (r * W + w) % 8, (r * W + w) / 8}).data() + plans[w].at(r, 0).input; };
        const uint32_t out_base = gather ? small_bytes : 0, out_stride = gather ? big_stride : small_stride;
        check_output(t, c.op, seed, r, W, true, out_stride, [&](uint32_t w) { return l1_of(w) + out_base; }, res);
    }
    if (res.bad || res.strays)
        return std::to_string(res.bad) + " wrong elements, " + std::to_string(res.strays) + " stray bytes:" + res.what;
    return "";
}

}  // namespace

TEST_CASE("e2e: all_gather of a 4-D tensor along each dim, both layouts, interleaved", "[collectives][tensor][e2e]") {
    for (uint32_t dim = 0; dim < 4; ++dim) {
        // row-major [2,2,3,5] over 3 banks (5-element rows: W-gather is a strided copy);
        // tiles [2,1,32,64] over 4 banks (dims 0, 1: also [1,2,40,20], padded tiles)
        std::vector<TensorCase> cases;
        TensorCase a;
        a.split = gather_split(spec(2, 2, 3, 5, 4, RM, IL, 3), dim, 3, IL, 5);
        a.workers = 2;
        a.seed = 10 + dim;
        cases.push_back(a);
        TensorCase b;
        b.split = gather_split(spec(2, 1, 32, 64, 4, TL, IL, 4), dim, 2, IL, 3);
        b.workers = 2;
        b.packet_bytes = 4096;
        b.seed = 20 + dim;
        cases.push_back(b);
        if (dim < 2) {
            TensorCase pd;
            pd.split = gather_split(spec(1, 2, 40, 20, 4, TL, IL, 2), dim, 2, IL, 2);
            pd.packet_bytes = 4096;
            pd.seed = 30 + dim;
            cases.push_back(pd);
        }
        for (const TensorCase& c : cases) {
            INFO(c.describe());
            CHECK(run_tensor(c) == "");
        }
    }
}

TEST_CASE("e2e: tensor all_gather / reduce_scatter with sharded tensors and in-flight resharding",
          "[collectives][tensor][e2e]") {
    std::vector<TensorCase> cases;
    const auto rmo = ShardOrientation::row_major, cmo = ShardOrientation::col_major;
    // width-sharded row-major in (16-column shards on 2 cores), interleaved out, gathered along W
    {
        TensorCase c;
        c.split = gather_split(spec(1, 1, 4, 32, 4, RM, WS, 1, {2, 1, 4, 16, rmo}), 3, 3, IL, 2);
        c.seed = 41;
        cases.push_back(c);
    }
    // the same, along H, out height-sharded (4 rows per core)
    {
        TensorCase c;
        c.split = gather_split(spec(1, 1, 4, 32, 4, RM, WS, 1, {2, 1, 4, 16, rmo}), 2, 3, HS, 1, {3, 1, 4, 32, rmo});
        c.seed = 42;
        cases.push_back(c);
    }
    // interleaved in, width-sharded out whose 8-column shards cut the 12-column blocks
    {
        TensorCase c;
        c.split = gather_split(spec(1, 2, 2, 12, 4, RM, IL, 2), 3, 2, WS, 1, {1, 3, 4, 8, cmo});
        c.seed = 43;
        cases.push_back(c);
    }
    // tiles: block-sharded in (2x2 shards of one tile), width-sharded out, along W and along C
    {
        TensorCase c;
        c.split = gather_split(spec(1, 1, 64, 64, 4, TL, BS, 1, {2, 2, 32, 32, rmo}), 3, 2, WS, 1, {4, 1, 64, 32, rmo});
        c.packet_bytes = 4096;
        c.seed = 44;
        cases.push_back(c);
        TensorCase d;
        d.split = gather_split(spec(1, 1, 64, 64, 4, TL, HS, 1, {2, 1, 32, 64, cmo}), 1, 2, BS, 1, {4, 2, 32, 32, cmo});
        d.packet_bytes = 8192;
        d.workers = 3;
        d.seed = 45;
        cases.push_back(d);
    }
    // reduce_scatter along W (row-major, interleaved in -> width-sharded out) and along H (tiles)
    {
        TensorCase c;
        c.op = Op::reduce_scatter;
        c.split = gather_split(spec(1, 1, 3, 8, 4, RM, WS, 1, {2, 1, 3, 4, rmo}), 3, 3, IL, 2);
        c.seed = 46;
        cases.push_back(c);
        TensorCase d;
        d.op = Op::reduce_scatter;
        d.split = gather_split(spec(1, 1, 32, 64, 4, TL, IL, 3), 2, 2, HS, 1, {2, 1, 32, 64, rmo});
        d.packet_bytes = 4096;
        d.seed = 47;
        cases.push_back(d);
        TensorCase e;
        e.op = Op::reduce_scatter;
        e.split = gather_split(spec(2, 1, 2, 6, 4, RM, IL, 1), 0, 2, BS, 1, {2, 4, 2, 3, rmo});
        e.method = Method::ring_bidir;
        e.seed = 48;
        cases.push_back(e);
    }
    for (const TensorCase& c : cases) {
        INFO(c.describe());
        CHECK(run_tensor(c) == "");
    }
}

TEST_CASE("e2e: mesh tensor: row and column all_gathers on a 2x3 mesh of chips over EDM", "[collectives][tensor][e2e]") {
    // A [1,1,64,192] fp32 tiled tensor sharded over a 2 x 3 mesh of chips in two dimensions: chip
    // (i, j) = replica i*3 + j holds rows [32i, 32i+32) and columns [64j, 64j+64) as a
    // [1,1,32,64] tensor (2 tiles, interleaved over 2 banks). Rows of the mesh (the groups
    // consecutive(3): {0,1,2}, {3,4,5}) all_gather along W into a width-sharded [1,1,32,192];
    // columns (orthogonal(2): {0,3}, {1,4}, {2,5}) all_gather along H into an interleaved
    // [1,1,64,64]; both at once, on separate worker cores and separate Ethernet links, each a line
    // of chips. Every output element is checked against the global tensor.
    using Red = Reducer<uint32_t, RedOp::sum>;
    constexpr uint32_t R = 2, C = 3, N = R * C;
    const auto rows = ch::group_table(CommGroup::consecutive(C), N), cols = ch::group_table(CommGroup::orthogonal(R), N);
    REQUIRE(rows.size() == R);
    REQUIRE(cols.size() == C);
    const MeshTensor mt(R, C, 77);
    const TensorSplit row_split = mt.row_split, col_split = mt.col_split;
    REQUIRE(check(row_split) == SplitError::ok);
    REQUIRE(check(col_split) == SplitError::ok);

    emu::ChipSpec chip;
    chip.grid_w = 2;
    chip.grid_h = 1;
    chip.eth_cores = 4;
    chip.worker_l1_bytes = 512 * 1024;
    emu::Cluster cluster(emu::topology::mesh(R, C, 1, false, chip));
    emu::Launcher launch(cluster);
    struct Group {
        TensorSplit split;
        std::vector<uint32_t> members;
        uint32_t core_x;
        ch::GroupPlan plan;
        uint32_t small_stride, big_stride, small_bytes;
    };
    std::vector<Group> groups;
    for (uint32_t pass = 0; pass < 2; ++pass)
        for (const auto& m : pass == 0 ? rows : cols) {
            Group G{pass == 0 ? row_split : col_split, m, pass, {}, 0, 0, 0};
            const TensorGeom gs = geometry(G.split.small), gb = geometry(G.split.big);
            G.small_stride = gs.unit_bytes;
            G.big_stride = gb.unit_bytes;
            G.small_bytes = gs.units * gs.unit_bytes;
            ch::GroupSpec g;
            g.transport = Transport::edm;
            g.shape = GroupShape::line;
            g.message_bytes = 4096;
            g.slots = 3;
            g.buffer_bytes = 128 * 1024;
            g.worker_l1 = {0x10000, chip.worker_l1_bytes, 0};
            g.eth_l1 = {0x1000, chip.eth_l1_bytes, 0x800};
            for (uint32_t r : m) g.workers.push_back(ch::Core{r, pass, 0});
            g.hops = ch::edm_hops_from(cluster, g);
            G.plan = ch::build_group(g);
            ch::install_on(G.plan, cluster, launch);
            groups.push_back(std::move(G));
        }
    for (const Group& G : groups) {
        const TensorSplit t = G.split;
        const std::vector<uint32_t> members = G.members;
        const uint32_t ss = G.small_stride, bs = G.big_stride, sb = G.small_bytes;
        ch::add_worker_kernels(G.plan, launch, 0, [=](auto& hal) -> uint64_t {
            using H = std::remove_reference_t<decltype(hal)>;
            const GroupArgs g = load_group_args(hal, 0);
            const uint32_t replica = members[g.rank], i = replica / C, j = replica % C;
            const uint32_t base = g.input_l1;
            const TensorGeom gb = geometry(t.big);
            std::memset(hal.l1_ptr(base, sb + gb.units * bs), kSentinel, sb + gb.units * bs);
            mt.write_local(i, j, TensorMem{base, ss}, [&](uint32_t addr, uint32_t v) { std::memcpy(hal.l1_ptr(addr, 4), &v, 4); });
            TensorSliceParams tp;
            tp.shape.op = Op::all_gather;
            tp.shape.topo = Topology::line;
            tp.shape.method = Method::line;
            tp.shape.ranks = t.parts;
            tp.split = t;
            tp.workers = 1;
            tp.rank = g.rank;
            tp.small = {base, ss};
            tp.big = {base + sb, bs};
            tp.work = (base + sb + gb.units * bs + 15) & ~15u;
            tp.packet_bytes = 4096;
            EdmLink<H> link(hal, g.link_args);
            execute_tensor_slice<Red>(link, tp, cb::dirs_of(g));
            link.quiesce();
            return 0;
        });
        ch::add_edm_kernels(G.plan, launch, [](auto& hal) {
            kccl::edm::Edm<EdmLinkConfig> e;
            return e.run(hal) == kccl::edm::Status::ok ? uint64_t(0) : uint64_t(1);
        });
    }
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(5000);
    ro.adversary.enabled = true;
    ro.adversary.seed = 5;
    const emu::RunReport rep = launch.run(ro);
    REQUIRE(rep.ok());
    uint64_t bad = 0, checked = 0, strays = 0;
    for (const Group& G : groups)
        for (uint32_t r = 0; r < G.members.size(); ++r) {
            const uint32_t replica = G.members[r], i = replica / C, j = replica % C;
            const ch::RankLayout& l = G.plan.at(r, 0);
            const uint8_t* big = cluster.l1({l.worker.chip, l.worker.x, l.worker.y}).data() + l.input + G.small_bytes;
            bad += mt.check(G.core_x == 0, i, j, big, G.big_stride, checked);
            strays += mt.strays(G.core_x == 0, big, G.big_stride);
        }
    CHECK(checked == R * C * (32 * 192) + R * C * (64 * 64));
    CHECK(bad == 0);
    CHECK(strays == 0);
}

namespace {

/// Every byte of the big tensor's elements is covered by exactly one run of one worker's page
/// in one block, and every run is inside its small page and its big unit; "" if so.
std::string plan_covers(const ch::TensorPlan& p) {
    const TensorSplit& t = p.split;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> hits;  // (unit, byte) -> times written
    for (const ch::WorkerPlan& w : p.workers)
        for (uint32_t b = 0; b < t.parts; ++b)
            for (const ch::PageMove& m : w.runs[b])
                for (const PageRun& r : m.runs) {
                    if (r.in_page + r.bytes > p.small.page_bytes) return "a run leaves its small page";
                    if (r.big.unit >= p.big.units || r.big.offset + r.bytes > p.big.unit_bytes) return "a run leaves its big unit";
                    for (uint32_t i = 0; i < r.bytes; ++i) ++hits[{r.big.unit, r.big.offset + i}];
                }
    uint32_t want = 0;
    for (uint32_t n = 0; n < t.big.shape[0]; ++n)
        for (uint32_t c = 0; c < t.big.shape[1]; ++c)
            for (uint32_t h = 0; h < p.big.hp; ++h)
                for (uint32_t x = 0; x < p.big.wp; ++x) {
                    const TensorLoc l = locate_element(t.big, p.big, n, c, h, x);
                    for (uint32_t i = 0; i < t.big.elem_bytes; ++i) {
                        const auto it = hits.find({l.unit, l.offset + i});
                        if (it == hits.end() || it->second != 1) return "an element byte is written 0 or 2+ times";
                    }
                    want += t.big.elem_bytes;
                }
    if (hits.size() != want) return "a run writes a byte that is no element's";
    return "";
}

}  // namespace

TEST_CASE("tensor plan: slice shapes, page lists, every big byte exactly once, named errors", "[collectives][tensor]") {
    // tiles [1,1,64,256] bf16 gathered along W over 4 ranks by 4 workers: each worker 2 x 2 tiles
    // (64 x 64 elements) of each rank, page ids {2w, 2w+1, 8+2w, 9+2w}, one run per tile per block
    TensorSpec out = spec(1, 1, 1, 1, 2, TL, IL, 12);
    const ch::TensorPlan p = ch::plan_tensor(Op::all_gather, ch::fracture(spec(1, 1, 64, 256, 2, TL, IL, 12), 3, 4, out), 4);
    REQUIRE(p.workers.size() == 4);
    for (uint32_t w = 0; w < 4; ++w) {
        CHECK(p.workers[w].slice_rows == 64);
        CHECK(p.workers[w].slice_cols == 64);
        CHECK(p.workers[w].pages == std::vector<uint32_t>{2 * w, 2 * w + 1, 8 + 2 * w, 9 + 2 * w});
        for (uint32_t b = 0; b < 4; ++b) {
            // block b's tile (row, col) of the [64, 1024] output is tile row*32 + b*8 + col: bank % 12
            const ch::PageMove& m = p.workers[w].runs[b][2];
            REQUIRE(m.runs.size() == 1);
            CHECK(m.runs[0].big.unit == (32 + b * 8 + 2 * w) % 12);
            CHECK(m.runs[0].big.offset == (32 + b * 8 + 2 * w) / 12 * 2048);
        }
    }
    CHECK(plan_covers(p) == "");
    // row-major, W gather into 8-column width shards: 12-column pages are cut in two runs
    const ch::TensorPlan q = ch::plan_tensor(
        Op::all_gather,
        ch::fracture(spec(1, 2, 2, 12, 4, RM, IL, 2), 3, 2, spec(1, 1, 1, 1, 4, RM, WS, 1, {1, 3, 4, 8, ShardOrientation::col_major})),
        3);
    CHECK(q.workers[0].pages == std::vector<uint32_t>{0});
    CHECK(q.workers[0].runs[0][0].runs.size() == 2);  // columns 0..7 | 8..11
    CHECK(q.workers[0].runs[1][0].runs.size() == 2);  // columns 12..15 | 16..23
    CHECK(q.workers[0].runs[1][0].runs[0].bytes == 4 * 4);
    CHECK(plan_covers(q) == "");
    CHECK(plan_covers(ch::plan_tensor(Op::reduce_scatter, ch::fracture(spec(2, 3, 5, 7, 4, RM, IL, 3), 1, 3, spec(1, 1, 1, 1, 4, RM, IL, 4)), 5)) == "");

    CHECK_THROWS_WITH(ch::plan_tensor(Op::all_gather, ch::fracture(spec(1, 1, 64, 64, 2, TL, IL, 0), 3, 2, out), 2),
                      Catch::Contains("the per-rank input [1,1,64,64] tile interleaved over 0 banks: interleaved over 0 banks"));
    CHECK_THROWS_WITH(ch::plan_tensor(Op::all_gather,
                                      ch::fracture(spec(1, 1, 64, 64, 2, TL, IL, 2), 3, 3,
                                                   spec(1, 1, 1, 1, 2, TL, WS, 1, {4, 1, 64, 128, ShardOrientation::row_major})),
                                      2),
                      Catch::Contains("the gathered output [1,1,64,192] tile width-sharded 64x128 shards on 4x1 cores") &&
                          Catch::Contains("does not divide"));
    CHECK_THROWS_WITH(ch::plan_tensor(Op::all_gather, ch::fracture(spec(1, 1, 32, 48, 2, TL, IL, 2), 3, 2, out), 2),
                      Catch::Contains("along dim 3 over 2 ranks") && Catch::Contains("multiple of 32"));
    CHECK_THROWS_WITH(ch::plan_tensor(Op::all_reduce, ch::fracture(spec(1, 1, 32, 32, 2, TL, IL), 3, 2, out), 2),
                      Catch::Contains("op all_reduce does not cut a tensor along a dim"));
    CHECK_THROWS_WITH(ch::plan_tensor(Op::all_gather, ch::fracture(spec(1, 1, 32, 32, 2, TL, IL), 3, 2, out), 0),
                      Catch::Contains("0 workers"));
}

TEST_CASE("e2e: tensor collectives sweep: random shapes, dims, layouts, memory layouts", "[collectives][tensor][e2e][long]") {
    std::mt19937 rng(2026);
    uint32_t runs = 0;
    for (uint32_t it = 0; it < 300; ++it) {
        TensorCase c;
        if (!random_case(rng, 0, c)) continue;  // a padded W along dim 3 (named error, tested above)
        c.seed = 1000 + it;
        INFO(c.describe());
        CHECK(plan_covers(ch::plan_tensor(c.op, c.split, c.workers)) == "");
        const std::string r = run_tensor(c);
        if (r.rfind("not supported", 0) == 0) continue;
        CHECK(r == "");
        ++runs;
    }
    CHECK(runs > 200);
}

TEST_CASE("e2e: a tensor collective with an op that does not cut along a dim is a named device error", "[collectives][tensor][e2e]") {
    TensorCase c;
    c.op = Op::all_reduce;
    c.split = gather_split(spec(1, 1, 4, 8, 4, RM, IL, 2), 3, 2, IL, 2);
    const std::string r = run_tensor(c);
    CHECK_THAT(r, Catch::Contains("run failed") && Catch::Contains("execute_tensor_slice: op all_reduce") &&
                      Catch::Contains("allowed: all_gather or reduce_scatter"));
}

TEST_CASE("tensor: band boundaries in 32-bit arithmetic equal floor(w * total / parts)", "[collectives][tensor]") {
    uint64_t bad = 0;
    for (uint32_t parts = 1; parts <= 17; ++parts)
        for (uint32_t total : {0u, 1u, 5u, 31u, 1000u, 4099u, 0x7FFFFFFFu, 0xFFFFFFFFu})
            for (uint32_t w = 0; w <= parts; ++w) bad += detail::band_start(w, total, parts) != uint32_t(uint64_t(w) * total / parts);
    CHECK(bad == 0);
}
