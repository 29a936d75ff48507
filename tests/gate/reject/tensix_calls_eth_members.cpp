// Mismatch: a Tensix kernel calls the shim's Ethernet operations. Tensix builds never see
// tt-metal's Ethernet API, so kccl::hal::TtMetal refuses at compile time, in full sentences.
// gate-kind: brisc
// gate-layouts: legacy current
// gate-expect-error: kccl::hal::TtMetal::eth_send is an Ethernet operation
// gate-expect-error: kccl::hal::TtMetal::eth_txq_busy is an Ethernet operation
// gate-expect-error: kccl::hal::TtMetal::context_switch is an Ethernet operation
#include "hal/tt_metal.hpp"

void kernel_main() {
    kccl::hal::TtMetal hal;
    if (!hal.eth_txq_busy(0)) hal.eth_send(0, 0x10000, 0x10000, 64);
    hal.context_switch();
}
