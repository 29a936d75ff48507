// fabric_worker_tensix.cpp — a Tensix data-movement kernel that sends one message to every other
// rank over the chip fabric (FabricLink: every rank reachable) and receives one from each.
//
// Host side (tt-metal):
//   std::vector<uint32_t> args = {src_l1, bytes};
//   auto link = plan.worker_args(rank);                // kccl::fabric::host::build_fabric
//   args.insert(args.end(), link.begin(), link.end());
//   SetRuntimeArgs(program, k, worker_core, args);
#include "hal/tt_metal.hpp"  // the device API for this core kind, then kccl::hal::TtMetal
#include "collectives/link_fabric.hpp"

void kernel_main() {
    kccl::hal::TtMetal hal;
    const uint32_t src_l1 = hal.arg(0), bytes = hal.arg(1);
    kccl::fabric::FabricLink<kccl::hal::TtMetal> link(hal, 2);
    for (uint32_t d = 0; d < link.directions(); ++d) link.send(d, src_l1, bytes);
    for (uint32_t d = 0; d < link.directions(); ++d) link.release(link.recv(d));
    link.quiesce();
}
