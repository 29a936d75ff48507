// fabric_router_erisc.cpp — a chip fabric router as a tt-metal active-Ethernet kernel.
//
// Host side (tt-metal):
//   auto k = CreateKernel(program, "fabric_router_erisc.cpp", eth_core, EthernetConfig{.noc = NOC::NOC_0});
//   SetRuntimeArgs(program, k, eth_core, plan.routers[i].args);   // kccl::fabric::host::build_fabric
// The words of plan.init_words() are set before the program starts (semaphores the neighbours
// may increment first).
#include "hal/tt_metal.hpp"  // the device API for this core kind, then kccl::hal::TtMetal
#include "fabric/router.hpp"

namespace {
// Trivially constructible and destructible: constant-initialised in .bss, no constructor runs.
kccl::fabric::Router<> router;
}  // namespace

void kernel_main() {
    kccl::hal::TtMetal hal;
    router.run(hal);  // handshake, forwarding loop, ends after every route's last packet
}
