// worker_tensix.cpp — a Tensix data-movement kernel that streams pages over a link through an EDM.
//
// Host side (tt-metal):
//   auto k = CreateKernel(program, "worker_tensix.cpp", worker_core,
//                         DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
//                                            .noc = NOC::RISCV_0_default});
//   std::vector<uint32_t> args = {pages, page_bytes, src_l1};
//   auto adapter = plan.worker_args(kccl::edm::host::Side::a, /*channel=*/0, /*worker=*/0,
//                                   edm_noc_x, edm_noc_y);
//   args.insert(args.end(), adapter.begin(), adapter.end());
//   SetRuntimeArgs(program, k, worker_core, args);
//
// Runtime args: 0 pages, 1 page bytes, 2 L1 address of the first page (pages back to back),
//               3.. this worker's EDM channel (kccl::edm::args::w_count values).
#include "hal/tt_metal.hpp"  // the device API for this core kind, then kccl::hal::TtMetal
#include "edm/worker.hpp"

void kernel_main() {
    kccl::hal::TtMetal hal;
    const uint32_t pages = hal.arg(0);
    const uint32_t page_bytes = hal.arg(1);
    const uint32_t src_l1 = hal.arg(2);

    const kccl::edm::WorkerChannel channel = kccl::edm::load_worker_channel(hal, 3);
    kccl::edm::SenderAdapter<> tx(channel);
    for (uint32_t p = 0; p < pages; ++p) {
        tx.send(hal, src_l1 + p * page_bytes, page_bytes);  // waits for a free slot in the EDM
    }
    tx.close(hal);  // every page has landed in the EDM's L1
}
