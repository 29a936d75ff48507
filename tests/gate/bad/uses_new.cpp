// Deliberately bad device code for `scripts/shim_gate.sh --self-test`: uses the heap through
// operator new/delete. It must compile under the gate's flags, and the gate must reject it.
// gate-expect: heap: _Znw
// gate-expect: heap: _Zdl

extern "C" int* kernel_make() { return new int(7); }

extern "C" void kernel_drop(int* p) { delete p; }
