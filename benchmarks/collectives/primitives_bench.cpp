// benchmarks/collectives/primitives_bench.cpp — the primitives' hot loop over both links, and
// memcpy of the same chunk size in the same run.
//
//   coll/prim/recv_reduce_copy/<transport>/<chunk>   2 ranks: rank 0 `send`s chunks of float,
//       rank 1 `recv_reduce_copy`s each with its input into its output (sum). Timed on rank 1.
//   coll/prim/recv_reduce_send/<transport>/<chunk>   3-rank line: rank 0 sends, rank 1
//       `recv_reduce_send`s (the hot loop of a ring reduce-scatter step), rank 2
//       `recv_reduce_copy`s. Timed on rank 2.
// Groups come from the collective plan (4 KiB messages, 4 slots). IPCQ: PEs of one chip; EDM:
// one worker per chip, EDMs on the Ethernet cores between them.
// Reports bytes_per_second (chunk payload), and paired with each run memcpy of the same chunk
// size: memcpy_bytes_per_second, vs_memcpy (see harness.hpp); cpu_cores — read it first (the
// emulated groups run 2-7 threads on the machine's cores).
#include "harness.hpp"

#include <collectives/host/plan.hpp>
#include <collectives/link_edm.hpp>
#include <collectives/link_ipcq.hpp>
#include <collectives/ops.hpp>
#include <collectives/primitives.hpp>
#include <edm/edm.hpp>

#include <memory>
#include <string>

namespace {

namespace coll = kccl::coll;
namespace ch = kccl::coll::host;
using Red = coll::Reducer<float, coll::RedOp::sum>;

constexpr uint32_t kMessage = 4096, kSlots = 4;
constexpr uint64_t kBytesPerRun = 8u << 20;  // payload through the timed rank per run

struct Group {
    std::unique_ptr<kccl::emu::Cluster> cl;
    ch::GroupPlan plan;
};

Group make_group(coll::Transport t, uint32_t n, uint32_t chunk_bytes) {
    kccl::emu::ChipSpec chip;
    ch::GroupSpec g;
    g.transport = t;
    g.shape = coll::GroupShape::line;
    g.message_bytes = kMessage;
    g.slots = kSlots;
    g.buffer_bytes = chunk_bytes;
    chip.worker_l1_bytes = 1464 * 1024;
    g.worker_l1 = {0x10000, chip.worker_l1_bytes, 0};
    Group out;
    if (t == coll::Transport::ipcq) {
        chip.grid_w = 4, chip.grid_h = 1, chip.eth_cores = 1, chip.eth_l1_bytes = 16 * 1024;
        out.cl = std::make_unique<kccl::emu::Cluster>(kccl::emu::topology::single_chip(chip));
        for (uint32_t r = 0; r < n; ++r) g.workers.push_back({0, r, 0});
    } else {
        chip.grid_w = 1, chip.grid_h = 1, chip.eth_cores = 2, chip.eth_l1_bytes = 256 * 1024;
        g.eth_l1 = {0x1000, chip.eth_l1_bytes, 0x800};
        out.cl = std::make_unique<kccl::emu::Cluster>(kccl::emu::topology::line(n, 1, chip));
        for (uint32_t r = 0; r < n; ++r) g.workers.push_back({r, 0, 0});
        g.hops = ch::edm_hops_from(*out.cl, g);
    }
    out.plan = ch::build_group(g);
    return out;
}

template <class H, class F>
uint64_t with_link(H& hal, F&& f) {
    const coll::GroupArgs g = coll::load_group_args(hal, 0);
    if (g.transport == coll::Transport::ipcq) {
        coll::IpcqLink<H> link(hal, g.link_args);
        return f(link, g);
    }
    coll::EdmLink<H> link(hal, g.link_args);
    return f(link, g);
}

void prim(benchmark::State& state, coll::Transport t, bool forward, uint32_t chunk_bytes) {
    const uint32_t n = forward ? 3 : 2;
    Group grp = make_group(t, n, chunk_bytes);
    const uint32_t elems = chunk_bytes / 4;
    const uint32_t chunks = uint32_t(kBytesPerRun / chunk_bytes), warm = chunks / 8 + 1;
    kccl::emu::Launcher launch(*grp.cl);
    ch::install_on(grp.plan, *grp.cl, launch);
    ch::add_kernels(
        grp.plan, launch,
        [=](auto& hal) {
            return with_link(hal, [&](auto& link, const coll::GroupArgs& g) -> uint64_t {
                float* in = reinterpret_cast<float*>(hal.l1_ptr(g.input_l1, chunk_bytes));
                for (uint32_t i = 0; i < elems; ++i) in[i] = float(g.rank + i % 7);
                kccl::bench::RegionClock clock;
                for (uint32_t c = 0; c < warm + chunks; ++c) {
                    if (c == warm) clock.start();
                    if (g.rank == 0) coll::send<Red>(link, g.next_dir, g.input_l1, elems);
                    else if (g.rank + 1 < g.ranks) coll::recv_reduce_send<Red>(link, g.prev_dir, g.next_dir, g.input_l1, elems);
                    else coll::recv_reduce_copy<Red>(link, g.prev_dir, g.input_l1, g.output_l1, elems);
                }
                const uint64_t ns = clock.stop();
                link.quiesce();
                // The last rank checks one element of the last chunk: sum over ranks of (r + i % 7).
                if (g.rank + 1 == g.ranks) {
                    const float* out = reinterpret_cast<const float*>(hal.l1_ptr(g.output_l1, chunk_bytes));
                    const uint32_t i = elems - 1;
                    float want = 0;
                    for (uint32_t r = 0; r < g.ranks; ++r) want += float(r + i % 7);
                    if (out[i] != want) throw kccl::emu::EmulationError("primitives_bench: wrong sum");
                    return ns;
                }
                return uint64_t(0);
            });
        },
        [](auto& hal) {
            kccl::edm::Edm<coll::EdmLinkConfig> e;
            return e.run(hal) == kccl::edm::Status::ok ? uint64_t(0) : uint64_t(1);
        });
    struct Images {  // re-install the IPCQ blocks before each run (semaphores: the launcher's init words)
        kccl::emu::Cluster& c;
        void write(const ch::Core& k, uint32_t a, const uint8_t* p, size_t b) { c.write({k.chip, k.x, k.y}, a, p, b); }
        void init_word(const ch::Core&, uint32_t, uint32_t) {}
    } images{*grp.cl};
    const auto last = grp.plan.ranks[n - 1].worker;
    const auto t0 = kccl::bench::run_timed(
        state, launch, {last.chip, last.x, last.y}, [&] { grp.plan.emit(images); },
        [&] { return kccl::bench::memcpy_bytes_per_second(chunk_bytes, kBytesPerRun); });
    kccl::bench::set_bandwidth_counters(state, t0, uint64_t(chunks) * chunk_bytes);
}

void register_all() {
    for (coll::Transport t : {coll::Transport::ipcq, coll::Transport::edm})
        for (bool fwd : {false, true})
            for (uint32_t chunk : {16u * 1024, 64u * 1024}) {
                const std::string name = std::string("coll/prim/") + (fwd ? "recv_reduce_send/" : "recv_reduce_copy/") +
                                         (t == coll::Transport::edm ? "edm/" : "ipcq/") + std::to_string(chunk / 1024) + "KiB";
                benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { prim(s, t, fwd, chunk); })
                    ->UseManualTime()
                    ->Iterations(kccl::bench::kEmulatedRuns)
                    ->Unit(benchmark::kMillisecond);
            }
}

const int registered = (register_all(), 0);

}  // namespace
