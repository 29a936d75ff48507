// edm_erisc.cpp — an ERISC Data Mover as a tt-metal active-Ethernet kernel.
//
// Host side (tt-metal):
//   auto k = CreateKernel(program, "edm_erisc.cpp", eth_core,
//                         EthernetConfig{.noc = NOC::NOC_0});
//   SetRuntimeArgs(program, k, eth_core, plan.edm_args(kccl::edm::host::Side::a));
// The args are the L1 layout and worker list that kccl::edm::host::LinkPlan computed.
#include "hal/tt_metal.hpp"  // the device API for this core kind, then kccl::hal::TtMetal
#include "edm/edm.hpp"

namespace {
// Compile-time capacities of this EDM: two channels of up to four workers and four slots each.
struct EdmConfig : kccl::edm::DefaultConfig {
    static constexpr uint32_t max_channels = 2;
    static constexpr uint32_t max_workers_per_channel = 4;
    static constexpr uint32_t max_buffers_per_channel = 4;
};

// Trivially constructible and destructible: constant-initialised in .bss, no constructor runs.
kccl::edm::Edm<EdmConfig> edm;
}  // namespace

void kernel_main() {
    kccl::hal::TtMetal hal;
    // Handshake, main loop, teardown. A layout this EdmConfig cannot hold returns at once with
    // the reason (Status) before any traffic; the host builder rejects such a layout earlier.
    const kccl::edm::Status status = edm.run(hal);
    (void)status;
}
