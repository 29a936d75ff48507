// What the tensor collective tests share (tests/collectives/tensor_test.cpp over IPCQ and EDM,
// tests/fabric/chip_tensor_test.cpp over the chip fabric): spec builders, the seeded element
// values, the input writer, the logical-coordinate reference and the element-by-element output
// check (pad elements included, with a sentinel check that nothing outside the elements is
// written), and the mesh tensor (a tensor sharded in two dimensions over a mesh of chips).
// The reference is written from the ops' definitions by logical coordinates, never from the
// address math or the slicer under test.
#pragma once

#include <collectives/host/tensor_plan.hpp>
#include <collectives/tensor.hpp>
#include <collectives/tensor_sliced.hpp>
#include <testing/inputs.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace kccl::coll::tensor_check {

inline TensorSpec spec(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t eb, TensorLayout lay, MemoryLayout mem,
                       uint32_t banks = 1, ShardSpec sh = {}) {
    TensorSpec s;
    s.shape[0] = n;
    s.shape[1] = c;
    s.shape[2] = h;
    s.shape[3] = w;
    s.elem_bytes = eb;
    s.layout = lay;
    s.memory = mem;
    s.banks = banks;
    s.shard = sh;
    return s;
}
inline constexpr auto RM = TensorLayout::row_major;
inline constexpr auto TL = TensorLayout::tile;
inline constexpr auto IL = MemoryLayout::interleaved;
inline constexpr auto HS = MemoryLayout::height_sharded;
inline constexpr auto WS = MemoryLayout::width_sharded;
inline constexpr auto BS = MemoryLayout::block_sharded;

/// Byte the tests fill every tensor with before a run: an output byte that still holds it after
/// the run was not written.
inline constexpr uint8_t kSentinel = 0x5A;

/// The split of an all_gather of `small` along `dim` over p ranks into an output of memory
/// layout (big_mem, big_banks, big_shard).
inline TensorSplit gather_split(const TensorSpec& small, uint32_t dim, uint32_t p, MemoryLayout big_mem, uint32_t big_banks = 1,
                                ShardSpec big_shard = {}) {
    TensorSplit t;
    t.small = small;
    t.big = small;
    t.big.shape[dim] *= p;
    t.big.memory = big_mem;
    t.big.banks = big_banks;
    t.big.shard = big_shard;
    t.dim = dim;
    t.parts = p;
    return t;
}

/// One tensor collective: the op, the split, the worker bands and how to run them.
struct TensorCase {
    Op op = Op::all_gather;
    TensorSplit split;
    uint32_t workers = 2;
    Method method = Method::ring_cw;
    uint32_t packet_bytes = 512;
    uint64_t seed = 1;
    std::string describe() const {
        std::ostringstream s;
        auto one = [&](const TensorSpec& t) {
            s << "[" << t.shape[0] << "," << t.shape[1] << "," << t.shape[2] << "," << t.shape[3] << "] "
              << (t.layout == TL ? "tile" : "row-major") << " "
              << (t.memory == IL ? "interleaved" : t.memory == HS ? "height-sharded" : t.memory == WS ? "width-sharded" : "block-sharded");
        };
        s << op_name(op) << " dim " << split.dim << " on " << split.parts << " ranks, " << workers << " workers, "
          << method_name(method) << "; small ";
        one(split.small);
        s << ", big ";
        one(split.big);
        return s.str();
    }
};

/// The value of element [n, c, h, w] of rank `rank`'s input (a seeded hash of its coordinates).
inline uint32_t value_of(uint64_t seed, uint32_t rank, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    using kccl::testing::mix;
    return uint32_t(kccl::testing::hash(seed ^ mix((uint64_t(n) << 42) ^ (uint64_t(c) << 21) ^ h), rank, w));
}

/// Writes rank `rank`'s input of a uint32 tensor collective (all_gather: the small tensor;
/// reduce_scatter: the big one), every element including the pad elements of partial tiles:
/// put(l1_address, value) for each, addresses from `mem` (the input's TensorMem).
template <class Put>
void write_input(const TensorSplit& t, Op op, uint64_t seed, uint32_t rank, const TensorMem& mem, Put put) {
    const TensorSpec& in = op == Op::all_gather ? t.small : t.big;
    const TensorGeom gi = geometry(in);
    for (uint32_t n = 0; n < in.shape[0]; ++n)
        for (uint32_t c = 0; c < in.shape[1]; ++c)
            for (uint32_t h = 0; h < gi.hp; ++h)
                for (uint32_t x = 0; x < gi.wp; ++x) put(mem.addr(locate_element(in, gi, n, c, h, x)), value_of(seed, rank, n, c, h, x));
}

/// The reference by logical coordinates: element [n, c, h, x] of rank r's output (pad coordinates
/// included). all_gather: out[.., i_d, ..] = the input of rank i_d / s at i_d % s (s = the small
/// extent along the dim); reduce_scatter (uint32 sum): the sum over ranks of their inputs at
/// r * s + i_d.
inline uint32_t expected(const TensorSplit& t, Op op, uint64_t seed, uint32_t r, uint32_t n, uint32_t c, uint32_t h, uint32_t x) {
    const uint32_t d = t.dim, s = t.small.shape[d];
    uint32_t idx[4] = {n, c, h, x};
    if (op == Op::all_gather) {
        const uint32_t src = idx[d] / s;
        idx[d] %= s;
        return value_of(seed, src, idx[0], idx[1], idx[2], idx[3]);
    }
    idx[d] += r * s;
    uint32_t want = 0;
    for (uint32_t q = 0; q < t.parts; ++q) want += value_of(seed, q, idx[0], idx[1], idx[2], idx[3]);
    return want;
}

/// Bytes of a tensor's L1 image: its units at `stride` bytes apart.
inline uint32_t tensor_bytes(const TensorSpec& s, uint32_t stride) { return geometry(s).units * stride; }

/// A worker's L1 for a tensor case: [small tensor | big tensor | work], each tensor's units at a
/// 16-byte stride, work the most any worker's slice needs (tensor_work_bytes); `error` is set,
/// "not supported: ...", for a slice shape validate() refuses.
struct CaseLayout {
    uint32_t small_stride = 0, big_stride = 0, small_bytes = 0, big_bytes = 0, work = 16;
    Shape shape;  ///< the collective's shape the slices are planned for (a ring of the split's parts)
    std::string error;
};
inline CaseLayout layout_of(const TensorCase& c) {
    const TensorSplit& t = c.split;
    CaseLayout l;
    const TensorGeom gs = geometry(t.small), gb = geometry(t.big);
    l.small_stride = (gs.unit_bytes + 15) & ~15u;
    l.big_stride = (gb.unit_bytes + 15) & ~15u;
    l.small_bytes = gs.units * l.small_stride;
    l.big_bytes = gb.units * l.big_stride;
    Shape& sh = l.shape;
    sh.op = c.op;
    sh.method = c.method;
    sh.topo = Topology::ring;
    sh.ranks = t.parts;
    sh.window = 1;
    for (uint32_t w = 0; w < c.workers; ++w) {
        TensorSliceParams tp;
        tp.shape = sh;
        tp.split = t;
        tp.workers = c.workers;
        tp.worker = w;
        tp.packet_bytes = c.packet_bytes;
        l.work = std::max(l.work, tensor_work_bytes(tp));
        if (const char* err = validate(slice_shape(sh, detail::tensor_work(tp).sl, 0))) {
            l.error = std::string("not supported: ") + err;
            return l;
        }
    }
    return l;
}

/// The result of check_output.
struct OutputCheck {
    uint64_t bad = 0, strays = 0, checked = 0;
    std::string what;  ///< the first few wrong elements and stray bytes
};

/// Checks rank r's output of a uint32 tensor collective with `bands` worker bands. view(w) is the
/// output image (unit u at u * stride) as worker w's core holds it; `separate` says whether each
/// band's worker has its own core (then every element is read from the core of the band that owns
/// its page and no core may write a byte its band does not own), or one core ran every band (then
/// view(0) holds everything). Every element, pad elements included, is compared with expected();
/// every byte of the image that no element (of that core's bands) occupies must still be kSentinel.
template <class View>
void check_output(const TensorSplit& t, Op op, uint64_t seed, uint32_t r, uint32_t bands, bool separate, uint32_t stride,
                  View view, OutputCheck& res) {
    const bool gather = op == Op::all_gather;
    const TensorSpec& out = gather ? t.big : t.small;
    const TensorGeom gs = geometry(t.small), go = geometry(out);
    const uint32_t d = t.dim, s = t.small.shape[d], cores = separate ? bands : 1;
    std::vector<uint8_t> mask(tensor_bytes(out, stride), 0);  // 1 + the core that owns the byte
    for (uint32_t n = 0; n < out.shape[0]; ++n)
        for (uint32_t c = 0; c < out.shape[1]; ++c)
            for (uint32_t h = 0; h < go.hp; ++h)
                for (uint32_t x = 0; x < go.wp; ++x) {
                    const uint32_t want = expected(t, op, seed, r, n, c, h, x);
                    // the band that moves it: the one holding its page of the small tensor
                    uint32_t sidx[4] = {n, c, h, x};
                    if (gather) sidx[d] %= s;
                    const uint32_t srow = row_of(t.small, gs, sidx[0], sidx[1], sidx[2]);
                    uint32_t owner = 0;
                    for (uint32_t w = 0; separate && w < bands; ++w) {
                        const PageRect pr = worker_rect(gs, bands, w);
                        const uint32_t a = srow / gs.ph, b = sidx[3] / gs.pw;
                        if (pr.pages() && a >= pr.row0 && a < pr.row0 + pr.rows && b >= pr.col0 && b < pr.col0 + pr.cols) owner = w;
                    }
                    const TensorLoc l = locate_element(out, go, n, c, h, x);
                    const uint32_t off = l.unit * stride + l.offset;
                    uint32_t got;
                    std::memcpy(&got, view(owner) + off, 4);
                    for (uint32_t b = 0; b < 4; ++b) mask[off + b] = uint8_t(1 + owner);
                    ++res.checked;
                    if (got != want && res.bad++ < 3)
                        res.what += " rank " + std::to_string(r) + " [" + std::to_string(n) + "," + std::to_string(c) + "," +
                                    std::to_string(h) + "," + std::to_string(x) + "] = " + std::to_string(got) + ", want " +
                                    std::to_string(want) + ";";
                }
    for (uint32_t w = 0; w < cores; ++w)
        for (size_t o = 0; o < mask.size(); ++o)
            if (mask[o] != 1 + w && view(w)[o] != kSentinel && res.strays++ < 3)
                res.what += " rank " + std::to_string(r) + " core " + std::to_string(w) + " wrote output byte " +
                            std::to_string(o) + " it does not own;";
}

/// A random valid memory layout for `s` (its shape and page layout fixed).
inline TensorSpec random_memory(TensorSpec s, std::mt19937& rng) {
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    const TensorGeom g0 = geometry([&] { TensorSpec t = s; t.memory = IL; t.banks = 1; return t; }());
    auto divisor = [&](uint32_t v) {  // a random divisor of v, at most 4
        std::vector<uint32_t> ds;
        for (uint32_t d = 1; d <= 4 && d <= v; ++d)
            if (v % d == 0) ds.push_back(d);
        return ds[pick(uint32_t(ds.size()))];
    };
    const uint32_t unit = s.layout == TL ? kTileDim : 1;
    const uint32_t pr = g0.rows / unit, pc = g0.cols / unit;
    const auto ori = pick(2) ? ShardOrientation::row_major : ShardOrientation::col_major;
    switch (pick(4)) {
        case 0: s.memory = IL; s.banks = 1 + pick(7); break;
        case 1: {
            const uint32_t k = divisor(pr);
            s.memory = HS;
            s.shard = {k, 1 + pick(2), g0.rows / k, g0.cols, ori};
            break;
        }
        case 2: {
            const uint32_t k = divisor(pc);
            s.memory = WS;
            s.shard = {k, 1 + pick(2), g0.rows, g0.cols / k, ori};
            break;
        }
        default: {
            const uint32_t a = divisor(pr), b = divisor(pc);
            s.memory = BS;
            const bool rm = ori == ShardOrientation::row_major;
            s.shard = {rm ? b : a, rm ? a : b, g0.rows / a, g0.cols / b, ori};
            break;
        }
    }
    return s;
}

/// A random tensor case (the seed left to the caller): a shape of both page layouts (some tiled
/// ones padded along W), dims 0..3, both ops, random memory layouts in and out, 1..3 worker bands,
/// ring_cw / ring_bidir / line, packet sizes of whole pages or not. `parts` ranks, or 2..4 if 0.
/// False if the split is one check() refuses (a padded W fractured along dim 3).
inline bool random_case(std::mt19937& rng, uint32_t parts, TensorCase& c) {
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    const bool tile = pick(2);
    TensorSpec small = spec(1 + pick(2), 1 + pick(3), tile ? 32 * (1 + pick(2)) : 1 + pick(6),
                            tile ? 32 * (1 + pick(2)) : 1 + pick(9), 4, tile ? TL : RM, IL);
    if (tile && pick(4) == 0 && small.shape[0] * small.shape[1] > 1) small.shape[3] = 20 + pick(12);  // padded tiles
    c.op = pick(2) ? Op::all_gather : Op::reduce_scatter;
    const uint32_t dim = pick(4), p_drawn = 2 + pick(3);
    const uint32_t p = parts ? parts : p_drawn;
    small = random_memory(small, rng);
    TensorSpec bigm = small;
    bigm.shape[dim] *= p;
    bigm = random_memory(bigm, rng);
    c.split = host::fracture(small, dim, p, bigm);
    if (check(c.split) != SplitError::ok) return false;
    c.workers = 1 + pick(3);
    const Method ms[] = {Method::ring_cw, Method::ring_bidir, Method::line};
    c.method = ms[pick(3)];
    c.packet_bytes = tile ? 4096 * (1 + pick(2)) : 64 * (1 + pick(8));
    return true;
}

/// The mesh tensor: a [1, 1, 32 R, 64 C] uint32 tiled tensor sharded over an R x C mesh of chips in
/// two dimensions: chip (i, j) (replica i * C + j) holds rows [32 i, 32 i + 32) and columns
/// [64 j, 64 j + 64) as a [1,1,32,64] tensor (2 tiles interleaved over 2 banks). Rows of the mesh
/// (CommGroup::consecutive(C)) all_gather along W into a width-sharded [1,1,32,64 C] (one 64-column
/// shard per core of a C x 1 grid); columns (CommGroup::orthogonal(R)) all_gather along H into an
/// interleaved [1,1,32 R,64] over 3 banks.
struct MeshTensor {
    uint32_t R = 2, C = 3;
    uint64_t seed = 77;
    TensorSpec local;
    TensorSplit row_split, col_split;
    MeshTensor(uint32_t rows, uint32_t cols, uint64_t s) : R(rows), C(cols), seed(s) {
        local = spec(1, 1, 32, 64, 4, TL, IL, 2);
        row_split = gather_split(local, 3, C, WS, 1, {C, 1, 32, 64, ShardOrientation::row_major});
        col_split = gather_split(local, 2, R, IL, 3);
    }
    /// Element (h, w) of the whole tensor.
    uint32_t global(uint32_t h, uint32_t w) const { return value_of(seed, 0, 0, 0, h, w); }
    /// Writes chip (i, j)'s shard at `mem`: put(l1_address, value).
    template <class Put>
    void write_local(uint32_t i, uint32_t j, const TensorMem& mem, Put put) const {
        const TensorGeom g = geometry(local);
        for (uint32_t h = 0; h < 32; ++h)
            for (uint32_t w = 0; w < 64; ++w) put(mem.addr(locate_element(local, g, 0, 0, h, w)), global(32 * i + h, 64 * j + w));
    }
    /// Element (h, w) of chip (i, j)'s gathered output: a row group's is band i of the rows and
    /// every column, a column group's every row of band j of the columns.
    uint32_t want(bool row_group, uint32_t i, uint32_t j, uint32_t h, uint32_t w) const {
        return row_group ? global(32 * i + h, w) : global(h, 64 * j + w);
    }
    /// Compares chip (i, j)'s output image (unit u at u * stride) with want(); counts wrong elements.
    uint64_t check(bool row_group, uint32_t i, uint32_t j, const uint8_t* image, uint32_t stride, uint64_t& checked) const {
        const TensorSpec& b = row_group ? row_split.big : col_split.big;
        const TensorGeom gb = geometry(b);
        uint64_t bad = 0;
        for (uint32_t h = 0; h < gb.hp; ++h)
            for (uint32_t w = 0; w < gb.wp; ++w) {
                const TensorLoc loc = locate_element(b, gb, 0, 0, h, w);
                uint32_t got;
                std::memcpy(&got, image + loc.unit * stride + loc.offset, 4);
                bad += got != want(row_group, i, j, h, w);
                ++checked;
            }
        return bad;
    }
    /// Bytes of that output image (its units at `stride`) that no element occupies and that no
    /// longer hold kSentinel (the image was filled with it before the run).
    uint64_t strays(bool row_group, const uint8_t* image, uint32_t stride) const {
        const TensorSpec& b = row_group ? row_split.big : col_split.big;
        const TensorGeom gb = geometry(b);
        std::vector<bool> element(size_t(gb.units) * stride, false);
        for (uint32_t h = 0; h < gb.hp; ++h)
            for (uint32_t w = 0; w < gb.wp; ++w) {
                const TensorLoc loc = locate_element(b, gb, 0, 0, h, w);
                for (uint32_t k = 0; k < 4; ++k) element[loc.unit * stride + loc.offset + k] = true;
            }
        uint64_t n = 0;
        for (size_t o = 0; o < element.size(); ++o) n += !element[o] && image[o] != kSentinel;
        return n;
    }
};

}  // namespace kccl::coll::tensor_check
