// kccl/emulation/timing.hpp — timing models for the emulation's virtual clock.
//
// A TimingModel turns what an emulated core does into modelled time on a target: how long the
// issuing core is busy with an operation (issue_cost), and when a NoC write, a NoC read or an
// Ethernet packet arrives (noc_arrival, noc_read_done, eth_arrival). The fiber engine calls it
// once per operation, in the order of modelled time, from one host thread; the model keeps
// occupancy state (ports, links, tx queues) so that traffic sharing a resource serialises.
//
// Two models ship:
//   wormhole_model()  ticks are picoseconds. Ethernet: 12.5 GB/s per direction per link, ~50 B
//                     overhead per <= 1500 B frame, a fixed link latency; NoC: a per-hop latency
//                     and 32 B per cycle at the injection and ejection ports; DRAM: 12 channels
//                     at tt-npe's port rates plus an access latency (0 unless set); issue costs in
//                     RISC-V cycles at 1 GHz. Every figure is a field of WormholeOptions with its
//                     source (or "assumption") beside it; docs/emulation-timing.md.
//   wafer_model()     ticks are PE cycles (the Cerebras thesis's model of the Cerebras WSE): router <->
//                     processor latency T_R (default 2), one cycle per router hop, one 32-bit
//                     wavelet per cycle per link direction, dimension-ordered (X then Y) routes.
//                     Driven per wavelet it reproduces T_message(P,B) = 2 T_R + P + B and
//                     T_chain(P,B) = 2 (P-1)(T_R+1) + B exactly (tests/emulation/timing_test.cpp).
//
// Conventions shared by both models (the engine relies on them):
//   * The engine charges issue_cost(core, op, bytes) first, then calls noc_arrival / eth_arrival
//     with t = the issuer's clock AFTER the charge (the moment the operation has left the core).
//   * An arrival time is the moment the data is visible in the destination's L1; a wait satisfied
//     by it returns at max(waiter's clock, arrival).
//   * Under ThreadSanitizer every fiber is its own TSan context and a fiber switch is not a
//     synchronisation (so that races between emulated cores are reported); the models' and the
//     trace's state, shared by all fibers of the one host thread, is therefore accessed inside
//     TSan ignore regions (detail::IgnoreScope, platform.hpp), as the scheduler's own
//     bookkeeping is (model and trace calls never block, so a region never spans a switch).
//   * Occupancy is virtual cut-through with unbounded buffers: a message waits for a busy link or
//     port, never for space downstream (no backpressure). Calls must come in non-decreasing `t`
//     per resource for the queueing to be exact; the fiber engine's earliest-event-first order
//     guarantees that.
#pragma once

#include "cluster.hpp"
#include "platform.hpp"
#include "topology.hpp"

#include <common/direction.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>


namespace kccl::emu {

using vtime_t = uint64_t;  ///< model ticks; the model says what a tick is (unit())

/// What a core's clock is charged for (issue cost on the issuer).
enum class Op : uint8_t {
    noc_write,
    noc_read,
    noc_inline_write,
    sem_inc,
    sem_set,
    sem_wait_check,
    noc_barrier,
    eth_send,
    eth_txq_check,
    context_switch,
    idle_poll,
    l1_access,  ///< per call, bytes given
    compute_eltwise,  ///< an element-wise combine on the Tensix compute engine; the size is ELEMENTS, not bytes
    route_2d_hop,     ///< a 2D fabric router's per-packet instruction work (hal::note_work, Work::route_2d_hop)
};
inline constexpr uint32_t op_count = uint32_t(Op::route_2d_hop) + 1;

inline const char* to_string(Op op) {
    switch (op) {
        case Op::noc_write: return "noc_write";
        case Op::noc_read: return "noc_read";
        case Op::noc_inline_write: return "noc_inline_write";
        case Op::sem_inc: return "sem_inc";
        case Op::sem_set: return "sem_set";
        case Op::sem_wait_check: return "sem_wait_check";
        case Op::noc_barrier: return "noc_barrier";
        case Op::eth_send: return "eth_send";
        case Op::eth_txq_check: return "eth_txq_check";
        case Op::context_switch: return "context_switch";
        case Op::idle_poll: return "idle_poll";
        case Op::l1_access: return "l1_access";
        case Op::compute_eltwise: return "compute_eltwise";
        case Op::route_2d_hop: return "route_2d_hop";
    }
    return "?";
}

/// Busy time of one Ethernet tx queue (and the bytes / packets it sent) during a run.
struct LinkBusy {
    CoreCoord eth;
    uint32_t queue;
    vtime_t busy;
    uint64_t bytes;
    uint64_t packets;
};

/// One instance per run; not thread-safe (the fiber engine is one thread).
class TimingModel {
public:
    virtual ~TimingModel() = default;
    virtual const char* name() const noexcept = 0;         ///< "wormhole", "wafer"
    virtual const char* unit() const noexcept = 0;         ///< "ps" or "cycle"
    virtual double ticks_per_second() const noexcept = 0;  ///< 1e12 for ps; the PE clock for cycles
    /// Start of a run: grid sizes, clear all occupancy.
    virtual void reset(const Cluster& cluster) { reset(cluster.spec()); }
    /// Same, from the spec alone (tests drive a model without building a Cluster).
    virtual void reset(const ClusterSpec& spec) = 0;
    /// Time the issuing core spends issuing `op` of `bytes` (its clock advances by this).
    virtual vtime_t issue_cost(CoreCoord core, Op op, uint32_t bytes) = 0;
    /// When a NoC write / inline write / sem_inc of `bytes` issued at `t` from src lands in dst's
    /// L1 (same chip). Keeps occupancy: call once per operation.
    virtual vtime_t noc_arrival(CoreCoord src, CoreCoord dst, uint32_t bytes, vtime_t t) = 0;
    /// When a NoC read of `bytes` issued at `t` by `reader` from `src` has landed in reader's L1.
    virtual vtime_t noc_read_done(CoreCoord reader, CoreCoord src, uint32_t bytes, vtime_t t) = 0;
    /// A NoC multicast of `bytes` from src issued at t: out[k] = when it is visible at dsts[k].
    /// This default sends one unicast per destination, in order; a model that knows its NoC's
    /// multicast (WormholeModel) overrides it.
    virtual void noc_mcast_arrivals(CoreCoord src, const CoreCoord* dsts, size_t n, uint32_t bytes, vtime_t t,
                                    vtime_t* out) {
        for (size_t k = 0; k < n; ++k) out[k] = noc_arrival(src, dsts[k], bytes, t);
    }
    /// An Ethernet packet of `bytes` sent at `t` by Ethernet core `eth` on tx queue `q`: its
    /// arrival time at the peer's L1. Back-to-back packets on one link direction serialise.
    virtual vtime_t eth_arrival(CoreCoord eth, uint32_t q, uint32_t bytes, vtime_t t) = 0;
    /// Until when eth_txq_is_busy(q) reports busy for `eth` (the queue's last packet has left).
    virtual vtime_t eth_txq_free(CoreCoord eth, uint32_t q) const = 0;
    /// Per-tx-queue busy time, bytes and packets since reset (only queues that sent something).
    virtual void link_usage(std::vector<LinkBusy>& out) const = 0;
    /// Host-side cost of launching a program on a chip (dispatch, kernel binaries and runtime
    /// arguments written, cores released): every kernel of a program starts this long after the
    /// chip's previous program ended (the launcher charges it; Launcher::next_program). 0 unless
    /// the model is configured with one.
    virtual vtime_t program_launch() const { return 0; }
    /// The model runs with its default options, so that its name alone recreates it (a replay
    /// string names the model: RunOptions' "timing=<name>"; see launcher.hpp, replay_string).
    virtual bool default_options() const { return false; }
};

// ------------------------------------------------------------------------------------------------
// Wormhole

/// Figures of the Wormhole model. Sources: tt-metal's "Basic Ethernet Multichip" guide and its CCL
/// developer guide (tech_reports/EthernetMultichip/); every figure marked "assumption" is not published
/// and was chosen as explained in docs/emulation-timing.md.
struct WormholeOptions {
    double clock_hz = 1e9;                  ///< RISC-V / NoC clock (aiclk ~1 GHz; tt-metal's CCL developer guide)
    // Ethernet
    double eth_bytes_per_second = 12.5e9;   ///< per direction per link (tt-metal's Ethernet guide)
    uint32_t eth_frame_payload = 1500;      ///< payload bytes per frame (tt-metal's Ethernet guide)
    uint32_t eth_frame_overhead = 50;       ///< headers, FEC, CRC per frame (tt-metal's Ethernet guide)
    vtime_t eth_link_latency_ps = 540'000;  ///< subsystem + wire after the last byte is serialised:
                                            ///< the Ethernet guide estimates ~500 ns; 540 puts the ring ping at
                                            ///< ~654 ns/hop and one-way at ~608 ns (docs/emulation-timing.md)
    uint32_t eth_tx_queues = 2;             ///< tx command queues per Ethernet core
    uint32_t eth_txq_depth = 2;             ///< commands a tx queue holds, the one on the wire included:
                                            ///< the next send is accepted while a packet is serialised
                                            ///< (Ethernet guide: keep >= 8 KiB outstanding in the tx queues)
    // NoC
    uint32_t noc_hop_cycles = 9;            ///< per router hop (assumption)
    uint32_t noc_endpoint_cycles = 20;      ///< request setup at source + L1 write at destination (assumption)
    uint32_t noc_bytes_per_cycle = 32;      ///< 256-bit flit per cycle per port (published flit width)
    // DRAM endpoint (CoreKind::dram, NoC coordinate (0, grid_h + 1); it stands for the chip's DRAM
    // channels). Transfers to / from it are NoC transfers whose DRAM side runs at one channel's rate
    // on the channel free first, and that pay an access latency in the DRAM controller
    // (docs/emulation-timing.md, Wormhole).
    double dram_read_bytes_per_cycle = 23.2;   ///< tt-npe's Wormhole model (tenstorrent/tt-npe,
                                               ///< data/device/models/wormhole_b0.yaml): DRAM injection
                                               ///< rate 23.2 B/cycle; cf. 288 GB/s / 12 channels = 24 GB/s
    double dram_write_bytes_per_cycle = 24.0;  ///< same source: DRAM absorption rate 24.0 B/cycle
    uint32_t dram_channels = 12;     ///< GDDR6 channels per chip (6 banks x 2, tt-isa-documentation;
                                     ///< "12 DRAM channels at 288 GB/s", docs/emulation-timing.md). Pages of an interleaved
                                     ///< tensor spread over them: each DRAM transfer takes the channel
                                     ///< that is free first (the one DRAM endpoint stands for all of them)
    uint32_t dram_read_cycles = 0;   ///< access latency of a read in the DRAM controller, request in to
                                     ///< data out; NOT published: 0 by default, a caller that models
                                     ///< tensors in DRAM sets it and names its source (calibrated)
    uint32_t dram_write_cycles = 0;  ///< a write, data in to committed (what a write barrier waits
                                     ///< for); NOT published, as dram_read_cycles
    // Issue costs in cycles (assumptions: instruction counts of the tt-metal inline functions).
    uint32_t cost_noc_write = 24;
    uint32_t cost_noc_read = 24;
    uint32_t cost_noc_inline_write = 16;
    uint32_t cost_sem_inc = 16;
    uint32_t cost_sem_set = 2;
    uint32_t cost_sem_wait_check = 6;       ///< one poll: L1 load, compare, branch
    uint32_t cost_noc_barrier = 6;
    uint32_t cost_eth_send = 60;            ///< Ethernet guide: initiating a send ~80 ns "including timer
                                            ///< overheads"; 60 without the timer (assumption)
    uint32_t cost_eth_txq_check = 4;
    uint32_t cost_context_switch = 100;     ///< run_routing() with nothing to do
    uint32_t cost_idle_poll = 10;
    uint32_t cost_l1_access_base = 2;       ///< l1_access: base + bytes / l1_bytes_per_cycle
    uint32_t l1_bytes_per_cycle = 4;        ///< one 32-bit load or store per cycle
    // The Tensix compute engine's element-wise combine (Op::compute_eltwise, hal::compute_reduce):
    // unpackers L1 -> SrcA / SrcB, the matrix unit (FPU), the packer Dst -> L1.
    uint32_t compute_elems_per_cycle = 128; ///< FPU ELWADD: one 8 x 16 block per cycle, 0.128 TFLOP/s per
                                            ///< FPU at 1 GHz (tt-isa-documentation, WormholeB0 MatrixUnit.md,
                                            ///< "Performance"; ELWADD.md). Unpack and pack are taken to keep up
                                            ///< (no per-stage figure is published): ASSUMPTION
    uint32_t cost_compute_call = 40;        ///< per call: CB handshakes (cb_wait_front / cb_reserve_back /
                                            ///< push / pop between the data-movement and compute kernels), the
                                            ///< Dst acquire / release, the FPU's 5-cycle latency: ASSUMPTION, not fitted
    /// A 2D fabric router's per-packet work beyond a 1D router's that no contract operation stands
    /// for (Op::route_2d_hop): decoding the hop command (tt-metal's 2D router switches over 16
    /// hop commands, each with its own downstream-space checks) and programming a full NoC write
    /// where its 1D router reuses a stateful one. No instruction-level figure is published, so it
    /// is CALIBRATED from the published per-hop latencies (tt-metal's CCL bandwidth notes, Wormhole:
    /// 1D 711 ns, 2D 874 ns): the 2D hop costs 163 ns more than the 1D hop; the model's own
    /// structure (four sender channels polled, the 80-byte mesh header, the routing-table read)
    /// accounts for 27 ns of that; the remaining 136 ns are charged here, once per packet per hop.
    uint32_t cost_route_2d_hop = 136;
    // Program launch (Launcher::next_program): NOT published per program; 0 by default, so a
    // run's time is its kernels' time only. A caller that models tt-metal's measured op (program
    // dispatch + kernels) sets it and says where its figure comes from (the small-tensor
    // all_gather fidelity test calibrates it from the fit's intercept; docs/emulation-timing.md).
    vtime_t program_launch_ps = 0;

    bool operator==(const WormholeOptions&) const = default;
};

namespace detail {

inline vtime_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

inline uint32_t manhattan(CoreCoord a, CoreCoord b) {
    const uint32_t dx = a.x > b.x ? a.x - b.x : b.x - a.x;
    const uint32_t dy = a.y > b.y ? a.y - b.y : b.y - a.y;
    return dx + dy;
}

/// Per-Ethernet-core state: the outgoing direction of its link and its tx queues.
struct EthTx {
    vtime_t link_free = 0;
    std::vector<vtime_t> queue_free;               ///< when the queue's newest packet has left
    std::vector<std::vector<vtime_t>> queue_done;  ///< per queue: finish times of its last `depth` packets (ring)
    std::vector<uint64_t> queue_seq;
    std::vector<vtime_t> queue_busy;
    std::vector<uint64_t> queue_bytes;
    std::vector<uint64_t> queue_packets;
};

}  // namespace detail

class WormholeModel final : public TimingModel {
public:
    explicit WormholeModel(WormholeOptions o = {}) : o_(o) {
        if (o_.clock_hz <= 0 || o_.eth_bytes_per_second <= 0 || o_.eth_frame_payload == 0 ||
            o_.noc_bytes_per_cycle == 0 || o_.l1_bytes_per_cycle == 0 || o_.compute_elems_per_cycle == 0 || o_.eth_tx_queues == 0 ||
            o_.eth_txq_depth == 0 || o_.dram_channels == 0 || !(o_.dram_read_bytes_per_cycle > 0) || !(o_.dram_write_bytes_per_cycle > 0))
            throw EmulationError(
                "wormhole_model: clock_hz, eth_bytes_per_second, eth_frame_payload, noc_bytes_per_cycle, "
                "l1_bytes_per_cycle, compute_elems_per_cycle, eth_tx_queues, eth_txq_depth, dram_channels, dram_read_bytes_per_cycle and "
                "dram_write_bytes_per_cycle must all be > 0");
        ps_per_cycle_ = 1e12 / o_.clock_hz;
    }
    const WormholeOptions& options() const { return o_; }

    const char* name() const noexcept override { return "wormhole"; }
    const char* unit() const noexcept override { return "ps"; }
    double ticks_per_second() const noexcept override { return 1e12; }

    using TimingModel::reset;
    void reset(const ClusterSpec& spec) override {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        chip_ = spec.chip;
        chips_ = spec.num_chips;
        // NoC endpoints: workers, Ethernet row, DRAM row, on a grid of width max(grid_w, eth_cores).
        grid_w_ = std::max(chip_.grid_w, chip_.eth_cores);
        grid_h_ = chip_.grid_h + 2;
        inject_free_.assign(size_t(chips_) * grid_w_ * grid_h_, 0);
        dram_free_.assign(size_t(chips_) * o_.dram_channels, 0);
        eject_free_.assign(inject_free_.size(), 0);
        eth_.assign(size_t(chips_) * chip_.eth_cores, {});
        for (auto& e : eth_) {
            e.queue_free.assign(o_.eth_tx_queues, 0);
            e.queue_done.assign(o_.eth_tx_queues, std::vector<vtime_t>(o_.eth_txq_depth, 0));
            e.queue_seq.assign(o_.eth_tx_queues, 0);
            e.queue_busy.assign(o_.eth_tx_queues, 0);
            e.queue_bytes.assign(o_.eth_tx_queues, 0);
            e.queue_packets.assign(o_.eth_tx_queues, 0);
        }
    }

    vtime_t cycles(uint64_t n) const { return vtime_t(double(n) * ps_per_cycle_ + 0.5); }

    vtime_t program_launch() const override { return o_.program_launch_ps; }
    bool default_options() const override { return o_ == WormholeOptions{}; }

    vtime_t issue_cost(CoreCoord, Op op, uint32_t bytes) override {
        switch (op) {
            case Op::noc_write: return cycles(o_.cost_noc_write);
            case Op::noc_read: return cycles(o_.cost_noc_read);
            case Op::noc_inline_write: return cycles(o_.cost_noc_inline_write);
            case Op::sem_inc: return cycles(o_.cost_sem_inc);
            case Op::sem_set: return cycles(o_.cost_sem_set);
            case Op::sem_wait_check: return cycles(o_.cost_sem_wait_check);
            case Op::noc_barrier: return cycles(o_.cost_noc_barrier);
            case Op::eth_send: return cycles(o_.cost_eth_send);
            case Op::eth_txq_check: return cycles(o_.cost_eth_txq_check);
            case Op::context_switch: return cycles(o_.cost_context_switch);
            case Op::idle_poll: return cycles(o_.cost_idle_poll);
            case Op::l1_access:
                return cycles(o_.cost_l1_access_base + detail::ceil_div(bytes, o_.l1_bytes_per_cycle));
            case Op::compute_eltwise:  // `bytes` is the element count here
                return cycles(o_.cost_compute_call + detail::ceil_div(bytes, o_.compute_elems_per_cycle));
            case Op::route_2d_hop: return cycles(o_.cost_route_2d_hop);
        }
        return 0;
    }

    /// Serialisation of `bytes` on the NoC ports, in ps.
    vtime_t noc_serialise(uint32_t bytes) const {
        return cycles(detail::ceil_div(std::max<uint32_t>(bytes, 1), o_.noc_bytes_per_cycle));
    }
    /// Latency of the head of a NoC packet from src to dst, in ps (no serialisation, no queueing).
    vtime_t noc_latency(CoreCoord src, CoreCoord dst) const {
        return cycles(uint64_t(o_.noc_endpoint_cycles) + uint64_t(o_.noc_hop_cycles) * detail::manhattan(src, dst));
    }

    /// Is `c` the chip's DRAM endpoint (NoC coordinate (0, grid_h + 1))?
    bool is_dram(CoreCoord c) const { return c.y == chip_.grid_h + 1; }
    /// Time the DRAM channel's port is busy with `bytes` (read: out of DRAM; write: into DRAM), in ps.
    vtime_t dram_serialise(uint32_t bytes, bool read) const {
        const double rate = read ? o_.dram_read_bytes_per_cycle : o_.dram_write_bytes_per_cycle;
        return vtime_t(std::ceil(double(std::max<uint32_t>(bytes, 1)) / rate) * ps_per_cycle_ + 0.5);
    }

    vtime_t noc_arrival(CoreCoord src, CoreCoord dst, uint32_t bytes, vtime_t t) override {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        return transfer(src, dst, bytes, t, "noc_arrival");
    }

    /// Multicast: the packet is injected ONCE (the source port is busy for one serialisation of
    /// `bytes`, not one per destination); the NoC routers replicate it, so each destination sees
    /// the head after its own hop distance from the source (Manhattan, noc_latency) and takes the
    /// packet through its own ejection port. Ejection ports are shared with unicast traffic.
    void noc_mcast_arrivals(CoreCoord src, const CoreCoord* dsts, size_t n, uint32_t bytes, vtime_t t,
                            vtime_t* out) override {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        check_noc(src, "noc_mcast_arrivals");
        const vtime_t ser = noc_serialise(bytes);
        vtime_t& in = inject_free_[index(src)];
        const vtime_t start = std::max(t, in);
        in = start + ser;
        for (size_t k = 0; k < n; ++k) {
            const CoreCoord dst = dsts[k];
            check_noc(dst, "noc_mcast_arrivals");
            if (dst.chip != src.chip || is_dram(dst))
                throw EmulationError("wormhole_model: noc_mcast_arrivals from " + to_string(src) + " to " + to_string(dst) +
                                     ": a multicast reaches Tensix cores of the sender's chip only");
            vtime_t& out_port = eject_free_[index(dst)];
            const vtime_t head_at_dst = start + noc_latency(src, dst);
            const vtime_t eject_end = std::max(head_at_dst, out_port) + ser;
            out_port = eject_end;
            out[k] = eject_end;
        }
    }

    vtime_t noc_read_done(CoreCoord reader, CoreCoord src, uint32_t bytes, vtime_t t) override {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        // A one-flit request travels to src, the data comes back as a write from src to reader;
        // a DRAM source answers after its access latency.
        const vtime_t req = transfer(reader, src, 16, t, "noc_read_done", /*request=*/true);
        const vtime_t ready = req + (is_dram(src) ? cycles(o_.dram_read_cycles) : 0);
        return transfer(src, reader, bytes, ready, "noc_read_done");
    }

    /// Bytes on the wire for a packet of `bytes`: payload plus overhead per (partial) frame.
    uint64_t eth_wire_bytes(uint32_t bytes) const {
        const uint64_t frames = std::max<uint64_t>(1, detail::ceil_div(bytes, o_.eth_frame_payload));
        return uint64_t(bytes) + frames * o_.eth_frame_overhead;
    }
    /// Serialisation time of a packet of `bytes` on one link direction, in ps.
    vtime_t eth_serialise(uint32_t bytes) const {
        return vtime_t(double(eth_wire_bytes(bytes)) * 1e12 / o_.eth_bytes_per_second + 0.5);
    }

    vtime_t eth_arrival(CoreCoord eth, uint32_t q, uint32_t bytes, vtime_t t) override {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        detail::EthTx& e = eth_state(eth, q, "eth_arrival");
        const vtime_t ser = eth_serialise(bytes);
        // In order within a queue; queues share the link direction.
        const vtime_t start = std::max({t, e.link_free, e.queue_free[q]});
        e.link_free = start + ser;
        e.queue_free[q] = start + ser;
        e.queue_done[q][e.queue_seq[q]++ % o_.eth_txq_depth] = start + ser;
        e.queue_busy[q] += ser;
        e.queue_bytes[q] += bytes;
        e.queue_packets[q] += 1;
        return start + ser + o_.eth_link_latency_ps;
    }

    /// The queue accepts a command once fewer than `eth_txq_depth` of its packets are unfinished:
    /// when the packet depth-1 places before the newest has left (the newest one, for depth 1).
    vtime_t eth_txq_free(CoreCoord eth, uint32_t q) const override {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        const detail::EthTx& e = const_cast<WormholeModel*>(this)->eth_state(eth, q, "eth_txq_free");
        const uint32_t d = o_.eth_txq_depth;
        if (e.queue_seq[q] < d) return 0;  // never held `depth` packets yet
        return e.queue_done[q][(e.queue_seq[q] - d) % d];  // the oldest of the last `depth` packets
    }
    /// When the newest packet of queue `q` has left (the queue is empty).
    vtime_t eth_txq_empty(CoreCoord eth, uint32_t q) const {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        return const_cast<WormholeModel*>(this)->eth_state(eth, q, "eth_txq_empty").queue_free[q];
    }

    void link_usage(std::vector<LinkBusy>& out) const override {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        for (uint32_t c = 0; c < chips_; ++c)
            for (uint32_t i = 0; i < chip_.eth_cores; ++i) {
                const detail::EthTx& e = eth_[size_t(c) * chip_.eth_cores + i];
                for (uint32_t q = 0; q < o_.eth_tx_queues; ++q)
                    if (e.queue_packets[q])
                        out.push_back({CoreCoord{c, i, chip_.grid_h}, q, e.queue_busy[q], e.queue_bytes[q],
                                       e.queue_packets[q]});
            }
    }

private:
    /// One NoC transfer of `bytes` from src to dst issued at t: arrival at dst. The DRAM endpoint's
    /// port moves data at the channel's rate (read out / write in) instead of 32 B per cycle, and a
    /// write into DRAM (not a read request) is visible (acknowledged) after the write latency.
    vtime_t transfer(CoreCoord src, CoreCoord dst, uint32_t bytes, vtime_t t, const char* what, bool request = false) {
        check_noc(src, what);
        check_noc(dst, what);
        if (src.chip != dst.chip)
            throw EmulationError(std::string("wormhole_model: ") + what + " from " + to_string(src) + " to " + to_string(dst) +
                                 ": a NoC transfer stays on one chip (cross-chip traffic goes over Ethernet)");
        const vtime_t ser_src = is_dram(src) ? dram_serialise(bytes, true) : noc_serialise(bytes);
        const vtime_t ser_dst = is_dram(dst) && !request ? dram_serialise(bytes, false) : noc_serialise(bytes);
        // A DRAM endpoint's port is the channel that is free first (reads and writes share it).
        vtime_t& in = is_dram(src) ? dram_channel(src.chip) : inject_free_[index(src)];
        const vtime_t start = std::max(t, in);
        in = start + ser_src;
        // The tail leaves the source at start + ser_src and reaches dst after the path latency;
        // the destination port takes one packet at a time, no faster than the source sends it.
        vtime_t& out = is_dram(dst) && !request ? dram_channel(dst.chip) : eject_free_[index(dst)];
        const vtime_t head_at_dst = start + noc_latency(src, dst);
        const vtime_t eject_start = std::max(head_at_dst, out);
        const vtime_t eject_end = std::max(eject_start + ser_dst, head_at_dst + ser_src);
        out = eject_end;
        return eject_end + (is_dram(dst) && !request ? cycles(o_.dram_write_cycles) : 0);
    }

    size_t index(CoreCoord c) const { return (size_t(c.chip) * grid_h_ + c.y) * grid_w_ + c.x; }
    vtime_t& dram_channel(uint32_t chip) {
        vtime_t* b = dram_free_.data() + size_t(chip) * o_.dram_channels;
        return *std::min_element(b, b + o_.dram_channels);
    }
    void check_noc(CoreCoord c, const char* what) const {
        if (c.chip >= chips_ || c.x >= grid_w_ || c.y >= grid_h_)
            throw EmulationError(std::string("wormhole_model: ") + what + ": " + to_string(c) +
                                 " is not a NoC endpoint of the cluster the model was reset for (" +
                                 std::to_string(chips_) + " chips, NoC grid " + std::to_string(grid_w_) + " x " +
                                 std::to_string(grid_h_) + "; call reset() first)");
    }
    detail::EthTx& eth_state(CoreCoord eth, uint32_t q, const char* what) {
        if (eth.chip >= chips_ || eth.y != chip_.grid_h || eth.x >= chip_.eth_cores)
            throw EmulationError(std::string("wormhole_model: ") + what + ": " + to_string(eth) +
                                 " is not an Ethernet core (Ethernet cores are (i, " + std::to_string(chip_.grid_h) +
                                 ") for i < " + std::to_string(chip_.eth_cores) + " on chips 0.." +
                                 std::to_string(chips_ ? chips_ - 1 : 0) + "; call reset() first)");
        if (q >= o_.eth_tx_queues)
            throw EmulationError(std::string("wormhole_model: ") + what + ": tx queue " + std::to_string(q) +
                                 " does not exist; queues are 0.." + std::to_string(o_.eth_tx_queues - 1));
        return eth_[size_t(eth.chip) * chip_.eth_cores + eth.x];
    }

    WormholeOptions o_;
    double ps_per_cycle_ = 1000;
    ChipSpec chip_{};
    uint32_t chips_ = 0, grid_w_ = 0, grid_h_ = 0;
    std::vector<vtime_t> inject_free_, eject_free_;
    std::vector<vtime_t> dram_free_;  ///< per chip, per DRAM channel: when its port is free
    std::vector<detail::EthTx> eth_;
};

inline std::unique_ptr<TimingModel> wormhole_model(WormholeOptions o = {}) {
    return std::make_unique<WormholeModel>(o);
}

// ------------------------------------------------------------------------------------------------
// Wafer-scale PE mesh (the Cerebras thesis)

/// Figures of the wafer model (the Cerebras thesis, "Communication Collectives for the Cerebras
/// Wafer-Scale Engine", ETH Zurich, 2023: "Performance Model").
struct WaferOptions {
    uint32_t t_r = 2;              ///< router <-> processor latency T_R in cycles (2 on the simulator)
    double clock_hz = 850e6;       ///< PE clock, only to convert cycles to seconds (assumption)
    uint32_t hop_cycles = 1;       ///< router to neighbouring router
    uint32_t bytes_per_wavelet = 4;  ///< one 32-bit wavelet per cycle per link direction
    // Issue costs in cycles. A send issues one wavelet per cycle (T_send = 1 per wavelet); a store
    // of a received value is one cycle (T_store = 1); memory: 64-bit load per cycle.
    uint32_t cost_sem_set = 1;
    uint32_t cost_sem_wait_check = 0;  ///< the wait itself is free; the arrival time carries the cost
    uint32_t cost_noc_barrier = 0;
    uint32_t cost_idle_poll = 1;
    uint32_t cost_context_switch = 1;
    uint32_t l1_bytes_per_cycle = 8;

    bool operator==(const WaferOptions&) const = default;
};

/// A PE router's ports: the links leaving it (N, S, E, W) and its two ramps (kccl::Dir's numbers).
inline constexpr uint32_t wafer_ports = 6;

class WaferModel final : public TimingModel {
public:
    explicit WaferModel(WaferOptions o = {}) : o_(o) {
        if (o_.clock_hz <= 0 || o_.hop_cycles == 0 || o_.bytes_per_wavelet == 0 || o_.l1_bytes_per_cycle == 0)
            throw EmulationError("wafer_model: clock_hz, hop_cycles, bytes_per_wavelet and l1_bytes_per_cycle must be > 0");
    }
    const WaferOptions& options() const { return o_; }

    const char* name() const noexcept override { return "wafer"; }
    bool default_options() const override { return o_ == WaferOptions{}; }
    const char* unit() const noexcept override { return "cycle"; }
    double ticks_per_second() const noexcept override { return o_.clock_hz; }

    using TimingModel::reset;
    void reset(const ClusterSpec& spec) override {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        w_ = spec.chip.grid_w;
        h_ = spec.chip.grid_h;
        chips_ = spec.num_chips;
        free_.assign(size_t(chips_) * w_ * h_ * wafer_ports, 0);
        busy_.assign(free_.size(), 0);
    }

    /// Wavelets in a message of `bytes` (at least one: a zero-byte signal still sends a wavelet).
    uint32_t wavelets(uint32_t bytes) const {
        return uint32_t(std::max<uint64_t>(1, detail::ceil_div(bytes, o_.bytes_per_wavelet)));
    }

    vtime_t issue_cost(CoreCoord, Op op, uint32_t bytes) override {
        switch (op) {
            case Op::noc_write:
            case Op::noc_inline_write:
            case Op::sem_inc: return wavelets(bytes);  // T_send = 1 per wavelet
            case Op::noc_read: return 1;               // one request wavelet
            case Op::sem_set: return o_.cost_sem_set;
            case Op::sem_wait_check: return o_.cost_sem_wait_check;
            case Op::noc_barrier: return o_.cost_noc_barrier;
            case Op::idle_poll: return o_.cost_idle_poll;
            case Op::context_switch: return o_.cost_context_switch;
            case Op::l1_access:
                return std::max<vtime_t>(1, detail::ceil_div(bytes, o_.l1_bytes_per_cycle));  // T_store = 1
            case Op::eth_send:
            case Op::eth_txq_check:
            case Op::route_2d_hop: break;
            case Op::compute_eltwise:
                throw EmulationError("wafer_model: compute_eltwise: a wafer-scale PE has no Tensix compute engine "
                                     "(reduce with loads and stores, or use wormhole_model)");
        }
        throw EmulationError(std::string("wafer_model: ") + to_string(op) +
                             ": a wafer-scale PE mesh has no Ethernet (use wormhole_model for chips with links)");
    }

    /// Sends a train of `n` wavelets whose last wavelet leaves the processor at `t` (end of the
    /// issuing cycles) from src to dst; returns when the last wavelet has reached dst's processor.
    /// Route: on-ramp, X then Y through routers, off-ramp. Each port carries one wavelet per cycle.
    vtime_t send_train(CoreCoord src, CoreCoord dst, uint32_t n, vtime_t t) {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        check(src, "source");
        check(dst, "destination");
        if (src.chip != dst.chip)
            throw EmulationError("wafer_model: " + to_string(src) + " -> " + to_string(dst) +
                                 ": the PE mesh is one wafer; messages stay on one chip");
        // The first wavelet left the processor n-1 cycles before the last one.
        vtime_t head = t - std::min<vtime_t>(t, n - 1);
        head = pass(port(src, Dir::on_ramp), head, n, o_.t_r);
        uint32_t x = src.x, y = src.y;
        while (x != dst.x) {
            const Dir p = dst.x > x ? Dir::E : Dir::W;
            head = pass(port({src.chip, x, y}, p), head, n, o_.hop_cycles);
            x = dst.x > x ? x + 1 : x - 1;
        }
        while (y != dst.y) {
            const Dir p = dst.y > y ? Dir::S : Dir::N;
            head = pass(port({src.chip, x, y}, p), head, n, o_.hop_cycles);
            y = dst.y > y ? y + 1 : y - 1;
        }
        head = pass(port(dst, Dir::off_ramp), head, n, o_.t_r);
        return head + n - 1;  // the tail follows the head by n-1 cycles
    }

    vtime_t noc_arrival(CoreCoord src, CoreCoord dst, uint32_t bytes, vtime_t t) override {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        return send_train(src, dst, wavelets(bytes), t);
    }
    vtime_t noc_read_done(CoreCoord reader, CoreCoord src, uint32_t bytes, vtime_t t) override {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        // One request wavelet to src; src answers with the data, one wavelet per cycle from the
        // request's arrival (no issue cost on src: the reader's request drives the answer).
        const vtime_t req = send_train(reader, src, 1, t);
        const uint32_t n = wavelets(bytes);
        return send_train(src, reader, n, req + n - 1);
    }
    vtime_t eth_arrival(CoreCoord eth, uint32_t, uint32_t, vtime_t) override {
        throw EmulationError("wafer_model: eth_arrival from " + to_string(eth) +
                             ": a wafer-scale PE mesh has no Ethernet links (use wormhole_model)");
    }
    vtime_t eth_txq_free(CoreCoord, uint32_t) const override { return 0; }
    void link_usage(std::vector<LinkBusy>&) const override {}  // no Ethernet links

    /// Cycles a router port carried wavelets since reset (for reports and tests).
    vtime_t port_busy(CoreCoord c, Dir p) const {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        return busy_[port(c, p)];
    }

private:
    size_t port(CoreCoord c, Dir p) const {
        return ((size_t(c.chip) * h_ + c.y) * w_ + c.x) * wafer_ports + uint32_t(p);
    }
    void check(CoreCoord c, const char* what) const {
        if (c.chip >= chips_ || c.x >= w_ || c.y >= h_)
            throw EmulationError(std::string("wafer_model: ") + what + " " + to_string(c) +
                                 " is not a PE of the mesh the model was reset for (" + std::to_string(w_) + " x " +
                                 std::to_string(h_) + " PEs per chip, " + std::to_string(chips_) +
                                 " chips; call reset() first)");
    }
    /// The head of an n-wavelet train reaches a port at `head`; the port starts it when free,
    /// carries one wavelet per cycle, and the head reaches the next stage `latency` cycles later.
    vtime_t pass(size_t p, vtime_t head, uint32_t n, uint32_t latency) {
        const vtime_t start = std::max(head, free_[p]);
        free_[p] = start + n;
        busy_[p] += n;
        return start + latency;
    }

    WaferOptions o_;
    uint32_t w_ = 0, h_ = 0, chips_ = 0;
    std::vector<vtime_t> free_, busy_;
};

inline std::unique_ptr<TimingModel> wafer_model(WaferOptions o = {}) { return std::make_unique<WaferModel>(o); }

}  // namespace kccl::emu
