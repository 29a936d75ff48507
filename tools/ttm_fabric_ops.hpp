// tools/ttm_fabric_ops.hpp — host side of include/fabric/ops/*.hpp: an
// emulated line or ring of chips with the chip fabric, a DRAM endpoint per chip holding the input,
// output (and, for reduce_scatter / all_reduce, intermediate) tensors, the op's plan per chip, one
// run of warmup + iterations, and a bit-exact check of every output byte against values computed
// here from the seed (never by the code under test; the reductions against the host reference of
// testing/inputs.hpp, bfloat16 sums).
// Used by `coll_perf --transport fabric --structure ttm` and tests/fabric/chip_ttm_test.cpp.
// Host code (std, exceptions).
#pragma once

#include <collectives/ops.hpp>
#include <common/host/error.hpp>
#include <emulation/fabric/fabric.hpp>
#include <emulation/collective.hpp>
#include <fabric/ops/all_gather.hpp>
#include <fabric/ops/all_reduce.hpp>
#include <fabric/ops/all_to_all.hpp>
#include <fabric/ops/reduce_scatter.hpp>
#include <testing/inputs.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace kccl::tools::ttm_fabric {

namespace cf = kccl::emu::fabric;
namespace ops = kccl::fabric::ops;
namespace emu = kccl::emu;

struct Options {
    std::string op = "all_gather";  ///< all_gather, all_to_all, reduce_scatter or all_reduce
    bool ring = false;              ///< ring (FABRIC_1D_RING) or line (FABRIC_1D)
    uint32_t ranks = 4;
    /// nccl-tests' size: all_gather the gathered output, the others each chip's input
    uint64_t size = 64 * 1024;
    uint32_t page = 2048;             ///< a bfloat16 32 x 32 tile
    uint32_t message = 6144;          ///< the fabric's packet payload (tt-metal's benchmark)
    uint32_t pages_per_packet = 0;    ///< 0: tt-metal's rule per op (pages_per_packet_of)
    uint32_t tx_slots = 8, rx_slots = 16;
    uint32_t iters = 1, warmup = 0;
    uint64_t seed = 1;
    /// per_direction: all_gather: a sender core per direction and worker (reader + writer) behind
    /// a mux core (the fabric worker) as tt-metal's all_gather_async; all_to_all: the schedule of
    /// tt-metal's all_to_all_async_generic (ops::make_all_to_all_generic: the remote destinations
    /// from the fabric worker directly, or from workers per direction behind the mux; the local
    /// copy on a core of its own); one_core: the fabric worker does everything (all_to_all: the
    /// destinations in turns); auto: per_direction.
    std::string structure = "auto";
    uint32_t mux_slots = 1;  ///< slots per mux channel (tt-metal's fabric mux default: 1 buffer per channel)
    bool mutation_no_local_copy = false;  ///< tests: the plans drop the local copy (the check must find every own part)
    /// reduce_scatter / all_reduce on a ring: tt-metal's one-shot algorithm up to 512 KiB per chip
    /// (ops::rs_direct_max_bytes); false: the pipelined ring at every size
    bool one_shot = true;
    /// reduce_scatter / all_reduce: workers per direction of the reduce_scatter (each a core with a
    /// mux channel of mux_slots buffers); 0: tt-metal's rule, ops::ttm_rs_workers. The ring's
    /// one-shot algorithm runs one.
    uint32_t rs_workers = 0;
    bool mutation_no_final_partial = false;  ///< tests: the line's E workers' final sums skip the partial they received
    /// all_gather, per_direction: tt-metal's relay (1-hop unicasts, each chip forwarding what it
    /// received from its output tensor) instead of one multicast stream per direction
    bool relay = true;
    /// senders per direction; 0: tt-metal's rule (all_gather relay: ops::ttm_workers_per_direction;
    /// all_to_all: ops::ttm_a2a_workers_per_direction, where 0 or 1 is the direct structure)
    uint32_t workers = 0;
};

inline bool reduces(const Options& o) { return o.op == "reduce_scatter" || o.op == "all_reduce"; }

struct Result {
    std::string error;           ///< empty: the run finished
    uint64_t wrong = 0;          ///< output units that differ from the expected ones: bytes (all_gather, all_to_all), bfloat16 elements (reduce_scatter, all_reduce)
    std::string first_wrong;
    emu::RunReport report;
    /// reduce_scatter / all_reduce: per chip, the packets each mux channel's worker handed to the
    /// mux over the run (the mux's fill counters; channel c = d * workers + k)
    std::vector<std::vector<uint32_t>> channel_packets;
};

/// The input byte i of chip r (a hash of seed, r, i).
inline uint8_t input_byte(uint64_t seed, uint32_t r, uint64_t i) {
    return uint8_t(kccl::testing::hash(seed ^ (i >> 35), r, uint32_t(i >> 3)) >> (8 * (i & 7)));
}

/// Pages per packet: the option, else tt-metal's rule for the op.
inline uint32_t pages_per_packet_of(const Options& o) {
    if (o.pages_per_packet) return o.pages_per_packet;
    if (reduces(o)) return ops::ttm_rs_pages_per_packet(o.message, o.page);
    return o.op == "all_to_all" ? ops::ttm_a2a_pages_per_packet(o.message, o.page) : ops::ttm_pages_per_packet(o.message, o.page);
}
/// The structure the run uses ("auto": the op's own).
inline std::string structure_of(const Options& o) {
    return o.structure != "auto" ? o.structure : "per_direction";
}

/// DRAM bytes per chip for the op's tensors (reductions: input, output and the intermediate tensor
/// of ranks + 1 slices).
inline uint64_t dram_bytes(const Options& o) {
    auto up = [](uint64_t b) { return (b + 4095) & ~4095ull; };
    if (reduces(o)) {
        const uint64_t slice = o.size / o.ranks;
        return up(o.size) + up(o.op == "all_reduce" ? o.size : slice) + up((o.ranks + 1) * slice);
    }
    const uint64_t in = o.op == "all_gather" ? o.size / o.ranks : o.size;
    return up(in) + ((o.size + 15) & ~15ull);
}

/// Checks the options; throws kccl::Error naming what is wrong and what is allowed.
inline void validate(const Options& o) {
    if (o.op != "all_gather" && o.op != "all_to_all" && !reduces(o))
        throw kccl::Error(kccl::Errc::usage, "ttm structure: op '" + o.op +
                                    "' is not built (allowed: all_gather, all_to_all, reduce_scatter, all_reduce)");
    if (reduces(o) && o.structure != "auto" && o.structure != "per_direction")
        throw kccl::Error(kccl::Errc::usage, "ttm structure: " + o.op + " runs a worker per direction (structure per_direction or auto), not '" +
                                    o.structure + "'");
    if (o.structure != "auto" && o.structure != "per_direction" && o.structure != "one_core")
        throw kccl::Error(kccl::Errc::usage, "ttm structure: '" + o.structure + "' (allowed: auto, per_direction, one_core)");
    if (o.rs_workers > ops::max_rs_workers)
        throw kccl::Error(kccl::Errc::usage, "ttm structure: " + std::to_string(o.rs_workers) +
                                    " reduce_scatter workers per direction (allowed: 0 = tt-metal's rule, 1.." +
                                    std::to_string(ops::max_rs_workers) + ")");
    if (o.mux_slots < 1 || o.mux_slots > 8)
        throw kccl::Error(kccl::Errc::usage, "ttm structure: " + std::to_string(o.mux_slots) + " mux slots (allowed: 1..8)");
    if (o.workers > ops::max_workers)
        throw kccl::Error(kccl::Errc::usage, "ttm structure: " + std::to_string(o.workers) + " workers per direction (allowed: 0 = tt-metal's default, 1.." +
                                    std::to_string(ops::max_workers) + ")");
    if (o.ranks < 2 || o.ranks > ops::max_ranks)
        throw kccl::Error(kccl::Errc::usage, "ttm structure: " + std::to_string(o.ranks) + " chips (allowed: 2.." + std::to_string(ops::max_ranks) + ")");
    const uint32_t ppp = o.page ? pages_per_packet_of(o) : 0;
    if (o.page == 0 || o.page % 16 || ppp == 0 || ppp > kccl::fabric::max_scatter_chunks || uint64_t(ppp) * o.page > o.message)
        throw kccl::Error(kccl::Errc::usage, "ttm structure: page " + std::to_string(o.page) + " B x " + std::to_string(ppp) +
                                    " pages per packet does not fit a " + std::to_string(o.message) +
                                    " B packet (allowed: page a multiple of 16, 1..4 pages, at most the packet payload)");
    const uint64_t part = o.size / o.ranks;
    if (o.size % o.ranks || part % 16 || part == 0)
        throw kccl::Error(kccl::Errc::usage, "ttm structure: size " + std::to_string(o.size) + " B is not " + std::to_string(o.ranks) +
                                    " parts of a multiple of 16 bytes");
    if (dram_bytes(o) > 0xF0000000ull)
        throw kccl::Error(kccl::Errc::usage, "ttm structure: size " + std::to_string(o.size) + " B: the tensors exceed the 32-bit DRAM address space");
}

Result run_reduce(const Options& o, emu::RunOptions ro);

/// The bed both runners start from: o's line or ring of o.ranks chips on the 1D fabric, o's packet
/// size and router slots.
inline cf::BedOptions line_or_ring_bed(const Options& o) {
    cf::BedOptions b;
    b.topology = o.ring ? "ring" : "line";
    b.kind = o.ring ? cf::FabricKind::ring_1d : cf::FabricKind::line_1d;
    b.ranks = o.ranks;
    b.message_bytes = o.message;
    b.peer_slots = 2;
    b.tx_slots = o.tx_slots;
    b.rx_slots = o.rx_slots;
    return b;
}

/// Runs warmup + iters ops on a fresh emulated cluster and checks every output byte.
inline Result run(const Options& o, emu::RunOptions ro) {
    validate(o);
    if (reduces(o)) return run_reduce(o, ro);
    Result res;
    const bool ag = o.op == "all_gather";
    const uint32_t n = o.ranks;
    const uint32_t in_bytes = uint32_t(ag ? o.size / n : o.size), out_bytes = uint32_t(o.size);
    const uint32_t ppp = pages_per_packet_of(o);
    cf::BedOptions b = line_or_ring_bed(o);
    b.buffer_bytes = ops::Plan::l1_bytes(48, ppp * o.page, o.mux_slots, ops::max_workers);
    const bool split = structure_of(o) == "per_direction";
    if (split) b.grid_w = 1 + ops::max_channels;  // the senders of channels c at (1 + c, 0)
    b.dram_bytes = uint32_t(dram_bytes(o));
    cf::Bed bed(b);
    const uint32_t in_at = 0, out_at = (in_bytes + 4095u) & ~4095u;
    const emu::CoreCoord dram0 = bed.cluster->chip(0).dram();
    const uint32_t dram_xy = dram0.x | (dram0.y << 16);
    const emu::CoreCoord w0 = bed.worker(0);
    std::vector<std::unique_ptr<ops::Plan>> plans(n);
    std::vector<ops::MuxWiring> wires(n);
    std::vector<uint8_t> buf(std::max(in_bytes, out_bytes));
    for (uint32_t r = 0; r < n; ++r) {
        const emu::CoreCoord w = bed.worker(r);
        if (w.x != w0.x || w.y != w0.y) throw kccl::Error(kccl::Errc::internal, "ttm structure: workers at different cores");
        auto p = std::make_unique<ops::Plan>();
        ops::plan_common(*p, r, n, dram_xy, w.x | (w.y << 16), in_at, out_at, o.page, ppp, bed.buffers(r).input_l1, 48);
        if (ag && split && o.relay) {  // tt-metal's relay, synced every chunks_per_sync packets
            const uint32_t pages = (in_bytes + o.page - 1) / o.page;
            const uint32_t workers = o.workers ? o.workers : ops::ttm_workers_per_direction(out_bytes, n, o.ring);
            ops::make_all_gather_relay(*p, o.ring, in_bytes, ops::ttm_chunks_per_sync(pages, workers, ppp), workers);
        } else if (ag) ops::make_all_gather(*p, o.ring, in_bytes);
        else if (split)
            ops::make_all_to_all_generic(*p, o.ring, out_bytes / n,
                                         o.workers ? o.workers : ops::ttm_a2a_workers_per_direction(out_bytes, o.page, n, o.ring, ppp));
        else ops::make_all_to_all(*p, o.ring, out_bytes / n);
        if (o.mutation_no_local_copy) {
            for (uint32_t i = 0; i < p->nstreams; ++i) p->s[i].targets &= ~ops::tgt_local;
            p->relay_local = false;
        }
        bed.launch->init_word(w, p->sem_l1, p->sem_initial);
        bed.launch->init_word(w, p->sem_l1 + 64, p->sem_initial);
        bed.launch->init_word(w, p->barrier_l1, p->sem_initial);
        if (split) {
            wires[r] = ops::mux_wiring(*p, w.x | (w.y << 16), (w.x + 1) | (w.y << 16), o.mux_slots);
            for (uint32_t k = 0; k <= ops::max_mux_channels; ++k) bed.launch->init_word(w, wires[r].mux_fill_l1 + 16 * k, 0);
            bed.launch->init_word(w, wires[r].done_l1, 0);
            for (uint32_t c = 0; c < p->channels(); ++c)
                for (uint32_t k = 0; k < 3; ++k) bed.launch->init_word({w.chip, w.x + 1 + c, w.y}, wires[r].credit_l1 + 16 * k, 0);
        }
        plans[r] = std::move(p);
        for (uint32_t i = 0; i < in_bytes; ++i) buf[i] = input_byte(o.seed, r, i);
        const emu::CoreCoord d = bed.cluster->chip(bed.plan.spec.workers[r].chip).dram();
        bed.cluster->write(d, in_at, buf.data(), in_bytes);
        for (uint32_t i = 0; i < out_bytes; ++i) buf[i] = uint8_t(0xA5 ^ (i * 131u) ^ r);  // stale output
        bed.cluster->write(d, out_at, buf.data(), out_bytes);
    }
    const uint32_t total = o.warmup + o.iters;
    if (split) {
        bed.add([&plans, &wires, total](auto& hal, auto& link, const cf::RankBuffers& rb) -> uint64_t {
            if (plans[rb.rank]->direct) ops::run_direct(hal, link, *plans[rb.rank], wires[rb.rank], total);
            else ops::run_mux(hal, link, *plans[rb.rank], wires[rb.rank], total);
            link.quiesce();
            return 0;
        });
        for (uint32_t r = 0; r < n; ++r)
            for (uint32_t c = 0; c < plans[r]->channels(); ++c) {
                const emu::CoreCoord w = bed.worker(r);
                bed.launch->add({w.chip, w.x + 1 + c, w.y}, [&plans, &wires, total, r, c](auto& hal) -> uint64_t {
                    return ops::run_sender(hal, *plans[r], wires[r], c, total);
                });
            }
    } else {
        bed.add([&plans, total](auto& hal, auto& link, const cf::RankBuffers& rb) -> uint64_t {
            ops::run(hal, link, *plans[rb.rank], total);
            link.quiesce();
            return 0;
        });
    }
    res.report = bed.run(ro);
    if (!res.report.ok()) {
        res.error = res.report.summary();
        return res;
    }
    const uint32_t chunk = out_bytes / n;
    for (uint32_t r = 0; r < n; ++r) {
        const auto dram = bed.cluster->l1(bed.cluster->chip(bed.plan.spec.workers[r].chip).dram());
        const uint8_t* out = dram.data() + out_at;
        for (uint32_t i = 0; i < out_bytes; ++i) {
            const uint32_t q = i / chunk, k = i % chunk;
            const uint8_t want = ag ? input_byte(o.seed, q, k) : input_byte(o.seed, q, uint64_t(r) * chunk + k);
            if (out[i] != want) {
                if (!res.wrong++) {
                    char t[160];
                    std::snprintf(t, sizeof t, " chip %u output byte %u (from chip %u): got 0x%02x, expected 0x%02x", r, i, q, out[i], want);
                    res.first_wrong = t;
                }
            }
        }
    }
    return res;
}

/// reduce_scatter / all_reduce (reduce_scatter.hpp, all_reduce.hpp): bfloat16 inputs from the seed (every summation
/// order gives the same exact sum: testing/inputs.hpp's input_value), the sum on the compute
/// engine; chip r's reduce_scatter output is slice r of the sum, all_reduce's the whole sum.
inline Result run_reduce(const Options& o, emu::RunOptions ro) {
    using Bf = kccl::coll::bfloat16;
    using Red = kccl::coll::OnComputeEngine<kccl::coll::Reducer<Bf, kccl::coll::RedOp::sum>>;
    namespace cb = kccl::emu::collective;
    Result res;
    const bool ar = o.op == "all_reduce";
    const uint32_t n = o.ranks;
    const uint32_t in_bytes = uint32_t(o.size), slice = in_bytes / n, out_bytes = ar ? in_bytes : slice;
    const uint32_t ppp = pages_per_packet_of(o);
    const uint32_t chunk = ops::ttm_chunk_pages(ops::ttm_rs_pages_per_packet(o.message, o.page)) * o.page;
    const bool direct = o.one_shot && o.ring && o.size <= ops::rs_direct_max_bytes;  // make_reduce's rule: one worker
    const uint32_t W = direct ? 1u : o.rs_workers ? o.rs_workers : ops::ttm_rs_workers(o.size, n, o.ring);
    cf::BedOptions b = line_or_ring_bed(o);
    b.buffer_bytes = ops::ReducePlan::l1_bytes(48, ppp * o.page, o.mux_slots, chunk, W);
    b.grid_w = 1 + W;  // worker k of the E direction at (1 + k, 0), of the W direction at (1 + k, 1)
    b.grid_h = 2;
    b.dram_bytes = uint32_t(dram_bytes(o));
    cf::Bed bed(b);
    auto up = [](uint32_t x) { return (x + 4095u) & ~4095u; };
    const uint32_t in_at = 0, out_at = up(in_bytes), inter_at = out_at + up(out_bytes);
    const emu::CoreCoord dram0 = bed.cluster->chip(0).dram();
    const uint32_t dram_xy = dram0.x | (dram0.y << 16);
    std::vector<std::unique_ptr<ops::ReducePlan>> plans(n);
    std::vector<ops::MuxWiring> wires(n);
    std::vector<Bf> buf(std::max(in_bytes, out_bytes) / 2);
    for (uint32_t r = 0; r < n; ++r) {
        const emu::CoreCoord w = bed.worker(r);
        if (w.x != bed.worker(0).x || w.y != bed.worker(0).y) throw kccl::Error(kccl::Errc::internal, "ttm structure: workers at different cores");
        auto p = std::make_unique<ops::ReducePlan>();
        const uint32_t base = bed.buffers(r).input_l1;
        ops::plan_common(p->ag, r, n, dram_xy, w.x | (w.y << 16), in_at, out_at, o.page, ppp, base, 48);
        const uint32_t words = (base + ops::Plan::l1_bytes(48, ppp * o.page, o.mux_slots, W) + 15u) & ~15u;
        const uint32_t e0 = (w.x + 1) | (w.y << 16), w0 = (w.x + 1) | ((w.y + 1) << 16);
        ops::make_reduce(*p, o.ring, ar, slice, inter_at, e0, w0, W, words, words + ops::ReducePlan::words_bytes, chunk / o.page, o.one_shot);
        if (p->workers != W) throw kccl::Error(kccl::Errc::internal, "ttm structure: the plan's workers per direction differ from the host's");
        if (o.mutation_no_final_partial)
            for (uint32_t j = 0; j < p->nsteps[0]; ++j)
                if (p->steps[0][j].final) p->steps[0][j].partials &= ~1u;
        wires[r] = ops::mux_wiring(p->ag, w.x | (w.y << 16), e0, o.mux_slots);
        for (uint32_t c = 0; c < p->channels(); ++c) wires[r].sender_xy[c] = p->sender_xy[c];  // channel c's worker
        bed.launch->init_word(w, p->ag.sem_l1, p->ag.sem_initial);
        bed.launch->init_word(w, p->ag.sem_l1 + 64, p->ag.sem_initial);
        bed.launch->init_word(w, p->ag.barrier_l1, p->ag.sem_initial);
        for (uint32_t k = 0; k <= ops::max_mux_channels; ++k) bed.launch->init_word(w, wires[r].mux_fill_l1 + 16 * k, 0);
        for (uint32_t c = 0; c < p->channels(); ++c) {
            const emu::CoreCoord sc{w.chip, p->sender_xy[c] & 0xFFFFu, p->sender_xy[c] >> 16};
            for (uint32_t k = 0; k < 2; ++k) bed.launch->init_word(sc, wires[r].credit_l1 + 16 * k, 0);
            for (uint32_t off : {0u, 16u, 32u, 48u, 80u, 112u}) bed.launch->init_word(sc, words + off, p->ag.sem_initial);
        }
        plans[r] = std::move(p);
        for (uint32_t i = 0; i < in_bytes / 2; ++i) buf[i] = kccl::testing::input_value<Bf>(o.seed, kccl::coll::RedOp::sum, true, r, i);
        const emu::CoreCoord d = bed.cluster->chip(bed.plan.spec.workers[r].chip).dram();
        bed.cluster->write(d, in_at, buf.data(), in_bytes);
        std::vector<uint8_t> stale(std::max(out_bytes, (n + 1) * slice));
        for (uint32_t i = 0; i < stale.size(); ++i) stale[i] = uint8_t(0xA5 ^ (i * 131u) ^ r);  // stale output and intermediate
        bed.cluster->write(d, out_at, stale.data(), out_bytes);
        bed.cluster->write(d, inter_at, stale.data(), (n + 1) * slice);
    }
    const uint32_t total = o.warmup + o.iters;
    bed.add([&plans, &wires, total](auto& hal, auto& link, const cf::RankBuffers& rb) -> uint64_t {
        const ops::ReducePlan& p = *plans[rb.rank];
        ops::run_reduce_mux(hal, link, p, wires[rb.rank], total);
        link.quiesce();
        return 0;
    });
    for (uint32_t r = 0; r < n; ++r)
        for (uint32_t c = 0; c < plans[r]->channels(); ++c) {
            const uint32_t xy = plans[r]->sender_xy[c];
            bed.launch->add({bed.worker(r).chip, xy & 0xFFFFu, xy >> 16}, [&plans, &wires, total, r, c](auto& hal) -> uint64_t {
                return ops::run_reduce_sender<Red>(hal, *plans[r], wires[r], c, total);
            });
        }
    res.report = bed.run(ro);
    if (!res.report.ok()) {
        res.error = res.report.summary();
        return res;
    }
    for (uint32_t r = 0; r < n; ++r) {  // the packets each channel's worker handed to the mux
        const auto mux = bed.cluster->l1(bed.worker(r));
        std::vector<uint32_t> counts(plans[r]->channels());
        for (uint32_t c = 0; c < counts.size(); ++c) std::memcpy(&counts[c], mux.data() + wires[r].mux_fill_l1 + 16 * c, 4);
        res.channel_packets.push_back(std::move(counts));
    }
    // the expected sums, element by element (each chip's output holds a part of the same vector)
    std::vector<Bf> xs(n);
    for (uint32_t r = 0; r < n; ++r) {
        const auto dram = bed.cluster->l1(bed.cluster->chip(bed.plan.spec.workers[r].chip).dram());
        const uint8_t* out = dram.data() + out_at;
        const uint32_t first = ar ? 0 : r * (slice / 2);
        for (uint32_t e = 0; e < out_bytes / 2; ++e) {
            for (uint32_t q = 0; q < n; ++q) xs[q] = kccl::testing::input_value<Bf>(o.seed, kccl::coll::RedOp::sum, true, q, first + e);
            const Bf want = kccl::testing::reference_reduce<Bf>(kccl::coll::RedOp::sum, xs);
            uint16_t got, w;
            std::memcpy(&got, out + 2 * e, 2);
            std::memcpy(&w, &want, 2);
            if (got != w && !res.wrong++) {
                char t[160];
                std::snprintf(t, sizeof t, " chip %u output element %u: got 0x%04x, expected 0x%04x", r, e, got, w);
                res.first_wrong = t;
            }
        }
    }
    return res;
}

/// tt-metal's fixed cost of one op that the emulated kernels do not contain (dispatching the
/// program to every device, the op's start and end; the start barrier is modelled):
/// fixed_us + per_device_us x devices.
/// FITTED, the only fitted figures of the structure: a least-squares line through
/// (devices, tt-metal's measured time - our modelled time) at the smallest published size of each
/// of the 8 measured series (line 2 at 4 KiB, line 4 at 8 KiB, line 8 and ring 8 at 16 KiB;
/// all_gather 4.45, 2.68, 2.19, 5.34 us, all_to_all 2.19, 4.43, 5.84, 7.34 us), sizes below the
/// fidelity table's 64 KiB..256 MiB. Not a fit of any point of the table. The fit depends on what
/// the kernels model (without the modelled start barrier it gives 2.18 + 1.13 us per device: the
/// barrier is most of the per-device part), so it is refitted the same way when they change.
/// Charged once per tt-metal device operation the op is made of (device_ops): all_reduce twice.
struct OpOverhead {
    static constexpr double fixed_us = 2.48;
    static constexpr double per_device_us = 0.33;
    static constexpr double us(uint32_t devices) { return fixed_us + per_device_us * devices; }
};

/// tt-metal device operations (programs dispatched to every device) of one call: all_reduce_async
/// runs reduce_scatter_minimal_async and then all_gather_async (two programs, each with its own
/// start barrier); the other ops are one. Not fitted: a count of tt-metal's programs.
inline uint32_t device_ops(const Options& o) { return o.op == "all_reduce" ? 2 : 1; }

/// Modelled time of one op in us on the Wormhole model: (makespan of warmup + iters - makespan of
/// warmup only) / iters, as coll_perf, without OpOverhead. `r` gets the checked run; `trace`, if
/// given, records it (docs/emulation-traces.md).
inline double timed_us(const Options& o, Result& r, emu::Trace* trace = nullptr) {
    auto model = emu::wormhole_model();
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(600000);
    ro.dirty_l1 = emu::RunOptions::DirtyL1::off;
    ro.timing = model.get();
    ro.trace = trace;
    r = run(o, ro);
    ro.trace = nullptr;
    if (!r.error.empty()) return 0;
    Options base = o;
    base.iters = 0;
    Result b = run(base, ro);
    if (!b.error.empty()) {
        r.error = "baseline: " + b.error;
        return 0;
    }
    const emu::vtime_t m1 = r.report.makespan, m0 = std::min(b.report.makespan, m1);
    return double(m1 - m0) / std::max(1u, o.iters) / r.report.ticks_per_second * 1e6;
}

}  // namespace kccl::tools::ttm_fabric
