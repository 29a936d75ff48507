// Tutorial step 2 (docs/tutorial.md): collectives in one's own project. First the one-call form
// (run_collective), then one's own kernel body around the collective (fused compute), each run
// over several adversarial seeds. Exit code 0: every output as defined.
#include <emulation/collective.hpp>

#include <cstdio>
#include <vector>

namespace kc = kccl::emu::collective;
using namespace kccl::coll;
using Sum = Reducer<float, RedOp::sum>;

int main() {
    const uint32_t ranks = 4, count = 1000;

    // (a) all_reduce of float over EDM on a ring of 4 emulated chips.
    kc::GroupOptions g;
    g.transport = Transport::edm;
    g.ranks = ranks;
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = count;
    std::vector<std::vector<float>> in(ranks, std::vector<float>(count));
    for (uint32_t r = 0; r < ranks; ++r)
        for (uint32_t i = 0; i < count; ++i) in[r][i] = float(r + i % 7);
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        kccl::emu::RunOptions ro = kc::default_run_options();
        ro.adversary.enabled = true;
        ro.adversary.seed = seed;
        const auto res = kc::run_collective<Sum>(g, c, in, ro);
        if (!res.ok()) {
            std::printf("FAILED (seed %llu):\n%s", (unsigned long long)seed, res.summary().c_str());
            return 1;
        }
        for (uint32_t r = 0; r < ranks; ++r)
            for (uint32_t i = 0; i < count; ++i)
                if (res.outputs[r][i] != float(0 + 1 + 2 + 3) + 4.f * float(i % 7)) {
                    std::printf("FAILED: rank %u element %u is %g (replay: %s)\n", r, i, res.outputs[r][i], res.replay().c_str());
                    return 1;
                }
        if (seed == 1) std::printf("all_reduce by %s: ok, %.0f us of host time\n", method_name(res.method()), res.host_us);
    }

    // (b) one's own kernel: scale the input by (rank + 1), all_reduce, add 1 (compute fused
    // before and after the collective, in L1, on the emulated cores).
    const kc::Layout L = kc::plan_collective(g, c, sizeof(float));
    g.buffer_bytes = kc::buffer_bytes_for(L, sizeof(float));
    kc::Group grp(g);
    grp.add<kc::link_edm>([L](auto& hal, auto& link, const GroupArgs& ga) -> uint64_t {
        float* x = reinterpret_cast<float*>(hal.l1_ptr(ga.input_l1, L.in_elems * 4));
        for (uint32_t i = 0; i < L.count; ++i) x[i] = float(ga.rank + 1) * float(i % 5);
        execute_any<Sum>(link, kc::exec_params(L, ga), kc::group_dirs_of(ga));
        float* y = reinterpret_cast<float*>(hal.l1_ptr(ga.output_l1, L.out_elems * 4));
        for (uint32_t i = 0; i < L.count; ++i) y[i] += 1.f;
        link.quiesce();
        return 0;
    });
    const auto report = grp.run(kc::default_run_options());
    if (!report.ok()) {
        std::printf("FAILED:\n%s", report.summary().c_str());
        return 1;
    }
    for (uint32_t r = 0; r < ranks; ++r) {
        const float* y = reinterpret_cast<const float*>(grp.output(r));
        for (uint32_t i = 0; i < count; ++i)
            if (y[i] != 10.f * float(i % 5) + 1.f) {
                std::printf("FAILED: fused kernel, rank %u element %u is %g\n", r, i, y[i]);
                return 1;
            }
    }
    std::printf("fused kernel: ok\n");
    return 0;
}
