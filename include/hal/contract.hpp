// kccl/hal/contract.hpp — the device contract every backend provides.
//
// WHAT IT IS
//   Device code in kccl (EDM, IPCQ, collectives, user kernels) is written once, as templates over
//   a backend type H, and calls only the operations named here on an `H& hal` handle it is given.
//   Two backends model this contract: kccl::hal::TtMetal (include/hal/tt_metal.hpp, maps by name
//   onto the tt-metal dataflow API) and kccl::emu::Hal (emulation/, threads + atomics).
//   `kccl::hal::is_backend_v<H>` (C++17) / `kccl::hal::Backend<H>` (C++20) check a type models it;
//   `kccl::hal::check_backend<H>()` names every missing operation in a static_assert.
//
// ADDRESSES
//   * An L1 address is a 32-bit byte offset in the *calling core's* local memory.
//   * A NoC address (`noc_addr_t`, 64-bit) names (core x, core y, L1 address) on the calling
//     core's own chip, made by `hal.noc_addr(x, y, l1)`. There is no address space across chips;
//     bytes reach another chip only through `eth_send` on an Ethernet core with a link.
//   * `hal.l1_ptr(addr, bytes)` gives a pointer to local L1 for plain loads/stores of data the
//     core owns (after the synchronisation that made it visible). Words that another core or the
//     Ethernet link may write concurrently (semaphores, sync words) are read with `sem_read`.
//
// OPERATIONS (member functions of H; all may be called from any core unless noted)
//   identity       uint32_t core_x(), core_y()                  this core's NoC coordinates
//   addresses      noc_addr_t noc_addr(x, y, l1)                 NoC address on this chip
//                  uint8_t* l1_ptr(l1, bytes)                    local L1 as bytes
//   NoC            void noc_write(src_l1, dst_noc, bytes)        async write, local -> remote
//                  void noc_read(src_noc, dst_l1, bytes)         async read, remote -> local
//                  void noc_write_barrier()                      all my writes have landed
//                  void noc_read_barrier()                       all my reads have landed
//                  void noc_writes_flushed()                     all my writes have left my L1
//                  void noc_inline_write32(dst_noc, value)       one 32-bit word, ordered like a write
//   semaphores     void sem_inc(dst_noc, n)                      remote atomic add
//                  void sem_set(local_l1, value)                 local store
//                  void sem_wait(local_l1, value)                block until word == value
//                  void sem_wait_min(local_l1, value)            block until word >= value
//                  uint32_t sem_read(local_l1)                   non-blocking load
//   Ethernet       void eth_send(queue, src_l1, dst_l1, bytes)   ERISC only: into the linked peer's L1
//                  bool eth_txq_busy(queue)                      queue cannot take a command now
//                  void context_switch()                         give the link firmware a turn
//   runtime args   uint32_t arg(i)                               i-th 32-bit runtime argument
//   back-off       void idle()                                   call once per poll-loop iteration
//                                                                that made no progress
//
// ORDERING GUARANTEES (what device code may rely on — and nothing more)
//   N1  NoC writes, inline writes and semaphore increments issued by one core to the SAME
//       destination core land there in issue order: each lands completely before any part of
//       the next one. So `noc_write(d); sem_inc(d)` needs no barrier: a peer that observes the
//       increment observes all the data. (tt-metal: same NoC, same VC, same path. Observed, not
//       documented, for a write followed by an increment or inline write: kccl's protocols put
//       `noc_writes_flushed()` between them — see PROFILES below.) Across
//       DIFFERENT destination cores there is no ordering — not between writes, nor inline
//       writes, nor increments: `sem_inc(A); sem_inc(B)` may land on B first, and writing data
//       to core A then incrementing a semaphore on core B does not make the data visible to
//       whoever sees B's semaphore; put a `noc_write_barrier()` between them.
//       Until a NoC write has landed, its bytes become visible at the destination in any order
//       and at any time: a reader may see any subset of them, a later byte before an earlier
//       one; no part of a write is atomic, not even an aligned 32-bit word. Only `sem_inc` and
//       `noc_inline_write32` land as one atomic 32-bit word. So poll a semaphore (or an
//       inline-written word), never a word that a `noc_write` writes.
//   N2  `noc_write_barrier()` returns when every earlier write/inc/inline write of this core
//       has landed completely at its destination. `noc_writes_flushed()` only promises the
//       source bytes have been read out of local L1 (the source buffer may be reused), not that
//       they landed.
//   N3  A NoC write reads its source L1 at some time before the next `noc_writes_flushed()` or
//       `noc_write_barrier()`: do not modify the source buffer before one of them.
//   N4  `noc_read` data is valid in local L1 only after `noc_read_barrier()`.
//   N5  `sem_inc` is an atomic add at the destination: concurrent increments are never lost.
//       A `sem_wait*` that returns, or a `sem_read` that observes a value, makes visible every
//       write ordered (by N1/N2/E3) before the operation that produced that value.
//   N6  There is no ordering between NoC traffic issued by different cores.
//   N7  A store to L1 (through l1_ptr) followed by a NoC write whose source includes the stored
//       bytes: the NoC may read the value from before the store (the RISC-V core's store can
//       retire before it reaches L1; the core and the NoC meet only at the L1 bank). Call
//       `hal::l1_store_fence(h, l1, bytes)` on the stored range between the store and the write.
//   PROFILES  tt-metal's NoC documentation does not promise the write-then-increment half of N1
//       (a write, then an increment or inline write to the same core): N1 as stated is what
//       tt-metal's own kernels rely on and hardware has shown (profile "observed"). Code that
//       must hold on the documented rules alone puts `noc_writes_flushed()` between the data
//       write and the increment (profile "strict"). docs/contract.md has the table of which rule
//       is documented and which observed, and which protocol relies on which.
//   E1  `eth_send` requires src_l1, dst_l1 and bytes to be multiples of 16 (one Ethernet word)
//       and bytes > 0. It is asynchronous: the command is queued and executes later; the sender
//       gets NO completion signal (acknowledgements are software's job) and must not modify the
//       source range until the receiver has said (by a later message) that it has the data.
//   E2  Two tx queues (0 and 1). Commands complete in order within one queue; there is no
//       ordering across queues. Calling `eth_send` on a busy queue waits until it is not busy;
//       poll `eth_txq_busy(q)` first to do other work meanwhile.
//   E3  The 16-byte words of one send become visible at the receiver in increasing address
//       order, each 16-byte word at once. Hence a sync word placed LAST in the packet, polled by
//       the receiver, guarantees the whole payload before it has arrived. A flag placed first
//       guarantees nothing about the bytes after it.
//   E4  `context_switch()` must be called periodically by long-running Ethernet-core loops (link
//       retraining on hardware); calling it on every iteration costs throughput.
//   W1  Every blocking poll loop must call `idle()` on each iteration that found nothing to do.
//       A backend may back off there (the emulation yields and then sleeps until something is
//       written into this core's L1); it never makes a loop wrong, only slower or faster.
//
// MULTICAST (an optional capability: `kccl::hal::has_multicast_v<H>`; both shipped backends have it)
//   A rectangle `NocRect{x0, y0, x1, y1}` names every core (x, y) with x0 <= x <= x1 and
//   y0 <= y <= y1 on the calling core's chip, in the coordinates `noc_addr` takes. Every core in it
//   must be a Tensix (worker) core; `num_dests` must equal the number of cores in it.
//                  void noc_write_mcast(src_l1, rect, dst_l1, bytes, num_dests, loopback)
//                       local [src_l1, +bytes) to [dst_l1, +bytes) of every core in rect
//                  void sem_set_mcast(src_l1, rect, dst_l1, num_dests, loopback)
//                       the local 32-bit word at src_l1 to the word dst_l1 of every core in rect
//                  void sem_inc_mcast(rect, dst_l1, n, num_dests)
//                       atomic add of n to the word dst_l1 of every core in rect (no loopback)
//   loopback = false: the caller must NOT be in rect; true: it must be, and is written like the
//   others (tt-metal's *_loopback_src variants). sem_inc_mcast has no loopback form.
//   M1  A multicast operation is ordered with NO other NoC operation of the same core — not with
//       an earlier multicast to the same cores (a data multicast followed by a semaphore
//       multicast), nor with unicast writes, inline writes or increments to a core in its
//       rectangle — unless a `noc_writes_flushed()` or `noc_write_barrier()` was called between
//       the two: then, at each core they both reach, the earlier one lands completely before the
//       later one starts landing. This holds whatever the other ordering rules. (tt-metal: a data
//       multicast followed by a semaphore multicast without a flush gave intermittent data
//       mismatches on Blackhole; tt-metal's kernels flush between them.)
//   M2  Within one multicast the destination cores receive it in any order, each as a noc_write
//       (N1's per-byte rule) or, for sem_set_mcast / sem_inc_mcast, as one atomic 32-bit word.
//       `noc_write_barrier()` returns when every multicast of this core has landed at every core
//       of its rectangle; N3 (source read before the next flush or barrier) holds as for noc_write.
//   M3  NoC multicast stays on one chip and reaches only Tensix cores (no DRAM, no Ethernet core).
//
// RACE-DETECTOR ANNOTATIONS (optional; free functions, no-ops on a backend without them)
//   hal::note_read(h, l1, bytes)    this core uses bytes of its L1 it reads through l1_ptr
//   hal::note_write(h, l1, bytes)   this core stores to bytes of its L1 through l1_ptr
//
// MODELLED INSTRUCTION WORK (optional; a free function, a no-op on a backend without it)
//   hal::note_work(h, Work::k)  this core just did the instruction work `k` names, work that no
//                               NoC, L1 or Ethernet operation of the contract stands for. On
//                               hardware it compiles to nothing (the instructions take their own
//                               time); a timed emulation charges the model's cost for `k`.
//     Work::route_2d_hop        a 2D fabric router's per-packet work beyond a 1D router's:
//                               decoding the hop command and the full NoC write's command setup
//
// STORE FENCE (N7; a free function, so that scripted test backends need not provide it)
//   hal::l1_store_fence(h, l1, bytes)  this core's stores to [l1, l1 + bytes) have reached L1
//                                      before any later NoC operation reads them. tt-metal: a
//                                      load-back of each stored word whose value is consumed
//                                      (what tt-metal's own fix uses; `fence` does not order the
//                                      core's stores against the NoC). Member `l1_store_fence(l1,
//                                      bytes)` of the backend; a backend without it gets a
//                                      compiler barrier.
// COMPUTE ENGINE (optional; a free function; a backend without it refuses at compile time)
//   hal::compute_reduce<Red>(h, out_l1, a_l1, b_l1, n)
//        out[i] = Red::combine(a[i], b[i]) for i < n elements of Red::value_type in this core's
//        L1, by the Tensix compute engine (unpackers L1 -> SrcA / SrcB, the matrix unit's
//        element-wise add, the packer Dst -> L1), not by RISC-V loads and stores. Returns when out
//        is in L1; the caller still fences before a NoC write sources it (N7). Backend members:
//        `uint8_t* compute_l1(l1, bytes)` (the engine's view of L1) and `void compute_charge(n)`
//        (its time). The emulation offers them (timed at the model's compute_eltwise rate); the
//        tt-metal shim does not: there a data-movement kernel cannot drive the FPU, the op's
//        compute kernel does (add_tiles on circular buffers), so a kernel that calls this is
//        emulation-only until it is split into reader / compute / writer kernels.
//        `hal::has_compute_engine_v<H>` says whether H offers it.
//   Plain loads and stores through l1_ptr are invisible to a backend; the emulation's race
//   detector (docs/race-detector.md) checks an annotated read against the last write of those
//   bytes and an annotated write against the reads since. On hardware they compile to nothing.
//
// PROGRAMS BACK TO BACK (docs/contract.md has the reasons)
//   P1  L1 is never zeroed: at program start a word holds what an earlier program left, unless
//       the host initialised it for this program (a semaphore's initial value). Clear a word
//       before the peer that writes it can start writing (e.g. before a handshake), or accept a
//       message only on a pattern garbage cannot plausibly match.
//   P2  A semaphore another core may increment before this core starts is set by the host.
//   P3  Every Ethernet kernel handshakes in one reserved area at one address, outside every
//       program's buffers (edm::reserved_bytes); a handshake of the next program may arrive
//       while this one still runs.
//   P4  A program may return with an Ethernet send still queued only if its source is a word no
//       later program changes and its destination still waits for it; a sender waits for every
//       credit before it returns.
//   P5  32-bit counters wrap: compare them by wrap-safe difference; never index slots by
//       `counter % n` unless n is a power of two.
//
// All member functions are inline-able and allocation-free on device backends.
#pragma once

#include "config.hpp"

#include <stdint.h>
#include <type_traits>
#include <utility>

namespace kccl::hal {

using noc_addr_t = uint64_t;

/// Size in bytes of one Ethernet word: the unit of alignment and visibility of `eth_send`.
inline constexpr uint32_t eth_word_bytes = 16;
/// Number of Ethernet tx command queues a backend provides.
inline constexpr uint32_t eth_tx_queues = 2;

namespace detail {

template <class...>
using void_t = void;

// One detector per operation so a failure names the operation.
// `args` is the parenthesised argument list, e.g. `()` or `(uint32_t{})`: a variadic macro
// called with no variadic arguments is ill-formed before C++20 (-pedantic rejects it).
#define KCCL_HAL_DETECT(name, ret, args)                                                           \
    template <class H, class = void>                                                               \
    struct has_##name : std::false_type {};                                                        \
    template <class H>                                                                             \
    struct has_##name<H, void_t<decltype(std::declval<H&>().name args)>>                           \
        : std::is_convertible<decltype(std::declval<H&>().name args), ret> {};

KCCL_HAL_DETECT(core_x, uint32_t, ())
KCCL_HAL_DETECT(core_y, uint32_t, ())
KCCL_HAL_DETECT(noc_addr, noc_addr_t, (uint32_t{}, uint32_t{}, uint32_t{}))
KCCL_HAL_DETECT(l1_ptr, uint8_t*, (uint32_t{}, uint32_t{}))
KCCL_HAL_DETECT(noc_write, void, (uint32_t{}, noc_addr_t{}, uint32_t{}))
KCCL_HAL_DETECT(noc_read, void, (noc_addr_t{}, uint32_t{}, uint32_t{}))
KCCL_HAL_DETECT(noc_write_barrier, void, ())
KCCL_HAL_DETECT(noc_read_barrier, void, ())
KCCL_HAL_DETECT(noc_writes_flushed, void, ())
KCCL_HAL_DETECT(noc_inline_write32, void, (noc_addr_t{}, uint32_t{}))
KCCL_HAL_DETECT(sem_inc, void, (noc_addr_t{}, uint32_t{}))
KCCL_HAL_DETECT(sem_set, void, (uint32_t{}, uint32_t{}))
KCCL_HAL_DETECT(sem_wait, void, (uint32_t{}, uint32_t{}))
KCCL_HAL_DETECT(sem_wait_min, void, (uint32_t{}, uint32_t{}))
KCCL_HAL_DETECT(sem_read, uint32_t, (uint32_t{}))
KCCL_HAL_DETECT(eth_send, void, (uint32_t{}, uint32_t{}, uint32_t{}, uint32_t{}))
KCCL_HAL_DETECT(eth_txq_busy, bool, (uint32_t{}))
KCCL_HAL_DETECT(context_switch, void, ())
KCCL_HAL_DETECT(arg, uint32_t, (uint32_t{}))
KCCL_HAL_DETECT(idle, void, ())

#undef KCCL_HAL_DETECT

}  // namespace detail

/// True when H provides every operation of the device contract with a compatible signature.
template <class H>
inline constexpr bool is_backend_v =
    detail::has_core_x<H>::value && detail::has_core_y<H>::value &&
    detail::has_noc_addr<H>::value && detail::has_l1_ptr<H>::value &&
    detail::has_noc_write<H>::value && detail::has_noc_read<H>::value &&
    detail::has_noc_write_barrier<H>::value && detail::has_noc_read_barrier<H>::value &&
    detail::has_noc_writes_flushed<H>::value && detail::has_noc_inline_write32<H>::value &&
    detail::has_sem_inc<H>::value && detail::has_sem_set<H>::value &&
    detail::has_sem_wait<H>::value && detail::has_sem_wait_min<H>::value &&
    detail::has_sem_read<H>::value && detail::has_eth_send<H>::value &&
    detail::has_eth_txq_busy<H>::value && detail::has_context_switch<H>::value &&
    detail::has_arg<H>::value && detail::has_idle<H>::value;

template <class H>
struct is_backend : std::bool_constant<is_backend_v<H>> {};

/// Instantiate in device code (`static_assert(kccl::hal::check_backend<H>())`) to get one
/// readable message per missing or mistyped operation instead of a wall of template errors.
template <class H>
constexpr bool check_backend() {
    static_assert(detail::has_core_x<H>::value, "kccl backend is missing: uint32_t core_x()");
    static_assert(detail::has_core_y<H>::value, "kccl backend is missing: uint32_t core_y()");
    static_assert(detail::has_noc_addr<H>::value,
                  "kccl backend is missing: noc_addr_t noc_addr(uint32_t x, uint32_t y, uint32_t l1)");
    static_assert(detail::has_l1_ptr<H>::value,
                  "kccl backend is missing: uint8_t* l1_ptr(uint32_t l1, uint32_t bytes)");
    static_assert(detail::has_noc_write<H>::value,
                  "kccl backend is missing: void noc_write(uint32_t src_l1, noc_addr_t dst, uint32_t bytes)");
    static_assert(detail::has_noc_read<H>::value,
                  "kccl backend is missing: void noc_read(noc_addr_t src, uint32_t dst_l1, uint32_t bytes)");
    static_assert(detail::has_noc_write_barrier<H>::value,
                  "kccl backend is missing: void noc_write_barrier()");
    static_assert(detail::has_noc_read_barrier<H>::value,
                  "kccl backend is missing: void noc_read_barrier()");
    static_assert(detail::has_noc_writes_flushed<H>::value,
                  "kccl backend is missing: void noc_writes_flushed()");
    static_assert(detail::has_noc_inline_write32<H>::value,
                  "kccl backend is missing: void noc_inline_write32(noc_addr_t dst, uint32_t value)");
    static_assert(detail::has_sem_inc<H>::value,
                  "kccl backend is missing: void sem_inc(noc_addr_t dst, uint32_t n)");
    static_assert(detail::has_sem_set<H>::value,
                  "kccl backend is missing: void sem_set(uint32_t local_l1, uint32_t value)");
    static_assert(detail::has_sem_wait<H>::value,
                  "kccl backend is missing: void sem_wait(uint32_t local_l1, uint32_t value)");
    static_assert(detail::has_sem_wait_min<H>::value,
                  "kccl backend is missing: void sem_wait_min(uint32_t local_l1, uint32_t value)");
    static_assert(detail::has_sem_read<H>::value,
                  "kccl backend is missing: uint32_t sem_read(uint32_t local_l1)");
    static_assert(detail::has_eth_send<H>::value,
                  "kccl backend is missing: void eth_send(uint32_t queue, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes)");
    static_assert(detail::has_eth_txq_busy<H>::value,
                  "kccl backend is missing: bool eth_txq_busy(uint32_t queue)");
    static_assert(detail::has_context_switch<H>::value,
                  "kccl backend is missing: void context_switch()");
    static_assert(detail::has_arg<H>::value, "kccl backend is missing: uint32_t arg(uint32_t index)");
    static_assert(detail::has_idle<H>::value, "kccl backend is missing: void idle()");
    return is_backend_v<H>;
}

/// An inclusive rectangle of cores on the caller's chip, corners in `noc_addr` coordinates
/// (x0 <= x1, y0 <= y1). On hardware the shim hands the corners to tt-metal in the order the
/// kernel's NoC needs (include/hal/tt_metal.hpp).
struct NocRect {
    uint32_t x0, y0, x1, y1;
    /// Number of cores in the rectangle; 0 if it is empty or inverted.
    constexpr uint32_t cores() const { return x1 < x0 || y1 < y0 ? 0 : (x1 - x0 + 1) * (y1 - y0 + 1); }
    constexpr bool contains(uint32_t x, uint32_t y) const { return x0 <= x && x <= x1 && y0 <= y && y <= y1; }
};

namespace detail {
template <class H, class = void>
struct has_noc_write_mcast : std::false_type {};
template <class H>
struct has_noc_write_mcast<H, void_t<decltype(std::declval<H&>().noc_write_mcast(
                                  uint32_t{}, NocRect{}, uint32_t{}, uint32_t{}, uint32_t{}, bool{}))>>
    : std::true_type {};
template <class H, class = void>
struct has_sem_set_mcast : std::false_type {};
template <class H>
struct has_sem_set_mcast<H, void_t<decltype(std::declval<H&>().sem_set_mcast(uint32_t{}, NocRect{}, uint32_t{},
                                                                             uint32_t{}, bool{}))>>
    : std::true_type {};
template <class H, class = void>
struct has_sem_inc_mcast : std::false_type {};
template <class H>
struct has_sem_inc_mcast<H, void_t<decltype(std::declval<H&>().sem_inc_mcast(NocRect{}, uint32_t{}, uint32_t{},
                                                                             uint32_t{}))>>
    : std::true_type {};
}  // namespace detail

/// True when H provides the multicast capability (MULTICAST above) on top of the contract.
template <class H>
inline constexpr bool has_multicast_v = is_backend_v<H> && detail::has_noc_write_mcast<H>::value &&
                                        detail::has_sem_set_mcast<H>::value && detail::has_sem_inc_mcast<H>::value;

/// Instantiate in device code that multicasts: one readable message per missing operation.
template <class H>
constexpr bool check_multicast() {
    static_assert(detail::has_noc_write_mcast<H>::value,
                  "kccl backend has no multicast: void noc_write_mcast(uint32_t src_l1, NocRect rect, uint32_t "
                  "dst_l1, uint32_t bytes, uint32_t num_dests, bool loopback)");
    static_assert(detail::has_sem_set_mcast<H>::value,
                  "kccl backend has no multicast: void sem_set_mcast(uint32_t src_l1, NocRect rect, uint32_t dst_l1, "
                  "uint32_t num_dests, bool loopback)");
    static_assert(detail::has_sem_inc_mcast<H>::value,
                  "kccl backend has no multicast: void sem_inc_mcast(NocRect rect, uint32_t dst_l1, uint32_t n, "
                  "uint32_t num_dests)");
    return has_multicast_v<H>;
}

namespace detail {
template <class H, class = void>
struct has_race_notes : std::false_type {};
template <class H>
struct has_race_notes<H, void_t<decltype(std::declval<H&>().note_read(uint32_t{}, uint32_t{}, "", uint32_t{})),
                                 decltype(std::declval<H&>().note_write(uint32_t{}, uint32_t{}, "", uint32_t{}))>>
    : std::true_type {};
}  // namespace detail

/// Race-detector annotation: this core uses [l1, l1 + bytes) of its L1, read through l1_ptr.
/// Nothing on a backend without a detector. `file`/`line` default to the caller's.
template <class H>
inline void note_read(H& h, uint32_t l1, uint32_t bytes, const char* file = __builtin_FILE(),
                      uint32_t line = __builtin_LINE()) {
    if constexpr (detail::has_race_notes<H>::value) h.note_read(l1, bytes, file, line);
    else (void)h, (void)l1, (void)bytes, (void)file, (void)line;
}
/// Race-detector annotation: this core stores to [l1, l1 + bytes) of its L1 through l1_ptr.
template <class H>
inline void note_write(H& h, uint32_t l1, uint32_t bytes, const char* file = __builtin_FILE(),
                       uint32_t line = __builtin_LINE()) {
    if constexpr (detail::has_race_notes<H>::value) h.note_write(l1, bytes, file, line);
    else (void)h, (void)l1, (void)bytes, (void)file, (void)line;
}

/// Instruction work a timed backend charges by name (hal::note_work; see the contract block above).
enum class Work : uint8_t {
    route_2d_hop,  ///< a 2D fabric router's per-packet work beyond a 1D router's (hop-command decode, full NoC write setup)
};

namespace detail {
template <class H, class = void>
struct has_note_work : std::false_type {};
template <class H>
struct has_note_work<H, void_t<decltype(std::declval<H&>().note_work(Work{}))>> : std::true_type {};
}  // namespace detail

/// This core did the instruction work `w` names: charged by a timed backend, nothing elsewhere.
template <class H>
inline void note_work(H& h, Work w) {
    if constexpr (detail::has_note_work<H>::value) h.note_work(w);
    else (void)h, (void)w;
}

namespace detail {
template <class H, class = void>
struct has_l1_store_fence : std::false_type {};
template <class H>
struct has_l1_store_fence<H, void_t<decltype(std::declval<H&>().l1_store_fence(uint32_t{}, uint32_t{}))>>
    : std::true_type {};
}  // namespace detail

/// N7: this core's stores to [l1, l1 + bytes) (through l1_ptr) reach L1 before any later NoC
/// operation reads them. Call it between filling a buffer and a noc_write sourced from it.
template <class H>
inline void l1_store_fence(H& h, uint32_t l1, uint32_t bytes) {
    if constexpr (detail::has_l1_store_fence<H>::value) {
        h.l1_store_fence(l1, bytes);
    } else {
        (void)h, (void)l1, (void)bytes;
        __asm__ __volatile__("" ::: "memory");
    }
}

namespace detail {
template <class H, class = void>
struct has_compute_engine : std::false_type {};
template <class H>
struct has_compute_engine<H, void_t<decltype(std::declval<H&>().compute_l1(uint32_t{}, uint32_t{})),
                                     decltype(std::declval<H&>().compute_charge(uint32_t{}))>>
    : std::true_type {};
}  // namespace detail

/// True when H can reduce on the Tensix compute engine (hal::compute_reduce).
template <class H>
inline constexpr bool has_compute_engine_v = detail::has_compute_engine<H>::value;

/// out[i] = Red::combine(a[i], b[i]), i < n, on the compute engine (see the contract block above).
/// `out` may equal `a` or `b`, never overlap either partly.
template <class Red, class H>
inline void compute_reduce(H& h, uint32_t out, uint32_t a, uint32_t b, uint32_t n) {
    static_assert(has_compute_engine_v<H>,
                  "this backend has no compute-engine call (compute_l1 / compute_charge): on tt-metal a "
                  "data-movement kernel cannot drive the FPU; reduce in the op's compute kernel (add_tiles) "
                  "or with Reducer::combine through l1_ptr.");
    using T = typename Red::value_type;
    if (n == 0) return;
    const uint32_t bytes = n * uint32_t(sizeof(T));
    h.compute_charge(n);
    Red::combine(reinterpret_cast<T*>(h.compute_l1(out, bytes)), reinterpret_cast<const T*>(h.compute_l1(a, bytes)),
                 reinterpret_cast<const T*>(h.compute_l1(b, bytes)), n);
    note_write(h, out, bytes);  // the packer's stores, for the race detector
}

#if KCCL_HAS_CONCEPTS
/// C++20 spelling of is_backend_v, for `template <kccl::hal::Backend H>`.
template <class H>
concept Backend = is_backend_v<H>;
#endif

}  // namespace kccl::hal
