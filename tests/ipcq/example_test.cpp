// The examples/ipcq_ring kernel (also compiled for rv32 by the shim gate) on the emulation.
#include "ipcq_util.hpp"

#include "../../examples/ipcq_ring/ipcq_ring_kernels.hpp"

using namespace kccl::test;
using namespace kccl::test::ipcq;

TEST_CASE("ipcq example: ring all-gather of 5 ranks in L1 and DRAM placement", "[ipcq][e2e][example]") {
    for (auto placement : {iq::Placement::l1, iq::Placement::dram}) {
        constexpr uint32_t kWorld = 5, kBytes = 96, kOut = kScratch;
        ih::QueueConfig qc;
        qc.n_slots = 2, qc.slot_size = kBytes, qc.placement = placement;
        Setup<iq::Nsew> s(ih::ring_1d(kWorld), qc);
        for (uint32_t r = 0; r < kWorld; ++r) {
            std::vector<uint32_t> block(kBytes / 4);
            for (uint32_t w = 0; w < block.size(); ++w) block[w] = pattern(r, r, 0, w);
            s.cluster.write(s.core(r), kOut + r * kBytes, block.data(), kBytes);
            auto args = s.plan.runtime_args(r);
            args.insert(args.end(), {kWorld, kBytes, kOut});
            s.launch.add(s.core(r), [](auto& hal) { ipcq_ring::all_gather(hal); }, args);
        }
        ih::attach_pointer_dumps(s.launch, s.cluster, 0, s.plan);
        KCCL_REQUIRE_OK(s.run(adversarial(5)));
        for (uint32_t r = 0; r < kWorld; ++r)
            for (uint32_t b = 0; b < kWorld; ++b) {
                std::vector<uint32_t> got(kBytes / 4);
                s.cluster.read(s.core(r), kOut + b * kBytes, got.data(), kBytes);
                for (uint32_t w = 0; w < got.size(); ++w) {
                    INFO("rank " << r << " block " << b << " word " << w);
                    REQUIRE(got[w] == pattern(b, b, 0, w));
                }
            }
    }
}
