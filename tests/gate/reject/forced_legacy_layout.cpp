// Mismatch: the shim told to use the legacy layout (KCCL_TT_METAL_LAYOUT=1) on a current tt-metal.
// gate-kind: brisc
// gate-layouts: current
// gate-flags: -DKCCL_TT_METAL_LAYOUT=1
// gate-expect-error: dataflow_api.h: No such file or directory
#include "hal/tt_metal.hpp"

void kernel_main() {}
