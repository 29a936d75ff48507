// Mismatch: a global eth_send_packet call. tt-metal has none: eth_send_packet is a template in
// namespace internal_ (tunneling.h), in every release. The old shim called the global name and the
// old stub declared one, so the gate passed while every real ERISC build failed.
// gate-kind: erisc
// gate-layouts: legacy current
// gate-expect-error: 'eth_send_packet' was not declared in this scope
#include "hal/tt_metal.hpp"

void kernel_main() { eth_send_packet(0, 0x1000 >> 4, 0x2000 >> 4, 1); }
