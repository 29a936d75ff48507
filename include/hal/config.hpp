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
#define KCCL_LIKELY(x) __builtin_expect(!!(x), 1)
#define KCCL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define KCCL_FORCEINLINE inline
#define KCCL_NOINLINE
#define KCCL_LIKELY(x) (x)
#define KCCL_UNLIKELY(x) (x)
#endif

// C++20 concepts are offered only where the compiler has them; tt-metal builds kernels as C++17.
#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
#define KCCL_HAS_CONCEPTS 1
#else
#define KCCL_HAS_CONCEPTS 0
#endif

// Device assertions. Off by default on device builds (code size); a backend or test may define
// KCCL_ENABLE_ASSERTS=1 and install a handler. The handler must not return normally on device;
// on the host emulation it throws (the emulation is compiled with exceptions).
#ifndef KCCL_ENABLE_ASSERTS
#define KCCL_ENABLE_ASSERTS 0
#endif

namespace kccl {

using assert_handler_t = void (*)(const char* expr, const char* msg, const char* file, int line);

namespace detail {
inline assert_handler_t& assert_handler_slot() noexcept {
    // A function-local static of trivially destructible type: no atexit registration, no guard
    // (constant initialisation), so it is safe under -fno-use-cxa-atexit and freestanding.
    static assert_handler_t handler = nullptr;
    return handler;
}
}  // namespace detail

/// Installs the handler called when a KCCL_ASSERT fails. Returns the previous one.
inline assert_handler_t set_assert_handler(assert_handler_t h) noexcept {
    assert_handler_t prev = detail::assert_handler_slot();
    detail::assert_handler_slot() = h;
    return prev;
}

namespace detail {
[[noreturn]] inline void assert_fail(const char* expr, const char* msg, const char* file, int line) {
    if (assert_handler_t h = assert_handler_slot()) h(expr, msg, file, line);
    __builtin_trap();
}
}  // namespace detail

}  // namespace kccl

#if KCCL_ENABLE_ASSERTS
#define KCCL_ASSERT(expr, msg) \
    (KCCL_LIKELY(expr) ? (void)0 : ::kccl::detail::assert_fail(#expr, msg, __FILE__, __LINE__))
#else
#define KCCL_ASSERT(expr, msg) ((void)0)
#endif
