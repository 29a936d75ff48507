// kccl/collectives/algorithms/mesh.hpp — all_gather and all_reduce on a 2D mesh or torus, rows
// then columns (Method::mesh_2d). Rank = y*cols + x. Rows and columns are lines on a mesh (line
// arms) and rings on a torus (meet-in-the-middle arms); one lane, both arms interleaved.
//   all_gather: row all_gather of each rank's fragment (out[(y*cols + x)*s ..]), then column
//               all_gather of whole row blocks (cols*s chunks each).
//   all_reduce: the 2D bucket algorithm. The tensor (p*s chunks) is cut into `cols` blocks of
//               B = rows*s chunks: row reduce_scatter leaves block x, reduced over the row, at
//               column x; column reduce_scatter splits it into rows pieces of s chunks; then
//               column all_gather and row all_gather copy the pieces back out. Each piece is
//               computed once (at its owner) and copied.
#pragma once

#include <collectives/algorithms/arms.hpp>

namespace kccl::coll {

namespace detail {
constexpr const char* validate_mesh(const Shape& sh, Op op, const char* who) {
    if (sh.op != op) return who;
    if (const char* e = validate_common(sh)) return e;
    if (sh.topo != Topology::mesh && sh.topo != Topology::torus)
        return "Method::mesh_2d needs a mesh or torus topology (rows x cols).";
    return nullptr;
}
constexpr Group1D row_group(const Shape& sh, uint32_t r) {
    Group1D G;
    G.g = sh.cols; G.me = r % sh.cols; G.base = (r / sh.cols) * sh.cols; G.stride = 1;
    G.ring = sh.topo == Topology::torus;
    return G;
}
constexpr Group1D col_group(const Shape& sh, uint32_t r) {
    Group1D G;
    G.g = sh.rows; G.me = r / sh.cols; G.base = r % sh.cols; G.stride = sh.cols;
    G.ring = sh.topo == Topology::torus;
    return G;
}
}  // namespace detail

struct Mesh2dAllGather : AlgorithmBase<Mesh2dAllGather> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        return detail::validate_mesh(sh, Op::all_gather, "Mesh2dAllGather computes Op::all_gather only.");
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        using namespace detail;
        const uint32_t s = sh.chunks, y = rank / sh.cols, row_len = sh.cols * s;
        const Flow f = sh.topo == Topology::torus ? Flow::meet : Flow::line;
        ag_1d(e, row_group(sh, rank), f, 3u, kNoPeer, mk::in(0), Frag{Buf::output, y * row_len, s}, 0, s, true);
        ag_1d(e, col_group(sh, rank), f, 3u, kNoPeer, mk::out(y * row_len), Frag{Buf::output, 0, row_len}, 0,
              row_len, false);
    }
};

struct Mesh2dAllReduce : AlgorithmBase<Mesh2dAllReduce> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        return detail::validate_mesh(sh, Op::all_reduce, "Mesh2dAllReduce computes Op::all_reduce only.");
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        using namespace detail;
        const uint32_t s = sh.chunks, x = rank % sh.cols, y = rank / sh.cols, B = sh.rows * s;
        const Flow f = sh.topo == Topology::torus ? Flow::meet : Flow::line;
        const Group1D R = row_group(sh, rank), C = col_group(sh, rank);
        rs_1d(e, R, f, 3u, kNoPeer, Frag{Buf::input, 0, B}, Frag{Buf::output, 0, B}, 0, B);
        rs_1d(e, C, f, 3u, kNoPeer, Frag{Buf::output, x * B, s}, Frag{Buf::output, x * B, s}, 0, s);
        ag_1d(e, C, f, 3u, kNoPeer, mk::out(x * B + y * s), Frag{Buf::output, x * B, s}, 0, s, false);
        ag_1d(e, R, f, 3u, kNoPeer, mk::out(x * B), Frag{Buf::output, 0, B}, 0, B, false);
    }
};

}  // namespace kccl::coll
