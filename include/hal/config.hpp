// kccl/hal/config.hpp — the one place that owns the preprocessor for device code.
//
// What it is: attribute and feature macros used by every device header, and the device-side
// assertion hook. Bodies of algorithms contain no #if; they use what this header defines.
//
// Who includes it: every header under include/. It is C++17, freestanding, and pulls in
// nothing but <stdint.h>/<stddef.h>.
#pragma once

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define KCCL_FORCEINLINE inline __attribute__((always_inline))
#define KCCL_NOINLINE __attribute__((noinline))
/// Error paths: out of line and laid out away from the hot code.
#define KCCL_COLD __attribute__((noinline, cold))
#define KCCL_LIKELY(x) __builtin_expect(!!(x), 1)
#define KCCL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define KCCL_FORCEINLINE inline
#define KCCL_NOINLINE
#define KCCL_COLD
#define KCCL_LIKELY(x) (x)
#define KCCL_UNLIKELY(x) (x)
#endif

/// KCCL_DEVICE_BUILD: 1 when compiled for a device core (tt-metal's JIT defines KERNEL_BUILD /
/// TENSIX_FIRMWARE or COMPILE_FOR_ERISC / _BRISC / _NCRISC / _TRISC; any RISC-V target counts too).
#if defined(KERNEL_BUILD) || defined(TENSIX_FIRMWARE) || defined(COMPILE_FOR_ERISC) || defined(COMPILE_FOR_BRISC) || \
    defined(COMPILE_FOR_NCRISC) || defined(COMPILE_FOR_TRISC) || defined(__riscv)
#define KCCL_DEVICE_BUILD 1
#else
#define KCCL_DEVICE_BUILD 0
#endif

/// A blocking slow path (a wait that found nothing ready). On the device it stays out of line:
/// instruction memory is small and a wait only spins on an L1 word. On a host (the emulation) it
/// is inlined into the kernel: there a wait is a fiber switch, and when the fiber resumes, every
/// frame between the kernel's loop and the switch that differs from the previous fiber's costs a
/// mispredicted return (docs/performance.md, "Where the fiber engine's time goes"). Define it
/// yourself (before any kccl include) to choose.
#ifndef KCCL_WAIT_PATH
#if KCCL_DEVICE_BUILD || !(defined(__GNUC__) || defined(__clang__))
#define KCCL_WAIT_PATH KCCL_NOINLINE
#else
#define KCCL_WAIT_PATH KCCL_FORCEINLINE
#endif
#endif

// C++20 concepts are offered only where the compiler has them; tt-metal builds kernels as C++17.
#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
#define KCCL_HAS_CONCEPTS 1
#else
#define KCCL_HAS_CONCEPTS 0
#endif

// Device errors: ONE path for every check in device code (EDM, IPCQ, collectives, user kernels).
//
//   KCCL_ASSERT(expr, msg)  checks `expr`; on failure calls kccl::detail::assert_fail.
//   kccl::detail::assert_fail(expr, msg, file, line)  calls the installed handler
//                           (kccl::set_assert_handler), then traps (__builtin_trap) if the handler
//                           returns. It never returns.
//
// KCCL_ENABLE_ASSERTS chooses whether KCCL_ASSERT is compiled in:
//   * default 1 on host builds (the emulation, host tests): checks cost little there and a failed
//     check must be a clear error, never silent corruption;
//   * default 0 on device builds (KCCL_DEVICE_BUILD: tt-metal's JIT defines KERNEL_BUILD /
//     TENSIX_FIRMWARE, or COMPILE_FOR_ERISC / _BRISC / _NCRISC / _TRISC; or any RISC-V target): code size;
//   * define it to 0 or 1 yourself (before any kccl include, e.g. -DKCCL_ENABLE_ASSERTS=1) to choose.
// Checks that a protocol needs to stay correct are not asserts: they return a status (e.g.
// edm::Status) or are selected by a runtime mode (IPCQ strict mode) and report through the same
// assert_fail path, so the handler sees every device error.
//
// Handlers: on device, install one that records the message where the host can read it and
// halts (it must not return normally). The emulation installs its own for every run: a failed
// check fails that core with the message (Launcher::run reports it); a kernel never traps there.
#ifndef KCCL_ENABLE_ASSERTS
#if KCCL_DEVICE_BUILD
#define KCCL_ENABLE_ASSERTS 0
#else
#define KCCL_ENABLE_ASSERTS 1
#endif
#endif

namespace kccl {

/// Called with the failed expression (or a short tag), the message, and where it failed.
using assert_handler_t = void (*)(const char* expr, const char* msg, const char* file, int line);

namespace detail {
inline assert_handler_t& assert_handler_slot() noexcept {
    // A function-local static of trivially destructible type: no atexit registration, no guard
    // (constant initialisation), so it is safe under -fno-use-cxa-atexit and freestanding.
    static assert_handler_t handler = nullptr;
    return handler;
}
}  // namespace detail

/// Installs the handler called when a device check fails. Returns the previous one.
inline assert_handler_t set_assert_handler(assert_handler_t h) noexcept {
    assert_handler_t prev = detail::assert_handler_slot();
    detail::assert_handler_slot() = h;
    return prev;
}
/// The handler installed now (nullptr: none; a failed check then traps).
inline assert_handler_t assert_handler() noexcept { return detail::assert_handler_slot(); }

namespace detail {
[[noreturn]] KCCL_NOINLINE inline void assert_fail(const char* expr, const char* msg, const char* file, int line) {
    if (assert_handler_t h = assert_handler_slot()) h(expr, msg, file, line);
    __builtin_trap();
}

/// Fixed-size message formatting without heap or stdio, for device error reports (IPCQ,
/// collectives): Msg m; m.s("rank ").u(r).s(" at ").hex(addr); then m.buf.
struct Msg {
    char buf[256];
    uint32_t n = 0;
    Msg() { buf[0] = 0; }
    Msg& s(const char* t) {
        while (t && *t && n + 1 < sizeof buf) buf[n++] = *t++;
        buf[n] = 0;
        return *this;
    }
    Msg& u(uint32_t v) {
        char tmp[11];
        uint32_t k = 0;
        do {
            tmp[k++] = char('0' + v % 10);
            v /= 10;
        } while (v);
        while (k && n + 1 < sizeof buf) buf[n++] = tmp[--k];
        buf[n] = 0;
        return *this;
    }
    Msg& hex(uint32_t v) {
        s("0x");
        char tmp[8];
        uint32_t k = 0;
        do {
            tmp[k++] = "0123456789abcdef"[v & 15];
            v >>= 4;
        } while (v);
        while (k && n + 1 < sizeof buf) buf[n++] = tmp[--k];
        buf[n] = 0;
        return *this;
    }
};

}  // namespace detail

}  // namespace kccl

#if KCCL_ENABLE_ASSERTS
#define KCCL_ASSERT(expr, msg) \
    (KCCL_LIKELY(expr) ? (void)0 : ::kccl::detail::assert_fail(#expr, msg, __FILE__, __LINE__))
#else
#define KCCL_ASSERT(expr, msg) ((void)0)
#endif
