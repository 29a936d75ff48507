// kccl/hal/tt_metal.hpp — the hardware shim: the device contract mapped onto tt-metal by name.
//
// WHAT IT IS
//   `kccl::hal::TtMetal`, an empty handle whose members forward to tt-metal's device API. A kernel
//   written as `template <class H> void kernel(H& hal)` runs on hardware as
//   `void kernel_main() { kccl::hal::TtMetal hal; kernel(hal); }`. docs/hardware-shim.md has a
//   complete ERISC and a complete Tensix kernel file.
//
// CORE KINDS
//   Ethernet operations (eth_send, eth_txq_busy, context_switch) exist only in active-Ethernet
//   (ERISC) kernels: tt-metal declares their API (internal_::eth_send_packet,
//   internal_::eth_txq_is_busy, run_routing) only for builds with -DCOMPILE_FOR_ERISC. They are
//   member templates, so their bodies are compiled only when called: a Tensix kernel
//   (COMPILE_FOR_BRISC / COMPILE_FOR_NCRISC) may include every kccl header and use every other
//   operation, and a call to an Ethernet operation from it fails at compile time with a
//   static_assert that says why. `kccl::hal::is_backend_v<TtMetal>` holds on both kinds (the
//   contract's detectors only look at declarations). KCCL_TT_METAL_ERISC (0/1) overrides the
//   detection from COMPILE_FOR_ERISC.
//
// WHICH tt-metal HEADERS
//   By default this header includes the API itself, in one of tt-metal's two layouts (paths
//   relative to tt_metal/hw/inc, which tt-metal's JIT build puts on the include path):
//     KCCL_TT_METAL_LAYOUT == 2  current (late 2025 on): "api/dataflow/dataflow_api.h";
//                                ERISC also "internal/ethernet/dataflow_api.h" and
//                                "internal/ethernet/tunneling.h"
//     KCCL_TT_METAL_LAYOUT == 1  legacy (before): "dataflow_api.h"; ERISC also
//                                "ethernet/dataflow_api.h" and "ethernet/tunneling.h"
//   Undefined: detected with __has_include ("api/dataflow/dataflow_api.h" resolves -> 2, else 1).
//   Define KCCL_TT_METAL_NO_INCLUDE when the API is already declared (tt-metal's firmware
//   wrappers brisck.cc / erisck.cc include it before the kernel source); nothing is included then.
//   KCCL_TT_METAL_HAS_INVALIDATE_L1_CACHE=0 is for a tt-metal old enough not to declare
//   invalidate_l1_cache() (Wormhole-only releases, where it would be a no-op anyway).
//
// HOW THE CONTRACT'S GUARANTEES MAP (see contract.hpp)
//   N1  noc_async_write, noc_inline_dw_write and noc_semaphore_inc are called with their default
//       NoC (noc_index) and VC (NOC_UNICAST_WRITE_VC), non-posted: one path per destination,
//       landing in issue order (tt-metal's own EDM and workers increment a semaphore right after
//       the write it guards, with no barrier between).
//   N2  noc_write_barrier -> noc_async_write_barrier (acks received) and noc_async_atomic_barrier,
//       so semaphore increments count as landed writes; noc_writes_flushed ->
//       noc_async_writes_flushed.
//   N5  Every read of a word another agent writes is preceded by invalidate_l1_cache(), exactly
//       where tt-metal's own polls call it (once per poll iteration): a `fence` on Blackhole,
//       whose RISC-V L1 data cache can otherwise serve a stale line forever; a no-op on Wormhole.
//       sem_read and every sem_wait* are followed by a compiler barrier, so loads of the data the
//       semaphore guards are not hoisted above the load that observed it.
//   E1-E3 eth_send -> internal_::eth_send_packet (the ctx_switch = true default) in 16-byte
//       words; the Ethernet subsystem sends words in address order and writes the receiver's L1
//       in that order. While the tx queue is busy, eth_send_packet itself waits and context-
//       switches to the link firmware on every wait iteration; poll eth_txq_busy first to do
//       other work instead (E2).
//   E4  context_switch -> run_routing. On ERISC, sem_wait / sem_wait_min are tt-metal's
//       eth_noc_semaphore_wait / eth_noc_semaphore_wait_min, which call run_routing while they
//       wait (every poll with the default wait_min = 0), so a blocked Ethernet core keeps
//       servicing its link. Poll loops written with sem_read + idle() must call context_switch
//       themselves every so many idle iterations (the EDM does: Config::
//       idle_iterations_per_context_switch) — idle() does not, because switching on every idle
//       iteration costs throughput (a too-eager switch once halved tt-metal's all-gather
//       bandwidth, 8 -> 4 GB/s).
//   W1  idle() -> invalidate_l1_cache(): the next poll reads L1, not a stale cache line. It does
//       not back off: spinning is free on a dedicated RISC-V core.
//   M1-M3 (multicast) noc_write_mcast -> noc_async_write_multicast (loopback:
//       noc_async_write_multicast_loopback_src), sem_set_mcast -> noc_semaphore_set_multicast
//       (loopback: noc_semaphore_set_multicast_loopback_src), sem_inc_mcast ->
//       noc_semaphore_inc_multicast, each to get_noc_multicast_addr(rectangle, dst_l1) with
//       tt-metal's defaults (not linked, path reserved, the kernel's NoC). On NoC 0 the rectangle
//       starts at its (x0, y0) corner; on NoC 1, which routes the other way, tt-metal's kernels
//       pass (x1, y1) as the start and (x0, y0) as the end, and so does the shim. Of the
//       emulation's rectangle checks only two are made here, with KCCL_ASSERT (when enabled): a
//       non-empty rectangle and num_dests == its core count (a wrong num_dests makes
//       noc_async_write_barrier wait for acknowledgements that never come).
//       noc_semaphore_inc_multicast is in tt-metal's current API only: with the legacy header
//       layout (or KCCL_TT_METAL_HAS_SEM_INC_MCAST=0) a call to sem_inc_mcast fails at compile
//       time with a static_assert that says so.
//
// Pointer width: hardware L1 addresses are 32-bit physical addresses, so l1_ptr is a cast.
#pragma once

#include "config.hpp"
#include "contract.hpp"

// --- core kind -----------------------------------------------------------------------------------
#ifndef KCCL_TT_METAL_ERISC
#if defined(COMPILE_FOR_ERISC)
#define KCCL_TT_METAL_ERISC 1
#else
#define KCCL_TT_METAL_ERISC 0
#endif
#endif

#ifndef KCCL_TT_METAL_HAS_INVALIDATE_L1_CACHE
#define KCCL_TT_METAL_HAS_INVALIDATE_L1_CACHE 1
#endif

// --- the tt-metal API ----------------------------------------------------------------------------
#ifndef KCCL_TT_METAL_NO_INCLUDE
#ifndef KCCL_TT_METAL_LAYOUT
#if defined(__has_include)
#if __has_include("api/dataflow/dataflow_api.h")
#define KCCL_TT_METAL_LAYOUT 2
#else
#define KCCL_TT_METAL_LAYOUT 1
#endif
#else
#define KCCL_TT_METAL_LAYOUT 2
#endif
#endif

#if KCCL_TT_METAL_LAYOUT == 2
#include "api/dataflow/dataflow_api.h"
#if KCCL_TT_METAL_ERISC
#include "internal/ethernet/dataflow_api.h"
#include "internal/ethernet/tunneling.h"
#endif
#elif KCCL_TT_METAL_LAYOUT == 1
#include "dataflow_api.h"
#if KCCL_TT_METAL_ERISC
#include "ethernet/dataflow_api.h"
#include "ethernet/tunneling.h"
#endif
#else
#error "KCCL_TT_METAL_LAYOUT must be 1 (tt-metal before the late-2025 header move) or 2 (after it)"
#endif
#endif  // KCCL_TT_METAL_NO_INCLUDE

// noc_semaphore_inc_multicast: declared by tt-metal's current API, not by the legacy layout.
#ifndef KCCL_TT_METAL_HAS_SEM_INC_MCAST
#if defined(KCCL_TT_METAL_LAYOUT) && KCCL_TT_METAL_LAYOUT == 1
#define KCCL_TT_METAL_HAS_SEM_INC_MCAST 0
#else
#define KCCL_TT_METAL_HAS_SEM_INC_MCAST 1
#endif
#endif

// tt-metal marks pointers into local L1 with tt_l1_ptr (an SFPI-GCC attribute macro); use it
// where it exists so the semaphore pointers have the type the API declares.
#if defined(tt_l1_ptr)
#define KCCL_TT_L1_PTR tt_l1_ptr
#else
#define KCCL_TT_L1_PTR
#endif

namespace kccl::hal {

namespace detail {
/// Whether this is an ERISC build, as a value that depends on T: a static_assert on it is checked
/// only when the member template around it is instantiated, i.e. called.
template <class T>
struct tt_metal_deferred_true : std::true_type {};
template <class T>
inline constexpr bool tt_metal_erisc_build = KCCL_TT_METAL_ERISC != 0 && tt_metal_deferred_true<T>::value;
template <class T>
inline constexpr bool tt_metal_has_sem_inc_mcast = KCCL_TT_METAL_HAS_SEM_INC_MCAST != 0 && tt_metal_deferred_true<T>::value;

/// Re-read L1 rather than a cached line (Blackhole's L1 data cache); what tt-metal's polls do.
KCCL_FORCEINLINE void tt_metal_invalidate_l1() {
#if KCCL_TT_METAL_HAS_INVALIDATE_L1_CACHE
    invalidate_l1_cache();
#endif
    // Compiler barrier: the load that follows is emitted after the invalidation.
    __asm__ __volatile__("" ::: "memory");
}

/// Compiler barrier after observing a semaphore: later loads of the data it guards stay after it.
/// The RISC-V cores issue loads in order, so no fence instruction is needed on top.
KCCL_FORCEINLINE void tt_metal_acquire_barrier() { __asm__ __volatile__("" ::: "memory"); }
}  // namespace detail

struct TtMetal {
    // identity: tt-metal keeps this core's coordinates per NoC in my_x[] / my_y[].
    KCCL_FORCEINLINE uint32_t core_x() const { return my_x[noc_index]; }
    KCCL_FORCEINLINE uint32_t core_y() const { return my_y[noc_index]; }

    KCCL_FORCEINLINE noc_addr_t noc_addr(uint32_t x, uint32_t y, uint32_t l1) const {
        return get_noc_addr(x, y, l1);
    }
    KCCL_FORCEINLINE uint8_t* l1_ptr(uint32_t l1, uint32_t /*bytes*/) const {
        return reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(l1));
    }

    // --- NoC (any core) ---------------------------------------------------------------------
    KCCL_FORCEINLINE void noc_write(uint32_t src_l1, noc_addr_t dst, uint32_t bytes) {
        noc_async_write(src_l1, dst, bytes);
    }
    KCCL_FORCEINLINE void noc_read(noc_addr_t src, uint32_t dst_l1, uint32_t bytes) {
        noc_async_read(src, dst_l1, bytes);
    }
    KCCL_FORCEINLINE void noc_write_barrier() {
        noc_async_write_barrier();
        noc_async_atomic_barrier();
    }
    KCCL_FORCEINLINE void noc_read_barrier() { noc_async_read_barrier(); }
    KCCL_FORCEINLINE void noc_writes_flushed() { noc_async_writes_flushed(); }
    KCCL_FORCEINLINE void noc_inline_write32(noc_addr_t dst, uint32_t value) {
        noc_inline_dw_write(dst, value);
    }

    // --- semaphores (any core) ------------------------------------------------------------------
    KCCL_FORCEINLINE void sem_inc(noc_addr_t dst, uint32_t n) { noc_semaphore_inc(dst, n); }
    KCCL_FORCEINLINE void sem_set(uint32_t local_l1, uint32_t value) {
        noc_semaphore_set(sem_ptr(local_l1), value);
    }
    /// Blocks until the word == value. tt-metal's waits invalidate the L1 cache on every poll; on
    /// ERISC they also give the link firmware a turn (run_routing) while they wait.
    KCCL_FORCEINLINE void sem_wait(uint32_t local_l1, uint32_t value) {
#if KCCL_TT_METAL_ERISC
        eth_noc_semaphore_wait(sem_ptr(local_l1), value);
#else
        noc_semaphore_wait(sem_ptr(local_l1), value);
#endif
        detail::tt_metal_acquire_barrier();
    }
    /// Blocks until the word >= value; as sem_wait.
    KCCL_FORCEINLINE void sem_wait_min(uint32_t local_l1, uint32_t value) {
#if KCCL_TT_METAL_ERISC
        eth_noc_semaphore_wait_min(sem_ptr(local_l1), value);
#else
        noc_semaphore_wait_min(sem_ptr(local_l1), value);
#endif
        detail::tt_metal_acquire_barrier();
    }
    /// One poll: invalidate (as tt-metal's polls do), load, then a compiler barrier.
    KCCL_FORCEINLINE uint32_t sem_read(uint32_t local_l1) const {
        detail::tt_metal_invalidate_l1();
        const uint32_t v = *sem_ptr(local_l1);
        detail::tt_metal_acquire_barrier();
        return v;
    }

    // --- multicast (any core sends; Tensix cores receive) ----------------------------------------
    KCCL_FORCEINLINE void noc_write_mcast(uint32_t src_l1, NocRect rect, uint32_t dst_l1, uint32_t bytes,
                                          uint32_t num_dests, bool loopback) {
        KCCL_ASSERT(num_dests == rect.cores(), "multicast num_dests must equal the number of cores in the rectangle");
        const uint64_t dst = mcast_addr(rect, dst_l1);
        if (loopback) noc_async_write_multicast_loopback_src(src_l1, dst, bytes, num_dests);
        else noc_async_write_multicast(src_l1, dst, bytes, num_dests);
    }
    KCCL_FORCEINLINE void sem_set_mcast(uint32_t src_l1, NocRect rect, uint32_t dst_l1, uint32_t num_dests,
                                        bool loopback) {
        KCCL_ASSERT(num_dests == rect.cores(), "multicast num_dests must equal the number of cores in the rectangle");
        const uint64_t dst = mcast_addr(rect, dst_l1);
        if (loopback) noc_semaphore_set_multicast_loopback_src(src_l1, dst, num_dests);
        else noc_semaphore_set_multicast(src_l1, dst, num_dests);
    }
    /// A template so that its body, which names noc_semaphore_inc_multicast, is compiled only when
    /// called. Do not pass template arguments.
    template <class Deferred = void>
    KCCL_FORCEINLINE void sem_inc_mcast(NocRect rect, uint32_t dst_l1, uint32_t n, uint32_t num_dests) {
        KCCL_ASSERT(num_dests == rect.cores(), "multicast num_dests must equal the number of cores in the rectangle");
        static_assert(detail::tt_metal_has_sem_inc_mcast<Deferred>,
                      "kccl::hal::TtMetal::sem_inc_mcast needs tt-metal's noc_semaphore_inc_multicast, which "
                      "the legacy (before late 2025) tt-metal API does not declare; this kernel is built "
                      "against that layout (or with KCCL_TT_METAL_HAS_SEM_INC_MCAST=0). Use sem_set_mcast, "
                      "or a sem_inc per destination.");
#if KCCL_TT_METAL_HAS_SEM_INC_MCAST
        noc_semaphore_inc_multicast(mcast_addr(rect, dst_l1), n, num_dests);
#else
        (void)rect, (void)dst_l1, (void)n, (void)num_dests;
#endif
    }

    // --- Ethernet (active-Ethernet kernels only) ------------------------------------------------
    // Templates so that the bodies, which name the ERISC-only API, are compiled only when called.
    // Do not pass template arguments; the parameter only defers instantiation.

    /// Queues a send of `bytes` (a multiple of 16) from local L1 into the linked core's L1.
    /// internal_::eth_send_packet takes addresses and sizes in 16-byte words; while the tx queue
    /// is busy it waits and context-switches to the link firmware on every wait iteration.
    template <class Deferred = void>
    KCCL_FORCEINLINE void eth_send(uint32_t queue, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes) {
        static_assert(detail::tt_metal_erisc_build<Deferred>,
                      "kccl::hal::TtMetal::eth_send is an Ethernet operation. tt-metal declares "
                      "internal_::eth_send_packet only for active-Ethernet (ERISC) kernels, built "
                      "with -DCOMPILE_FOR_ERISC, and this kernel is built for another core (a Tensix "
                      "reader/writer, COMPILE_FOR_BRISC or COMPILE_FOR_NCRISC). Call it only from "
                      "ERISC kernels, e.g. an EDM; Tensix workers reach the link through an EDM's "
                      "worker adapters (kccl/edm/worker.hpp).");
#if KCCL_TT_METAL_ERISC
        KCCL_ASSERT(((src_l1 | dst_l1 | bytes) & (eth_word_bytes - 1)) == 0 && bytes > 0,
                    "eth_send needs 16-byte aligned addresses and a non-zero multiple of 16 bytes");
        internal_::eth_send_packet(queue, src_l1 >> 4, dst_l1 >> 4, bytes >> 4);
#else
        (void)queue, (void)src_l1, (void)dst_l1, (void)bytes;
#endif
    }

    /// True while tx queue `queue` cannot take a command (internal_::eth_txq_is_busy).
    template <class Deferred = void>
    KCCL_FORCEINLINE bool eth_txq_busy(uint32_t queue) const {
        static_assert(detail::tt_metal_erisc_build<Deferred>,
                      "kccl::hal::TtMetal::eth_txq_busy is an Ethernet operation. tt-metal declares "
                      "internal_::eth_txq_is_busy only for active-Ethernet (ERISC) kernels, built "
                      "with -DCOMPILE_FOR_ERISC, and this kernel is built for another core (a Tensix "
                      "reader/writer, COMPILE_FOR_BRISC or COMPILE_FOR_NCRISC). Call it only from "
                      "ERISC kernels.");
#if KCCL_TT_METAL_ERISC
        return internal_::eth_txq_is_busy(queue);
#else
        (void)queue;
        return false;
#endif
    }

    /// Gives the core to the base (link) firmware for a moment: run_routing. Long-running ERISC
    /// loops must call it periodically (contract E4); not on every iteration.
    template <class Deferred = void>
    KCCL_FORCEINLINE void context_switch() {
        static_assert(detail::tt_metal_erisc_build<Deferred>,
                      "kccl::hal::TtMetal::context_switch is an Ethernet operation. tt-metal "
                      "declares run_routing (the link firmware's turn) only for active-Ethernet "
                      "(ERISC) kernels, built with -DCOMPILE_FOR_ERISC, and this kernel is built for "
                      "another core (a Tensix reader/writer, COMPILE_FOR_BRISC or "
                      "COMPILE_FOR_NCRISC), which has no link to service. Call it only from ERISC "
                      "kernels.");
#if KCCL_TT_METAL_ERISC
        run_routing();
#endif
    }

    // --- runtime arguments and back-off (any core) ----------------------------------------------
    KCCL_FORCEINLINE uint32_t arg(uint32_t index) const {
        return get_arg_val<uint32_t>(static_cast<int>(index));
    }
    /// Called once per poll iteration that found nothing: invalidates the L1 data cache (Blackhole)
    /// so the next poll sees L1. No back-off and no context switch (see E4 above).
    KCCL_FORCEINLINE void idle() { detail::tt_metal_invalidate_l1(); }

private:
    /// The multicast NoC address of `rect` at `l1`: on NoC 1 the start corner is (x1, y1).
    static KCCL_FORCEINLINE uint64_t mcast_addr(NocRect r, uint32_t l1) {
        KCCL_ASSERT(r.cores() != 0, "multicast rectangle is empty or inverted (need x0 <= x1, y0 <= y1)");
        return noc_index == 0 ? get_noc_multicast_addr(r.x0, r.y0, r.x1, r.y1, l1)
                              : get_noc_multicast_addr(r.x1, r.y1, r.x0, r.y0, l1);
    }
    static KCCL_FORCEINLINE volatile KCCL_TT_L1_PTR uint32_t* sem_ptr(uint32_t l1) {
        return reinterpret_cast<volatile KCCL_TT_L1_PTR uint32_t*>(static_cast<uintptr_t>(l1));
    }
};

static_assert(check_backend<TtMetal>(), "TtMetal must model the kccl device contract.");
static_assert(check_multicast<TtMetal>(), "TtMetal must provide the contract's multicast operations.");

}  // namespace kccl::hal
