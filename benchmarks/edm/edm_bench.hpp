// benchmarks/edm/edm_bench.hpp — what the EDM benchmarks (benchmarks/edm/*.cpp) share.
//
// WHAT IT IS
//   * the kernels: the EDM itself (kccl::edm::Edm<>::run on an Ethernet core, args from the
//     host builder) and streaming sender / receiver workers built on the worker adapters;
//   * `add_stream_link`: one link of a 2-chip cluster wired as N streaming channels, split
//     between both directions (channel c is sent by chip 0 when c is even, by chip 1 when odd),
//     each channel fed by one sender worker and drained by one receiver worker — the way
//     tests/edm/harness.hpp wires a link, minus the per-word checking;
//   * `run_measured`: one benchmark iteration = one Launcher::run; the kernels time their own
//     measured loop after a warm-up and leave the result where `measure` finds it, which becomes
//     the manual iteration time (as benchmarks/harness.hpp's run_timed, whose paired baselines
//     it keeps); thread start-up and the launcher's end-of-run tick never enter the result.
//
// TIMING OF A STREAM
//   Every receiver worker stamps the wall clock when it has received its warm-up messages and
//   again after its last message (Stamp, in host memory captured by the kernel; the launcher
//   joins the threads before the host reads it). A direction's window runs from the earliest
//   first stamp to the latest last stamp of its receivers; the link's window is the union of
//   both. Bytes counted are the measured messages' payload only (no sync words, no acks), so a
//   channel that started its measured part late only makes the figure smaller.
//
// COUNTERS (besides harness.hpp's bytes_per_second / one_way_ns / vs_memcpy / vs_raw ...)
//   busy_cores   CPU time of ALL kernel threads of a run (EDMs and workers) over the wall time
//                from the first kernel start to the last kernel end: 2.0 = both cores of this
//                machine busy throughout; near 1 or below = threads mostly slept in the
//                emulation's futex wait (hand-offs then cost a wake-up each). Not the
//                foundation's cpu_cores (that one is about two dedicated threads).
#pragma once

#include "harness.hpp"

#include <edm/edm.hpp>
#include <edm/host/builder.hpp>
#include <edm/worker.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace kccl::bench::edm_bench {

namespace edm = kccl::edm;
namespace emu = kccl::emu;

// ---- per-thread probes ---------------------------------------------------------------------

inline uint64_t now_ns() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

/// What one kernel thread recorded in one run: its whole life (for busy_cores) and, for
/// measuring kernels, the measured window.
struct Stamp {
    uint64_t begin_ns = 0, end_ns = 0, cpu_ns = 0;  // whole kernel
    uint64_t t0 = 0, t1 = 0;                         // measured window (0, 0 = none)
    uint64_t c0 = 0, c1 = 0;                         // this thread's CPU time at t0 and t1
};

/// Wraps a kernel so that it fills `s->begin_ns/end_ns/cpu_ns`.
template <class K>
auto probed(Stamp* s, K kernel) {
    return [s, kernel](auto& hal) mutable -> uint64_t {
        s->begin_ns = now_ns();
        const uint64_t cpu0 = thread_cpu_ns();
        const uint64_t v = kernel(hal);
        s->cpu_ns = thread_cpu_ns() - cpu0;
        s->end_ns = now_ns();
        return v;
    };
}

/// CPU of all threads over the wall span of the run's kernels.
inline double busy_cores(const std::vector<Stamp>& stamps) {
    uint64_t lo = UINT64_MAX, hi = 0, cpu = 0;
    for (const Stamp& s : stamps) {
        lo = std::min(lo, s.begin_ns);
        hi = std::max(hi, s.end_ns);
        cpu += s.cpu_ns;
    }
    return hi > lo ? static_cast<double>(cpu) / static_cast<double>(hi - lo) : 0;
}

// ---- kernels -------------------------------------------------------------------------------

/// The EDM on an Ethernet core: runs the whole lifecycle with the builder's args at 0.
template <class H>
uint64_t edm_kernel(H& hal) {
    edm::Edm<> e;
    const edm::Status st = e.run(hal);
    if (st != edm::Status::ok)
        throw emu::EmulationError("EDM rejected its runtime args: status " + std::to_string(uint32_t(st)));
    return e.context_switches();
}

// Worker L1: the staging buffer a worker sends from / receives into, 16-byte aligned; the
// channel semaphores below it (one per channel the worker serves).
inline constexpr uint32_t kWorkerSem = 0x100;  // + 16 * (channel index within the worker)
inline constexpr uint32_t kStage = 0x1000;

/// Stream sender worker. Args: [0, w_count) adapter args; then total messages, payload bytes
/// (0 = hand over the slot without writing a payload: the "signal only" variant).
/// Word 0 of message m carries m (a cheap end-to-end check, written after the previous send
/// returned: send() flushes its source, contract N3).
template <class H>
uint64_t stream_sender(H& hal) {
    edm::SenderAdapter<> tx(edm::load_worker_channel(hal, 0));
    const uint32_t total = hal.arg(edm::args::w_count);
    const uint32_t bytes = hal.arg(edm::args::w_count + 1);
    uint32_t* stage = reinterpret_cast<uint32_t*>(hal.l1_ptr(kStage, std::max<uint32_t>(bytes, 16)));
    for (uint32_t m = 0; m < total; ++m) {
        stage[0] = m;
        tx.send(hal, kStage, bytes);
    }
    tx.close(hal);
    return 0;
}

/// Stream receiver worker. Args: adapter args; then total messages, payload bytes (0 = take
/// the slot without reading it), warm-up messages. Stamps its measured window into `s`.
template <class H>
uint64_t stream_receiver(H& hal, Stamp* s) {
    edm::ReceiverAdapter<> rx(edm::load_worker_channel(hal, 0));
    const uint32_t total = hal.arg(edm::args::w_count);
    const uint32_t bytes = hal.arg(edm::args::w_count + 1);
    const uint32_t warmup = hal.arg(edm::args::w_count + 2);
    const uint32_t* stage = reinterpret_cast<const uint32_t*>(hal.l1_ptr(kStage, std::max<uint32_t>(bytes, 16)));
    for (uint32_t m = 0; m < total; ++m) {
        if (m == warmup) {
            s->t0 = now_ns();
            s->c0 = thread_cpu_ns();
        }
        rx.recv(hal, kStage, bytes);
        if (bytes && stage[0] != m)
            throw emu::EmulationError("EDM stream: message " + std::to_string(m) + " arrived carrying " +
                                      std::to_string(stage[0]));
    }
    s->t1 = now_ns();
    s->c1 = thread_cpu_ns();
    rx.close(hal);
    return 0;
}

// ---- a streaming link ----------------------------------------------------------------------

/// A 2-chip cluster, one link, room for 8 channels x 2 buffers x 64 KiB on the Ethernet cores
/// (Wormhole's ERISC L1 is 256 KiB; `Stream::fits_wormhole_l1` says whether a configuration
/// would fit it) and 8 worker cores per chip.
inline emu::ClusterSpec two_chips() {
    emu::ChipSpec c;
    c.grid_w = 8;
    c.grid_h = 8;
    c.eth_cores = 1;
    c.worker_l1_bytes = 160 * 1024;
    c.eth_l1_bytes = 1152 * 1024;
    return emu::topology::line(2, 1, c);
}

/// ERISC L1 the builder may use: from 0x1000 to the end (the layout tests/edm uses).
inline constexpr uint32_t kEdmBase = 0x1000;
inline constexpr uint32_t kWormholeEthL1 = 256 * 1024;

struct StreamSpec {
    uint32_t channels = 1;        ///< total; channel c goes chip 0 -> 1 if c even, else 1 -> 0
    bool split = true;            ///< false: every channel goes chip 0 -> 1
    uint32_t buffers = 2;
    uint32_t packet_bytes = 16384;
    uint32_t warmup = 32;         ///< messages per channel before the measured window
    uint32_t measured = 256;      ///< messages per channel in the measured window
    bool move_payload = true;     ///< false: workers only hand slots over (EDM + link only)
};

/// A wired link: the launcher has every kernel; `stamps` is filled by each run.
struct Stream {
    StreamSpec spec;
    std::vector<Stamp> stamps;             ///< one per kernel thread
    std::vector<uint32_t> receiver_stamp;  ///< index into stamps of channel c's receiver
    std::vector<emu::CoreCoord> eth;       ///< the two EDM cores
    std::vector<emu::CoreCoord> workers;   ///< every worker core
    bool fits_wormhole_l1 = false;

    bool a_sends(uint32_t c) const { return !spec.split || c % 2 == 0; }

    /// Nothing to clear between runs: the EDM initialises its own L1 (it runs on dirty L1, see
    /// tests/edm/edm_hardening_test.cpp) and the workers' semaphores are set to 0 before every
    /// run by the launcher (Launcher::init_word, as tt-metal's CreateSemaphore). Kept so that a
    /// benchmark's reset hook has one place to grow.
    void reset(emu::Cluster&) const {}

    struct Window {
        uint64_t t0 = UINT64_MAX, t1 = 0;
        uint64_t ns() const { return t1 > t0 ? t1 - t0 : 0; }
    };
    /// Measured window of one direction (0: chip 0 -> 1, 1: chip 1 -> 0) or of both (-1).
    Window window(int direction) const {
        Window w;
        for (uint32_t c = 0; c < spec.channels; ++c) {
            if (direction >= 0 && a_sends(c) != (direction == 0)) continue;
            const Stamp& s = stamps[receiver_stamp[c]];
            w.t0 = std::min(w.t0, s.t0);
            w.t1 = std::max(w.t1, s.t1);
        }
        return w;
    }
    uint32_t channels_in(int direction) const {
        uint32_t n = 0;
        for (uint32_t c = 0; c < spec.channels; ++c) n += a_sends(c) == (direction == 0);
        return n;
    }
    uint64_t measured_bytes(int direction) const {
        const uint64_t per_channel = uint64_t(spec.measured) * spec.packet_bytes;
        return direction < 0 ? per_channel * spec.channels : per_channel * channels_in(direction);
    }
};

/// Wires `s` on the first link between chips 0 and 1 of `cluster` into `launch`. The returned
/// Stream must outlive the launcher's runs (kernels point into its stamps).
inline std::unique_ptr<Stream> add_stream_link(emu::Cluster& cluster, emu::Launcher& launch, const StreamSpec& s) {
    auto st = std::make_unique<Stream>();
    st->spec = s;
    const auto [eth_a, eth_b] = cluster.links_between(0, 1).at(0);
    st->eth = {eth_a, eth_b};
    const auto& chip = cluster.chip(0).spec();
    const uint32_t total = s.warmup + s.measured;

    edm::host::EdmEnd a, b;
    std::vector<emu::CoreCoord> tx_core(s.channels), rx_core(s.channels);
    uint32_t next[2] = {0, 0};
    auto take = [&](uint32_t c) {
        const uint32_t n = next[c]++;
        return cluster.chip(c).worker(n % chip.grid_w, n / chip.grid_w);
    };
    for (uint32_t c = 0; c < s.channels; ++c) {
        const bool a_tx = st->a_sends(c);
        tx_core[c] = take(a_tx ? 0 : 1);
        rx_core[c] = take(a_tx ? 1 : 0);
        st->workers.insert(st->workers.end(), {tx_core[c], rx_core[c]});
        edm::host::ChannelSpec tx, rx;
        tx.buffers = rx.buffers = s.buffers;
        tx.packet_bytes = rx.packet_bytes = s.packet_bytes;
        tx.message_count = rx.message_count = total;
        tx.workers = {{tx_core[c].x, tx_core[c].y, kWorkerSem}};
        rx.workers = {{rx_core[c].x, rx_core[c].y, kWorkerSem}};
        if (a_tx) {
            a.add_sender(tx);
            b.add_receiver(rx);
        } else {
            a.add_receiver(rx);
            b.add_sender(tx);
        }
    }
    const auto plan = edm::host::build_link(a, b, {kEdmBase + 0x100, chip.eth_l1_bytes - kEdmBase - 0x100, kEdmBase});
    try {
        (void)edm::host::build_link(a, b, {kEdmBase + 0x100, kWormholeEthL1 - kEdmBase - 0x100, kEdmBase});
        st->fits_wormhole_l1 = true;
    } catch (const edm::host::ConfigError&) {
        st->fits_wormhole_l1 = false;
    }

    for (auto side : {edm::host::Side::a, edm::host::Side::b})
        for (const auto& w : plan.worker_semaphores(side))
            launch.init_word(cluster.chip(side == edm::host::Side::a ? 0 : 1).worker(w.x, w.y), w.sem_addr, 0);

    st->stamps.resize(2 + 2 * s.channels);
    Stamp* stamps = st->stamps.data();
    launch.add(eth_a, probed(&stamps[0], [](auto& hal) { return edm_kernel(hal); }), plan.edm_args(edm::host::Side::a));
    launch.add(eth_b, probed(&stamps[1], [](auto& hal) { return edm_kernel(hal); }), plan.edm_args(edm::host::Side::b));
    const uint32_t payload = s.move_payload ? s.packet_bytes : 0;
    for (uint32_t c = 0; c < s.channels; ++c) {
        const bool a_tx = st->a_sends(c);
        const auto tx_side = a_tx ? edm::host::Side::a : edm::host::Side::b;
        const auto rx_side = a_tx ? edm::host::Side::b : edm::host::Side::a;
        const emu::CoreCoord tx_eth = a_tx ? eth_a : eth_b, rx_eth = a_tx ? eth_b : eth_a;
        auto targs = plan.worker_args(tx_side, c, 0, tx_eth.x, tx_eth.y);
        targs.insert(targs.end(), {total, payload});
        launch.add(tx_core[c], probed(&stamps[2 + 2 * c], [](auto& hal) { return stream_sender(hal); }), targs);
        auto rargs = plan.worker_args(rx_side, c, 0, rx_eth.x, rx_eth.y);
        rargs.insert(rargs.end(), {total, payload, s.warmup});
        Stamp* mine = &stamps[3 + 2 * c];
        launch.add(rx_core[c], probed(mine, [mine](auto& hal) { return stream_receiver(hal, mine); }), rargs);
        st->receiver_stamp.push_back(3 + 2 * c);
    }
    return st;
}

// ---- ring ping: one token around a ring of chips through EDMs -------------------------------

/// Args: [0, w_count) adapter args of the channel to the next chip; [w_count, 2 w_count) of the
/// channel from the previous chip; then role (0 starts the token), warm-up laps, measured laps.
/// Each worker forwards the 16-byte payload it receives (recv into L1, send from that L1); the
/// starter times its measured laps, checks that every lap comes back with its own number, and
/// returns the nanoseconds.
template <class H>
uint64_t ring_worker(H& hal) {
    constexpr uint32_t W = edm::args::w_count;
    constexpr uint32_t kFlit = 16;
    edm::SenderAdapter<> tx(edm::load_worker_channel(hal, 0));
    edm::ReceiverAdapter<> rx(edm::load_worker_channel(hal, W));
    const bool starter = hal.arg(2 * W) == 0;
    const uint32_t warmup = hal.arg(2 * W + 1);
    const uint32_t total = warmup + hal.arg(2 * W + 2);
    uint32_t* stage = reinterpret_cast<uint32_t*>(hal.l1_ptr(kStage, kFlit));
    uint64_t t0 = 0;
    for (uint32_t lap = 0; lap < total; ++lap) {
        if (starter) {
            if (lap == warmup) t0 = now_ns();
            stage[0] = lap;
            tx.send(hal, kStage, kFlit);
            rx.recv(hal, kStage, kFlit);
            if (stage[0] != lap)
                throw emu::EmulationError("EDM ring ping: lap " + std::to_string(lap) + " came back carrying " +
                                          std::to_string(stage[0]));
        } else {
            rx.recv(hal, kStage, kFlit);
            tx.send(hal, kStage, kFlit);
        }
    }
    const uint64_t ns = now_ns() - t0;
    tx.close(hal);
    rx.close(hal);
    return starter ? ns : 0;
}

/// topology::ring(chips); the first link between chip i and chip i+1 (mod chips) carries one
/// channel i -> i+1 (16-byte packets, 2 buffers) with an EDM on each of its two Ethernet cores;
/// worker (0,0) of every chip receives from the previous chip and sends to the next.
struct RingPing {
    emu::Cluster cluster;
    emu::Launcher launch;
    std::vector<edm::host::LinkPlan> plans;
    std::vector<std::pair<emu::CoreCoord, emu::CoreCoord>> links;
    std::vector<emu::CoreCoord> worker;
    std::vector<Stamp> stamps;

    RingPing(uint32_t chips, uint32_t warmup_laps, uint32_t laps)
        : cluster(emu::topology::ring(chips)), launch(cluster), worker(chips), stamps(3 * chips) {
        constexpr uint32_t kTxSem = kWorkerSem, kRxSem = kWorkerSem + 16;
        const uint32_t eth_l1 = cluster.chip(0).spec().eth_l1_bytes;
        for (uint32_t i = 0; i < chips; ++i) worker[i] = cluster.chip(i).worker(0, 0);
        // Link i: chip i (end a, sender) -> chip i+1 (end b, receiver).
        for (uint32_t i = 0; i < chips; ++i) {
            const uint32_t j = (i + 1) % chips;
            links.push_back(cluster.links_between(i, j).at(0));
            edm::host::ChannelSpec ch;
            ch.buffers = 2;
            ch.packet_bytes = 16;
            ch.message_count = warmup_laps + laps;
            edm::host::ChannelSpec tx = ch, rx = ch;
            tx.workers = {{worker[i].x, worker[i].y, kTxSem}};
            rx.workers = {{worker[j].x, worker[j].y, kRxSem}};
            edm::host::EdmEnd a, b;
            a.add_sender(tx);
            b.add_receiver(rx);
            plans.push_back(edm::host::build_link(a, b, {kEdmBase + 0x100, eth_l1 - kEdmBase - 0x100, kEdmBase}));
        }
        for (uint32_t i = 0; i < chips; ++i) {
            launch.add(links[i].first, probed(&stamps[2 * i], [](auto& hal) { return edm_kernel(hal); }),
                       plans[i].edm_args(edm::host::Side::a));
            launch.add(links[i].second, probed(&stamps[2 * i + 1], [](auto& hal) { return edm_kernel(hal); }),
                       plans[i].edm_args(edm::host::Side::b));
        }
        for (uint32_t i = 0; i < chips; ++i) {
            const uint32_t prev = (i + chips - 1) % chips;
            auto args = plans[i].worker_args(edm::host::Side::a, 0, 0, links[i].first.x, links[i].first.y);
            const auto r = plans[prev].worker_args(edm::host::Side::b, 0, 0, links[prev].second.x, links[prev].second.y);
            args.insert(args.end(), r.begin(), r.end());
            args.insert(args.end(), {i == 0 ? 0u : 1u, warmup_laps, laps});
            launch.add(worker[i], probed(&stamps[2 * chips + i], [](auto& hal) { return ring_worker(hal); }), args);
        }
    }
    /// Before every run: the EDMs' regions are cleared, as their host would.
    void reset() {
        for (size_t i = 0; i < plans.size(); ++i)
            for (auto e : {links[i].first, links[i].second})
                std::memset(cluster.l1(e).data() + plans[i].reserved_addr, 0, plans[i].end_addr - plans[i].reserved_addr);
    }
};

// ---- the run loop --------------------------------------------------------------------------

/// Runs `launch` once per benchmark iteration: `reset()` before each run; after it,
/// `measure(report)` gives the iteration's nanoseconds (its manual time) and `paired()` the
/// paired baseline (not timed), as harness.hpp's run_timed. `busy` (if given) returns the
/// run's busy_cores; its mean is reported. On failure the benchmark is skipped with the run's
/// summary and `ok` is false.
template <class Reset, class Measure, class Paired, class Busy>
Totals run_measured(benchmark::State& state, emu::Launcher& launch, Reset reset, Measure measure, Paired paired,
                    Busy busy) {
    Totals t;
    emu::RunOptions opt;
    opt.watchdog = kWatchdog;
    opt.wait = wait_policy();
    opt.engine = bench_engine();
    double busy_sum = 0;
    for (auto _ : state) {
        reset();
        const emu::RunReport report = launch.run(opt);
        if (!report.ok()) {
            state.SkipWithError(report.summary().c_str());
            t.ok = false;
            break;
        }
        const double ns = measure(report);
        state.SetIterationTime(ns * 1e-9);
        t.measured_ns += ns;
        ++t.runs;
        busy_sum += busy();
        state.PauseTiming();
        t.paired_sum += paired();
        state.ResumeTiming();
    }
    if (t.ok && t.runs) state.counters["busy_cores"] = busy_sum / static_cast<double>(t.runs);
    return t;
}

}  // namespace kccl::bench::edm_bench
