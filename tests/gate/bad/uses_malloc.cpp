// Deliberately bad device code for `scripts/shim_gate.sh --self-test`: uses the C heap.
// It must compile under the gate's flags, and the gate must reject it.
// gate-expect: heap: malloc
// gate-expect: heap: free
#include <stdlib.h>

extern "C" void* kernel_get(unsigned n) { return malloc(n); }

extern "C" void kernel_put(void* p) { free(p); }
