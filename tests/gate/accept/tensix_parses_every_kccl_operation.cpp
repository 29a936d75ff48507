// A Tensix kernel that uses every non-Ethernet operation of kccl::hal::TtMetal, including the
// semaphore waits (which map to noc_semaphore_wait* here and to eth_noc_semaphore_wait* on ERISC).
// gate-kind: ncrisc
// gate-layouts: legacy current
#include "hal/tt_metal.hpp"

static_assert(kccl::hal::is_backend_v<kccl::hal::TtMetal>,
              "TtMetal must model the contract on Tensix too.");

void kernel_main() {
    kccl::hal::TtMetal hal;
    hal.sem_wait(0x10000, 1);
    hal.sem_wait_min(0x10010, hal.sem_read(0x10020));
    hal.idle();
}
