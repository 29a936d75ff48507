// Mismatch: a Tensix kernel includes tt-metal's Ethernet API. Only active-Ethernet (ERISC) builds
// can; the stub says so instead of quietly declaring it.
// gate-kind: brisc
// gate-layouts: legacy current
// gate-expect-error: only available to active-Ethernet (ERISC) kernels
#if __has_include("internal/ethernet/tunneling.h")
#include "internal/ethernet/tunneling.h"
#else
#include "ethernet/tunneling.h"
#endif

void kernel_main() {}
