// kccl/fabric/ops/reduce_scatter.hpp — tt-metal's op structure for reduce_scatter (and the
// reduce_scatter of all_reduce.hpp) on the chip fabric, built from the pieces of common.hpp (plans,
// the sender -> mux hand-off, the mux) and all_gather.hpp: DRAM tensors read page by page, partial sums moved chip to chip as 1D
// unicast packet streams written by the receiving routers straight into the neighbour's DRAM
// intermediate tensor, the combine on the Tensix compute engine (hal::compute_reduce).
//
// WHAT IT MODELS (tt-metal's reduce_scatter_minimal_async: its ring and line program factories,
// ring_/line_reduce_scatter_minimal_async_{reader,writer} and the ring/line reduction compute
// kernels; all_reduce as tt-metal defines it, ReduceScatter followed by AllGather)
//   * per direction tt-metal's number of workers (ttm_rs_workers, its default_workers as it runs:
//     8 at every size of the published grid, its MB thresholds being compared with bytes), each a core
//     of its own (run_reduce_sender) with its share of every slice — worker k of W has pages
//     [k P / W, (k + 1) P / W) of a slice of P pages, as tt-metal's get_tile_offsets — and its own
//     mux channel of one buffer (tt-metal's fabric mux: num_buffers_per_channel 1, a full-size
//     channel per worker). Each is tt-metal's reader (its input pages and the partial sum that
//     arrived from the neighbour, DRAM -> L1), compute (hal::compute_reduce: input + partial,
//     bfloat16 on the matrix unit) and writer (the sum as packets to the same share of the
//     neighbour's intermediate tensor, through the mux; or the final sum to the output tensor);
//     the reads of chunk k + 1 are issued before chunk k is sent, as tt-metal's reader runs ahead.
//     Worker k of a direction works with worker k of the same direction on the next chip (the same
//     core): it announces its partials on that core's counters (tt-metal: the writer increments
//     the out_ready semaphore at its own core's coordinates on the neighbour, a semaphore per
//     direction on every worker core);
//   * each worker works in chunks of `chunk` bytes of its share (tt-metal's tile_granularity: 4 x
//     the pages a packet carries when that is below 4, so 8 pages of 2048 B with its 2-page
//     packets), each chunk's pages sent as packets of `pages_per_packet` pages
//     (ttm_rs_pages_per_packet: 2, tt-metal's num_tiles_to_write_per_packet);
//   * the mux (the chip's fabric worker, common.hpp's run_mux_counts) serves a direction's worker
//     channels in turns;
//   * a partial sum is announced to the receiving worker every `sync` chunks (tt-metal's
//     chunks_per_sync: every 4 chunks on a ring, every 20 on a line, at most half the chunks of
//     the worker's share of a step, per worker as tt-metal computes it)
//     by a fused write + increment on the group's last packet; the receiving reader waits for it
//     before it reads the group's first chunk;
//   * ring (ring_reduce_scatter_minimal_async): each direction owns half of every worker's share
//     of a slice (the E worker k the first half of share k, the W worker k the rest); in step
//     i = 0 .. n-1 the E workers of chip r handle slice (r - 1 - i) mod n, the W workers slice
//     (r + 1 + i) mod n: step 0 sends the own input's part, steps 1 .. n-2 add the partial that
//     arrived from the neighbour and send the sum on, step n - 1 (the own slice) writes the sum
//     to the output;
//   * line (line_reduce_scatter_minimal_async): the E workers of chip r handle slices n-1 down to
//     r+1 (adding the partial of chips 0..r-1 that arrived from chip r-1, sending to chip r+1), the
//     W workers slices 0 up to r-1 the other way, each worker its share of the whole slice; then
//     each worker that received partials does its share of the final reduction of the own slice
//     r: E worker k input + the W side's partial -> output, W worker k adds the E side's partial
//     (output += partial, chunk by chunk after E worker k announced the chunk; input + partial on
//     chip 0, which has no W side);
//   * one-shot (`direct`, tt-metal's ring reduce_scatter / all_reduce up to 512 KiB per device,
//     per its CCL bandwidth report "a one-shot direct algorithm, which sends about 2.3x the
//     bytes"): every chip sends slice j of its input straight to chip j (a unicast stream the
//     shorter way round, the half-way peer half each way: 2.3x the pipelined ring's bytes at
//     n = 8), from one worker per direction; chip j's E worker waits for the n - 1 parts and sums
//     them with its own;
//   * every program starts with tt-metal's start barrier (common.hpp's run_mux_counts: the fabric
//     worker multicasts an increment to every other chip and waits for n - 1), so no chip writes
//     op i + 1's partials into an intermediate tensor a neighbour still reads op i's out of;
//   * all_reduce (make_reduce with all_reduce): all_reduce.hpp.
// DIFFERENCES FROM TT-METAL (docs/fabric.md, "tt-metal's op structure for reduce_scatter and
// all_reduce"): a worker core runs reader, compute and writer in turn (tt-metal: three kernels on
// one Tensix core's five RISC-Vs, overlapping); one mux, the chip's fabric worker, serves both
// directions' channels (tt-metal: a mux core per direction; the router has one worker channel);
// within a worker's share a ring direction's half is contiguous (tt-metal's reader alternates
// chunks between the directions); the one-shot algorithm runs one worker per direction (its
// kernels are not published in the report, only its bytes).
//
// Plans are computed on the device from a handful of numbers (make_reduce), so a plan is what a
// kernel would derive from its runtime args. C++17, freestanding, no heap.
#pragma once

#include <fabric/ops/all_gather.hpp>
#include <fabric/ops/common.hpp>

#include <stdint.h>

namespace kccl::fabric::ops {

inline constexpr uint32_t max_steps = 40;
/// reduce_scatter workers per direction (tt-metal's default_workers: 1, 2, 4 or 8), a mux channel each.
inline constexpr uint32_t max_rs_workers = 8;
static_assert(2 * max_rs_workers <= max_mux_channels, "The mux needs a channel for every reduce_scatter worker of both directions.");
inline constexpr uint32_t rs_sync_ring = 4;   ///< tt-metal's reduce_scatter: chunks per sync on a ring
inline constexpr uint32_t rs_sync_line = 20;  ///< ... and on a line
/// tt-metal's ring reduce_scatter / all_reduce use the one-shot algorithm up to this input per device.
inline constexpr uint32_t rs_direct_max_bytes = 512u * 1024u;

/// tt-metal's reduce_scatter_minimal_async workers per direction, as its default_workers runs (one
/// link): it takes the bytes a link moves, input x (n-1)/n (halved on a ring), and compares them
/// with thresholds named in MB but written as plain numbers (ring: 1 and 50, line: 0.5 and 4), so
/// a link that moves more than 50 bytes (ring) or 4 bytes (line) gets 8 workers: every size of the
/// published grid. (Its comments intend 2 below 1 MB / 0.5 MB, 4 up to 50 MB / 4 MB, 8 above; the
/// model follows the code that ran.) Each worker is a core of its own (reader, compute, writer)
/// with a channel of one buffer on its direction's mux: 2 x (8 + 1) cores of Wormhole's 56+.
constexpr uint32_t ttm_rs_workers(uint64_t input_bytes, uint32_t ranks, bool ring) {
    const uint64_t moved = input_bytes * (ranks - 1) / ranks / (ring ? 2 : 1);
    return ring ? (moved > 50 ? 8 : moved < 1 ? 2 : 4) : (moved > 4 ? 8 : moved == 0 ? 2 : 4);
}

/// tt-metal's reduce_scatter_minimal_async pages per packet: num_tiles_to_write_per_packet =
/// min(2, payload / page) (its program factories: the scatter write takes 2 NoC addresses), so 2
/// pages of 2048 B in a 6144 B packet.
constexpr uint32_t ttm_rs_pages_per_packet(uint32_t payload, uint32_t page) { return payload / page < 2 ? payload / page : 2; }

/// tt-metal's tile_granularity in pages, from the pages a packet carries (num_tiles_to_write_per_packet,
/// after the scatter write's limit: ttm_rs_pages_per_packet): 4 packets' worth when that is below 4,
/// else 8; so 8 pages with 2-page packets.
constexpr uint32_t ttm_chunk_pages(uint32_t packet_pages) { return packet_pages < 4 ? 4 * packet_pages : 8; }

/// One slice handled by one direction's workers, each its share (ReducePlan::woff / wbytes).
struct RStep {
    uint32_t slice = 0;            ///< which slice of the input (bytes [slice * S, + S))
    uint32_t bytes = 0;            ///< the direction's bytes of the slice (every worker's share)
    uint32_t partials = 0;         ///< bit b: add the partial of kind b (0: from the W side, 1: from the E side)
    bool final = false;            ///< the sum goes to the output; else to the next chip of the direction
    bool accumulate = false;       ///< final: add to the output (the other direction's final sum), not to the input
};

/// Everything the workers of one chip need for one reduce_scatter / all_reduce.
struct ReducePlan {
    Plan ag;                       ///< common fields (rank, tensors, pages, L1); all_reduce: its all_gather
    Plan direct;                   ///< the one-shot algorithm's streams (unicast to each chip)
    uint32_t input = 0;            ///< DRAM address of the op's input tensor
    bool ring = false, all_reduce = false, use_direct = false;
    uint32_t slice = 0;            ///< S: bytes of each chip's slice (input = ranks * S)
    uint32_t inter = 0;            ///< DRAM intermediate tensor of inter_bytes
    uint32_t inter_bytes = 0;      ///< ranks * S + S (the line's second partial of the own slice at ranks * S)
    uint32_t chunk = 0;            ///< bytes per chunk
    /// workers per direction: channel c = d * workers + k is worker k of direction d (0: E, 1: W),
    /// its core sender_xy[c] (the same on every chip: a worker's counterpart on the next chip)
    uint32_t workers = 1;
    /// channel c's share of every slice of its direction's steps: bytes [woff[c], woff[c] + wbytes[c])
    /// (tt-metal's start_tiles_read .. start_tiles_to_read of the worker, a ring's share halved between
    /// the directions)
    uint32_t woff[2 * max_rs_workers] = {}, wbytes[2 * max_rs_workers] = {};
    uint32_t sync[2 * max_rs_workers] = {};  ///< channel c's chunks per announcement
    uint32_t words_l1 = 0;         ///< on each worker: partial counters of kind 0 / 1 at +0 / +16,
                                   ///< the one-shot's arrivals at +48 (even ops) / +112 (odd ops),
                                   ///< final chunks of the E worker (line: the W worker accumulates) at +80
    uint32_t buf_l1 = 0;           ///< on each worker: 2 slots of (input, partial 0, partial 1) chunks
    uint32_t sender_xy[2 * max_rs_workers] = {};  ///< the worker of channel c
    uint32_t nsteps[2] = {0, 0};
    RStep steps[2][max_steps];

    /// The worker's counter words (words_l1 .. words_l1 + words_bytes); its chunk slots follow (buf_l1).
    static constexpr uint32_t words_bytes = 176;
    /// L1 bytes a worker needs from the ttm Plan's base (see Plan::l1_bytes: the mux's channels for
    /// `workers` per direction) for chunks of `chunk` bytes.
    static constexpr uint32_t l1_bytes(uint32_t header_bytes, uint32_t packet, uint32_t mux_slots, uint32_t chunk, uint32_t workers) {
        return Plan::l1_bytes(header_bytes, packet, mux_slots, workers) + 16 + words_bytes + 6 * chunk;
    }
    constexpr uint32_t channels() const { return 2 * workers; }
    /// Where the partial of kind b for slice s lands on chip q.
    constexpr uint32_t partial_at(uint32_t q, uint32_t b, uint32_t s) const {
        return inter + (b == 1 && s == q && !ring ? ag.ranks * slice : s * slice);
    }
    /// Programs (tt-metal device operations) per op, each with its start barrier: all_reduce 2.
    constexpr uint32_t phases() const { return all_reduce ? 2 : 1; }
};

namespace detail {
inline void add_step(ReducePlan& rp, uint32_t d, const RStep& st) {
    if (st.bytes == 0) return;  // a direction with nothing of this slice (tiny slices)
    if (KCCL_UNLIKELY(rp.nsteps[d] >= max_steps)) {
        ::kccl::detail::Msg m;
        m.s("ttm reduce: rank ").u(rp.ag.rank).s(": more than ").u(max_steps).s(" steps per direction (allowed: at most ")
            .u(max_steps - 1).s(" chips)");
        ::kccl::detail::assert_fail("ttm reduce", m.buf, __FILE__, __LINE__);
    }
    rp.steps[d][rp.nsteps[d]++] = st;
}

/// The one-shot algorithm's streams: slice j of the input to chip j's intermediate at rank * S,
/// unicast the shorter way round; the half-way peer (even ring) gets half each way.
inline void make_direct(Plan& p, uint32_t slice, uint32_t page) {
    const uint32_t r = p.rank, n = p.ranks;
    p.nstreams = 0;
    auto add = [&](uint32_t j, uint32_t dir, uint32_t hops, uint32_t off, uint32_t bytes) {
        if (bytes == 0) return;
        Stream& s = p.s[p.nstreams++];
        s.src = j * slice + off;
        s.dst = r * slice + off;
        s.bytes = bytes;
        s.targets = dir == 0 ? tgt_fwd : tgt_bwd;
        s.routing[0] = s.routing[1] = uint32_t(Routing::unicast_1d);
        s.route[0] = s.route[1] = hops;
    };
    uint32_t streams_in = 0;
    for (uint32_t k = 1; k < n; ++k) {
        const uint32_t j = (r + k) % n, i = (r + n - k) % n;
        if (k == n - k) {  // the half-way peer: the first half forward, the rest backward
            const uint32_t h = (slice / 2 + page - 1) / page * page < slice ? (slice / 2 + page - 1) / page * page : slice;
            add(j, 0, k, 0, h);
            add(j, 1, k, h, slice - h);
            streams_in += (h != 0) + (slice - h != 0);
        } else if (k < n - k) {
            add(j, 0, k, 0, slice);
            add(i, 1, k, 0, slice);
            streams_in += 2;
        }
    }
    p.expect = streams_in;  // the same count reaches every chip (the ring is symmetric)
}
}  // namespace detail

/// Builds chip ag.rank's plan. `rp.ag` must hold plan_common's fields (its output: the op's output
/// tensor); `inter` the intermediate tensor's DRAM address (inter_bytes); `workers` per direction
/// (ttm_rs_workers; 1..max_rs_workers; the one-shot algorithm uses one), worker k of the E / W
/// direction at core e0 / w0 + k columns (the same on every chip); words / bufs their L1
/// (ReducePlan::l1_bytes); chunks of `chunk_pages` pages (ttm_chunk_pages); allow_direct: the
/// ring's one-shot algorithm at its sizes.
inline void make_reduce(ReducePlan& rp, bool ring, bool all_reduce, uint32_t slice, uint32_t inter, uint32_t e0, uint32_t w0,
                        uint32_t workers, uint32_t words_l1, uint32_t buf_l1, uint32_t chunk_pages, bool allow_direct = true) {
    const uint32_t r = rp.ag.rank, n = rp.ag.ranks, page = rp.ag.page;
    if (KCCL_UNLIKELY(workers < 1 || workers > max_rs_workers)) {
        ::kccl::detail::Msg m;
        m.s("ttm reduce: rank ").u(r).s(": ").u(workers).s(" workers per direction (allowed: 1..").u(max_rs_workers).s(")");
        ::kccl::detail::assert_fail("ttm reduce", m.buf, __FILE__, __LINE__);
    }
    rp.ring = ring;
    rp.all_reduce = all_reduce;
    rp.slice = slice;
    rp.inter = inter;
    rp.inter_bytes = (n + 1) * slice;
    rp.chunk = chunk_pages * page;
    rp.words_l1 = words_l1;
    rp.buf_l1 = buf_l1;
    rp.nsteps[0] = rp.nsteps[1] = 0;
    rp.use_direct = allow_direct && ring && uint64_t(n) * slice <= rs_direct_max_bytes;
    rp.workers = rp.use_direct ? 1u : workers;
    const uint32_t W = rp.workers;
    for (uint32_t c = 0; c < 2 * max_rs_workers; ++c) {
        rp.sender_xy[c] = 0;
        rp.woff[c] = rp.wbytes[c] = 0;
        rp.sync[c] = 1;
    }
    for (uint32_t k = 0; k < W; ++k) {
        rp.sender_xy[k] = e0 + k;
        rp.sender_xy[W + k] = w0 + k;
    }
    rp.input = rp.ag.input;
    rp.ag.nstreams = 0;
    rp.ag.expect = 0;
    rp.ag.workers = W;  // the mux's channels: W per direction
    rp.direct = rp.ag;
    // all_reduce's all_gather: the own slice of the output, multicast (no local copy: the final sums are in place)
    if (all_reduce) {
        rp.ag.input = rp.ag.output;
        make_all_gather(rp.ag, ring, slice);
        rp.ag.workers = W;
        for (uint32_t i = 0; i < rp.ag.nstreams; ++i) {  // one stream, or an even ring's two halves
            rp.ag.s[i].src += r * slice;
            rp.ag.s[i].targets &= ~tgt_local;
        }
    }
    if (rp.use_direct) {
        rp.direct.output = inter;
        rp.direct.worker_xy = e0;                 // the E worker waits for the parts
        rp.direct.sem_l1 = words_l1 + 48;         // even ops; odd ops at + 64
        detail::make_direct(rp.direct, slice, page);
        RStep st;
        st.slice = r;
        st.bytes = slice;
        st.final = true;
        detail::add_step(rp, 0, st);
        rp.wbytes[0] = slice;
        return;
    }
    // each worker's share of a slice: pages [k P / W, (k + 1) P / W) (tt-metal's get_tile_offsets);
    // on a ring the E worker takes the first half of it (whole pages), the W worker the rest
    const uint32_t pages = (slice + page - 1) / page;
    uint32_t dir_bytes[2] = {0, 0};
    for (uint32_t k = 0; k < W; ++k) {
        const uint32_t a = k * pages / W, b = (k + 1) * pages / W;  // < 2^32: pages <= 2^28 (pages of 16 B or more)
        const uint32_t lo = a * page < slice ? a * page : slice, hi = b * page < slice ? b * page : slice;
        uint32_t mid = (a + (b - a + 1) / 2) * page;
        mid = !ring ? hi : mid < hi ? mid : hi;
        rp.woff[k] = lo;
        rp.wbytes[k] = mid - lo;
        rp.woff[W + k] = ring ? mid : lo;
        rp.wbytes[W + k] = ring ? hi - mid : hi - lo;
        dir_bytes[0] += rp.wbytes[k];
        dir_bytes[1] += rp.wbytes[W + k];
    }
    // chunks per announcement per worker: tt-metal's default, at most half the worker's chunks of a step (at least 1)
    const uint32_t def = ring ? rs_sync_ring : rs_sync_line;
    for (uint32_t c = 0; c < 2 * W; ++c) {
        const uint32_t step_chunks = (rp.wbytes[c] + rp.chunk - 1) / rp.chunk;
        rp.sync[c] = step_chunks / 2 < def ? (step_chunks / 2 ? step_chunks / 2 : 1) : def;
    }
    // a step covers its direction's bytes of the slice (each worker its share of them)
    if (ring) {
        for (uint32_t d = 0; d < 2; ++d)
            for (uint32_t i = 0; i < n; ++i) {
                RStep st;
                st.slice = d == 0 ? (r + 2 * n - 1 - i) % n : (r + 1 + i) % n;
                st.bytes = dir_bytes[d];
                st.partials = i ? 1u << d : 0u;
                st.final = i == n - 1;
                detail::add_step(rp, d, st);
            }
    } else {
        for (uint32_t s = n - 1; s > r; --s) {  // E: partial of chips 0..r-1 (from chip r-1) + mine -> chip r+1's E workers
            RStep st;
            st.slice = s;
            st.bytes = slice;
            st.partials = r > 0 ? 1u : 0u;
            detail::add_step(rp, 0, st);
        }
        for (uint32_t s = 0; s < r; ++s) {  // W: partial of chips r+1..n-1 (from chip r+1) + mine -> chip r-1's W workers
            RStep st;
            st.slice = s;
            st.bytes = slice;
            st.partials = r + 1 < n ? 2u : 0u;
            detail::add_step(rp, 1, st);
        }
        RStep fin;  // the own slice: each side's partial by the workers that received it
        fin.slice = r;
        fin.bytes = slice;
        fin.final = true;
        if (r > 0) {  // E: input + the partial of chips 0..r-1 -> output
            fin.partials = 1;
            detail::add_step(rp, 0, fin);
        }
        if (r + 1 < n) {  // W: (output or input) + the partial of chips r+1..n-1 -> output
            fin.partials = 2;
            fin.accumulate = r > 0;
            detail::add_step(rp, 1, fin);
        }
    }
}

/// Packets the worker of mux channel c (direction c / workers) hands to the mux in program `phase`
/// of an op (0: the reduce_scatter, 1: all_reduce's all_gather, sent by each direction's worker 0);
/// the mux forwards exactly these.
inline uint32_t reduce_packets_to(const ReducePlan& rp, uint32_t c, uint32_t phase) {
    const uint32_t d = c / rp.workers, k = c % rp.workers;
    if (phase == 1) return rp.all_reduce && k == 0 ? detail::packets_to(rp.ag, d) : 0;
    const uint32_t pk = rp.ag.packet_bytes();
    uint32_t n = detail::packets_to(rp.direct, d);
    const uint32_t bytes = rp.wbytes[c];
    for (uint32_t j = 0; j < rp.nsteps[d]; ++j) {
        if (rp.steps[d][j].final) continue;
        for (uint32_t o = 0; o < bytes; o += rp.chunk) {  // packets never straddle chunks
            const uint32_t m = bytes - o < rp.chunk ? bytes - o : rp.chunk;
            n += (m + pk - 1) / pk;
        }
    }
    return n;
}

namespace detail {
/// The sequence of (step, chunk) the worker of channel ch processes: chunk k of each step covers
/// bytes [off, off + n) of the worker's share of the step's slice.
struct RChunk {
    uint32_t step = 0, k = 0, off = 0, n = 0;
    bool valid = false;
};

inline RChunk next_chunk(const ReducePlan& rp, uint32_t ch, RChunk c) {
    const uint32_t d = ch / rp.workers, bytes = rp.wbytes[ch];
    if (!c.valid) {
        c.step = 0;
        c.k = 0;
        c.off = 0;
    } else {
        c.off += c.n;
        ++c.k;
        if (c.off >= bytes) {
            ++c.step;
            c.k = 0;
            c.off = 0;
        }
    }
    c.valid = bytes != 0 && c.step < rp.nsteps[d];
    if (!c.valid) return c;
    const uint32_t left = bytes - c.off;
    c.n = left < rp.chunk ? left : rp.chunk;
    return c;
}
}  // namespace detail

/// The worker of mux channel ch: worker k = ch % workers of direction d = ch / workers (0: E, 1: W),
/// tt-metal's reader, compute and writer kernels of one reduce_scatter_minimal_async worker, in
/// turn on one core, over its share of every slice; its partial sums go to worker k of direction
/// d on the next chip (its counterpart, the same core), announced on that core's counters. `Red`
/// the combine (an OnComputeEngine reducer: hal::compute_reduce). Runs `iters` ops, each program
/// after the mux's go (the start barrier passed); the mux (run_reduce_mux) forwards its packets.
/// all_reduce's all_gather is sent by worker 0 of each direction (tt-metal's all_gather_async: one
/// worker per direction).
template <class Red, class H>
uint32_t run_reduce_sender(H& hal, const ReducePlan& rp, const MuxWiring& w, uint32_t ch, uint32_t iters) {
    using T = typename Red::value_type;
    const Plan& p = rp.ag;
    detail::check_plan(p);
    detail::check_plan(rp.direct);
    const uint32_t mx = w.mux_xy & 0xFFFFu, my = w.mux_xy >> 16;
    const uint32_t dx = p.dram_xy & 0xFFFFu, dy = p.dram_xy >> 16;
    const uint32_t n = p.ranks, r = p.rank, pk = p.packet_bytes();
    const uint32_t W = rp.workers, d = ch / W, k = ch % W, woff = rp.woff[ch], sync = rp.sync[ch];
    const uint32_t me = rp.sender_xy[ch];  // this worker's core, and its counterpart's on the next chip
    const uint32_t next = d == 0 ? (r + 1) % n : (r + n - 1) % n;  // the chip this direction sends to
    uint32_t sent = 0, idx = 0;    // packets handed to the mux; its next slot
    uint32_t need[2] = {0, 0};     // announcements of partials of kind 0 / 1 consumed so far (all ops)
    uint32_t acc_need = 0;         // the E worker's final chunks accumulated so far (line, W worker)
    const uint32_t other = rp.sender_xy[(d ^ 1u) * W + k], phases = rp.phases();  // the other direction's worker k
    // the line's E worker announces each final chunk to the W worker when the W worker accumulates
    bool announce_final = false;
    if (d == 0 && !rp.ring)
        for (uint32_t j = 0; j < rp.nsteps[1]; ++j) announce_final = announce_final || rp.steps[1][j].accumulate;
    auto buf = [&](uint32_t slot, uint32_t which) { return rp.buf_l1 + (slot * 3 + which) * rp.chunk; };
    auto read_pages = [&](uint32_t src, uint32_t l1, uint32_t bytes) {
        for (uint32_t o = 0; o < bytes; o += p.page)
            hal.noc_read(hal.noc_addr(dx, dy, src + o), l1 + o, bytes - o < p.page ? bytes - o : p.page);
    };
    for (uint32_t it = 0; it < iters; ++it) {
        detail::wait_at_least(hal, w.credit_l1 + 16, it * phases + 1);  // the mux says go: the start barrier passed
        const uint32_t par = it & 1;  // the one-shot's arrival semaphore
        if (rp.use_direct) {  // the one-shot algorithm: this direction's streams, then (E) the sum
            detail::packet_loop(hal, rp.direct, d == 0 ? tgt_fwd : tgt_bwd,
                                [&](const Stream& s, uint32_t off, uint32_t nb, bool last, uint32_t l1, uint32_t dd) {
                                    HeaderFields f = detail::data_header(
                                        p, Routing(s.routing[dd]), s.route[dd], rp.direct.output + s.dst + off, nb,
                                        last, rp.direct.worker_xy, rp.direct.sem_l1 + 64 * par, (r & 0xFFu) | (off << 8));
                                    detail::to_mux(hal, p, w, ch, f, l1, nb, sent, idx);
                                });
            if (d == 0)  // every part of my slice arrived
                detail::wait_at_least(hal, rp.direct.sem_l1 + 64 * par, p.sem_initial + (it / 2 + 1) * rp.direct.expect);
        }
        // the reader's waits for an announcement, and its reads of chunk c into slot `slot`
        auto ready = [&](const detail::RChunk& c, bool block) {
            const RStep& st = rp.steps[d][c.step];
            if (st.accumulate) {  // the E worker's final sum of this chunk is in the output
                const uint32_t want = p.sem_initial + acc_need + 1;
                if (!block && !reached(hal.sem_read(rp.words_l1 + 80), want)) return false;
                detail::wait_at_least(hal, rp.words_l1 + 80, want);
            }
            if (rp.use_direct || c.k % sync) return true;
            for (uint32_t b = 0; b < 2; ++b)
                if (st.partials & (1u << b)) {
                    const uint32_t want = p.sem_initial + need[b] + 1, at = rp.words_l1 + 16 * b;
                    if (!block && !reached(hal.sem_read(at), want)) return false;
                    detail::wait_at_least(hal, at, want);
                }
            return true;
        };
        auto issue = [&](const detail::RChunk& c, uint32_t slot) {
            const RStep& st = rp.steps[d][c.step];
            const uint32_t at = st.slice * rp.slice + woff + c.off;
            if (st.accumulate) {
                ++acc_need;
                read_pages(p.output + (rp.all_reduce ? r * rp.slice : 0) + woff + c.off, buf(slot, 0), c.n);
            } else {
                read_pages(rp.input + at, buf(slot, 0), c.n);
            }
            if (rp.use_direct) return;
            for (uint32_t b = 0; b < 2; ++b)
                if (st.partials & (1u << b)) {
                    if (c.k % sync == 0) ++need[b];
                    read_pages(rp.partial_at(r, b, st.slice) + woff + c.off, buf(slot, 1 + b), c.n);
                }
        };
        detail::RChunk cur = detail::next_chunk(rp, ch, detail::RChunk{});
        uint32_t slot = 0;
        if (cur.valid) {
            ready(cur, true);
            issue(cur, slot);
            hal.noc_read_barrier();
        }
        while (cur.valid) {
            const RStep& st = rp.steps[d][cur.step];
            const uint32_t in = buf(slot, 0), elems = cur.n / uint32_t(sizeof(T));
            // compute: the sum into the input's buffer
            if (rp.use_direct) {  // the n - 1 parts that arrived, one after another through partial buffer 0
                for (uint32_t q = 0; q < n; ++q) {
                    if (q == r) continue;
                    read_pages(rp.inter + q * rp.slice + cur.off, buf(slot, 1), cur.n);
                    hal.noc_read_barrier();
                    kccl::hal::compute_reduce<Red>(hal, in, in, buf(slot, 1), elems);
                }
            } else {
                for (uint32_t b = 0; b < 2; ++b)
                    if (st.partials & (1u << b)) kccl::hal::compute_reduce<Red>(hal, in, in, buf(slot, 1 + b), elems);
            }
            kccl::hal::l1_store_fence(hal, in, cur.n);  // the packer's stores before the NoC reads them (N7)
            const detail::RChunk nx = detail::next_chunk(rp, ch, cur);
            const uint32_t nslot = slot ^ 1u;
            bool early = false;
            if (nx.valid && ready(nx, false)) {  // the reader runs ahead when the partial is announced
                issue(nx, nslot);
                early = true;
            }
            if (st.final) {  // the output tensor (all_reduce: its slice r)
                const uint32_t dst = p.output + (rp.all_reduce ? r * rp.slice : 0) + woff + cur.off;
                for (uint32_t o = 0; o < cur.n; o += p.page)
                    hal.noc_write(in + o, hal.noc_addr(dx, dy, dst + o), cur.n - o < p.page ? cur.n - o : p.page);
                if (announce_final) {  // the chunk landed, then the W worker may add its partial to it
                    hal.noc_write_barrier();
                    hal.sem_inc(hal.noc_addr(other & 0xFFFFu, other >> 16, rp.words_l1 + 80), 1);
                }
            } else {  // the next chip's intermediate, packet by packet; the group's last packet announces it
                const uint32_t b = d;  // the kind of partial this direction produces
                const uint32_t dst = rp.partial_at(next, b, st.slice) + woff + cur.off;
                const bool last_chunk = cur.off + cur.n >= rp.wbytes[ch];
                const bool announce = last_chunk || (cur.k + 1) % sync == 0;
                for (uint32_t o = 0; o < cur.n; o += pk) {
                    const uint32_t nb = cur.n - o < pk ? cur.n - o : pk;
                    const bool inc = announce && o + nb >= cur.n;
                    const HeaderFields f = detail::data_header(p, Routing::unicast_1d, 1, dst + o, nb, inc, me,
                                                               rp.words_l1 + 16 * b, (r & 0xFFu) | (o << 8));
                    detail::to_mux(hal, p, w, ch, f, in + o, nb, sent, idx);
                }
            }
            if (nx.valid && !early) {
                ready(nx, true);
                issue(nx, nslot);
            }
            if (nx.valid) hal.noc_read_barrier();
            hal.noc_writes_flushed();  // this slot's bytes have left: it may be refilled
            cur = nx;
            slot = nslot;
        }
        if (rp.all_reduce) {  // the all_gather of the final sums: worker 0 of each direction reads the whole own slice
            hal.noc_write_barrier();  // my final sums landed in the output
            hal.sem_inc(hal.noc_addr(mx, my, w.done_l1), 1);  // this worker's reduce_scatter is done
            detail::wait_at_least(hal, w.credit_l1 + 16, it * phases + 2);  // go: every worker's sums are in, the barrier passed
            if (k == 0)
                detail::packet_loop(hal, p, d == 0 ? tgt_fwd : tgt_bwd,
                                    [&](const Stream& s, uint32_t off, uint32_t nb, bool last, uint32_t l1, uint32_t dd) {
                                        detail::to_mux(hal, p, w, ch, detail::packet_header(p, s, off, nb, last, dd, it), l1, nb, sent,
                                                       idx, 1);  // all_gather_async: one worker, one mux buffer per direction
                                    });
        }
        hal.noc_write_barrier();  // the final sums landed
        hal.sem_inc(hal.noc_addr(mx, my, w.done_l1), 1);  // this worker's part of the op's last program is done
    }
    return 0;
}

/// The mux of a reduce_scatter / all_reduce (the chip's fabric worker): common.hpp's run_mux_counts
/// with the op's programs and the packets each worker hands over in each; all_reduce's op ends
/// when the all_gather's streams reached this chip.
template <class H, class Link>
uint32_t run_reduce_mux(H& hal, Link& link, const ReducePlan& rp, const MuxWiring& w, uint32_t iters) {
    detail::check_plan(rp.ag);
    uint32_t want[2 * 2 * max_rs_workers] = {};
    const uint32_t nc = rp.channels();
    for (uint32_t ph = 0; ph < rp.phases(); ++ph)
        for (uint32_t c = 0; c < nc; ++c) want[ph * nc + c] = reduce_packets_to(rp, c, ph);
    return run_mux_counts(hal, link, rp.ag, w, want, rp.phases(), rp.all_reduce ? rp.ag.expect : 0, iters);
}

}  // namespace kccl::fabric::ops
