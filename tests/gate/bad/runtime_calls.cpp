// Deliberately bad device code for `scripts/shim_gate.sh --self-test`. -fno-exceptions and
// -fno-rtti stop the compiler from emitting exception or RTTI support itself, but code (or a
// library it pulls in) can still reach the C++ runtime directly; this does, and the gate must
// reject it. It must compile under the gate's flags.
// gate-expect: exceptions: __cxa_allocate_exception
// gate-expect: exceptions: __cxa_throw
// gate-expect: rtti: __dynamic_cast

extern "C" {
void* __cxa_allocate_exception(unsigned long size);
[[noreturn]] void __cxa_throw(void* obj, void* type, void (*dtor)(void*));
void* __dynamic_cast(const void* src, const void* src_type, const void* dst_type, long hint);
}

extern "C" void kernel_fail() { __cxa_throw(__cxa_allocate_exception(4), nullptr, nullptr); }

extern "C" void* kernel_cast(const void* p) { return __dynamic_cast(p, nullptr, nullptr, -1); }
