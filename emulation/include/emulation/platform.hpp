// kccl/emulation/platform.hpp — the one place the emulation detects the sanitizers and declares
// what it needs from them.
//
// KCCL_EMU_TSAN is 1 when the translation unit is built with -fsanitize=thread, KCCL_EMU_ASAN when
// built with -fsanitize=address (GCC's __SANITIZE_THREAD__ / __SANITIZE_ADDRESS__ or Clang's
// __has_feature), else 0. Under TSan this header includes the fiber API
// (<sanitizer/tsan_interface.h>) and declares the dynamic annotations the runtime exports for
// ignore regions (they have no public header); detail::IgnoreScope makes the engine's own
// bookkeeping, which every fiber of the one host thread touches, invisible to TSan (a fiber switch
// is deliberately not a happens-before edge). Under ASan it includes the fiber-switch API.
//
// Host-only (C++20).
#pragma once

#if defined(__SANITIZE_THREAD__)
#define KCCL_EMU_TSAN 1
#elif defined(__SANITIZE_ADDRESS__)
#define KCCL_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KCCL_EMU_TSAN 1
#elif __has_feature(address_sanitizer)
#define KCCL_EMU_ASAN 1
#endif
#endif
#ifndef KCCL_EMU_TSAN
#define KCCL_EMU_TSAN 0
#endif
#ifndef KCCL_EMU_ASAN
#define KCCL_EMU_ASAN 0
#endif

#if KCCL_EMU_TSAN
#include <sanitizer/tsan_interface.h>
extern "C" {
void AnnotateIgnoreReadsBegin(const char* file, int line);
void AnnotateIgnoreReadsEnd(const char* file, int line);
void AnnotateIgnoreWritesBegin(const char* file, int line);
void AnnotateIgnoreWritesEnd(const char* file, int line);
}
#endif
#if KCCL_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace kccl::emu::detail {

/// Scope in which TSan ignores this context's memory accesses (a no-op without TSan). Never spans
/// a fiber switch.
#if KCCL_EMU_TSAN
struct IgnoreScope {
    IgnoreScope() {
        AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
        AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    }
    ~IgnoreScope() {
        AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
        AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    }
    IgnoreScope(const IgnoreScope&) = delete;
    IgnoreScope& operator=(const IgnoreScope&) = delete;
};
#else
struct IgnoreScope {
    IgnoreScope() {}  // user-provided: no unused-variable warning
};
#endif

}  // namespace kccl::emu::detail
