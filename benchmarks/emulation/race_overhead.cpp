// benchmarks/emulation/race_overhead.cpp — what the race detector (emulation/race.hpp) costs.
//
// Each benchmark runs the same workload with RunOptions::race off (/0) and on (/1), normal mode
// (no adversary), on the engine harness.hpp chooses (fibers by default):
//   race/edm_stream_16k/race:{0,1}   one EDM channel, 2 buffers, 16 KiB packets, 32 warm-up and
//                                    512 measured messages per run, chip 0 -> chip 1 (the stream
//                                    of edm/stream.cpp); time = the receiver's measured window
//   race/ring_all_reduce/race:{0,1}  all_reduce of 16384 uint32 (64 KiB) per rank, ring over
//                                    IPCQ, 4 ranks, 8 iterations per run after 1 warm-up; time =
//                                    from the first rank's start to the last rank's end
// Report: the manual time per run and, for the stream, bytes_per_second; the ratio on / off is
// the detector's cost (docs/race-detector.md).
#include "edm/edm_bench.hpp"
#include "harness.hpp"

#include <emulation/collective.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

namespace {

namespace eb = kccl::bench::edm_bench;
namespace emu = kccl::emu;
namespace cb = kccl::emu::collective;

emu::RunOptions options(bool race) {
    emu::RunOptions o;
    o.watchdog = kccl::bench::kWatchdog;
    o.wait = kccl::bench::wait_policy();
    o.engine = kccl::bench::bench_engine();
    o.race = race ? emu::RunOptions::RaceCheck::on : emu::RunOptions::RaceCheck::off;
    return o;
}

void race_edm_stream(benchmark::State& state) {
    const bool race = state.range(0) != 0;
    eb::StreamSpec spec;
    spec.channels = 1;
    spec.split = false;
    spec.buffers = 2;
    spec.packet_bytes = 16384;
    spec.warmup = 32;
    spec.measured = 512;
    emu::Cluster cluster(eb::two_chips());
    emu::Launcher launch(cluster);
    const auto link = eb::add_stream_link(cluster, launch, spec);
    const emu::RunOptions opt = options(race);
    uint64_t bytes = 0;
    for (auto _ : state) {
        link->reset(cluster);
        const emu::RunReport r = launch.run(opt);
        if (!r.ok()) {
            state.SkipWithError(r.summary().c_str());
            return;
        }
        state.SetIterationTime(static_cast<double>(link->window(0).ns()) * 1e-9);
        bytes += link->measured_bytes(0);
    }
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void race_ring_all_reduce(benchmark::State& state) {
    using namespace kccl::coll;
    using Red = Reducer<uint32_t, RedOp::sum>;
    const bool race = state.range(0) != 0;
    constexpr uint32_t kRanks = 4, kCount = 16384, kIters = 8;
    Shape sh;
    sh.op = Op::all_reduce;
    sh.method = Method::ring_cw;
    sh.topo = Topology::ring;
    sh.ranks = kRanks;
    cb::GroupOptions bo;
    bo.transport = Transport::ipcq;
    bo.shape = GroupShape::ring;
    bo.ranks = kRanks;
    bo.message_bytes = 4096;
    bo.slots = 4;
    const cb::Layout L = cb::make_layout(sh, kCount, cb::max_chunk_elems(bo, 4));
    bo.buffer_bytes = cb::buffer_bytes_for(L, 4);
    const emu::RunOptions opt = options(race);
    for (auto _ : state) {
        cb::Group bed(bo);
        std::vector<double> start(kRanks), end(kRanks);
        bed.add([&](auto& hal, auto& link, const GroupArgs& g) -> uint64_t {
            auto* in = reinterpret_cast<uint32_t*>(hal.l1_ptr(g.input_l1, L.in_elems * 4));
            for (uint32_t i = 0; i < L.count; ++i) in[i] = g.rank * 1000 + i;
            ExecParams ep;
            ep.shape = L.shape;
            ep.rank = g.rank;
            ep.chunk_elems = L.chunk_elems;
            ep.buf = {g.input_l1, g.output_l1, g.scratch_l1, g.input_l1};
            ep.count = L.count;
            const cb::GroupDirs dirs = cb::group_dirs_of(g);
            execute_any<Red>(link, ep, dirs);
            start[g.rank] = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
            for (uint32_t i = 0; i < kIters; ++i) execute_any<Red>(link, ep, dirs);
            end[g.rank] = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
            link.quiesce();
            return 0;
        });
        const emu::RunReport r = bed.run(opt);
        if (!r.ok()) {
            state.SkipWithError(r.summary().c_str());
            return;
        }
        state.SetIterationTime(*std::max_element(end.begin(), end.end()) - *std::min_element(start.begin(), start.end()));
    }
}

}  // namespace

BENCHMARK(race_edm_stream)->Name("race/edm_stream_16k")->ArgName("race")->Arg(0)->Arg(1)->UseManualTime()->Iterations(4);
BENCHMARK(race_ring_all_reduce)->Name("race/ring_all_reduce")->ArgName("race")->Arg(0)->Arg(1)->UseManualTime()->Iterations(4);
