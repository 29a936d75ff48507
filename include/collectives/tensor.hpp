// kccl/collectives/tensor.hpp — N-D tensors as tt-metal's ops see them: shape, page layout
// (row-major or 32x32 tiles of four 16x16 faces), memory layout (interleaved over banks, or
// height-, width- or block-sharded over a core grid), and the address math from an element or a
// page to (bank or core, byte offset). Also the split of a tensor along one dimension into
// `parts` equal blocks (the fracture dim of an all_gather / reduce_scatter).
//
// WHAT IT IS (the conventions follow tt-metal's tensor and memory-config documentation)
//   shape      up to 4 dims, stored as [N, C, H, W] (fewer dims: leading 1s). The tensor is
//              viewed as 2-D: rows = N*C*H', columns = W', where H' and W' are H and W, or, in
//              tile layout, H and W rounded up to 32 (tt-metal's "padded shape": a tiled tensor
//              whose H or W is not a multiple of 32 is stored padded to whole tiles; the pad
//              elements exist in memory and hold whatever tilize put there).
//   page       row-major interleaved: one 2-D row (W' elements). Row-major sharded: one row of a
//              shard (shard_w elements). Tile layout: one 32x32 tile. Pages form a grid of
//              page_rows x page_cols; page id = row * page_cols + col (row-major over the tensor).
//   tile       32x32 elements stored as four 16x16 faces, face 0 top-left, 1 top-right,
//              2 bottom-left, 3 bottom-right, each face row-major: element (r, c) of a tile is at
//              ((r/16)*2 + c/16) * 256 + (r%16) * 16 + c%16.
//   interleaved  page id i goes to bank i % banks at offset (i / banks) * page_bytes (round
//              robin, as tt-metal's interleaved buffers over DRAM or L1 banks).
//   sharded    the 2-D tensor is cut into shards of shard_h x shard_w elements: height-sharded:
//              shard_w = W' (one shard per band of rows), width-sharded: shard_h = rows (one shard
//              per band of columns), block-sharded: a 2-D grid of shards. Shards go to the cores
//              of a grid_x x grid_y core grid: height / width: shard k to the k-th core in
//              row-major (x fastest) or column-major (y fastest) order; block: shard (row a,
//              column b) to core (x = b, y = a) in row-major orientation, (x = a, y = b) in
//              column-major. Inside a shard pages are stored row-major, one after another.
//   unit       the bank (interleaved) or core (sharded: x + y * grid_x) holding a page;
//              unit_bytes() is the most bytes any unit holds.
//
// NAMED ERRORS (check(): TensorError, tensor_error_text() says what is wrong and what is allowed)
//   Impossible specs are refused rather than guessed: a zero dimension or element size, a
//   shard shape that does not divide the 2-D tensor (tt-metal's newer releases accept an uneven
//   last shard and pad it; this model wants even shards), a height-sharded shard narrower than
//   the tensor or a width-sharded shard shorter than it, a tiled shard that is not whole tiles,
//   more shards than cores, no banks, a tensor whose byte offsets overflow 32 bits.
//
// Who includes it: device code (C++17, freestanding, no heap) and host planners/tests.
#pragma once

#include <stdint.h>

namespace kccl::coll {

enum class TensorLayout : uint8_t { row_major, tile };
enum class MemoryLayout : uint8_t { interleaved, height_sharded, width_sharded, block_sharded };
enum class ShardOrientation : uint8_t { row_major, col_major };

inline constexpr uint32_t kTileDim = 32;
inline constexpr uint32_t kFaceDim = 16;
inline constexpr uint32_t kTensorDims = 4;

struct ShardSpec {
    uint32_t grid_x = 1, grid_y = 1;  ///< the core grid
    uint32_t shard_h = 0, shard_w = 0;  ///< elements of one shard, in the 2-D view
    ShardOrientation orientation = ShardOrientation::row_major;
};

struct TensorSpec {
    uint32_t shape[kTensorDims] = {1, 1, 1, 1};  ///< [N, C, H, W]
    uint32_t elem_bytes = 2;
    TensorLayout layout = TensorLayout::row_major;
    MemoryLayout memory = MemoryLayout::interleaved;
    uint32_t banks = 1;  ///< interleaved: banks the pages go round robin over
    ShardSpec shard{};   ///< sharded layouts
};

enum class TensorError : uint8_t {
    ok,
    zero_dim,
    zero_elem_bytes,
    no_banks,
    too_large,
    zero_shard,
    shard_not_tiles,
    shard_not_dividing,
    height_shard_not_full_width,
    width_shard_not_full_height,
    too_many_shards,
    empty_core_grid,
};

constexpr const char* tensor_error_text(TensorError e) {
    switch (e) {
        case TensorError::ok: return "ok";
        case TensorError::zero_dim: return "a dimension of the shape is 0; every dimension must be at least 1";
        case TensorError::zero_elem_bytes: return "elem_bytes is 0; an element is 1, 2, 4 or 8 bytes";
        case TensorError::no_banks: return "interleaved over 0 banks; give at least 1 bank";
        case TensorError::too_large:
            return "the tensor (or one bank's or core's share of it) is 4 GiB or more; byte offsets are 32-bit";
        case TensorError::zero_shard: return "the shard shape has a 0 side; a shard is at least 1 x 1 elements";
        case TensorError::shard_not_tiles:
            return "a tile-layout tensor's shard must be whole 32x32 tiles (shard_h and shard_w multiples of 32)";
        case TensorError::shard_not_dividing:
            return "the shard shape does not divide the tensor's 2-D view (rows = N*C*H, columns = W, "
                   "padded to 32 in tile layout); shards must be even (tt-metal pads an uneven last shard, "
                   "this model does not)";
        case TensorError::height_shard_not_full_width:
            return "height-sharded: a shard spans every column (shard_w must equal W, padded to 32 in tile layout)";
        case TensorError::width_shard_not_full_height:
            return "width-sharded: a shard spans every row (shard_h must equal N*C*H, H padded to 32 in tile layout)";
        case TensorError::too_many_shards:
            return "more shards than cores: height / width sharding needs shards <= grid_x * grid_y; block "
                   "sharding needs shard rows <= grid_y and shard columns <= grid_x (row-major orientation; "
                   "swapped in column-major)";
        case TensorError::empty_core_grid: return "the core grid is empty; grid_x and grid_y must be at least 1";
    }
    return "unknown tensor error";
}

/// Where a page or an element lives: bank (interleaved) or core (sharded) and byte offset there.
struct TensorLoc {
    uint32_t unit = 0;  ///< bank id, or core id x + y * grid_x
    uint32_t x = 0, y = 0;  ///< sharded: the core's coordinates in the grid (interleaved: 0, 0)
    uint32_t offset = 0;    ///< bytes from the start of the unit's share
};

/// The 2-D geometry derived from a spec (valid only when check(spec) == ok).
struct TensorGeom {
    uint32_t hp = 0, wp = 0;            ///< H and W as stored (padded to 32 in tile layout)
    uint32_t rows = 0, cols = 0;        ///< the 2-D view: N*C*hp x wp
    uint32_t ph = 1, pw = 1;            ///< page: ph x pw elements
    uint32_t page_rows = 0, page_cols = 0;
    uint32_t page_bytes = 0;
    uint32_t shard_pr = 0, shard_pc = 0;  ///< sharded: pages per shard, down and across
    uint32_t shards_down = 1, shards_across = 1;
    uint32_t units = 0;                 ///< banks or cores of the grid
    uint32_t unit_bytes = 0;            ///< most bytes one unit holds
    constexpr uint32_t pages() const { return page_rows * page_cols; }
    constexpr uint32_t page_elems() const { return ph * pw; }
};

constexpr bool is_sharded(MemoryLayout m) { return m != MemoryLayout::interleaved; }

namespace detail {
/// floor(w * total / parts) in 32-bit arithmetic (no 64-bit division, which rv32 kernels lack):
/// w * (total / parts) + (total % parts) * w / parts, exact for w <= parts < 65536.
constexpr uint32_t band_start(uint32_t w, uint32_t total, uint32_t parts) {
    return w * (total / parts) + (total % parts) * w / parts;
}
}  // namespace detail

/// Checks a spec and fills `g` when it is valid.
constexpr TensorError check(const TensorSpec& s, TensorGeom& g) {
    for (uint32_t d = 0; d < kTensorDims; ++d)
        if (s.shape[d] == 0) return TensorError::zero_dim;
    if (s.elem_bytes == 0) return TensorError::zero_elem_bytes;
    const bool tile = s.layout == TensorLayout::tile;
    const uint64_t hp = tile ? (uint64_t(s.shape[2]) + 31) / 32 * 32 : s.shape[2];
    const uint64_t wp = tile ? (uint64_t(s.shape[3]) + 31) / 32 * 32 : s.shape[3];
    const uint64_t rows = uint64_t(s.shape[0]) * s.shape[1] * hp;
    if (rows * wp * s.elem_bytes >= (uint64_t(1) << 32)) return TensorError::too_large;
    g = TensorGeom{};
    g.hp = uint32_t(hp);
    g.wp = uint32_t(wp);
    g.rows = uint32_t(rows);
    g.cols = uint32_t(wp);
    if (!is_sharded(s.memory)) {
        if (s.banks == 0) return TensorError::no_banks;
        g.ph = tile ? kTileDim : 1;
        g.pw = tile ? kTileDim : g.cols;
        g.page_rows = g.rows / g.ph;
        g.page_cols = g.cols / g.pw;
        g.page_bytes = g.ph * g.pw * s.elem_bytes;
        g.units = s.banks;
        g.unit_bytes = (g.pages() + s.banks - 1) / s.banks * g.page_bytes;
        return TensorError::ok;
    }
    const ShardSpec& sh = s.shard;
    if (sh.grid_x == 0 || sh.grid_y == 0) return TensorError::empty_core_grid;
    if (sh.shard_h == 0 || sh.shard_w == 0) return TensorError::zero_shard;
    if (tile && (sh.shard_h % kTileDim || sh.shard_w % kTileDim)) return TensorError::shard_not_tiles;
    if (s.memory == MemoryLayout::height_sharded && sh.shard_w != g.cols) return TensorError::height_shard_not_full_width;
    if (s.memory == MemoryLayout::width_sharded && sh.shard_h != g.rows) return TensorError::width_shard_not_full_height;
    if (g.rows % sh.shard_h || g.cols % sh.shard_w) return TensorError::shard_not_dividing;
    g.ph = tile ? kTileDim : 1;
    g.pw = tile ? kTileDim : sh.shard_w;
    g.page_rows = g.rows / g.ph;
    g.page_cols = g.cols / g.pw;
    g.page_bytes = g.ph * g.pw * s.elem_bytes;
    g.shard_pr = sh.shard_h / g.ph;
    g.shard_pc = sh.shard_w / g.pw;
    g.shards_down = g.rows / sh.shard_h;
    g.shards_across = g.cols / sh.shard_w;
    g.units = sh.grid_x * sh.grid_y;
    g.unit_bytes = g.shard_pr * g.shard_pc * g.page_bytes;
    if (s.memory == MemoryLayout::block_sharded) {
        const bool rm = sh.orientation == ShardOrientation::row_major;
        if (g.shards_down > (rm ? sh.grid_y : sh.grid_x) || g.shards_across > (rm ? sh.grid_x : sh.grid_y))
            return TensorError::too_many_shards;
    } else if (g.shards_down * g.shards_across > g.units) {
        return TensorError::too_many_shards;
    }
    return TensorError::ok;
}

constexpr TensorError check(const TensorSpec& s) {
    TensorGeom g{};
    return check(s, g);
}

/// The geometry of a spec known to be valid (check() first; an invalid spec gives zeros).
constexpr TensorGeom geometry(const TensorSpec& s) {
    TensorGeom g{};
    if (check(s, g) != TensorError::ok) return TensorGeom{};
    return g;
}

/// Where page (pr, pc) of the page grid lives.
constexpr TensorLoc locate_page(const TensorSpec& s, const TensorGeom& g, uint32_t pr, uint32_t pc) {
    TensorLoc l{};
    if (!is_sharded(s.memory)) {
        const uint32_t id = pr * g.page_cols + pc;
        l.unit = id % s.banks;
        l.offset = (id / s.banks) * g.page_bytes;
        return l;
    }
    const uint32_t a = pr / g.shard_pr, b = pc / g.shard_pc;  // shard row, column
    const uint32_t in_shard = (pr % g.shard_pr) * g.shard_pc + pc % g.shard_pc;
    const ShardSpec& sh = s.shard;
    const bool rm = sh.orientation == ShardOrientation::row_major;
    if (s.memory == MemoryLayout::block_sharded) {
        l.x = rm ? b : a;
        l.y = rm ? a : b;
    } else {
        const uint32_t k = s.memory == MemoryLayout::height_sharded ? a : b;
        l.x = rm ? k % sh.grid_x : k / sh.grid_y;
        l.y = rm ? k / sh.grid_x : k % sh.grid_y;
    }
    l.unit = l.x + l.y * sh.grid_x;
    l.offset = in_shard * g.page_bytes;
    return l;
}

/// Element index inside its page of the element at 2-D (row, col).
constexpr uint32_t elem_in_page(const TensorSpec& s, const TensorGeom& g, uint32_t row, uint32_t col) {
    if (s.layout == TensorLayout::row_major) return col % g.pw;
    const uint32_t r = row % kTileDim, c = col % kTileDim;
    return ((r / kFaceDim) * 2 + c / kFaceDim) * kFaceDim * kFaceDim + (r % kFaceDim) * kFaceDim + c % kFaceDim;
}

/// 2-D row of element [n, c, h, *] (h < H; the stored view has hp rows per (n, c)).
constexpr uint32_t row_of(const TensorSpec& s, const TensorGeom& g, uint32_t n, uint32_t c, uint32_t h) {
    return (n * s.shape[1] + c) * g.hp + h;
}

/// Where element [n, c, h, w] lives.
constexpr TensorLoc locate_element(const TensorSpec& s, const TensorGeom& g, uint32_t n, uint32_t c, uint32_t h,
                                   uint32_t w) {
    const uint32_t row = row_of(s, g, n, c, h);
    TensorLoc l = locate_page(s, g, row / g.ph, w / g.pw);
    l.offset += elem_in_page(s, g, row, w) * s.elem_bytes;
    return l;
}

// ---------------------------------------------------------------------------------------------
// The fracture dim: a `big` tensor is `parts` blocks of a `small` one along dimension `dim`
// (all_gather: small = each rank's input, big = the output; reduce_scatter: big = the input,
// small = each rank's output). Both have the same element size and layout; their memory layouts
// are free (in-flight resharding: an all_gather may read width-sharded pages and write
// interleaved ones).

enum class SplitError : uint8_t {
    ok,
    small_invalid,
    big_invalid,
    bad_dim,
    zero_parts,
    shape_mismatch,
    elem_bytes_mismatch,
    layout_mismatch,
    tile_dim_padded,
};

constexpr const char* split_error_text(SplitError e) {
    switch (e) {
        case SplitError::ok: return "ok";
        case SplitError::small_invalid: return "the per-rank (small) tensor spec is invalid (check() names why)";
        case SplitError::big_invalid: return "the gathered (big) tensor spec is invalid (check() names why)";
        case SplitError::bad_dim: return "the fracture dim is out of range; dims are 0..3 of [N, C, H, W]";
        case SplitError::zero_parts: return "0 parts; the cluster has at least 1 rank";
        case SplitError::shape_mismatch:
            return "the big tensor's shape must be the small one's with the fracture dim multiplied by the rank count";
        case SplitError::elem_bytes_mismatch: return "the two tensors' element sizes differ; they must be equal";
        case SplitError::layout_mismatch:
            return "the two tensors' page layouts differ (row-major vs tile); a collective moves pages and does not "
                   "tilize or untilize";
        case SplitError::tile_dim_padded:
            return "tile layout: gathering or scattering along H or W needs that dim to be a multiple of 32 (else "
                   "the blocks would carry tile padding into the middle of the big tensor)";
    }
    return "unknown split error";
}

struct TensorSplit {
    TensorSpec small{}, big{};
    uint32_t dim = 0;
    uint32_t parts = 1;
};

constexpr SplitError check(const TensorSplit& t) {
    if (check(t.small) != TensorError::ok) return SplitError::small_invalid;
    if (check(t.big) != TensorError::ok) return SplitError::big_invalid;
    if (t.dim >= kTensorDims) return SplitError::bad_dim;
    if (t.parts == 0) return SplitError::zero_parts;
    for (uint32_t d = 0; d < kTensorDims; ++d)
        if (uint64_t(t.big.shape[d]) != uint64_t(t.small.shape[d]) * (d == t.dim ? t.parts : 1))
            return SplitError::shape_mismatch;
    if (t.small.elem_bytes != t.big.elem_bytes) return SplitError::elem_bytes_mismatch;
    if (t.small.layout != t.big.layout) return SplitError::layout_mismatch;
    if (t.small.layout == TensorLayout::tile && t.dim >= 2 && t.small.shape[t.dim] % kTileDim)
        return SplitError::tile_dim_padded;
    return SplitError::ok;
}

/// A run of elements contiguous in both tensors' pages: `elems` elements from (unit, offset) of
/// the small tensor to (unit, offset) of the big one, block `block`.
struct PageRun {
    TensorLoc small{}, big{};
    uint32_t in_page = 0;  ///< bytes from the start of the small page
    uint32_t bytes = 0;
};

/// Calls f(PageRun) for every run of small page (pr, pc) placed in block `block` of the big tensor:
/// a whole tile in tile layout; in row-major the page's row segment, cut where the big tensor's
/// pages end (a width-sharded big tensor may cut one small page in two).
template <class F>
constexpr void for_each_run(const TensorSplit& t, const TensorGeom& gs, const TensorGeom& gb, uint32_t pr, uint32_t pc,
                            uint32_t block, F&& f) {
    const TensorSpec& s = t.small;
    const uint32_t row = pr * gs.ph, col = pc * gs.pw;
    // the page's first element in [n, c, h, w] of the small tensor (row is in the stored view)
    const uint32_t nc = row / gs.hp, h = row % gs.hp;
    uint32_t idx[kTensorDims] = {nc / s.shape[1], nc % s.shape[1], h, col};
    idx[t.dim] += block * s.shape[t.dim];
    const uint32_t brow = row_of(t.big, gb, idx[0], idx[1], idx[2]), bcol = idx[3];
    if (s.layout == TensorLayout::tile) {
        PageRun r;
        r.small = locate_page(s, gs, pr, pc);
        r.big = locate_page(t.big, gb, brow / gb.ph, bcol / gb.pw);
        r.bytes = gs.page_bytes;
        f(r);
        return;
    }
    uint32_t done = 0;
    while (done < gs.pw) {
        const uint32_t bc = bcol + done;
        const uint32_t room = gb.pw - bc % gb.pw, left = gs.pw - done;
        const uint32_t len = room < left ? room : left;
        PageRun r;
        r.small = locate_page(s, gs, pr, pc);
        r.small.offset += done * s.elem_bytes;
        r.in_page = done * s.elem_bytes;
        r.big = locate_page(t.big, gb, brow, bc / gb.pw);
        r.big.offset += (bc % gb.pw) * s.elem_bytes;
        r.bytes = len * s.elem_bytes;
        f(r);
        done += len;
    }
}

/// A worker's share of the small tensor's page grid: rows [row0, row0+rows) x columns
/// [col0, col0+cols) of pages (its slice shape is rows*ph x cols*pw elements of the 2-D view).
struct PageRect {
    uint32_t row0 = 0, rows = 0, col0 = 0, cols = 0;
    constexpr uint32_t pages() const { return rows * cols; }
    /// The k-th page of the rectangle, row-major: (page row, page column).
    constexpr uint32_t row_at(uint32_t k) const { return row0 + k / cols; }
    constexpr uint32_t col_at(uint32_t k) const { return col0 + k % cols; }
};

/// Worker w of `workers`: tt-metal's slicer hands workers bands of page columns when there are
/// at least as many columns as workers, else bands of page rows. Bands differ by at most one.
constexpr PageRect worker_rect(const TensorGeom& g, uint32_t workers, uint32_t w) {
    PageRect r{};
    if (workers == 0 || w >= workers) return r;
    if (g.page_cols >= workers) {
        r.row0 = 0;
        r.rows = g.page_rows;
        r.col0 = detail::band_start(w, g.page_cols, workers);
        r.cols = detail::band_start(w + 1, g.page_cols, workers) - r.col0;
    } else {
        r.col0 = 0;
        r.cols = g.page_cols;
        r.row0 = detail::band_start(w, g.page_rows, workers);
        r.rows = detail::band_start(w + 1, g.page_rows, workers) - r.row0;
    }
    if (r.rows == 0 || r.cols == 0) r.rows = r.cols = 0;
    return r;
}

}  // namespace kccl::coll
