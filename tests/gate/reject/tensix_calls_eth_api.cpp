// Mismatch: a Tensix kernel calls tt-metal's Ethernet API directly. It is not declared there.
// gate-kind: ncrisc
// gate-layouts: legacy current
// gate-expect-error: 'internal_' has not been declared
// gate-expect-error: 'run_routing' was not declared in this scope
#include "hal/tt_metal.hpp"

void kernel_main() {
    internal_::eth_send_packet(0, 0x1000 >> 4, 0x2000 >> 4, 1);
    run_routing();
}
