// One entry point, three machines: the same run_collective runs an all_reduce over the routed
// chip fabric of an emulated 32-chip Galaxy and over the PE fabric of an emulated wafer, with
// your own inputs. Exit code 0: both results are right.
#include <emulation/collective.hpp>

#include <cstdio>
#include <vector>

namespace kc = kccl::emu::collective;
using namespace kccl::coll;

int main() {
    // tt-metal's routed chip fabric on a Galaxy (4 x 8 chips, 2D routing): one rank per chip.
    kc::GroupOptions galaxy;
    galaxy.transport = Transport::fabric;
    galaxy.cluster = "galaxy";
    galaxy.ranks = 32;
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = 256;  // method: automatic
    std::vector<std::vector<float>> in(32, std::vector<float>(256, 1.f));
    auto r = kc::run_collective<Reducer<float, RedOp::sum>>(galaxy, c, in);
    if (!r.ok() || r.outputs[31][255] != 32.f) return std::puts(r.summary().c_str()), 1;
    std::printf("galaxy: all_reduce by %s: %g on every chip\n", r.method_name().c_str(), r.outputs[0][0]);

    // The wafer's PE fabric: a 4 x 4 grid of PEs, the pattern the cost model finds fastest.
    kc::GroupOptions wafer;
    wafer.transport = Transport::wafer;
    wafer.ranks = 16;
    wafer.mesh_cols = 4;
    std::vector<std::vector<int32_t>> pe(16, std::vector<int32_t>(256));
    for (int32_t p = 0; p < 16; ++p) pe[p].assign(256, p);
    auto w = kc::run_collective<Reducer<int32_t, RedOp::max>>(wafer, c, pe);
    if (!w.ok() || w.outputs[0][0] != 15) return std::puts(w.summary().c_str()), 1;
    std::printf("wafer: all_reduce (max) by %s in %llu cycles: %d on every PE\n", w.method_name().c_str(),
                (unsigned long long)w.report.makespan, w.outputs[5][7]);
    return 0;
}
