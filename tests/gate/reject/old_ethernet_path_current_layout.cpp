// Mismatch: the pre-move Ethernet path under the current layout (now internal/ethernet/...).
// gate-kind: erisc
// gate-layouts: current
// gate-expect-error: ethernet/tunneling.h: No such file or directory
#include "ethernet/tunneling.h"

void kernel_main() {}
