// Mismatch: the pre-move include path under the current layout. Since the late-2025 move the
// Tensix API is api/dataflow/dataflow_api.h; there is no dataflow_api.h at the old place.
// gate-kind: brisc
// gate-layouts: current
// gate-expect-error: dataflow_api.h: No such file or directory
#include "dataflow_api.h"

void kernel_main() {}
