// benchmarks/edm/flit_round_trip.cpp — round trip of one flit (a 16-byte packet) between two
// workers on two chips through an EDM pair: worker A -> EDM a -> link -> EDM b -> worker B, and
// B's answer back the same way over the link's other channel (tt-metal BasicEthernetGuide, microbenchmark 4
// "there-and-back single Ethernet link ping-response", here with the EDM and workers in the path).
//
// Swept: nothing; line(2), one link, 2 channels (0: chip 0 -> 1, 1: chip 1 -> 0), 2 buffers,
//        16-byte packets; worker A = chip 0 (0,0), worker B = chip 1 (0,0): 4 threads.
//        Per run kWarmup + kRoundTrips round trips, kEmulatedRuns runs.
//   A sends its sequence number, B receives it into L1 and sends that L1 back; A checks it.
// Reports: round_trip_ns, one_way_ns (= round trip / 2: worker to worker on the other chip),
//          the paired raw spin ping-pong (raw_one_way_ns, vs_raw), busy_cores.
#include "edm/edm_bench.hpp"

namespace {

namespace eb = kccl::bench::edm_bench;
namespace edm = kccl::edm;

constexpr uint32_t kFlit = 16;
constexpr uint32_t kWarmup = 200;
constexpr uint32_t kRoundTrips = 2000;

/// Args: [0, w_count) adapter args of the channel this worker sends on; [w_count, 2 w_count)
/// of the one it receives on; then role (0 initiator, 1 responder), warm-up, measured. The
/// initiator returns the nanoseconds of its measured round trips.
template <class H>
uint64_t ping_worker(H& hal) {
    constexpr uint32_t W = edm::args::w_count;
    edm::SenderAdapter<> tx(edm::load_worker_channel(hal, 0));
    edm::ReceiverAdapter<> rx(edm::load_worker_channel(hal, W));
    const bool initiator = hal.arg(2 * W) == 0;
    const uint32_t warmup = hal.arg(2 * W + 1);
    const uint32_t total = warmup + hal.arg(2 * W + 2);
    uint32_t* stage = reinterpret_cast<uint32_t*>(hal.l1_ptr(eb::kStage, kFlit));
    uint64_t t0 = 0;
    for (uint32_t i = 0; i < total; ++i) {
        if (i == warmup) t0 = eb::now_ns();
        if (initiator) {
            stage[0] = i;
            tx.send(hal, eb::kStage, kFlit);
            rx.recv(hal, eb::kStage, kFlit);
            if (stage[0] != i)
                throw kccl::emu::EmulationError("EDM flit round trip: answer " + std::to_string(i) + " carries " +
                                                std::to_string(stage[0]));
        } else {
            rx.recv(hal, eb::kStage, kFlit);
            tx.send(hal, eb::kStage, kFlit);
        }
    }
    const uint64_t ns = eb::now_ns() - t0;
    tx.close(hal);
    rx.close(hal);
    return initiator ? ns : 0;
}

void edm_flit_round_trip(benchmark::State& state) {
    kccl::emu::Cluster cluster(eb::two_chips());
    const auto [eth_a, eth_b] = cluster.links_between(0, 1).at(0);
    const kccl::emu::CoreCoord wa = cluster.chip(0).worker(0, 0), wb = cluster.chip(1).worker(0, 0);
    const uint32_t total = kWarmup + kRoundTrips;
    constexpr uint32_t kTxSem = eb::kWorkerSem, kRxSem = eb::kWorkerSem + 16;

    edm::host::ChannelSpec ch;
    ch.buffers = 2;
    ch.packet_bytes = kFlit;
    ch.message_count = total;
    edm::host::EdmEnd a, b;
    auto with = [&](kccl::emu::CoreCoord w, uint32_t sem) {
        edm::host::ChannelSpec s = ch;
        s.workers = {{w.x, w.y, sem}};
        return s;
    };
    a.add_sender(with(wa, kTxSem)).add_receiver(with(wa, kRxSem));
    b.add_receiver(with(wb, kRxSem)).add_sender(with(wb, kTxSem));
    const auto plan = edm::host::build_link(a, b, {eb::kEdmBase + 0x100, cluster.chip(0).spec().eth_l1_bytes - eb::kEdmBase - 0x100, eb::kEdmBase});

    std::vector<eb::Stamp> stamps(4);
    kccl::emu::Launcher launch(cluster);
    launch.add(eth_a, eb::probed(&stamps[0], [](auto& hal) { return eb::edm_kernel(hal); }),
               plan.edm_args(edm::host::Side::a));
    launch.add(eth_b, eb::probed(&stamps[1], [](auto& hal) { return eb::edm_kernel(hal); }),
               plan.edm_args(edm::host::Side::b));
    auto worker_args = [&](edm::host::Side side, uint32_t tx_ch, uint32_t rx_ch, kccl::emu::CoreCoord eth,
                           uint32_t role) {
        auto v = plan.worker_args(side, tx_ch, 0, eth.x, eth.y);
        const auto r = plan.worker_args(side, rx_ch, 0, eth.x, eth.y);
        v.insert(v.end(), r.begin(), r.end());
        v.insert(v.end(), {role, kWarmup, kRoundTrips});
        return v;
    };
    launch.add(wa, eb::probed(&stamps[2], [](auto& hal) { return ping_worker(hal); }),
               worker_args(edm::host::Side::a, 0, 1, eth_a, 0));
    launch.add(wb, eb::probed(&stamps[3], [](auto& hal) { return ping_worker(hal); }),
               worker_args(edm::host::Side::b, 1, 0, eth_b, 1));

    const auto t = eb::run_measured(
        state, launch,
        [&, eth_a = eth_a, eth_b = eth_b] {
            for (auto e : {eth_a, eth_b})
                std::memset(cluster.l1(e).data() + plan.reserved_addr, 0, plan.end_addr - plan.reserved_addr);
        },
        [&](const kccl::emu::RunReport& r) { return static_cast<double>(r.at(wa).value); },
        [] { return kccl::bench::raw_one_way_ns(20000); }, [&] { return eb::busy_cores(stamps); });
    kccl::bench::set_latency_counters(state, t, kRoundTrips);
}

}  // namespace

BENCHMARK(edm_flit_round_trip)
    ->Name("edm/flit_round_trip")
    ->UseManualTime()
    ->Iterations(kccl::bench::kEmulatedRuns);
