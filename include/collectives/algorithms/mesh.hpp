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
        AllGather1D row;  // my fragment along my row, into my row's block of the output
        row.flow = sh.topo == Topology::torus ? Flow::meet : Flow::line;
        row.arms = Arms::both;
        row.own = mk::in(0);
        row.dst = Frag{Buf::output, y * row_len, s};
        row.chunks = {0, s};
        ag_1d(e, row_group(sh, rank), row);
        AllGather1D col = row;  // then whole row blocks along my column
        col.own = mk::out(y * row_len);
        col.dst = Frag{Buf::output, 0, row_len};
        col.chunks = {0, row_len};
        col.own_fragment = OwnFragment::in_place;
        ag_1d(e, col_group(sh, rank), col);
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
        ReduceScatter1D rs;  // row: block x (B chunks), reduced over the row, lands at column x
        rs.flow = f;
        rs.arms = Arms::both;
        rs.src = Frag{Buf::input, 0, B};
        rs.dst = Frag{Buf::output, 0, B};
        rs.chunks = {0, B};
        rs_1d(e, R, rs);
        rs.src = rs.dst = Frag{Buf::output, x * B, s};  // column: block x split into rows pieces of s
        rs.chunks = {0, s};
        rs_1d(e, C, rs);
        AllGather1D ag;  // the pieces back along the column, then the blocks along the row
        ag.flow = f;
        ag.arms = Arms::both;
        ag.own = mk::out(x * B + y * s);
        ag.dst = Frag{Buf::output, x * B, s};
        ag.chunks = {0, s};
        ag.own_fragment = OwnFragment::in_place;
        ag_1d(e, C, ag);
        ag.own = mk::out(x * B);
        ag.dst = Frag{Buf::output, 0, B};
        ag.chunks = {0, B};
        ag_1d(e, R, ag);
    }
};

}  // namespace kccl::coll
