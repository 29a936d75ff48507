// Deliberately bad device code for `scripts/shim_gate.sh --self-test`: a function-local static
// with dynamic initialisation, which needs a guard variable and the __cxa_guard_* runtime.
// It must compile under the gate's flags, and the gate must reject it.
// gate-expect: static-init: __cxa_guard_acquire
// gate-expect: static-init: _ZGV

struct Lazy {
    Lazy();
    int value;
};

extern "C" int kernel_main() {
    static Lazy lazy;
    return lazy.value;
}
