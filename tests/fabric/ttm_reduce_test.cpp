// reduce_scatter and all_reduce over the chip fabric with the combine on the Tensix compute
// engine (kccl::coll::OnComputeEngine, kccl::hal::compute_reduce), as tt-metal's CCL ops reduce:
//   * the compute engine's cost on the Wormhole model (Op::compute_eltwise: a per-call cost plus
//     the FPU's ELWADD rate, 128 elements a cycle) and that a kernel's compute_reduce is charged
//     that and not the RISC-V's loads and stores;
//   * reduce_scatter's zero padding is charged for the padding only;
//   * bit-exact bfloat16 reduce_scatter and all_reduce against the plain host reference
//     (testing/inputs.hpp, written from the definitions; the combine order is the method's
//     fixed order, schedule.hpp) on 2- and 4-chip lines and an 8-chip ring, dirty L1, adversarial
//     schedules; and the same ops produce the same bits with and without the compute engine.
// "[long]": more sizes and seeds.
#include <catch2/catch.hpp>

#include <collectives/collectives.hpp>
#include <emulation/fabric/fabric.hpp>
#include <testing/inputs.hpp>

#include "fabric/chip_exec.hpp"
#include <emulation/collective.hpp>
#include <emulation/emulation.hpp>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace kccl::coll;
namespace cb = kccl::emu::collective;
namespace cf = kccl::emu::fabric;
namespace fh = kccl::fabric::host;
namespace emu = kccl::emu;

namespace {

using Bf = Reducer<bfloat16, RedOp::sum>;
using BfEngine = OnComputeEngine<Bf>;

static_assert(on_compute_engine_v<BfEngine>, "OnComputeEngine<R> must select the compute engine.");
static_assert(!on_compute_engine_v<Bf>, "A plain Reducer must combine on the RISC-V.");
static_assert(kccl::hal::has_compute_engine_v<emu::Hal>, "The emulation's HAL offers the compute engine.");

struct Case {
    Op op;
    Method method;
    const char* topology;
    fh::FabricKind kind;
    uint32_t ranks;
    uint32_t count;
    uint64_t seed;
    std::string describe() const {
        std::ostringstream s;
        s << op_name(op) << " " << method_name(method) << " on a " << ranks << "-chip " << topology << ", " << count
          << " bfloat16, seed " << seed;
        return s.str();
    }
};

struct Outcome {
    std::string error;                   ///< empty: ran and matched the host reference
    std::vector<std::vector<uint8_t>> out;  ///< every rank's output buffer
    emu::vtime_t makespan = 0;
};

/// Runs c with reducer Red (adversarial, dirty L1) or timed (no adversary); checks every output.
template <class Red>
Outcome run_case(const Case& c, bool timed) {
    constexpr uint32_t eb = sizeof(bfloat16);
    Outcome res;
    Shape sh;
    sh.op = c.op;
    sh.method = c.method;
    sh.topo = Topology::ring;
    sh.ranks = c.ranks;
    cf::BedOptions o;
    o.topology = c.topology;
    o.kind = c.kind;
    o.ranks = c.ranks;
    o.message_bytes = 512;
    o.peer_slots = 4;
    const cb::Layout L = cb::make_layout(sh, c.count, cb::ChunkLimit{o.message_bytes / eb, o.peer_slots});
    if (const char* err = validate(L.shape)) {
        res.error = std::string("not supported: ") + err;
        return res;
    }
    o.buffer_bytes = cb::buffer_bytes_for(L, eb);
    cf::Bed bed(o);
    const uint64_t seed = c.seed;
    bed.add(kccl::coll::test::seeded_fabric_kernel<Red>(L, seed, RedOp::sum, true));
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(20000);
    std::unique_ptr<emu::TimingModel> model;
    if (timed) {
        model = emu::wormhole_model();
        ro.timing = model.get();
    } else {
        ro.adversary.enabled = true;  // dirty L1 comes with the adversary (RunOptions::DirtyL1::with_adversary)
        ro.adversary.seed = seed * 977 + 3;
    }
    const emu::RunReport rep = bed.run(ro);
    if (!rep.ok()) {
        res.error = "run failed: " + rep.summary();
        return res;
    }
    res.makespan = rep.makespan;
    const auto [nbad, bad] = kccl::testing::check_outputs<bfloat16>(L, RedOp::sum, seed, [&](uint32_t r) { return bed.output(r); });
    if (nbad) res.error = std::to_string(nbad) + " wrong elements:" + bad;
    for (uint32_t r = 0; r < bed.ranks(); ++r) res.out.emplace_back(bed.output(r), bed.output(r) + L.out_elems * eb);
    return res;
}

const Case kCases[] = {
    {Op::reduce_scatter, Method::line, "line", fh::FabricKind::line_1d, 2, 2 * 700, 21},
    {Op::all_reduce, Method::line, "line", fh::FabricKind::line_1d, 2, 1001, 22},
    {Op::reduce_scatter, Method::line, "line", fh::FabricKind::line_1d, 4, 4 * 333, 23},
    {Op::all_reduce, Method::line, "line", fh::FabricKind::line_1d, 4, 2000, 24},
    {Op::reduce_scatter, Method::ring_bidir, "ring", fh::FabricKind::ring_1d, 8, 8 * 250, 25},
    {Op::all_reduce, Method::ring_bidir, "ring", fh::FabricKind::ring_1d, 8, 3001, 26},
};

}  // namespace

TEST_CASE("compute engine: the Wormhole model charges a per-call cost plus the FPU's ELWADD rate", "[fabric][ttm]") {
    emu::WormholeModel m;
    m.reset(emu::topology::single_chip());
    const auto& w = m.options();
    REQUIRE(w.compute_elems_per_cycle == 128);  // tt-isa-documentation: ELWADD, 8 x 16 per cycle
    // 4096 elements: 32 cycles of ELWADD; 4097: 33 (a partial block takes a cycle).
    CHECK(m.issue_cost({0, 0, 0}, emu::Op::compute_eltwise, 4096) == (w.cost_compute_call + 32) * 1000ull);
    CHECK(m.issue_cost({0, 0, 0}, emu::Op::compute_eltwise, 4097) == (w.cost_compute_call + 33) * 1000ull);
    // The same combine by the RISC-V: three buffers of 8 KiB through 4-byte loads and stores.
    const auto riscv = 3 * m.issue_cost({0, 0, 0}, emu::Op::l1_access, 8192);
    CHECK(riscv > 50 * m.issue_cost({0, 0, 0}, emu::Op::compute_eltwise, 4096));
    emu::WaferModel wafer;
    wafer.reset(emu::topology::single_chip());
    CHECK_THROWS_WITH(wafer.issue_cost({0, 0, 0}, emu::Op::compute_eltwise, 16),
                      Catch::Contains("a wafer-scale PE has no Tensix compute engine"));
}

TEST_CASE("compute engine: a kernel's compute_reduce is timed at the engine's rate, bit-exact", "[fabric][ttm]") {
    // Core (0,0) combines n bfloat16 elements (out = a + b) with compute_reduce, core (1,0) the
    // same with the RISC-V (Reducer::combine through l1_ptr); their modelled end times and the
    // bits are compared.
    constexpr uint32_t n = 4096, a = 0x1000, b = a + 2 * n, out = b + 2 * n;
    emu::ChipSpec chip;
    chip.grid_w = 2;
    chip.worker_l1_bytes = 0x10000;
    emu::Cluster cluster(emu::topology::single_chip(chip));
    const emu::CoreCoord engine{0, 0, 0}, riscv{0, 1, 0};
    std::vector<bfloat16> va(n), vb(n);
    for (uint32_t i = 0; i < n; ++i) {
        va[i] = kccl::testing::input_value<bfloat16>(5, RedOp::sum, true, 0, i);
        vb[i] = kccl::testing::input_value<bfloat16>(5, RedOp::sum, true, 1, i);
    }
    for (const auto c : {engine, riscv}) {
        cluster.write(c, a, va.data(), 2 * n);
        cluster.write(c, b, vb.data(), 2 * n);
    }
    emu::Launcher launch(cluster);
    launch.add(engine, [](auto& hal) -> uint64_t {
        kccl::hal::compute_reduce<BfEngine>(hal, out, a, b, n);
        return 0;
    });
    launch.add(riscv, [](auto& hal) -> uint64_t {
        Bf::combine(reinterpret_cast<bfloat16*>(hal.l1_ptr(out, 2 * n)), reinterpret_cast<const bfloat16*>(hal.l1_ptr(a, 2 * n)),
                    reinterpret_cast<const bfloat16*>(hal.l1_ptr(b, 2 * n)), n);
        return 0;
    });
    auto model = emu::wormhole_model();
    emu::RunOptions ro;
    ro.timing = model.get();
    const emu::RunReport rep = launch.run(ro);
    INFO(rep.summary());
    REQUIRE(rep.ok());
    emu::WormholeOptions w;
    CHECK(rep.at(engine).modelled_end == (w.cost_compute_call + n / 128) * 1000ull);
    CHECK(rep.at(riscv).modelled_end == 3 * (w.cost_l1_access_base + 2 * n / 4) * 1000ull);
    std::vector<bfloat16> e(n), r(n);
    cluster.read(engine, out, e.data(), 2 * n);
    cluster.read(riscv, out, r.data(), 2 * n);
    for (uint32_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(std::memcmp(&e[i], &r[i], 2) == 0);
        const bfloat16 want = Bf::apply(va[i], vb[i]);
        REQUIRE(std::memcmp(&e[i], &want, 2) == 0);
    }
}

TEST_CASE("fabric ttm reductions: bit-exact bfloat16 reduce_scatter and all_reduce, compute engine, adversarial",
          "[fabric][ttm]") {
    for (const Case& c : kCases) {
        INFO(c.describe());
        const Outcome e = run_case<BfEngine>(c, false);
        CHECK(e.error == "");
        // The same bits as the RISC-V combine: the engine changes where the combine runs, not its order.
        const Outcome r = run_case<Bf>(c, false);
        CHECK(r.error == "");
        CHECK(e.out == r.out);
    }
}

TEST_CASE("fabric ttm reductions: the compute engine shortens the modelled time of a reduction", "[fabric][ttm]") {
    const Case c{Op::reduce_scatter, Method::ring_bidir, "ring", fh::FabricKind::ring_1d, 8, 8 * 2048, 31};
    INFO(c.describe());
    const Outcome e = run_case<BfEngine>(c, true), r = run_case<Bf>(c, true);
    REQUIRE(e.error == "");
    REQUIRE(r.error == "");
    CHECK(e.out == r.out);
    CHECK(e.makespan < r.makespan);
}

// reduce_scatter zero-pads the last rank's output past the tensor's end. The padding is all the
// executor stores there, so the timed engine charges that, not the whole output: a tensor two
// elements short of a full chunk grid takes about the time of the full one (charging the 32 KiB
// output at the RISC-V's 4 bytes a cycle would add ~8 us, ~8% of this run).
TEST_CASE("fabric ttm reductions: reduce_scatter's zero padding costs the padding, not the output", "[fabric][ttm]") {
    const Case full{Op::reduce_scatter, Method::line, "line", fh::FabricKind::line_1d, 2, 2 * 64 * 256, 41};
    Case padded = full;
    padded.count = full.count - 2;  // rank 1 pads its last 2 elements
    INFO(padded.describe());
    const Outcome a = run_case<BfEngine>(full, true), b = run_case<BfEngine>(padded, true);
    REQUIRE(a.error == "");
    REQUIRE(b.error == "");
    INFO("makespan full " << a.makespan << ", padded " << b.makespan << " (ticks)");
    CHECK(double(b.makespan) < double(a.makespan) * 1.02);
}

TEST_CASE("fabric ttm reductions: more sizes and seeds", "[fabric][ttm][long]") {
    for (const Case& base : kCases)
        for (uint32_t count : {base.ranks * 1u, base.ranks * 31u, base.ranks * 4096u + 3u})
            for (uint64_t seed : {101ull, 202ull}) {
                Case c = base;
                c.count = count;
                c.seed = seed;
                INFO(c.describe());
                const Outcome e = run_case<BfEngine>(c, false);
                CHECK(e.error == "");
            }
}
