// benchmarks/emulation/callgrind_driver.cpp — the fiber engine's instruction counts per workload,
// without Google Benchmark (whose paired two-thread baselines would swamp a callgrind profile).
// Compiled into kccl_bench as an empty unit; built on its own with -DKCCL_CALLGRIND_DRIVER:
//
//   g++ -std=c++20 -O2 -DNDEBUG -g -DKCCL_CALLGRIND_DRIVER -Iinclude -Iemulation/include -Ibenchmarks
//       benchmarks/emulation/callgrind_driver.cpp -o /tmp/cg_driver -lbenchmark -lpthread -latomic
//   valgrind --tool=callgrind /tmp/cg_driver ipcq 3      # or edm, mesh; the number of runs
//
// Workloads (the same kernels and layouts as the benchmarks, fiber engine, FIFO):
//   ipcq  100000 messages of 64 B, 8 slots, worker (0,0) -> (1,0)   (ipcq/rate/64B/n8/poll/l1)
//   edm   2080 packets of 16 KiB through an EDM pair, 2 buffers     (edm/stream_16k/buffers/2)
//   mesh  64x64 IPCQ torus, 32 rounds, four neighbours               (emulation/mesh/64x64)
//   ring  3000 laps of one 16-byte token around 8 chips through EDMs  (edm/ring_ping/8chips)
//   coll_<ar|ag>_<ipcq|edm>   one float-sum all_reduce / all_gather of 1 MiB on 8 ranks of a ring
//         (the group's method, 16 KiB slots / packets) per run after a warm-up one; with 1 and 2
//         runs the difference is one collective's count
// KCCL_CG_HANDOFF=0 runs plain FIFO (ScheduleOptions::handoff = false), for side-by-side runs.
// Each run prints its run hash and step count: a change to the engine's cost that keeps the
// schedule must keep both. The cost per run is (count with N runs - count with 1) / (N - 1).
#if defined(KCCL_CALLGRIND_DRIVER)
#include "edm/edm_bench.hpp"
#include "emulation/mesh_scenario.hpp"
#include "harness.hpp"
#include <emulation/collective.hpp>
#include <ipcq/host/plan.hpp>
#include <ipcq/ipcq.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace iq = kccl::ipcq;
namespace ih = kccl::ipcq::host;
namespace eb = kccl::bench::edm_bench;

/// The run options: the defaults, or plain FIFO without the handoff with KCCL_CG_HANDOFF=0.
static kccl::emu::RunOptions options() {
    kccl::emu::RunOptions o;
    const char* h = std::getenv("KCCL_CG_HANDOFF");
    if (h && std::strcmp(h, "0") == 0) o.schedule.handoff = false;
    return o;
}

static int ipcq(int runs) {
    kccl::emu::ChipSpec c;
    c.grid_w = 2, c.grid_h = 1, c.eth_cores = 1;
    c.worker_l1_bytes = 1464 * 1024;
    c.eth_l1_bytes = 16 * 1024;
    c.dram_bytes = 16 * 1024 * 1024;
    kccl::emu::Cluster cl(kccl::emu::topology::single_chip(c));
    ih::QueueConfig qc;
    qc.n_slots = 8, qc.slot_size = 64;
    ih::MemoryConfig mem;
    mem.block_l1 = 0x10000;
    mem.l1_bytes = c.worker_l1_bytes;
    mem.dram = {cl.chip(0).dram().x, cl.chip(0).dram().y};
    mem.dram_bytes = c.dram_bytes;
    const auto plan = ih::build_plan(ih::ring_1d_unidir(2), {{0, 0}, {1, 0}}, qc, mem);
    const uint32_t n = 100000;
    kccl::emu::Launcher launch(cl);
    launch.add(cl.chip(0).worker(0, 0), [&](auto& hal) -> uint64_t {
        iq::Queues<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
        auto* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(0x1000, 4));
        for (uint32_t m = 0; m < n; ++m) { *w = m; q.send(iq::Nsew::E, 0x1000, 64); }
        q.quiesce();
        return 0;
    }, plan.runtime_args(0));
    launch.add(cl.chip(0).worker(1, 0), [&](auto& hal) -> uint64_t {
        iq::Queues<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
        uint64_t bad = 0;
        for (uint32_t m = 0; m < n; ++m) {
            const iq::Slot s = q.recv(iq::Nsew::W);
            uint32_t w; std::memcpy(&w, q.data(s), 4); bad += w != m; q.release(s);
        }
        q.quiesce();
        if (bad) throw kccl::emu::EmulationError("bad");
        return 0;
    }, plan.runtime_args(1));
    for (int r = 0; r < runs; ++r) {
        ih::install_on(cl, 0, plan);
        auto rep = launch.run(options());
        if (!rep.ok()) { std::puts(rep.summary().c_str()); return 1; }
        std::printf("ipcq run hash %llx steps %llu\n", (unsigned long long)rep.run_hash, (unsigned long long)rep.steps);
    }
    return 0;
}

static int edm(int runs) {
    eb::StreamSpec spec;
    spec.channels = 1; spec.split = false; spec.buffers = 2; spec.packet_bytes = 16384; spec.warmup = 32; spec.measured = 2048;
    kccl::emu::Cluster cluster(eb::two_chips());
    kccl::emu::Launcher launch(cluster);
    const auto link = eb::add_stream_link(cluster, launch, spec);
    for (int r = 0; r < runs; ++r) {
        auto rep = launch.run(options());
        if (!rep.ok()) { std::puts(rep.summary().c_str()); return 1; }
        std::printf("edm run hash %llx steps %llu\n", (unsigned long long)rep.run_hash, (unsigned long long)rep.steps);
    }
    return 0;
}

static int ring(int runs) {
    eb::RingPing r(8, 30, 3000);
    for (int i = 0; i < runs; ++i) {
        r.reset();
        auto rep = r.launch.run(options());
        if (!rep.ok()) { std::puts(rep.summary().c_str()); return 1; }
        std::printf("ring run hash %llx steps %llu switches %llu ns per hop %.1f\n", (unsigned long long)rep.run_hash,
                    (unsigned long long)rep.steps, (unsigned long long)rep.switches,
                    double(rep.at(r.worker[0]).value) / (3000.0 * 8));
    }
    return 0;
}

static int mesh(int runs) {
    kccl::scenario::MeshSpec s;
    s.rows = s.cols = 64; s.rounds = 32;
    kccl::scenario::Mesh m(s);
    for (int r = 0; r < runs; ++r) {
        m.reinstall();
        auto rep = m.launch->run(options());
        if (!rep.ok() || m.bad_cores(rep)) { std::puts(rep.summary().substr(0, 2000).c_str()); return 1; }
        std::printf("mesh run hash %llx steps %llu\n", (unsigned long long)rep.run_hash, (unsigned long long)rep.steps);
    }
    return 0;
}

static int coll(bool all_reduce, bool edm, int runs) {
    namespace kc = kccl::emu::collective;
    using namespace kccl::coll;
    constexpr uint32_t kRanks = 8, kBytes = 1u << 20;
    kc::GroupOptions g;
    g.transport = edm ? Transport::edm : Transport::ipcq;
    g.ranks = kRanks;
    g.message_bytes = 16384;
    kc::Collective c;
    c.op = all_reduce ? Op::all_reduce : Op::all_gather;
    c.count = all_reduce ? kBytes / 4 : kBytes / 4 / kRanks;
    const kc::Layout L = kc::plan_collective(g, c, 4);
    g.buffer_bytes = kc::buffer_bytes_for(L, 4);
    kc::Group grp(g);
    grp.add([&](auto& hal, auto& link, const GroupArgs& ga) -> uint64_t {
        float* in = reinterpret_cast<float*>(hal.l1_ptr(ga.input_l1, std::max(L.in_elems, 1u) * 4));
        for (uint32_t i = 0; i < L.count; ++i) in[i] = float(ga.rank + 1);
        const ExecParams ep = kc::exec_params(L, ga, 0);
        const auto dirs = kc::group_dirs_of(ga);
        for (int i = 0; i <= runs; ++i) execute_any<Reducer<float, RedOp::sum>>(link, ep, dirs);
        link.quiesce();
        return 0;
    });
    kccl::emu::RunOptions o = options();
    o.dirty_l1 = kccl::emu::RunOptions::DirtyL1::off;
    o.watchdog = std::chrono::milliseconds(60000);
    auto rep = grp.run(o);
    if (!rep.ok()) { std::puts(rep.summary().c_str()); return 1; }
    std::printf("coll %s %s run hash %llx steps %llu\n", all_reduce ? "all_reduce" : "all_gather", edm ? "edm" : "ipcq",
                (unsigned long long)rep.run_hash, (unsigned long long)rep.steps);
    return 0;
}

int main(int argc, char** argv) {
    const int runs = argc > 2 ? std::atoi(argv[2]) : 1;
    if (argc > 1 && !std::strcmp(argv[1], "ipcq")) return ipcq(runs);
    if (argc > 1 && !std::strcmp(argv[1], "edm")) return edm(runs);
    if (argc > 1 && !std::strcmp(argv[1], "mesh")) return mesh(runs);
    if (argc > 1 && !std::strcmp(argv[1], "ring")) return ring(runs);
    if (argc > 1 && !std::strncmp(argv[1], "coll_", 5)) {
        const std::string w = argv[1];
        if (w == "coll_ar_ipcq" || w == "coll_ag_ipcq" || w == "coll_ar_edm" || w == "coll_ag_edm")
            return coll(w.compare(5, 2, "ar") == 0, w.find("edm") != std::string::npos, runs);
    }
    std::puts("usage: cg_driver ipcq|edm|mesh|ring|coll_ar_ipcq|coll_ag_ipcq|coll_ar_edm|coll_ag_edm [runs]");
    return 2;
}
#endif  // KCCL_CALLGRIND_DRIVER
