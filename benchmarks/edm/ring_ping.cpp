// benchmarks/edm/ring_ping.cpp — ring ping latency per hop through EDMs on 8 chips (tt-metal's
// BasicEthernetGuide, "Ring Ping Latency": ~650-690 ns per hop on hardware).
//
// Swept: nothing; topology::ring(8), the first link between chip i and chip i+1 (mod 8) carries
//        one channel i -> i+1 (16-byte packets, 2 buffers), with an EDM on each of its two
//        Ethernet cores: 16 EDMs. On every chip one worker ((0,0)) is the receiver of the
//        channel from the previous chip and the sender of the channel to the next: it forwards
//        each payload it receives (recv into L1, send from that L1). Chip 0's worker starts the
//        token and times its laps. One token circulates: 24 threads, at most a few runnable.
//        Per run kWarmupLaps + kLaps laps, kEmulatedRuns runs.
// Reports: ns_per_hop (= lap / 8), lap_ns, one_way_ns (= ns_per_hop: a hop is one chip-to-chip
//          one-way trip, worker to worker), the paired raw spin ping-pong (raw_one_way_ns,
//          vs_raw = ns_per_hop / raw one-way), busy_cores.
#include "edm/edm_bench.hpp"

namespace {

namespace eb = kccl::bench::edm_bench;
namespace edm = kccl::edm;

constexpr uint32_t kChips = 8;
constexpr uint32_t kFlit = 16;
constexpr uint32_t kWarmupLaps = 30;
constexpr uint32_t kLaps = 300;

/// Args: [0, w_count) adapter args of the channel to the next chip; [w_count, 2 w_count) of the
/// channel from the previous chip; then role (0 starts the token), warm-up laps, measured laps.
/// The starter returns the nanoseconds of its measured laps.
template <class H>
uint64_t ring_worker(H& hal) {
    constexpr uint32_t W = edm::args::w_count;
    edm::SenderAdapter<> tx(edm::load_worker_channel(hal, 0));
    edm::ReceiverAdapter<> rx(edm::load_worker_channel(hal, W));
    const bool starter = hal.arg(2 * W) == 0;
    const uint32_t warmup = hal.arg(2 * W + 1);
    const uint32_t total = warmup + hal.arg(2 * W + 2);
    uint32_t* stage = reinterpret_cast<uint32_t*>(hal.l1_ptr(eb::kStage, kFlit));
    uint64_t t0 = 0;
    for (uint32_t lap = 0; lap < total; ++lap) {
        if (starter) {
            if (lap == warmup) t0 = eb::now_ns();
            stage[0] = lap;
            tx.send(hal, eb::kStage, kFlit);
            rx.recv(hal, eb::kStage, kFlit);
            if (stage[0] != lap)
                throw kccl::emu::EmulationError("EDM ring ping: lap " + std::to_string(lap) + " came back carrying " +
                                                std::to_string(stage[0]));
        } else {
            rx.recv(hal, eb::kStage, kFlit);
            tx.send(hal, eb::kStage, kFlit);
        }
    }
    const uint64_t ns = eb::now_ns() - t0;
    tx.close(hal);
    rx.close(hal);
    return starter ? ns : 0;
}

void edm_ring_ping(benchmark::State& state) {
    kccl::emu::Cluster cluster(kccl::emu::topology::ring(kChips));
    const uint32_t total = kWarmupLaps + kLaps;
    const uint32_t eth_l1 = cluster.chip(0).spec().eth_l1_bytes;
    constexpr uint32_t kTxSem = eb::kWorkerSem, kRxSem = eb::kWorkerSem + 16;

    // Link i: chip i (end a, sender) -> chip i+1 (end b, receiver).
    std::vector<edm::host::LinkPlan> plans;
    std::vector<std::pair<kccl::emu::CoreCoord, kccl::emu::CoreCoord>> links;
    std::vector<kccl::emu::CoreCoord> worker(kChips);
    for (uint32_t i = 0; i < kChips; ++i) worker[i] = cluster.chip(i).worker(0, 0);
    for (uint32_t i = 0; i < kChips; ++i) {
        const uint32_t j = (i + 1) % kChips;
        links.push_back(cluster.links_between(i, j).at(0));
        edm::host::ChannelSpec ch;
        ch.buffers = 2;
        ch.packet_bytes = kFlit;
        ch.message_count = total;
        edm::host::ChannelSpec tx = ch, rx = ch;
        tx.workers = {{worker[i].x, worker[i].y, kTxSem}};
        rx.workers = {{worker[j].x, worker[j].y, kRxSem}};
        edm::host::EdmEnd a, b;
        a.add_sender(tx);
        b.add_receiver(rx);
        plans.push_back(edm::host::build_link(a, b, {eb::kEdmBase + 0x100, eth_l1 - eb::kEdmBase - 0x100, eb::kEdmBase}));
    }

    std::vector<eb::Stamp> stamps(3 * kChips);
    kccl::emu::Launcher launch(cluster);
    for (uint32_t i = 0; i < kChips; ++i) {
        launch.add(links[i].first, eb::probed(&stamps[2 * i], [](auto& hal) { return eb::edm_kernel(hal); }),
                   plans[i].edm_args(edm::host::Side::a));
        launch.add(links[i].second, eb::probed(&stamps[2 * i + 1], [](auto& hal) { return eb::edm_kernel(hal); }),
                   plans[i].edm_args(edm::host::Side::b));
    }
    for (uint32_t i = 0; i < kChips; ++i) {
        const uint32_t prev = (i + kChips - 1) % kChips;
        auto args = plans[i].worker_args(edm::host::Side::a, 0, 0, links[i].first.x, links[i].first.y);
        const auto r = plans[prev].worker_args(edm::host::Side::b, 0, 0, links[prev].second.x, links[prev].second.y);
        args.insert(args.end(), r.begin(), r.end());
        args.insert(args.end(), {i == 0 ? 0u : 1u, kWarmupLaps, kLaps});
        launch.add(worker[i], eb::probed(&stamps[2 * kChips + i], [](auto& hal) { return ring_worker(hal); }), args);
    }

    const auto t = eb::run_measured(
        state, launch,
        [&] {
            for (uint32_t i = 0; i < kChips; ++i)
                for (auto e : {links[i].first, links[i].second})
                    std::memset(cluster.l1(e).data() + plans[i].reserved_addr, 0,
                                plans[i].end_addr - plans[i].reserved_addr);
        },
        [&](const kccl::emu::RunReport& r) { return static_cast<double>(r.at(worker[0]).value); },
        [] { return kccl::bench::raw_one_way_ns(20000); }, [&] { return eb::busy_cores(stamps); });
    if (!t.ok || t.runs == 0) return;
    const double lap = t.measured_ns / static_cast<double>(t.runs * kLaps);
    const double hop = lap / kChips;
    state.counters["lap_ns"] = lap;
    state.counters["ns_per_hop"] = hop;
    state.counters["one_way_ns"] = hop;
    if (t.paired_sum > 0) {
        state.counters["raw_one_way_ns"] = t.paired_mean();
        state.counters["vs_raw"] = hop / t.paired_mean();
    }
}

}  // namespace

BENCHMARK(edm_ring_ping)
    ->Name("edm/ring_ping/8chips")
    ->UseManualTime()
    ->Iterations(kccl::bench::kEmulatedRuns);
