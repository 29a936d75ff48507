// kccl/emulation/fiber/context.hpp — stackful fibers for the fiber engine: a context switch of
// our own (x86-64, aarch64; ucontext elsewhere or with KCCL_EMU_FIBER_UCONTEXT), pooled
// guard-paged stacks, and a SIGSEGV handler that names the core whose stack overflowed.
//
// Stacks are reserved, not committed (MAP_NORESERVE): a fiber costs the pages it touches (a
// few KiB for most kernels), so a million fibers of 256 KiB stacks need 256 GiB of address
// space but only their touched pages of memory. A guarded stack has a kGuardBytes (1 MiB)
// PROT_NONE region below it — address space only — so a kernel frame of up to that size that
// runs off the stack faults inside the guard, never in a neighbouring stack. The handler also
// names the core when the fault happens with the stack pointer below its stack (a larger frame
// whose access hit unmapped memory). A frame larger than the guard whose accesses all land in
// other mapped memory is not detected; -fstack-clash-protection (probing every page of a large
// frame, top down) makes such a frame fault in the guard too.
//
// Host-only (C++20, Linux/ELF). Not part of the device contract.
//
// The switch saves only what the ABI says a callee must preserve: x86-64 rbx, rbp, r12-r15, rsp,
// MXCSR and the x87 control word (a kernel may change rounding); aarch64 x19-x30, d8-d15, sp and
// FPCR. Everything else is caller-saved at the call of `kccl_emu_fiber_switch`.
#pragma once

#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#if !defined(KCCL_EMU_FIBER_UCONTEXT) && !(defined(__x86_64__) || defined(__aarch64__))
#define KCCL_EMU_FIBER_UCONTEXT 1
#endif
#include "../platform.hpp"

#include <ucontext.h>  // the interrupted stack pointer in the SIGSEGV handler (and the ucontext switch)


#if !defined(KCCL_EMU_FIBER_UCONTEXT)
extern "C" {
/// Saves the callee-saved state on the current stack, stores the stack pointer in *save,
/// switches to the stack `to` (made by a previous switch or by fiber::make_context) and returns
/// there. Defined once (weak) by the asm below.
void kccl_emu_fiber_switch(void** save, void* to);
void kccl_emu_fiber_trampoline();
}

#if defined(__x86_64__)
// Frame left on a suspended stack (from the saved sp upward): [mxcsr:4][x87cw:4][pad:8]
// r15 r14 r13 r12 rbx rbp <return address>.
__asm__(R"(
    .pushsection .text.kccl_emu_fiber_switch,"axG",@progbits,kccl_emu_fiber_switch,comdat
    .weak kccl_emu_fiber_switch
    .type kccl_emu_fiber_switch,@function
    .p2align 4
kccl_emu_fiber_switch:
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $16, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $16, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .cfi_endproc
    .size kccl_emu_fiber_switch,.-kccl_emu_fiber_switch
    .popsection

    .pushsection .text.kccl_emu_fiber_trampoline,"axG",@progbits,kccl_emu_fiber_trampoline,comdat
    .weak kccl_emu_fiber_trampoline
    .type kccl_emu_fiber_trampoline,@function
    .p2align 4
kccl_emu_fiber_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    movq %r12, %rdi
    callq *%r13
    ud2
    .cfi_endproc
    .size kccl_emu_fiber_trampoline,.-kccl_emu_fiber_trampoline
    .popsection
)");
#elif defined(__aarch64__)
// Frame (176 bytes from the saved sp): x19..x30 (96), d8..d15 (64), fpcr (8), pad (8).
__asm__(R"(
    .pushsection .text.kccl_emu_fiber_switch,"axG",@progbits,kccl_emu_fiber_switch,comdat
    .weak kccl_emu_fiber_switch
    .type kccl_emu_fiber_switch,%function
    .p2align 4
kccl_emu_fiber_switch:
    .cfi_startproc
    sub sp, sp, #176
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mrs x9, fpcr
    str x9, [sp, #160]
    mov x9, sp
    str x9, [x0]
    mov sp, x1
    ldr x9, [sp, #160]
    msr fpcr, x9
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #176
    ret
    .cfi_endproc
    .size kccl_emu_fiber_switch,.-kccl_emu_fiber_switch
    .popsection

    .pushsection .text.kccl_emu_fiber_trampoline,"axG",@progbits,kccl_emu_fiber_trampoline,comdat
    .weak kccl_emu_fiber_trampoline
    .type kccl_emu_fiber_trampoline,%function
    .p2align 4
kccl_emu_fiber_trampoline:
    .cfi_startproc
    .cfi_undefined x30
    mov x0, x19
    blr x20
    brk #0
    .cfi_endproc
    .size kccl_emu_fiber_trampoline,.-kccl_emu_fiber_trampoline
    .popsection
)");
#endif
#endif  // !KCCL_EMU_FIBER_UCONTEXT

namespace kccl::emu::fiber {

using entry_fn = void (*)(void*);

/// Bytes of PROT_NONE address space below a guarded stack (a multiple of every page size in use).
inline constexpr size_t kGuardBytes = size_t(1) << 20;

/// One mmap'd stack: [base, base + guard) is PROT_NONE (the guard region), the rest usable.
struct Stack {
    uint8_t* base = nullptr;
    size_t total = 0;  ///< including the guard
    size_t guard = 0;
    uint8_t* lo() const { return base + guard; }
    uint8_t* hi() const { return base + total; }
    size_t usable() const { return total - guard; }
};

inline size_t page_size() {
    static const size_t p = size_t(::sysconf(_SC_PAGESIZE));
    return p;
}

/// Process-wide pool of stacks by size: making a stack is an mmap + mprotect; a run of 4096
/// cores reuses the previous run's stacks. Pages a fiber touched stay committed while pooled.
/// Pooled stacks are kept per (size, guarded): getting and putting one is constant time
/// whatever else the pool holds.
class StackPool {
public:
    static StackPool& instance() {
        static StackPool* p = new StackPool;  // never destroyed (no static destructor order issue)
        return *p;
    }
    /// A stack of `usable` bytes (rounded up to pages). With `guard`, its own mapping with a
    /// PROT_NONE page below (two kernel mappings per stack); without, carved from a shared
    /// mapping of kChunk stacks (a run of more cores than vm.max_map_count / 2 allows).
    Stack get(size_t usable, bool guard = true) {
        const size_t ps = page_size();
        usable = (usable + ps - 1) / ps * ps;
        {
            std::lock_guard<std::mutex> g(mu_);
            std::vector<Stack>& list = free_[Key{usable, guard}];
            if (!list.empty()) {
                Stack s = list.back();
                list.pop_back();
                return s;
            }
        }
        if (!guard) {
            const size_t total = usable * kChunk;
            void* m = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                             -1, 0);
            if (m == MAP_FAILED)
                throw std::runtime_error("fiber stacks: cannot map " + std::to_string(total) + " bytes");
            std::lock_guard<std::mutex> g(mu_);
            std::vector<Stack>& list = free_[Key{usable, false}];
            // Handed out from the lowest address up (the list is a stack).
            for (size_t k = kChunk; k-- > 1;) list.push_back(Stack{static_cast<uint8_t*>(m) + k * usable, usable, 0});
            return Stack{static_cast<uint8_t*>(m), usable, 0};
        }
        Stack s;
        s.guard = (kGuardBytes + ps - 1) / ps * ps;
        s.total = usable + s.guard;
        void* m = ::mmap(nullptr, s.total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                         -1, 0);
        if (m == MAP_FAILED)
            throw std::runtime_error("fiber stack: cannot map " + std::to_string(s.total) + " bytes");
        s.base = static_cast<uint8_t*>(m);
        if (::mprotect(s.base, s.guard, PROT_NONE) != 0) {
            ::munmap(m, s.total);
            throw std::runtime_error("fiber stack: cannot protect the guard region (too many mappings? see "
                                     "/proc/sys/vm/max_map_count, or RunOptions::stack_guard)");
        }
        return s;
    }
    void put(const Stack& s) {
        std::lock_guard<std::mutex> g(mu_);
        std::vector<Stack>& list = free_[Key{s.usable(), s.guard != 0}];
        if (s.guard && list.size() >= kMaxPooled) {
            ::munmap(s.base, s.total);
            return;
        }
        list.push_back(s);  // unguarded stacks share a mapping: always kept
    }
    /// Returns every pooled guarded stack to the system (unguarded ones share mappings: kept).
    void trim() {
        std::lock_guard<std::mutex> g(mu_);
        for (auto& [key, list] : free_)
            if (key.guard) {
                for (auto& s : list) ::munmap(s.base, s.total);
                list.clear();
            }
    }

private:
    struct Key {
        size_t usable;
        bool guard;
        friend bool operator<(const Key& a, const Key& b) { return a.usable != b.usable ? a.usable < b.usable : a.guard < b.guard; }
    };
    static constexpr size_t kMaxPooled = 1 << 17;
    static constexpr size_t kChunk = 64;
    std::mutex mu_;
    std::map<Key, std::vector<Stack>> free_;
};

/// A suspended execution context.
struct Context {
#if defined(KCCL_EMU_FIBER_UCONTEXT)
    ucontext_t uc{};
#else
    void* sp = nullptr;
#endif
};

#if defined(KCCL_EMU_FIBER_UCONTEXT)
namespace detail {
inline void uc_entry(unsigned lo, unsigned hi, unsigned flo, unsigned fhi) {
    void* arg = reinterpret_cast<void*>((uintptr_t(hi) << 32) | lo);
    entry_fn fn = reinterpret_cast<entry_fn>((uintptr_t(fhi) << 32) | flo);
    fn(arg);
    __builtin_trap();
}
}  // namespace detail
#endif

/// Prepares `ctx` to run fn(arg) on `stack` at its first switch_to. `fn` must never return.
inline void make_context(Context& ctx, const Stack& stack, entry_fn fn, void* arg) {
#if KCCL_EMU_ASAN
    // A pooled stack keeps the redzones of frames a previous fiber never returned from.
    __asan_unpoison_memory_region(stack.lo(), stack.usable());
#endif
#if defined(KCCL_EMU_FIBER_UCONTEXT)
    getcontext(&ctx.uc);
    ctx.uc.uc_stack.ss_sp = stack.lo();
    ctx.uc.uc_stack.ss_size = stack.usable();
    ctx.uc.uc_link = nullptr;
    const uintptr_t a = uintptr_t(arg), f = uintptr_t(fn);
    makecontext(&ctx.uc, reinterpret_cast<void (*)()>(&detail::uc_entry), 4, unsigned(a), unsigned(a >> 32),
                unsigned(f), unsigned(f >> 32));
#elif defined(__x86_64__)
    // Top of stack 16-aligned; after `ret` into the trampoline rsp = top (16-aligned), so the
    // trampoline's call leaves the entry function with rsp % 16 == 8, as the ABI wants.
    uintptr_t top = uintptr_t(stack.hi()) & ~uintptr_t(15);
    auto* p = reinterpret_cast<uint64_t*>(top);
    *--p = uint64_t(uintptr_t(&kccl_emu_fiber_trampoline));  // return address
    *--p = 0;                                              // rbp
    *--p = 0;                                              // rbx
    *--p = uint64_t(uintptr_t(arg));                       // r12
    *--p = uint64_t(uintptr_t(fn));                        // r13
    *--p = 0;                                              // r14
    *--p = 0;                                              // r15
    p -= 2;
    uint32_t mx, cw = 0;
    __asm__ volatile("stmxcsr %0" : "=m"(mx));
    __asm__ volatile("fnstcw %0" : "=m"(cw));
    std::memcpy(reinterpret_cast<uint8_t*>(p), &mx, 4);
    std::memcpy(reinterpret_cast<uint8_t*>(p) + 4, &cw, 4);
    std::memset(reinterpret_cast<uint8_t*>(p) + 8, 0, 8);
    ctx.sp = p;  // = top - 72: after the 16-byte control words, 6 pops and ret, rsp = top
    static_assert(sizeof(void*) == 8);
#elif defined(__aarch64__)
    uintptr_t top = uintptr_t(stack.hi()) & ~uintptr_t(15);
    auto* p = reinterpret_cast<uint64_t*>(top - 176);
    std::memset(p, 0, 176);
    p[0] = uint64_t(uintptr_t(arg));                        // x19
    p[1] = uint64_t(uintptr_t(fn));                         // x20
    p[11] = uint64_t(uintptr_t(&kccl_emu_fiber_trampoline));  // x30
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    p[20] = fpcr;
    ctx.sp = p;
#endif
}

/// Saves the running context in `from` and resumes `to`.
inline void switch_context(Context& from, Context& to) {
#if defined(KCCL_EMU_FIBER_UCONTEXT)
    swapcontext(&from.uc, &to.uc);
#else
    kccl_emu_fiber_switch(&from.sp, to.sp);
#endif
}

// ---- stack overflow: a guard-page fault names the core --------------------------------------

/// What the SIGSEGV handler needs to name a fiber whose stack overflowed. One per fiber, filled
/// once when the fiber is made; a switch publishes it with one pointer store (current_guard).
struct GuardInfo {
    const uint8_t* lo = nullptr;  ///< lowest byte of the guard region (== hi: unguarded; nullptr: none)
    const uint8_t* hi = nullptr;  ///< first usable byte of the stack (above the guard)
    const char* name = nullptr;   ///< the core's name (kept alive by the scheduler)
    size_t size = 0;              ///< usable bytes
};
/// Per host thread, the running fiber's GuardInfo (nullptr: none; fiber runs on different threads
/// do not see each other's stacks). Written at every switch, read by the signal handler.
inline std::atomic<const GuardInfo*>& current_guard() {
    thread_local std::atomic<const GuardInfo*> g{nullptr};
    return g;
}

namespace detail {
/// A fault this far below a stack's guard region (or its usable bottom, unguarded) is its overflow.
inline constexpr size_t kFaultSlack = size_t(64) << 10;
/// A fault while the running fiber's stack pointer is below its stack, by at most this much, is
/// its overflow (a frame larger than the guard region whose access hit unmapped memory).
inline constexpr size_t kSpWindow = size_t(1) << 30;

/// The interrupted stack pointer of a signal's context (0 if unknown on this platform).
inline uintptr_t interrupted_sp(void* uctx) {
    if (!uctx) return 0;
#if defined(__x86_64__) && defined(__linux__)
    return uintptr_t(static_cast<ucontext_t*>(uctx)->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__) && defined(__linux__)
    return uintptr_t(static_cast<ucontext_t*>(uctx)->uc_mcontext.sp);
#else
    return 0;
#endif
}

/// Whether a fault at `addr` with stack pointer `sp` is an overflow of the stack `g` describes.
inline bool is_overflow(const GuardInfo* g, uintptr_t addr, uintptr_t sp) {
    if (!g || !g->hi) return false;
    const uintptr_t lo = uintptr_t(g->lo), hi = uintptr_t(g->hi);
    if (addr < hi && addr + kFaultSlack >= lo) return true;  // in the guard region or just below it
    return sp != 0 && sp < hi && sp + kSpWindow >= hi;      // the stack pointer ran off the stack
}

/// Reports the stack overflow of the fiber `g` on stderr and ends the process (exit code 3).
/// Async-signal-safe (snprintf of integers and strings only, write, _exit).
[[noreturn]] inline void overflow_exit(const GuardInfo* g) {
    const char* name = g ? g->name : nullptr;
    char buf[512];
    int n = std::snprintf(buf, sizeof buf,
                          "kccl emulation: stack overflow in the kernel on %s (its fiber stack has %zu bytes; "
                          "raise RunOptions::stack_size, or keep large buffers out of the kernel's stack). "
                          "The process ends here with exit code 3.\n",
                          name ? name : "?", g ? g->size : size_t(0));
    if (n > 0) {
        ssize_t w = ::write(2, buf, size_t(n) < sizeof buf ? size_t(n) : sizeof buf - 1);
        (void)w;
    }
    ::_exit(3);
}

inline struct sigaction& previous_segv() {
    static struct sigaction a {};
    return a;
}
inline void segv_handler(int sig, siginfo_t* info, void* uctx) {
    const GuardInfo* g = current_guard().load(std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_acquire);  // pairs with the scheduler's set_guard
    if (is_overflow(g, uintptr_t(info->si_addr), interrupted_sp(uctx))) overflow_exit(g);
    // Not ours: hand over to whoever handled SIGSEGV before.
    struct sigaction& prev = previous_segv();
    if (prev.sa_flags & SA_SIGINFO) {
        if (prev.sa_sigaction) {
            prev.sa_sigaction(sig, info, uctx);
            return;
        }
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler) {
        prev.sa_handler(sig);
        return;
    }
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(sig, &dfl, nullptr);
    ::raise(sig);
}
}  // namespace detail

/// While alive (one fiber run): the guard-page handler is installed (the previous one is chained
/// for faults that are not ours, and restored at the end), with an alternate signal stack for the
/// calling thread (the handler cannot run on the overflowed stack). Does nothing under ASan,
/// which reports stack overflows itself.
class OverflowHandlerScope {
public:
    OverflowHandlerScope() {
#if !KCCL_EMU_ASAN
        thread_local std::vector<uint8_t> mem;
        stack_t cur{};
        if (::sigaltstack(nullptr, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
            mem.resize(64 * 1024);
            stack_t ss{};
            ss.ss_sp = mem.data();
            ss.ss_size = mem.size();
            if (::sigaltstack(&ss, nullptr) == 0) {
                alt_set_ = true;
            }
        }
        struct sigaction sa {};
        sa.sa_sigaction = &detail::segv_handler;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        struct sigaction old {};
        if (::sigaction(SIGSEGV, &sa, &old) == 0) {
            installed_ = true;
            if (old.sa_sigaction != &detail::segv_handler) detail::previous_segv() = old;
            saved_ = old;
        }
#endif
    }
    ~OverflowHandlerScope() {
#if !KCCL_EMU_ASAN
        if (installed_) ::sigaction(SIGSEGV, &saved_, nullptr);
        if (alt_set_) {
            stack_t ss{};
            ss.ss_flags = SS_DISABLE;
            ::sigaltstack(&ss, nullptr);
        }
#endif
    }
    OverflowHandlerScope(const OverflowHandlerScope&) = delete;
    OverflowHandlerScope& operator=(const OverflowHandlerScope&) = delete;

private:
    bool installed_ = false, alt_set_ = false;
    struct sigaction saved_ {};
};

}  // namespace kccl::emu::fiber
