// Deliberately bad device code for `scripts/shim_gate.sh --self-test`: a namespace-scope object
// with a non-trivial constructor and destructor, i.e. dynamic initialisation (a _GLOBAL__sub_I
// function listed in .init_array) and static destruction (with -fno-use-cxa-atexit this GCC emits
// a _GLOBAL__sub_D function listed in .fini_array; others call atexit — both are rejected).
// It must compile under the gate's flags, and the gate must reject it.
// gate-expect: static-init: _GLOBAL__sub_I
// gate-expect: static-init: section .init_array
// gate-expect: static-init: _GLOBAL__sub_D
// gate-expect: static-init: section .fini_array

struct Tracer {
    Tracer();
    ~Tracer();
    int value;
};

Tracer tracer;

extern "C" int kernel_main() { return tracer.value; }
