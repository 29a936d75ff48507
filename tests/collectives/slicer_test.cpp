// The tensor slicer: element ranges of schedule chunks, checked against plain arithmetic written
// out here (coverage by marking every element, GCL's ceil(n/p) padding, sizes 0 and 1, several
// links and workers, packet-sized chunks).
#include <collectives/slicer.hpp>

#include <catch2/catch.hpp>

#include <vector>

using namespace kccl::coll;

namespace {
/// Marks every element of buffer b covered by some chunk of some worker; returns the marks.
std::vector<int> cover(const Slicer& sl, Op op, Buf b, uint32_t rank, uint32_t elems) {
    std::vector<int> mark(elems, 0);
    for (uint32_t w = 0; w < sl.workers; ++w) {
        Shape sh;
        sh.op = op;
        sh.ranks = sl.p;
        sh.chunks = sl.chunks(w);
        for (uint32_t c = 0; c < grid(sh, b); ++c) {
            const ElemRange e = sl.chunk_range(w, b, c, rank);
            REQUIRE(e.count <= sl.ce);
            REQUIRE(e.begin + e.count <= elems);
            for (uint32_t k = 0; k < e.count; ++k) ++mark[e.begin + k];
        }
    }
    return mark;
}
}  // namespace

TEST_CASE("slicer: every real element is in exactly one chunk, for every op and awkward size", "[collectives][slicer]") {
    for (Op op : {Op::all_gather, Op::reduce_scatter, Op::all_reduce, Op::broadcast, Op::reduce, Op::gather,
                  Op::scatter, Op::all_to_all, Op::send_recv})
        for (uint32_t p : {1u, 2u, 3u, 7u, 8u})
            for (uint32_t n : {0u, 1u, 2u, 5u, 17u, 64u, 1000u})
                for (uint32_t links : {1u, 2u})
                    for (uint32_t wpl : {1u, 3u})
                        for (uint32_t packet : {4u, 12u, 4096u}) {
                            SliceConfig c;
                            c.elem_bytes = 4;
                            c.packet_bytes = packet;
                            c.links = links;
                            c.workers_per_link = wpl;
                            const Slicer sl(op, n, p, c);
                            INFO(op_name(op) << " p=" << p << " n=" << n << " links=" << links << " wpl=" << wpl << " packet=" << packet);
                            // buffer sizes from the op's definition
                            const uint32_t per_rank_out = (n + p - 1) / p;
                            const uint32_t in = (op == Op::scatter || op == Op::all_to_all) ? p * n : n;
                            const uint32_t out = (op == Op::all_gather || op == Op::gather || op == Op::all_to_all) ? p * n
                                                 : op == Op::reduce_scatter ? per_rank_out : n;
                            REQUIRE(sl.in_elems() == in);
                            REQUIRE(sl.out_elems() == out);
                            REQUIRE(sl.ce == (packet / 4 == 0 ? 1 : packet / 4));
                            for (int k : cover(sl, op, Buf::input, 0, in)) REQUIRE(k == 1);
                            for (uint32_t r = 0; r < p; ++r) {
                                const auto mark = cover(sl, op, Buf::output, r, out);
                                // reduce_scatter: rank r's real elements are n - r*ceil(n/p), clamped
                                uint32_t real = out;
                                if (op == Op::reduce_scatter) {
                                    const int64_t left = int64_t(n) - int64_t(r) * per_rank_out;
                                    real = left <= 0 ? 0 : (left < per_rank_out ? uint32_t(left) : per_rank_out);
                                    REQUIRE(sl.rs_padding(r).begin == real);
                                    REQUIRE(sl.rs_padding(r).count == per_rank_out - real);
                                }
                                for (uint32_t k = 0; k < out; ++k) REQUIRE(mark[k] == (k < real ? 1 : 0));
                            }
                            REQUIRE(sl.link_of(sl.workers - 1) == links - 1);
                            REQUIRE(sl.fits(2, packet));
                            REQUIRE_FALSE(sl.fits(1, packet));
                            // a wavefront window of 3 chunks needs 4 slots (schedule.hpp window_slots)
                            REQUIRE(sl.fits(4, packet, 3));
                            REQUIRE_FALSE(sl.fits(3, packet, 3));
                            REQUIRE_FALSE(sl.fits(2, packet, 0xFFFFFFFFu));  // no wrap to "2 slots suffice"
                        }
}

TEST_CASE("slicer: fragment boundaries are the op's, worker slice lines the same in every fragment", "[collectives][slicer]") {
    // reduce_scatter of 10 elements over 4 ranks: ceil(10/4) = 3 per rank; fragments [0,3) [3,6) [6,9) [9,10)
    SliceConfig c;
    c.elem_bytes = 2;
    c.packet_bytes = 4;  // 2 elements per chunk
    c.links = 1;
    c.workers_per_link = 1;
    Slicer sl(Op::reduce_scatter, 10, 4, c);
    REQUIRE(sl.m == 3);
    REQUIRE(sl.chunks(0) == 2);  // 3 elements per fragment -> chunks of 2 and 1
    const uint32_t want[8][2] = {{0, 2}, {2, 1}, {3, 2}, {5, 1}, {6, 2}, {8, 1}, {9, 1}, {10, 0}};
    for (uint32_t ch = 0; ch < 8; ++ch) {
        const ElemRange e = sl.chunk_range(0, Buf::input, ch);
        CHECK(e.begin == want[ch][0]);
        CHECK(e.count == want[ch][1]);
    }
    // rank 3's output: 1 real element, 2 of padding
    CHECK(sl.chunk_range(0, Buf::output, 0, 3).count == 1);
    CHECK(sl.chunk_range(0, Buf::output, 1, 3).count == 0);
    CHECK(sl.rs_padding(3).begin == 1);
    CHECK(sl.rs_padding(3).count == 2);

    // all_gather of 7 elements per rank with 2 links x 1 worker: worker 0 owns [0,3), worker 1 [3,7) of every fragment
    c.elem_bytes = 4;
    c.packet_bytes = 8;
    c.links = 2;
    Slicer ag(Op::all_gather, 7, 3, c);
    CHECK(ag.worker_range(0).begin == 0);
    CHECK(ag.worker_range(0).count == 3);
    CHECK(ag.worker_range(1).begin == 3);
    CHECK(ag.worker_range(1).count == 4);
    CHECK(ag.chunks(0) == 2);
    CHECK(ag.chunks(1) == 2);
    // worker 1, fragment 2 (rank 2's block at 14), chunk 1: elements [14+3+2, +2) = [19, 21)
    const ElemRange e = ag.chunk_range(1, Buf::output, 2 * 2 + 1);
    CHECK(e.begin == 19);
    CHECK(e.count == 2);
    CHECK(ag.link_of(1) == 1);
}

TEST_CASE("slicer: sizes 0 and 1 still give every worker a runnable (possibly empty) schedule", "[collectives][slicer]") {
    SliceConfig c;
    c.links = 2;
    c.workers_per_link = 2;
    for (uint32_t n : {0u, 1u}) {
        Slicer sl(Op::all_reduce, n, 8, c);
        uint32_t real = 0;
        for (uint32_t w = 0; w < 4; ++w) {
            CHECK(sl.chunks(w) == 1);
            for (uint32_t ch = 0; ch < 8; ++ch) real += sl.chunk_range(w, Buf::output, ch).count;
        }
        CHECK(real == n);
    }
    Slicer b(Op::barrier, 123, 4, c);
    CHECK(b.n == 0);
    CHECK(b.chunk_range(0, Buf::output, 0).count == 0);
}
