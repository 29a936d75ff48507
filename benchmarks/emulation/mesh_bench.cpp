// benchmarks/emulation/mesh_bench.cpp — scale of the fiber engine: an IPCQ torus mesh where every
// core exchanges messages with all four neighbours (benchmarks/emulation/mesh_scenario.hpp).
//
// Swept:
//   emulation/mesh/64x64      4096 cores, 64 B messages, 4 slots per direction, 32 rounds
//                             (4096 * 4 * 32 = 524288 messages per run), kEmulatedRuns runs.
//   emulation/mesh/128x128    16384 cores, one chip, 4 rounds, one run per repetition.
//   emulation/mesh/256x256    65536 cores, one chip, one 256 x 256 torus (every core exchanges
//                             with its four neighbours), 64 B messages, 4 rounds, one run per
//                             repetition. Above RunOptions::kGuardedCoresMax (16384) cores the
//                             fiber stacks are unguarded by default (see docs/emulation-engines.md).
// Engine: the fiber engine (default RunOptions), FIFO policy, untimed.
// Reports: msgs_per_second (messages delivered and checked / wall time of Launcher::run,
//          which includes creating and ending the fibers), msgs_per_cpu_second (the same over
//          the CPU time of the one host thread), cores, and for 256x256
//          rss_per_core_bytes (peak resident memory of the process during the run minus before
//          building the cluster, over the cores: L1 pages touched, fiber stacks touched, the
//          engine's and launcher's per-core state) and reserved_per_core_bytes (address space:
//          L1 size + fiber stack size; reserved, mostly never touched).
#include "emulation/mesh_scenario.hpp"
#include "harness.hpp"

#include <chrono>

namespace {

namespace sc = kccl::scenario;

void run_mesh_or_throw(benchmark::State& state, sc::MeshSpec spec) {
    uint64_t peak = 0;
    const uint64_t rss0 = sc::rss_bytes();
    spec.rss_peak = &peak;
    sc::Mesh mesh(spec);
    kccl::emu::RunOptions o;
    o.watchdog = std::chrono::milliseconds(120000);
    double seconds = 0, cpu_seconds = 0;
    uint64_t runs = 0;
    for (auto _ : state) {
        mesh.reinstall();
        const uint64_t cpu0 = kccl::bench::thread_cpu_ns();
        const auto t0 = std::chrono::steady_clock::now();
        const kccl::emu::RunReport r = mesh.launch->run(o);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        cpu_seconds += double(kccl::bench::thread_cpu_ns() - cpu0) * 1e-9;
        if (!r.ok() || mesh.bad_cores(r) != 0) {
            state.SkipWithError(("mesh run failed: " + r.summary().substr(0, 2000)).c_str());
            return;
        }
        state.SetIterationTime(s);
        seconds += s;
        ++runs;
    }
    state.counters["cores"] = double(spec.cores());
    state.counters["msgs_per_second"] = double(spec.messages() * runs) / seconds;
    // The fiber engine runs every core on this thread: its CPU time is the run's cost without
    // the time other processes took the core (this machine is shared).
    state.counters["msgs_per_cpu_second"] = double(spec.messages() * runs) / cpu_seconds;
    if (peak > rss0) state.counters["rss_per_core_bytes"] = double(peak - rss0) / double(spec.cores());
    state.counters["reserved_per_core_bytes"] = double(spec.l1_bytes + kccl::emu::default_stack_size());
    state.counters["stack_guard"] = spec.cores() <= kccl::emu::RunOptions::kGuardedCoresMax ? 1 : 0;
}

// An engine error (e.g. no stack for a fiber) fails this benchmark, not the whole executable.
void run_mesh(benchmark::State& state, const sc::MeshSpec& spec) {
    try {
        run_mesh_or_throw(state, spec);
    } catch (const std::exception& e) {
        state.SkipWithError((std::string("mesh run threw: ") + e.what()).c_str());
    }
}

void mesh_64x64(benchmark::State& state) {
    sc::MeshSpec s;
    s.rows = s.cols = 64;
    s.rounds = 32;
    run_mesh(state, s);
}

void mesh_128x128(benchmark::State& state) {
    sc::MeshSpec s;
    s.rows = s.cols = 128;
    s.rounds = 4;
    s.rss_sample_every = 2048;
    run_mesh(state, s);
}

void mesh_256x256(benchmark::State& state) {
    sc::MeshSpec s;
    s.rows = s.cols = 256;
    s.rounds = 4;
    s.rss_sample_every = 4096;
    run_mesh(state, s);
}

}  // namespace

BENCHMARK(mesh_64x64)->Name("emulation/mesh/64x64")->UseManualTime()->Iterations(kccl::bench::kEmulatedRuns)->Unit(benchmark::kMillisecond);
BENCHMARK(mesh_128x128)->Name("emulation/mesh/128x128")->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(mesh_256x256)->Name("emulation/mesh/256x256")->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
