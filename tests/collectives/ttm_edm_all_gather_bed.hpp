// Host side of tests/collectives/ttm_edm_all_gather.hpp: builds an emulated ring of
// chips with an EDM on each end of every link (2W channels per EDM: W clockwise, W anticlockwise,
// laid out by kccl's EDM builder in the L1 a Wormhole Ethernet core leaves free), four kernels per
// logical worker (RR, RW, SR, SW on emulated cores of their own), tensors in DRAM, and runs one
// all_gather per program (warmup + iterations), every program's output in a DRAM tensor of its own.
// Host code (std, exceptions).
#pragma once

#include "ttm_edm_all_gather.hpp"

#include <edm/host/builder.hpp>
#include <emulation/emulation.hpp>
#include <testing/inputs.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace kccl::ttm::host {

namespace emu = kccl::emu;
namespace eh = kccl::edm::host;

/// Free L1 of a Wormhole Ethernet core for the EDM's channels (tt-metal eth_l1_address_map.h
/// leaves ~106 KiB unreserved; docs/emulation-timing.md).
inline constexpr uint32_t kEthFreeBytes = 106 * 1024;
inline constexpr uint32_t kEthRegionBase = 0x1000, kEthReserved = 0x800;

/// One EDM of `2 * workers` channels of `slots` x `packet` bytes, laid out by the EDM builder in
/// the Wormhole Ethernet core's free L1: true when it fits (the builder's own check).
inline bool edm_fits(uint32_t workers, uint32_t slots, uint32_t packet) {
    eh::EdmEnd x, y;
    for (uint32_t c = 0; c < 2 * workers; ++c) {
        eh::ChannelSpec ch;
        ch.buffers = slots;
        ch.packet_bytes = packet;
        ch.message_count = 1;
        ch.workers = {{1 + c, 1, 0x100}};
        if (c % 2 == 0) x.add_sender(ch), y.add_receiver(ch);
        else x.add_receiver(ch), y.add_sender(ch);
    }
    try {
        (void)eh::build_link(x, y, {kEthRegionBase, kEthFreeBytes, kEthReserved});
        return true;
    } catch (const eh::ConfigError&) {
        return false;
    }
}

/// tt-metal's rule for the EDM packet: the largest whole number of pages such that every channel's
/// buffers fit the Ethernet core (round_down(free / channels / slots, page)), checked here with the
/// EDM builder (which also counts the semaphores, note slots and sync words).
inline uint32_t largest_fitting_packet(uint32_t workers, uint32_t slots, uint32_t page) {
    for (uint32_t p = (kEthFreeBytes / (2 * workers * slots)) / page * page; p >= page; p -= page)
        if (edm_fits(workers, slots, p)) return p;
    throw std::invalid_argument("ttm all_gather: not even one page per slot fits the Ethernet core");
}

struct Options {
    uint32_t chips = 4;
    uint32_t bytes_per_chip = 4096;  ///< float elements x 4
    uint32_t workers = 4;            ///< W per direction per link (tt-metal: num_workers_per_link = 2W)
    uint32_t slots = 2;              ///< EDM buffers per channel (tt-metal's num_edm_buffers_per_channel default: 2)
    uint32_t max_packet = 0;         ///< 0: largest_fitting_packet(workers, slots, page)
    uint32_t page = 4096;            ///< a float 32 x 32 tile
    uint32_t iterations = 3;         ///< timed programs after the warmup program
    double launch_us = 0;
    uint32_t dram_read_cycles = 0, dram_write_cycles = 0;
    /// How the bidirectional ring splits the work: meet_middle — every fragment whole, clockwise
    /// ring_size / 2 hops and anticlockwise (ring_size - 1) / 2; split_halves — half of every
    /// fragment each way, all ring_size - 1 hops (CCL developer guide, "Bidirectionality": "the current
    /// approach ... sends half of each tensor in opposite directions fully around the ring").
    enum class Bidir { meet_middle, split_halves };
    Bidir bidir = Bidir::meet_middle;
    /// How a direction's bytes are divided among its W workers: tt_metal — whole chunks (packets of
    /// pages) dealt out as tt-metal's all_gather does (each worker full_chunks / W, the first
    /// full_chunks % W one more, the remaining pages to the next worker; workers without a chunk
    /// idle, their channels absent); equal — W equal slices (each cut into chunks).
    enum class Split { tt_metal, equal };
    Split split = Split::tt_metal;
    /// The CB between the reader and the writer of one Tensix core: shared — one L1 on the
    /// hardware, so the writer takes the reader's bytes with no modelled transfer (a host copy
    /// between the two emulated cores' memories; only the semaphores go over the NoC); noc — the
    /// reader pushes the chunk into the writer's L1 with a NoC write (a transfer tt-metal does not make).
    enum class Cb { shared, noc };
    Cb cb = Cb::shared;
    uint64_t seed = 7;
    /// Non-zero: an UNTIMED run under the emulation's adversary with this seed (random schedule,
    /// delayed and split deliveries within the contract), to check the kernels' protocol, not time.
    uint64_t adversary_seed = 0;
    /// The engine of an adversarial run (a timed run is always the fiber engine): threads runs
    /// every kernel on an OS thread, so TSan checks the kernels' ordering on the host memory model.
    emu::Engine engine = emu::Engine::fibers;
};

/// Input element i of chip r (any bits: the op moves data, never combines it).
inline uint32_t input_word(uint64_t seed, uint32_t r, uint32_t i) { return uint32_t(kccl::testing::hash(seed, r, i)); }

struct Result {
    emu::RunReport report;
    uint64_t wrong = 0;  ///< wrong output words over every program's output (and bad lengths seen)
    uint32_t packet = 0;
};

inline Result run(const Options& o) {
    const uint32_t N = o.chips, W = o.workers, B = o.bytes_per_chip;
    if (N < 3) throw std::invalid_argument("ttm all_gather: a ring of 3 chips at least");
    const bool halves = o.bidir == Options::Bidir::split_halves;
    const uint32_t max_packet = o.max_packet ? o.max_packet : largest_fitting_packet(W, o.slots, o.page);
    // The bytes each direction moves of every fragment, and worker w's part of them.
    const uint32_t R = halves ? B / 2 : B;
    if (R % 16 || (halves && B % 32)) throw std::invalid_argument("ttm all_gather: bytes per chip must be a multiple of 16 (32 split)");
    struct Part {
        uint32_t off = 0, bytes = 0, chunk = 0;
    };
    std::vector<Part> parts(W);
    if (o.split == Options::Split::equal) {
        if (R % (16 * W)) throw std::invalid_argument("ttm all_gather: bytes per chip must split into 16-byte slices");
        for (uint32_t w = 0; w < W; ++w) parts[w] = {w * (R / W), R / W, std::min(max_packet, R / W)};
    } else {
        const uint32_t full = R / max_packet, rem = R % max_packet;
        uint32_t at = 0;
        for (uint32_t w = 0; w < W; ++w) {
            const uint32_t n = full / W + (w < full % W ? 1 : 0);
            const uint32_t bytes = n * max_packet + (rem && w == full % W ? rem : 0);
            parts[w] = {at, bytes, n ? max_packet : (bytes + 15u) & ~15u};
            at += bytes;
        }
    }
    uint32_t chunk = 0;  // the largest packet
    for (const Part& q : parts) chunk = std::max(chunk, q.chunk);
    const uint32_t hops[2] = {halves ? N - 1 : N / 2, halves ? N - 1 : (N - 1) / 2};  // clockwise, anticlockwise
    const uint32_t programs = 1 + o.iterations;

    // L1 of a role core: semaphores at 0x100.., stage (readers) / CB (writers) from 0x1000.
    constexpr uint32_t sem_filled = 0x100, sem_credit = 0x104, sem_committed = 0x108, sem_edm = 0x10C;
    const uint32_t stage = 0x1000, cb = 0x1000 + cb_slots * chunk;
    emu::ChipSpec chip;
    chip.grid_w = 8;
    chip.grid_h = (2 * W * 4 + 7) / 8;
    chip.worker_l1_bytes = (0x1000 + 2 * cb_slots * chunk + 0xFFF) & ~0xFFFu;
    chip.eth_cores = 2;
    chip.eth_l1_bytes = kEthRegionBase + kEthFreeBytes;
    const uint32_t in_at = 0, out_at = (B + 0xFFF) & ~0xFFFu, out_bytes = N * B;
    chip.dram_bytes = out_at + programs * ((out_bytes + 0xFFF) & ~0xFFFu);
    emu::Cluster cluster(emu::topology::ring(N, 1, chip));
    emu::Launcher launch(cluster);
    const uint32_t dram_x = 0, dram_y = chip.grid_h + 1;
    auto out_of = [&](uint32_t p) { return out_at + p * ((out_bytes + 0xFFF) & ~0xFFFu); };

    // Tensors: every chip's input in DRAM (the host's EnqueueWriteBuffer), every output garbage.
    for (uint32_t r = 0; r < N; ++r) {
        std::vector<uint32_t> in(B / 4);
        for (uint32_t i = 0; i < B / 4; ++i) in[i] = input_word(o.seed, r, i);
        cluster.write(cluster.chip(r).dram(), in_at, in.data(), B);
        std::vector<uint32_t> junk(out_bytes / 4);
        for (uint32_t p = 0; p < programs; ++p) {
            for (uint32_t i = 0; i < junk.size(); ++i) junk[i] = input_word(o.seed ^ 0xD1A7, 1000 + r * programs + p, i);
            cluster.write(cluster.chip(r).dram(), out_of(p), junk.data(), out_bytes);
        }
    }

    auto role_core = [&](uint32_t r, uint32_t d, uint32_t w, uint32_t q) {  // q: 0 RR, 1 RW, 2 SR, 3 SW
        const uint32_t id = (d * W + w) * 4 + q;
        return cluster.chip(r).worker(id % chip.grid_w, id / chip.grid_w);
    };

    // EDMs: link r -> r+1; channel 2w clockwise (r sends), 2w+1 anticlockwise (r+1 sends).
    struct LinkEdm {
        emu::CoreCoord ea, eb;
        eh::LinkPlan plan;
    };
    std::vector<LinkEdm> links;
    for (uint32_t r = 0; r < N; ++r) {
        const uint32_t s = (r + 1) % N;
        const auto lb = cluster.links_between(r, s);
        if (lb.empty()) throw std::logic_error("ttm all_gather: no link between neighbours");
        eh::EdmEnd ea, eb;
        for (uint32_t w = 0; w < W; ++w) {
            for (uint32_t d = 0; d < 2; ++d) {
                eh::ChannelSpec ch;
                ch.buffers = o.slots;
                if (parts[w].bytes == 0) continue;  // an idle worker: no channel, no kernels
                ch.packet_bytes = parts[w].chunk;
                ch.message_count = hops[d] * ((parts[w].bytes + parts[w].chunk - 1) / parts[w].chunk);
                const uint32_t snd = d == 0 ? r : s, rcv = d == 0 ? s : r;
                const emu::CoreCoord sw = role_core(snd, d, w, 3), rr = role_core(rcv, d, w, 0);
                eh::ChannelSpec cs = ch, cr = ch;
                cs.workers = {{sw.x, sw.y, sem_edm}};
                cr.workers = {{rr.x, rr.y, sem_edm}};
                if (d == 0) ea.add_sender(cs), eb.add_receiver(cr);
                else ea.add_receiver(cr), eb.add_sender(cs);
            }
        }
        links.push_back({lb[0].first, lb[0].second, eh::build_link(ea, eb, {kEthRegionBase, kEthFreeBytes, kEthReserved})});
    }

    auto add_program = [&](uint32_t p) {
        for (uint32_t r = 0; r < N; ++r)
            for (uint32_t d = 0; d < 2; ++d)
                for (uint32_t w = 0; w < W; ++w) {
                    std::vector<uint32_t> base(a::count, 0);
                    base[a::rank] = r;
                    base[a::ranks] = N;
                    base[a::hops] = hops[d];
                    base[a::cw] = d == 0;
                    base[a::frag_bytes] = B;
                    base[a::slice_off] = (halves ? d * R : 0) + parts[w].off;
                    base[a::slice_bytes] = parts[w].bytes;
                    base[a::chunk] = parts[w].chunk;
                    base[a::page] = o.page;
                    base[a::dram_x] = dram_x;
                    base[a::dram_y] = dram_y;
                    base[a::input] = in_at;
                    base[a::output] = out_of(p);
                    base[a::local_copy] = halves || d == 0;  // the own fragment's part this direction moves
                    base[a::stage] = stage;
                    base[a::cb] = cb;
                    base[a::sem_filled] = sem_filled;
                    base[a::sem_credit] = sem_credit;
                    base[a::sem_committed] = sem_committed;
                    base[a::shared_cb] = o.cb == Options::Cb::shared;
                    const emu::CoreCoord rr = role_core(r, d, w, 0), rw = role_core(r, d, w, 1), sr = role_core(r, d, w, 2),
                                         sw = role_core(r, d, w, 3);
                    // The EDM channel args: RR on the link it receives from, SW on the link it sends on.
                    // Clockwise: receive on link r-1 -> r (end b), send on link r -> r+1 (end a).
                    const uint32_t in_link = d == 0 ? (r + N - 1) % N : r, out_link = d == 0 ? r : (r + N - 1) % N;
                    if (parts[w].bytes == 0) continue;
                    uint32_t ch = d;  // channel of (w, d): 2 per active worker before w
                    for (uint32_t v = 0; v < w; ++v) ch += parts[v].bytes ? 2 : 0;
                    const LinkEdm& li = links[in_link];
                    const LinkEdm& lo = links[out_link];
                    const bool in_is_b = d == 0, out_is_a = d == 0;
                    const emu::CoreCoord ei = in_is_b ? li.eb : li.ea, eo = out_is_a ? lo.ea : lo.eb;
                    auto with = [&](std::vector<uint32_t> v, emu::CoreCoord peer, const std::vector<uint32_t>& edm) {
                        v[a::peer_x] = peer.x;
                        v[a::peer_y] = peer.y;
                        for (size_t i = 0; i < edm.size(); ++i) v[a::edm + i] = edm[i];
                        return v;
                    };
                    const std::vector<uint32_t> none(edm::args::w_count, 0);
                    auto rr_args = with(base, rw, li.plan.worker_args(in_is_b ? eh::Side::b : eh::Side::a, ch, 0, ei.x, ei.y));
                    auto rw_args = with(base, rr, none);
                    rw_args[a::fwd_x] = sr.x;
                    rw_args[a::fwd_y] = sr.y;
                    auto sr_args = with(base, sw, none);
                    auto sw_args = with(base, sr, lo.plan.worker_args(out_is_a ? eh::Side::a : eh::Side::b, ch, 0, eo.x, eo.y));
                    for (const emu::CoreCoord c : {rr, rw, sr, sw})
                        for (uint32_t sem : {sem_filled, sem_credit, sem_committed, sem_edm}) launch.init_word(c, sem, 0);
                    const bool sh = o.cb == Options::Cb::shared;
                    const detail::SharedCb rcb{sh ? cluster.l1(rr).data() : nullptr, sh ? cluster.l1(rw).data() : nullptr};
                    const detail::SharedCb scb{sh ? cluster.l1(sr).data() : nullptr, sh ? cluster.l1(sw).data() : nullptr};
                    launch.add(rr, [rcb](auto& h) { return receiver_reader(h, rcb); }, rr_args);
                    launch.add(rw, [rcb](auto& h) { return receiver_writer(h, rcb); }, rw_args);
                    launch.add(sr, [scb](auto& h) { return sender_reader(h, scb); }, sr_args);
                    launch.add(sw, [scb](auto& h) { return sender_writer(h, scb); }, sw_args);
                }
        auto edm_kernel = [](auto& h) -> uint64_t {
            kccl::edm::Edm<kccl::edm::DefaultConfig> e;
            const kccl::edm::Status st = e.run(h);
            return st == kccl::edm::Status::ok ? 0 : 1000000 + uint32_t(st);
        };
        for (const LinkEdm& l : links) {
            launch.add(l.ea, edm_kernel, l.plan.edm_args(eh::Side::a));
            launch.add(l.eb, edm_kernel, l.plan.edm_args(eh::Side::b));
        }
    };
    for (uint32_t p = 0; p < programs; ++p) {
        if (p) launch.next_program();
        add_program(p);
    }

    emu::WormholeOptions wo;
    wo.program_launch_ps = emu::vtime_t(o.launch_us * 1e6 + 0.5);
    wo.dram_read_cycles = o.dram_read_cycles;
    wo.dram_write_cycles = o.dram_write_cycles;
    auto model = emu::wormhole_model(wo);
    emu::RunOptions ro;
    ro.timing = o.adversary_seed ? nullptr : model.get();
    if (o.adversary_seed) {
        ro.adversary.enabled = true;
        ro.adversary.seed = o.adversary_seed;
        ro.engine = o.engine;
        ro.watchdog = std::chrono::milliseconds(20000);
    }
    ro.dirty_l1 = emu::RunOptions::DirtyL1::on;  // nothing may rely on L1 it did not write
    // tt-metal's all-gather kernels write a page and then increment the EDM's semaphore on the same
    // core with no flush between them: they rely on N1 as observed, not on what tt-metal's NoC
    // documentation promises (docs/contract.md, "Ordering profiles"). This reproduction keeps
    // their code, so it runs under the observed profile whatever KCCL_EMU_ORDERING says.
    ro.ordering = emu::OrderingProfile::observed;
    Result res;
    res.packet = chunk;
    res.report = launch.run(ro);
    // Every program's output on every chip: fragment f is chip f's input (every worker's slice of it).
    for (const emu::CoreResult& c : res.report.cores) res.wrong += c.value;
    for (uint32_t r = 0; r < N; ++r) {
        const auto dram = cluster.l1(cluster.chip(r).dram());
        for (uint32_t p = 0; p < programs; ++p)
            for (uint32_t f = 0; f < N; ++f)
                for (uint32_t i = 0; i < B / 4; ++i) {
                    uint32_t got;
                    std::memcpy(&got, dram.data() + out_of(p) + size_t(f) * B + 4 * i, 4);
                    res.wrong += got != input_word(o.seed, f, i);
                }
    }
    return res;
}

}  // namespace kccl::ttm::host
