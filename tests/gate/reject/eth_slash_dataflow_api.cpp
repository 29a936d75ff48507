// Mismatch: "eth/dataflow_api.h", the path kccl's docs once named. No tt-metal release has it.
// gate-kind: erisc
// gate-layouts: legacy current
// gate-expect-error: eth/dataflow_api.h: No such file or directory
#include "eth/dataflow_api.h"

void kernel_main() {}
