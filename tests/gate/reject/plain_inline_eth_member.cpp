// Mismatch: why the shim's Ethernet members are templates. A plain inline member that names the
// Ethernet API (as the old shim's did) breaks every Tensix kernel that includes it, even one that
// never calls the member: its body is compiled where the shim is included.
// gate-kind: brisc
// gate-layouts: legacy current
// gate-expect-error: 'internal_' has not been declared
#include "hal/tt_metal.hpp"

struct OldStyleShim {
    inline bool eth_txq_busy(uint32_t queue) const { return internal_::eth_txq_is_busy(queue); }
};

void kernel_main() {}
