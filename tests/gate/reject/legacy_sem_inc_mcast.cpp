// Mismatch: sem_inc_mcast against the legacy tt-metal API, which has no noc_semaphore_inc_multicast.
// The shim refuses at compile time, in a full sentence.
// gate-kind: brisc
// gate-layouts: legacy
// gate-expect-error: kccl::hal::TtMetal::sem_inc_mcast needs tt-metal's noc_semaphore_inc_multicast
#include "hal/tt_metal.hpp"

void kernel_main() {
    kccl::hal::TtMetal hal;
    hal.sem_inc_mcast(kccl::hal::NocRect{1, 1, 2, 2}, 0x10000, 1, 4);
}
