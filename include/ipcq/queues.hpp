// kccl/ipcq/queues.hpp — PE-level inter-process communication queues, device side.
//
// WHAT IT IS
//   kccl::ipcq::Queues<H, Dirs, Policy, Tracer> is one core's set of direction-addressed queue
//   pairs. For every installed direction d the core owns an rx ring (n_slots x slot_size, in its
//   L1 or in DRAM) that ONE peer core writes into, and it writes into that peer's rx ring. The
//   peer, its ring addresses and sizes come from the block the host builder installed in L1
//   (ipcq/host/plan.hpp, layout in ipcq/layout.hpp); the kernel only names directions.
//
//     kccl::ipcq::Queues<H> q(hal, hal.arg(0));       // block address from the runtime args
//     q.send(Nsew::E, src_l1, 64);                      // blocks while the peer's ring is full
//     auto s = q.recv(Nsew::W);                         // zero copy: s.l1 is the rx slot
//     ... use hal.l1_ptr(s.l1, s.info.nbytes) ...
//     q.release(s);                                     // credit return (frees the slot)
//
// POINTERS < n or a != b, so the wrap is invisible)
//   my_head          messages this core has sent on d
//   my_tail          messages this core has consumed (released) from d's rx ring
//   peer_head_cache  last seen value of the peer's my_head (from the head mailbox)
//   peer_tail_cache  last seen value of the peer's my_tail (from the credit mailbox)
//   taken            messages handed to the kernel by recv (taken - my_tail are held slots)
//   reserved         messages promised to recv_async futures (reserved - taken outstanding)
//   head_slot, take_slot, tail_slot   ring index of my_head / taken / my_tail, 0..n_slots-1,
//                    advanced with the counter and reset to 0 at n_slots. NOT counter % n_slots:
//                    2^32 is not a multiple of a non-power-of-two n_slots, so at the counter wrap
//                    that expression would give two consecutive messages the same slot.
//   All counters start at the plan's QueueConfig::initial_counter (0 unless a test fast-forwards
//   to the wrap), the slot indices at 0; both ends of a link start equal.
//
// PROTOCOL (what makes it correct under the contract, include/hal/contract.hpp)
//   send   (1) if my_head - peer_tail_cache == n_slots, re-read the credit mailbox (only then),
//              and wait (poll + idle(), or sem_wait_min: SLEEP AT THE WRAP) until a slot is free;
//          (2) if the slot's descriptor {nbytes, dtype, shape} differs from what the peer's
//              descriptor array holds for that slot (tracked in a local shadow), noc_write it;
//          (3) noc_write the payload from src into the peer's rx slot (one write);
//          (4) L1 placement: nothing — the head goes to the same core as (2) and (3), so N1 lands
//              it after them. DRAM placement: noc_write_barrier(), because the payload went to
//              the DRAM endpoint and the head goes to the peer core: different destinations, no
//              ordering without a barrier (N1/N2);
//          (5) noc_inline_write32(peer's head mailbox, my_head + 1): the piggyback — the
//              head becomes visible only after the data (I6/I7);
//          (6) noc_writes_flushed(): src may be reused when send returns (N3).
//   recv   waits until taken != peer_head_cache (re-reading the head mailbox — a word in this
//          core's OWN L1 — only when the cache says empty); reads the descriptor; L1 placement
//          returns the slot in place, DRAM placement noc_reads it into a one-slot L1 staging
//          buffer (+ noc_read_barrier).
//   release  my_tail += 1, then noc_inline_write32(peer's credit mailbox, my_tail): the peer may
//          reuse the slot only after this core has finished reading it. With a credit batch b > 1
//          (QueueConfig::credit_batch, default 1) the credit is written once b releases are
//          pending, and every pending credit of every direction is written before this core
//          blocks anywhere (send, recv, quiesce): a blocked sender then always has at least
//          n_slots - b + 1 ... n_slots free slots coming, so batching cannot deadlock (b <= n_slots).
//   Every wait polls only this core's own L1 (the emulation wakes a sleeper on writes into its
//   own memory) and calls hal.idle() on every empty poll (W1).
//
// RECV WITHOUT A DIRECTION (recv_any) is round robin over installed rx directions, starting
//   after the direction served last. Fairness is weak: a direction that always has
//   data is served at least once every count directions, but nothing more is promised.
//
// ERRORS (device side, no exceptions): a call on an uninstalled direction, a send on a
//   receive-only direction (ring_1d_unidir), a message larger than the slot, a release out of
//   order, a strict-mode mismatch (any receive variant given an expectation), a recv/try_recv on
//   a message reserved by a future, a future redeemed out of order or twice, a block that was
//   never installed or whose slot indices are out of range — each formats one message
//   naming the rank, core, direction and what is allowed, and calls kccl's assert handler
//   (kccl::set_assert_handler; the emulation tests install one that throws). Without a handler
//   the core traps.
//
// SLEEP AT THE WRAP. The contract's sem_wait_min(a, v) is a plain unsigned `word >= v`; it must
//   not be asked about a range of values that crosses 2^32 (a credit jumping from 2^32 - 2 to 1
//   would never satisfy `>= 2^32 - 1`). Every sleep-mode wait knows the interval the word can
//   take until the wait is satisfied: a head mailbox lies in [taken, taken + n_slots], a credit
//   mailbox in [peer_tail_cache, my_head]. When that interval does not cross 2^32, unsigned `>=`
//   is exactly the wrap-aware comparison and the core sleeps; when it does (at most n_slots
//   waits per 2^32 messages), the wait polls with idle() instead. Nothing ever waits on a value
//   that a wrapped word can skip.
//
// LIMITS: none on the number of messages per link (counters wrap); DRAM placement stages one
//   slot: release a slot from a DRAM direction before receiving the next one from it.
//
// C++17, freestanding, no heap/exceptions/RTTI; every cross-core word goes through the contract.
#pragma once

#include "directions.hpp"
#include "layout.hpp"
#include "trace.hpp"

#include <common/window.hpp>
#include <hal/contract.hpp>

#include <stdint.h>
#include <string.h>
#include <type_traits>

namespace kccl::ipcq {

/// Compile-time switches. The "mutation" members exist only so that tests can prove the
/// protocol's steps are necessary (a test must catch each mutation); never set them.
struct DefaultPolicy {
    /// Mutation: publish the head BEFORE writing descriptor and payload (violates I6).
    static constexpr bool head_before_data = false;
    /// Mutation: omit the write barrier between a DRAM payload and the head (violates N1/N2 use).
    static constexpr bool skip_dram_barrier = false;
    /// Mutation: slot = counter % n_slots instead of the slot indices (two messages share a slot
    /// at the 2^32 wrap unless n_slots divides 2^32).
    static constexpr bool slot_from_counter = false;
    /// Mutation: send's full-ring wait (sleep mode) calls sem_wait_min(credit, target) even when
    /// the credit's interval crosses 2^32 (a wrapped credit never satisfies the unsigned >=).
    static constexpr bool unbounded_sleep = false;
    /// Mutation: after the receiver's first window, put without waiting for the window of the
    /// current epoch (reusing the last base: the receiver may still be reading its previous
    /// collective's output there).
    static constexpr bool put_without_window = false;
};

/// A received message: its slot stays owned by the kernel until release().
struct Slot {
    uint32_t dir = 0;
    uint32_t seq = 0;   ///< the link's counter value of this message (QueueConfig::initial_counter + k, mod 2^32)
    uint32_t l1 = 0;    ///< L1 address of the payload (the rx slot, or the DRAM staging slot)
    MsgInfo info{};     ///< nbytes, dtype, shape as given to send (a put: put_notice(nbytes, landing address))
    bool landed = false;  ///< a put: the payload is at l1, where the sender wrote it, not in a slot
};

/// Handle returned by recv_async: a reservation of one message (the next one on `dir` not yet
/// reserved). Redeem with wait() (or poll ready()), in the order the futures were made.
struct RecvFuture {
    uint32_t dir = 0;
    uint32_t seq = 0;        ///< counter value of the reserved message
    bool has_expect = false; ///< made with an expectation: wait() checks it in strict mode
    MsgInfo expect{};
};

namespace detail {

/// The heap-free error-message builder (kccl/hal/config.hpp).
using Msg = ::kccl::detail::Msg;

}  // namespace detail

template <class H, class Dirs = Nsew, class Policy = DefaultPolicy, class Tracer = NoTrace>
class Queues {
    static_assert(hal::is_backend_v<H>, "kccl::ipcq::Queues<H>: H must model the kccl device contract "
                                        "(see include/hal/contract.hpp; kccl::hal::check_backend<H>() names what is missing).");
    static_assert(check_direction_set<Dirs>(), "");

public:
    static constexpr uint32_t kDirs = Dirs::count;

    /// Reads the block the host installed at `block_l1` (see ipcq/host/plan.hpp).
    Queues(H& hal, uint32_t block_l1, Tracer* tracer = nullptr) : hal_(hal), tracer_(tracer) {
        if (rd(block_l1 + layout::kHdrMagic) != layout::kMagic || rd(block_l1 + layout::kHdrVersion) != layout::kVersion) {
            detail::Msg m;
            m.s("ipcq: core (").u(hal.core_x()).s(",").u(hal.core_y()).s("): no IPCQ block at L1 ").hex(block_l1)
                .s(" (magic/version mismatch); install the host plan (kccl::ipcq::host::install) before the launch and pass its block address");
            die(m);
        }
        if (rd(block_l1 + layout::kHdrDirs) != kDirs) {
            detail::Msg m;
            m.s("ipcq: core (").u(hal.core_x()).s(",").u(hal.core_y()).s("): the installed block has ")
                .u(rd(block_l1 + layout::kHdrDirs)).s(" directions but the kernel's direction set has ").u(kDirs);
            die(m);
        }
        rank_ = rd(block_l1 + layout::kHdrRank);
        sleep_ = rd(block_l1 + layout::kHdrMode) == uint32_t(Backpressure::sleep);
        strict_ = rd(block_l1 + layout::kHdrStrict) != 0;
        for (uint32_t d = 0; d < kDirs; ++d) {
            Q& q = q_[d];
            const uint32_t r = block_l1 + layout::record(d);
            q.rec = r;
            q.flags = rd(r + layout::kCfgFlags);
            if (!(q.flags & layout::kInstalled)) continue;
            q.roles = layout::kInstalled | (q.flags & (layout::kTx | layout::kRx));
            q.n_slots = rd(r + layout::kCfgSlots);
            q.slot_bytes = rd(r + layout::kCfgSlotBytes);
            q.dram = rd(r + layout::kCfgPlacement) == uint32_t(Placement::dram);
            const uint32_t px = rd(r + layout::kCfgPeerX), py = rd(r + layout::kCfgPeerY);
            const uint32_t peer_rec = rd(r + layout::kCfgPeerRecord);
            q.peer_head_mb = hal.noc_addr(px, py, peer_rec + layout::kHeadMailbox);
            q.peer_credit_mb = hal.noc_addr(px, py, peer_rec + layout::kCreditMailbox);
            q.peer_window_count = hal.noc_addr(px, py, peer_rec + layout::kWindowCount);
            q.peer_window_base = hal.noc_addr(px, py, peer_rec + layout::kWindowBase);
            q.peer_x = px;
            q.peer_y = py;
            q.peer_desc = hal.noc_addr(px, py, rd(r + layout::kCfgPeerDesc));
            q.peer_rx = hal.noc_addr(rd(r + layout::kCfgPeerRxX), rd(r + layout::kCfgPeerRxY), rd(r + layout::kCfgPeerRxBase));
            q.rx_base = rd(r + layout::kCfgRxBase);
            q.rx_noc = hal.noc_addr(rd(r + layout::kCfgRxX), rd(r + layout::kCfgRxY), q.rx_base);
            q.stage = rd(r + layout::kCfgStage);
            q.tx_ring = rd(r + layout::kCfgTxRing);
            q.credit_batch = rd(r + layout::kCfgCreditBatch);
            if (q.credit_batch == 0) q.credit_batch = 1;
            if (q.flags & layout::kRx) q.desc = hal.l1_ptr(rd(r + layout::kCfgDesc), q.n_slots * layout::kDescBytes);
            q.shadow_l1 = rd(r + layout::kCfgShadow);
            if (q.flags & layout::kTx) q.shadow = hal.l1_ptr(q.shadow_l1, q.n_slots * layout::kDescBytes);
            // Resume from the mirrors (install writes them: initial_counter, slot 0), so a later
            // kernel on the same block continues. Nothing here was left by an earlier program
            // unless install() wrote it (docs/ipcq.md, "Initialisation").
            q.my_head = hal.sem_read(r + layout::kMyHead);
            q.my_tail = hal.sem_read(r + layout::kMyTail);
            q.taken = q.my_tail;
            q.reserved = q.my_tail;
            q.credited = q.my_tail;
            q.peer_head_cache = hal.sem_read(r + layout::kPeerHeadCache);
            q.peer_tail_cache = hal.sem_read(r + layout::kPeerTailCache);
            q.head_slot = hal.sem_read(r + layout::kHeadSlot);
            q.tail_slot = hal.sem_read(r + layout::kTailSlot);
            q.take_slot = q.tail_slot;
            q.epoch = hal.sem_read(r + layout::kPutEpoch);
            q.opened = hal.sem_read(r + layout::kOpened);
            q.window_cache = hal.sem_read(r + layout::kWindowCount);
            if (KCCL_UNLIKELY(q.n_slots == 0 || q.head_slot >= q.n_slots || q.tail_slot >= q.n_slots)) {
                detail::Msg m;
                where(m, "init", d).s(": corrupt block: n_slots ").u(q.n_slots).s(", head slot ").u(q.head_slot)
                    .s(", tail slot ").u(q.tail_slot).s(" (allowed: slots < n_slots, n_slots >= 1); re-install the plan");
                die(m);
            }
        }
    }

    Queues(const Queues&) = delete;
    Queues& operator=(const Queues&) = delete;

    // ---- queries ------------------------------------------------------------------------------
    uint32_t rank() const { return rank_; }
    bool installed(uint32_t d) const { return d < kDirs && (q_[d].flags & layout::kInstalled); }
    bool can_send(uint32_t d) const { return installed(d) && (q_[d].flags & layout::kTx); }
    bool can_recv(uint32_t d) const { return installed(d) && (q_[d].flags & layout::kRx); }
    uint32_t n_slots(uint32_t d) const { return q_[check(d, "n_slots", 0)].n_slots; }
    uint32_t slot_bytes(uint32_t d) const { return q_[check(d, "slot_bytes", 0)].slot_bytes; }
    bool sleep_mode() const { return sleep_; }
    bool strict() const { return strict_; }
    /// Pointer of a direction, for tests and diagnostics.
    uint32_t my_head(uint32_t d) const { return q_[check(d, "my_head", 0)].my_head; }
    uint32_t my_tail(uint32_t d) const { return q_[check(d, "my_tail", 0)].my_tail; }
    uint32_t peer_tail_cache(uint32_t d) const { return q_[check(d, "peer_tail_cache", 0)].peer_tail_cache; }
    uint32_t peer_head_cache(uint32_t d) const { return q_[check(d, "peer_head_cache", 0)].peer_head_cache; }
    /// Local pointer to a received slot's payload.
    uint8_t* data(const Slot& s) { return hal_.l1_ptr(s.l1, s.info.nbytes); }

    // ---- send ---------------------------------------------------------------------------------
    /// Sends nbytes from local L1 `src_l1` to direction d; blocks while the peer's ring is full.
    /// `info.nbytes` is ignored (nbytes wins); dtype/shape travel in the descriptor.
    KCCL_FORCEINLINE void send(uint32_t d, uint32_t src_l1, uint32_t nbytes, MsgInfo info = {}) {
        Q& q = q_[check(d, "send", layout::kTx)];
        check_size(q, d, nbytes, "send");
        wait_space(q, d);
        emit(q, d, src_l1, nbytes, info);
    }

    /// Non-blocking send: if the peer's ring has a free slot, sends exactly as send() and returns
    /// true; otherwise returns false and does nothing (after returning pending credits, so a
    /// caller that polls try_send and try_recv in turn cannot sit on them). A message larger than
    /// the slot is an error, as for send().
    bool try_send(uint32_t d, uint32_t src_l1, uint32_t nbytes, MsgInfo info = {}) {
        Q& q = q_[check(d, "try_send", layout::kTx)];
        check_size(q, d, nbytes, "try_send");
        if (!try_space(q)) return false;
        emit(q, d, src_l1, nbytes, info);
        return true;
    }

    // ---- puts: the payload written straight into the receiver's L1 ------------------------------
    // A receiver that knows where a message should land opens a WINDOW for its senders; a sender
    // then writes the payload there itself and sends only a notice (a descriptor and the head, on
    // the same ring and credits as a send), so the bytes cross the NoC once and are never copied
    // out of a slot. Windows are counted per link: each open_window() call is one EPOCH on every
    // installed direction (rx: a window opened for the peer; tx: an epoch begun), so both ends of
    // every link must call it the same number of times (once per collective, for instance). A put
    // of epoch k waits until the receiver has opened its k-th window: the receiver opens it only
    // when it is done with what its previous epoch's puts wrote (it has received their notices
    // and stopped reading there), so a fast sender cannot overwrite data the receiver still uses.
    // The window's base (an L1 address the receiver chooses) reaches the sender with it; where in
    // or beyond that window the sender writes is the caller's agreement (kccl's executor writes
    // chunk c of the receiver's output at its base + the chunk's offset).

    /// Begins one epoch: opens this core's window at L1 `base` to every rx peer, and starts the
    /// next epoch of puts on every tx direction. Call it when nothing of the previous epoch's
    /// puts into this core is still to be read (all their notices received and used).
    void open_window(uint32_t base) {
        epochs_begun_ = true;
        for (uint32_t d = 0; d < kDirs; ++d) {
            Q& q = q_[d];
            if (q.flags & layout::kRx) {
                q.opened += 1;
                // base, then the count, to one core: in issue order (contract N1, inline writes)
                hal_.noc_inline_write32(q.peer_window_base, base);
                hal_.noc_inline_write32(q.peer_window_count, q.opened);
                hal_.sem_set(q.rec + layout::kOpened, q.opened);
            }
            if (q.flags & layout::kTx) {
                q.epoch += 1;
                hal_.sem_set(q.rec + layout::kPutEpoch, q.epoch);
            }
        }
    }

    /// Blocks until the peer on d has opened the window of this core's current epoch, and returns
    /// its base. Error if no epoch was begun (open_window).
    uint32_t peer_window(uint32_t d) {
        Q& q = q_[check(d, "peer_window", layout::kTx)];
        check_epoch(q, d, "peer_window");
        if (!window_open(q)) {
            if (reuse_window(q)) return q.window_base;
            wait_window(q);
        }
        return q.window_base = hal_.sem_read(q.rec + layout::kWindowBase);
    }
    /// The same without blocking: false (after returning pending credits) if it is not open yet.
    bool try_peer_window(uint32_t d, uint32_t& base) {
        Q& q = q_[check(d, "try_peer_window", layout::kTx)];
        check_epoch(q, d, "try_peer_window");
        if (!window_open(q) && reuse_window(q)) {
            base = q.window_base;
            return true;
        }
        if (!window_open(q)) {
            refresh_window(q);
            if (!window_open(q)) {
                flush_credits();
                return false;
            }
        }
        base = q.window_base = hal_.sem_read(q.rec + layout::kWindowBase);
        return true;
    }

    /// Writes nbytes from local `src_l1` to the peer's L1 at `peer_l1` (inside the window
    /// peer_window(d) returned for this epoch), then sends a put notice on d (blocks while the
    /// ring is full, as send). Any size (not limited by the slot). The receiver's recv returns a
    /// Slot with landed = true and l1 = peer_l1. Error if the window of this epoch is not open.
    KCCL_FORCEINLINE void put(uint32_t d, uint32_t src_l1, uint32_t nbytes, uint32_t peer_l1) {
        Q& q = q_[check(d, "put", layout::kTx)];
        require_window(q, d);
        wait_space(q, d);
        emit(q, d, src_l1, nbytes, put_notice(nbytes, peer_l1));
    }
    /// Non-blocking put: false (nothing done) if the ring is full.
    bool try_put(uint32_t d, uint32_t src_l1, uint32_t nbytes, uint32_t peer_l1) {
        Q& q = q_[check(d, "try_put", layout::kTx)];
        require_window(q, d);
        if (!try_space(q)) return false;
        emit(q, d, src_l1, nbytes, put_notice(nbytes, peer_l1));
        return true;
    }
    /// Epoch of puts on d (open_window calls so far, from the block's install).
    uint32_t put_epoch(uint32_t d) const { return q_[check(d, "put_epoch", 0)].epoch; }

private:
    struct Q;
    /// A free slot on q without blocking: re-reads the credit only when the cache says full; when
    /// still full, returns every pending credit (a poller must not sit on them) and false.
    KCCL_FORCEINLINE bool try_space(Q& q) {
        if (KCCL_LIKELY(CreditWindow{q.n_slots}.has_space(q.my_head, q.peer_tail_cache))) return true;
        refresh_tail(q);
        if (CreditWindow{q.n_slots}.has_space(q.my_head, q.peer_tail_cache)) return true;
        flush_credits();
        return false;
    }
    /// The window of q's epoch is open (wrap-aware: the peer is at most 2^31 windows ahead).
    static KCCL_FORCEINLINE bool window_open(const Q& q) { return reached(q.window_cache, q.epoch); }
    /// The mutation put_without_window: a window was opened once, so use its base again.
    KCCL_FORCEINLINE bool reuse_window(Q& q) {
        if constexpr (!Policy::put_without_window) return false;
        return q.window_cache != 0;  // the base an earlier epoch read, not read again
    }
    KCCL_FORCEINLINE void refresh_window(Q& q) { q.window_cache = hal_.sem_read(q.rec + layout::kWindowCount); }
    KCCL_WAIT_PATH void wait_window(Q& q) {
        refresh_window(q);
        if (window_open(q)) return;
        flush_credits();
        while (!window_open(q)) {
            // The count only grows towards epoch; sleep on `>= epoch` unless that interval wraps.
            if (sleep_ && q.window_cache <= q.epoch) hal_.sem_wait_min(q.rec + layout::kWindowCount, q.epoch);
            else hal_.idle();
            refresh_window(q);
        }
    }
    KCCL_FORCEINLINE void check_epoch(const Q& q, uint32_t d, const char* op) const {
        // begun in this kernel, or resumed from a block an earlier kernel began (its mirror): not
        // `epoch != 0` alone, which is 0 again after 2^32 epochs
        if (KCCL_LIKELY(epochs_begun_ || q.epoch != 0)) return;
        detail::Msg m;
        where(m, op, d).s(": no epoch begun on this block; call open_window() on every core of the group first");
        die(m);
    }
    KCCL_FORCEINLINE void require_window(Q& q, uint32_t d) {
        check_epoch(q, d, "put");
        if constexpr (Policy::put_without_window) return;
        if (KCCL_LIKELY(window_open(q))) return;
        refresh_window(q);
        if (window_open(q)) return;
        detail::Msg m;
        where(m, "put", d).s(": the peer has not opened the window of epoch ").u(q.epoch).s(" (it has opened ")
            .u(q.window_cache).s("); call peer_window(d) before putting");
        die(m);
    }
    KCCL_FORCEINLINE void check_size(const Q& q, uint32_t d, uint32_t nbytes, const char* op) const {
        if (KCCL_LIKELY(nbytes <= q.slot_bytes)) return;
        size_error(q, d, nbytes, op);
    }
    [[noreturn]] KCCL_COLD void size_error(const Q& q, uint32_t d, uint32_t nbytes, const char* op) const {
        detail::Msg m;
        where(m, op, d).s(": message of ").u(nbytes).s(" bytes does not fit a slot of ").u(q.slot_bytes)
            .s(" bytes (allowed: nbytes <= slot_size)");
        die(m);
    }
    /// Steps (2)-(6) of a send whose slot is free. A put (info is a put notice) writes the
    /// payload to the peer's L1 at put_address(info) instead of the slot.
    KCCL_FORCEINLINE void emit(Q& q, uint32_t d, uint32_t src_l1, uint32_t nbytes, MsgInfo info) {
        // Locals, not members: the backend's atomic stores make the compiler reload members
        // after every contract call; these stay in registers.
        H& hal = hal_;
        const uint32_t rec = q.rec;
        const hal::noc_addr_t head_mb = q.peer_head_mb;
        info.nbytes = nbytes;
        const uint32_t slot = Policy::slot_from_counter ? q.my_head % q.n_slots : q.head_slot;
        const uint32_t next = q.my_head + 1;
        const uint32_t next_slot = advance(q, slot);
        if constexpr (Policy::head_before_data) hal.noc_inline_write32(head_mb, next);
        // (2) descriptor, only when it changes for this slot. The shadow entry was last the source
        // of a write one lap ago; that write landed before the head of that lap (N1) and the
        // peer has consumed that lap (the credit says so), so rewriting the entry now is safe (N3).
        uint8_t* sh = q.shadow + slot * layout::kDescBytes;
        if (!same_desc(sh, info)) {
            memcpy(sh, &info, layout::kDescBytes);
            kccl::hal::l1_store_fence(hal, q.shadow_l1 + slot * layout::kDescBytes, layout::kDescBytes);  // N7
            hal.noc_write(q.shadow_l1 + slot * layout::kDescBytes, q.peer_desc + slot * layout::kDescBytes,
                          layout::kDescBytes);
        }
        // (3) payload: one NoC write into the peer's rx slot (or its DRAM region); a put's into
        // the peer's L1 where the receiver's window says.
        if (nbytes) {
            if (is_put_notice(info)) hal.noc_write(src_l1, hal.noc_addr(q.peer_x, q.peer_y, put_address(info)), nbytes);
            else hal.noc_write(src_l1, q.peer_rx + uint64_t(slot) * q.slot_bytes, nbytes);
        }
        // (4) a DRAM payload and the head go to different destinations: order them explicitly.
        if constexpr (!Policy::skip_dram_barrier)
            if (q.dram) hal.noc_write_barrier();
        // (5) flush: the writes have left this core, so the head's inline write is ordered after
        // them by the documented rules too (contract N1, strict profile), and src may be reused
        // once send returns (N3).
        hal.noc_writes_flushed();
        // (6) the head, after the data on the same ordered path.
        if constexpr (!Policy::head_before_data) hal.noc_inline_write32(head_mb, next);
        q.my_head = next;
        q.head_slot = next_slot;
        hal.sem_set(rec + layout::kMyHead, next);
        hal.sem_set(rec + layout::kHeadSlot, next_slot);
        trace(TraceOp::send, d, nbytes, next - 1);
    }

public:

    /// L1 address of the tx ring slot the next send on d will use, after waiting for space: the
    /// kernel may compose the message there and pass it to send(). Needs a plan with tx rings.
    uint32_t tx_slot(uint32_t d) {
        Q& q = q_[check(d, "tx_slot", layout::kTx)];
        if (KCCL_UNLIKELY(q.tx_ring == 0)) {
            detail::Msg m;
            where(m, "tx_slot", d).s(": the plan has no tx rings (QueueConfig::tx_ring = true to allocate them)");
            die(m);
        }
        wait_space(q, d);
        return q.tx_ring + q.head_slot * q.slot_bytes;
    }

    /// Returns every pending (batched) credit, then blocks until every message sent on every tx
    /// direction has been consumed by its receiver (teardown: nothing left in flight when the
    /// kernel returns). Call it at the end of every kernel.
    void quiesce() {
        flush_credits();
        for (uint32_t d = 0; d < kDirs; ++d) {
            Q& q = q_[d];
            if (!(q.flags & layout::kTx)) continue;
            while (q.peer_tail_cache != q.my_head) {
                refresh_tail(q);
                if (q.peer_tail_cache == q.my_head) break;
                // The credit lies in [peer_tail_cache, my_head]: sleep only if that does not wrap.
                if (sleep_ && q.peer_tail_cache <= q.my_head) hal_.sem_wait_min(q.rec + layout::kCreditMailbox, q.my_head);
                else hal_.idle();
            }
        }
    }

    // ---- recv ---------------------------------------------------------------------------------
    // Every receive variant has an overload taking `expect` (nbytes, dtype, shape): in strict
    // mode (QueueConfig::strict) a message that disagrees is an error naming both, before the
    // payload is used or copied; without strict mode `expect` is ignored.
    //
    // Futures (recv_async) reserve messages: while a future of direction d is outstanding, the
    // next message of d belongs to it, and recv / try_recv on d are errors (recv_any skips d).

    /// Blocks until a message arrives from d; returns its slot (zero copy). Call release(slot).
    KCCL_FORCEINLINE Slot recv(uint32_t d) { return recv_impl(d, nullptr); }
    KCCL_FORCEINLINE Slot recv(uint32_t d, const MsgInfo& expect) { return recv_impl(d, &expect); }
    /// Copy mode: waits for a message from d, copies it to local `dst_l1` (at most `capacity`
    /// bytes, else an error), releases the slot, returns nbytes.
    uint32_t recv(uint32_t d, uint32_t dst_l1, uint32_t capacity) { return recv_copy(d, dst_l1, capacity, nullptr); }
    uint32_t recv(uint32_t d, uint32_t dst_l1, uint32_t capacity, const MsgInfo& expect) {
        return recv_copy(d, dst_l1, capacity, &expect);
    }
    /// Copy mode for a caller that told its sender where to put: like recv(d, dst_l1, capacity),
    /// but a put notice must have landed at dst_l1 (else an error naming both addresses), and
    /// then nothing is copied. A plain message is copied into dst_l1.
    uint32_t recv_in_place(uint32_t d, uint32_t dst_l1, uint32_t capacity) {
        Q& q = q_[check(d, "recv_in_place", layout::kRx)];
        check_unreserved(q, d, "recv_in_place");
        wait_data(q, d);
        const Slot s = take(q, d, dst_l1, capacity, nullptr, true);
        release(s);
        return s.info.nbytes;
    }
    /// Non-blocking: true and the slot if a message from d is there.
    bool try_recv(uint32_t d, Slot& out) { return try_recv_impl(d, out, nullptr); }
    bool try_recv(uint32_t d, Slot& out, const MsgInfo& expect) { return try_recv_impl(d, out, &expect); }
    /// Blocks until a message arrives from any installed rx direction; round robin, starting
    /// after the direction served last (weak fairness). Directions whose next message is
    /// reserved by a future are skipped.
    Slot recv_any() { return recv_any_impl(nullptr); }
    Slot recv_any(const MsgInfo& expect) { return recv_any_impl(&expect); }
    /// Reserves the next unreserved message of d (the first future after a recv names the next
    /// message, a second one the message after it, ...). Redeem with wait() in the same order.
    RecvFuture recv_async(uint32_t d) {
        Q& q = q_[check(d, "recv_async", layout::kRx)];
        RecvFuture f{d, q.reserved, false, {}};
        q.reserved += 1;
        return f;
    }
    RecvFuture recv_async(uint32_t d, const MsgInfo& expect) {
        RecvFuture f = recv_async(d);
        f.has_expect = true;
        f.expect = expect;
        return f;
    }
    /// True once the message reserved by f has arrived (it may be behind earlier futures).
    bool ready(const RecvFuture& f) {
        Q& q = q_[check(f.dir, "ready", layout::kRx)];
        check_future(q, f, "ready");
        if (arrived(q, f.seq)) return true;
        flush_credits();
        return false;
    }
    /// Blocks until f's message arrives and returns its slot (as recv). f must be the oldest
    /// outstanding future of its direction.
    Slot wait(const RecvFuture& f) {
        Q& q = q_[check(f.dir, "wait", layout::kRx)];
        check_future(q, f, "wait");
        if (KCCL_UNLIKELY(f.seq != q.taken)) {
            detail::Msg m;
            where(m, "wait", f.dir).s(": future for message ").u(f.seq).s(" redeemed before the future for message ")
                .u(q.taken).s(" (redeem the futures of one direction in the order recv_async made them)");
            die(m);
        }
        wait_data(q, f.dir);
        return take(q, f.dir, 0, 0, f.has_expect ? &f.expect : nullptr);
    }

    /// Frees a received slot and returns the credit to the sender. Slots of one direction are
    /// released in the order they were received.
    KCCL_FORCEINLINE void release(const Slot& s) {
        Q& q = q_[check(s.dir, "release", layout::kRx)];
        if (KCCL_UNLIKELY(s.seq != q.my_tail || q.taken == q.my_tail)) release_error(q, s);
        H& hal = hal_;  // locals: see emit()
        const uint32_t rec = q.rec;
        const uint32_t tail = q.my_tail + 1, tail_slot = advance(q, q.tail_slot);
        q.my_tail = tail;
        q.tail_slot = tail_slot;
        hal.sem_set(rec + layout::kMyTail, tail);
        hal.sem_set(rec + layout::kTailSlot, tail_slot);
        if (CreditWindow{q.credit_batch}.full(tail, q.credited)) return_credit(q);
        else credits_pending_ = true;
    }

    /// Writes every pending (batched) credit now. Called before any blocking wait.
    /// Without a pending credit (always, with credit_batch 1) it is one flag test.
    KCCL_FORCEINLINE void flush_credits() {
        if (credits_pending_) flush_pending_credits();
    }

private:
    struct Q {
        uint32_t flags = 0, n_slots = 0, slot_bytes = 0, rec = 0;
        uint32_t roles = 0;  // kInstalled | kTx | kRx as installed, 0 if not installed: check()'s one test
        bool dram = false;
        hal::noc_addr_t peer_head_mb = 0, peer_credit_mb = 0, peer_desc = 0, peer_rx = 0, rx_noc = 0;
        uint32_t rx_base = 0, stage = 0, tx_ring = 0, shadow_l1 = 0;
        uint8_t* desc = nullptr;    // my rx descriptor array
        uint8_t* shadow = nullptr;  // my tx descriptor shadow
        uint32_t my_head = 0, my_tail = 0, peer_head_cache = 0, peer_tail_cache = 0, taken = 0;
        uint32_t reserved = 0;                         // next message not promised to a future
        uint32_t head_slot = 0, take_slot = 0, tail_slot = 0;  // ring indices of my_head, taken, my_tail
        uint32_t credit_batch = 1, credited = 0;  // credited: last my_tail written to the peer
        hal::noc_addr_t peer_window_count = 0, peer_window_base = 0;  // the peer's window mailbox
        uint32_t peer_x = 0, peer_y = 0;
        uint32_t epoch = 0, opened = 0, window_cache = 0;  // puts: my epoch, windows I opened, the peer's count
        uint32_t window_base = 0;  // the base the peer's window last had (read with it)
    };

    /// The ring index after `slot` (no division, and no dependence on the counter's wrap).
    static KCCL_FORCEINLINE uint32_t advance(const Q& q, uint32_t slot) { return slot + 1 == q.n_slots ? 0 : slot + 1; }

    // Receive variants; `expect` (nullable) is checked in strict mode.
    KCCL_FORCEINLINE Slot recv_impl(uint32_t d, const MsgInfo* expect) {
        Q& q = q_[check(d, "recv", layout::kRx)];
        check_unreserved(q, d, "recv");
        wait_data(q, d);
        return take(q, d, 0, 0, expect);
    }
    uint32_t recv_copy(uint32_t d, uint32_t dst_l1, uint32_t capacity, const MsgInfo* expect) {
        Q& q = q_[check(d, "recv", layout::kRx)];
        check_unreserved(q, d, "recv");
        wait_data(q, d);
        const Slot s = take(q, d, dst_l1, capacity, expect);
        release(s);
        return s.info.nbytes;
    }
    bool try_recv_impl(uint32_t d, Slot& out, const MsgInfo* expect) {
        Q& q = q_[check(d, "try_recv", layout::kRx)];
        check_unreserved(q, d, "try_recv");
        if (!available(q)) {
            flush_credits();  // the caller may be about to poll: never sit on credits
            return false;
        }
        out = take(q, d, 0, 0, expect);
        return true;
    }
    Slot recv_any_impl(const MsgInfo* expect) {
        for (;;) {
            for (uint32_t i = 1; i <= kDirs; ++i) {
                const uint32_t d = (rr_ + i) % kDirs;
                Q& q = q_[d];
                if (!(q.flags & layout::kRx) || q.reserved != q.taken) continue;
                if (available(q)) {
                    rr_ = d;
                    return take(q, d, 0, 0, expect);
                }
            }
            if (KCCL_UNLIKELY(!any_rx_)) any_rx_check();
            flush_credits();
            hal_.idle();  // sem_wait watches one word: several directions are waited on by polling
        }
    }
    KCCL_FORCEINLINE void check_unreserved(const Q& q, uint32_t d, const char* op) const {
        if (KCCL_LIKELY(q.reserved == q.taken)) return;
        reserved_error(q, d, op);
    }
    [[noreturn]] KCCL_COLD void reserved_error(const Q& q, uint32_t d, const char* op) const {
        detail::Msg m;
        where(m, op, d).s(": message ").u(q.taken).s(" is reserved by a future (recv_async; ").u(q.reserved - q.taken)
            .s(" outstanding); redeem it with wait() first");
        die(m);
    }
    /// f must be outstanding: made by recv_async on this direction and not yet redeemed.
    KCCL_FORCEINLINE void check_future(const Q& q, const RecvFuture& f, const char* op) const {
        if (KCCL_LIKELY(f.seq - q.taken < q.reserved - q.taken)) return;
        future_error(q, f, op);
    }
    [[noreturn]] KCCL_COLD void future_error(const Q& q, const RecvFuture& f, const char* op) const {
        detail::Msg m;
        where(m, op, f.dir).s(": future for message ").u(f.seq).s(" is not outstanding (");
        if (q.reserved == q.taken) m.s("none is; the next message on this direction is ").u(q.taken);
        else m.s("outstanding: messages ").u(q.taken).s(" to ").u(q.reserved - 1);
        m.s("); a future is redeemed once, by wait()");
        die(m);
    }
    /// Message `seq` (taken <= seq, wrap-aware) has arrived. Re-reads the head mailbox only when
    /// the cache does not show it yet.
    bool arrived(Q& q, uint32_t seq) {
        if (q.peer_head_cache - q.taken > seq - q.taken) return true;
        const uint32_t h = hal_.sem_read(q.rec + layout::kHeadMailbox);
        if (h == q.peer_head_cache) return false;
        q.peer_head_cache = h;
        hal_.sem_set(q.rec + layout::kPeerHeadCache, h);
        return q.peer_head_cache - q.taken > seq - q.taken;
    }

    KCCL_NOINLINE void flush_pending_credits() {
        credits_pending_ = false;
        for (uint32_t d = 0; d < kDirs; ++d)
            if (q_[d].credited != q_[d].my_tail) return_credit(q_[d]);
    }
    KCCL_FORCEINLINE void return_credit(Q& q) {
        q.credited = q.my_tail;
        hal_.noc_inline_write32(q.peer_credit_mb, q.my_tail);
    }

    uint32_t rd(uint32_t l1) {
        uint32_t v;
        memcpy(&v, hal_.l1_ptr(l1, 4), 4);
        return v;
    }

    [[noreturn]] static void die(const detail::Msg& m) { kccl::detail::assert_fail("ipcq", m.buf, __FILE__, __LINE__); }

    detail::Msg& where(detail::Msg& m, const char* op, uint32_t d) const {
        m.s("ipcq: rank ").u(rank_).s(" core (").u(hal_.core_x()).s(",").u(hal_.core_y()).s("): ").s(op)
            .s(" on direction ");
        m.s(Dirs::name(d)).s(" (").u(d).s(")");
        return m;
    }
    void list_dirs(detail::Msg& m, uint32_t role) const {
        bool any = false;
        for (uint32_t i = 0; i < kDirs; ++i)
            if ((q_[i].flags & layout::kInstalled) && (q_[i].flags & role)) {
                m.s(any ? ", " : "").s(Dirs::name(i));
                any = true;
            }
        if (!any) m.s("none");
    }
    /// Checks d is installed with `role` (0 = any role); returns d.
    /// One test on the roles cached at construction (kInstalled | kTx | kRx, 0 if not installed);
    /// with d a constant of the kernel it is a single bit test.
    KCCL_FORCEINLINE uint32_t check(uint32_t d, const char* op, uint32_t role) const {
        if (KCCL_LIKELY(d < kDirs && (q_[d].roles & (role ? role : layout::kInstalled)))) return d;
        check_error(d, op, role);
    }
    [[noreturn]] KCCL_COLD void check_error(uint32_t d, const char* op, uint32_t role) const {
        detail::Msg m;
        where(m, op, d);
        if (d >= kDirs) m.s(": no such direction (the direction set has ").u(kDirs).s(")");
        else if (!(q_[d].flags & layout::kInstalled)) m.s(": not installed on this core");
        else m.s(role == layout::kTx ? ": installed receive-only" : ": installed send-only");
        m.s("; installed for ").s(role == layout::kRx ? "recv: " : "send: ");
        list_dirs(m, role ? role : layout::kInstalled);
        die(m);
    }
    void any_rx_check() {
        for (uint32_t d = 0; d < kDirs; ++d) any_rx_ = any_rx_ || (q_[d].flags & layout::kRx);
        if (!any_rx_) {
            detail::Msg m;
            m.s("ipcq: rank ").u(rank_).s(" core (").u(hal_.core_x()).s(",").u(hal_.core_y())
                .s("): recv_any with no receive direction installed");
            die(m);
        }
    }

    KCCL_FORCEINLINE void refresh_tail(Q& q) {
        const uint32_t t = hal_.sem_read(q.rec + layout::kCreditMailbox);
        if (t == q.peer_tail_cache) return;
        // Mirror only changes: a store counts as progress for a watchdog, and an empty poll
        // loop must not look like progress (or a hang would never be reported).
        q.peer_tail_cache = t;
        hal_.sem_set(q.rec + layout::kPeerTailCache, t);
    }
    KCCL_FORCEINLINE void wait_space(Q& q, uint32_t) {
        if (KCCL_LIKELY(CreditWindow{q.n_slots}.has_space(q.my_head, q.peer_tail_cache))) return;
        wait_space_slow(q);
    }
    KCCL_WAIT_PATH void wait_space_slow(Q& q) {
        // The cache says full: only now re-read the peer's credit.
        refresh_tail(q);
        if (CreditWindow{q.n_slots}.full(q.my_head, q.peer_tail_cache)) flush_credits();
        while (CreditWindow{q.n_slots}.full(q.my_head, q.peer_tail_cache)) {
            // Full: the credit lies in [peer_tail_cache, my_head] and the target my_head - n_slots
            // + 1 is peer_tail_cache + 1. Unsigned >= means "reached" only if that interval does
            // not cross 2^32 (SLEEP AT THE WRAP); otherwise poll.
            if (sleep_ && (Policy::unbounded_sleep || q.peer_tail_cache <= q.my_head))
                hal_.sem_wait_min(q.rec + layout::kCreditMailbox, CreditWindow{q.n_slots}.wait_target(q.my_head));
            else hal_.idle();
            refresh_tail(q);
        }
    }
    KCCL_FORCEINLINE bool available(Q& q) {
        if (q.taken != q.peer_head_cache) return true;
        // The cache says empty: only now re-read the head mailbox (acquire: the data is visible).
        const uint32_t h = hal_.sem_read(q.rec + layout::kHeadMailbox);
        if (h == q.peer_head_cache) return false;
        q.peer_head_cache = h;
        hal_.sem_set(q.rec + layout::kPeerHeadCache, h);
        return true;
    }
    KCCL_FORCEINLINE void wait_data(Q& q, uint32_t) {
        if (KCCL_LIKELY(q.taken != q.peer_head_cache)) return;  // available() without a poll
        wait_data_slow(q);
    }
    KCCL_WAIT_PATH void wait_data_slow(Q& q) {
        if (available(q)) return;
        flush_credits();
        while (!available(q)) {
            // Empty: the head lies in [taken, taken + n_slots] (the sender holds at most n_slots
            // uncredited messages); sleep on `>= taken + 1` only if that does not cross 2^32.
            if (sleep_ && q.taken <= q.taken + q.n_slots) hal_.sem_wait_min(q.rec + layout::kHeadMailbox, q.taken + 1);
            else hal_.idle();
        }
    }
    /// Hands out the next message of q (available() was true). With dst_l1 != 0 (copy mode) the
    /// payload goes straight to dst_l1.
    KCCL_FORCEINLINE Slot take(Q& q, uint32_t d, uint32_t dst_l1 = 0, uint32_t capacity = 0, const MsgInfo* expect = nullptr,
                               bool must_land = false) {
        const uint32_t seq = q.taken;
        const uint32_t slot = Policy::slot_from_counter ? seq % q.n_slots : q.take_slot;
        Slot s;
        s.dir = d;
        s.seq = seq;
        memcpy(&s.info, q.desc + slot * layout::kDescBytes, layout::kDescBytes);
        if (strict_ && expect) validate(s, *expect);  // before the payload is read or copied
        const uint32_t n = s.info.nbytes;
        if (is_put_notice(s.info)) {  // the payload is already in this core's L1, where the sender put it
            const uint32_t at = put_address(s.info);
            if (KCCL_UNLIKELY(dst_l1 && n > capacity)) take_size_error(q, d, seq, n, capacity);
            s.landed = true;
            s.l1 = at;
            if (dst_l1 && at != dst_l1) {
                if (KCCL_UNLIKELY(must_land)) landing_error(d, seq, n, at, dst_l1);
                if (n) {
                    hal_.noc_write(at, hal_.noc_addr(hal_.core_x(), hal_.core_y(), dst_l1), n);
                    hal_.noc_write_barrier();
                }
                s.l1 = dst_l1;
            }
        } else if (KCCL_UNLIKELY(n > q.slot_bytes || (dst_l1 && n > capacity))) {
            take_size_error(q, d, seq, n, capacity);
        } else if (q.dram) {
            if (KCCL_UNLIKELY(!dst_l1 && q.taken != q.my_tail)) stage_error(q, d);
            s.l1 = dst_l1 ? dst_l1 : q.stage;
            if (n) {
                hal_.noc_read(q.rx_noc + uint64_t(slot) * q.slot_bytes, s.l1, n);
                hal_.noc_read_barrier();
            }
        } else {
            s.l1 = q.rx_base + slot * q.slot_bytes;
            if (dst_l1 && n) {
                if (((dst_l1 | s.l1 | n) & 15u) == 0) {
                    // The core's NoC copies (a write to its own L1, like tt-metal's local copies):
                    // no RISC-V load and store per word, and no store fence — the NoC wrote dst,
                    // and the barrier has it landed before anything reads it (N2).
                    hal_.noc_write(s.l1, hal_.noc_addr(hal_.core_x(), hal_.core_y(), dst_l1), n);
                    hal_.noc_write_barrier();
                } else {
                    memcpy(hal_.l1_ptr(dst_l1, n), hal_.l1_ptr(s.l1, n), n);
                    kccl::hal::l1_store_fence(hal_, dst_l1, n);  // dst may be sent from next (contract N7)
                }
            }
            if (dst_l1) s.l1 = dst_l1;
        }
        const uint32_t taken = seq + 1;
        q.taken = taken;
        q.take_slot = advance(q, slot);
        if (q.reserved == seq) q.reserved = taken;  // a plain receive: nothing was reserved
        hal_.sem_set(q.rec + layout::kTaken, taken);
        trace(TraceOp::recv, d, n, seq);
        return s;
    }
    /// The shadow entry at `sh` holds `info` (all 16 bytes, as memcmp). Not memcmp(&info): that
    /// made the compiler store `info` to the stack in pieces and load it back in 8-byte words, a
    /// store-forwarding stall that was a third of a 64 B send's time on the fiber engine. Copied
    /// into two 64-bit words each side, `info` stays in registers.
    static KCCL_FORCEINLINE bool same_desc(const uint8_t* sh, const MsgInfo& info) {
        static_assert(sizeof(MsgInfo) == 2 * sizeof(uint64_t), "MsgInfo is compared as two 64-bit words");
        uint64_t have[2], want[2];
        memcpy(have, sh, sizeof have);
        memcpy(want, &info, sizeof want);
        return have[0] == want[0] && have[1] == want[1];
    }
    [[noreturn]] KCCL_COLD void take_size_error(const Q& q, uint32_t d, uint32_t seq, uint32_t n, uint32_t capacity) const {
        detail::Msg m;
        where(m, "recv", d).s(": message ").u(seq).s(" has ").u(n).s(" bytes; ");
        if (n > q.slot_bytes) m.s("slot is ").u(q.slot_bytes).s(" bytes (corrupt descriptor)");
        else m.s("destination capacity is ").u(capacity).s(" bytes (allowed: nbytes <= capacity)");
        die(m);
    }
    [[noreturn]] KCCL_COLD void landing_error(uint32_t d, uint32_t seq, uint32_t n, uint32_t at, uint32_t want) const {
        detail::Msg m;
        where(m, "recv_in_place", d).s(": message ").u(seq).s(" (").u(n).s(" bytes) was put at L1 ").hex(at)
            .s(" but this core receives it at ").hex(want).s(" (sender and receiver disagree on where it lands)");
        die(m);
    }
    [[noreturn]] KCCL_COLD void stage_error(const Q& q, uint32_t d) const {
        detail::Msg m;
        where(m, "recv", d).s(": DRAM placement stages one slot; release message ").u(q.my_tail)
            .s(" before receiving the next one from this direction");
        die(m);
    }
    [[noreturn]] KCCL_COLD void release_error(const Q& q, const Slot& s) const {
        detail::Msg m;
        where(m, "release", s.dir).s(": slot of message ").u(s.seq).s(" released, but the oldest held message is ")
            .u(q.my_tail).s(" (held: ").u(q.taken - q.my_tail).s("); release in receive order");
        die(m);
    }
    void validate(const Slot& s, const MsgInfo& e) const {
        const MsgInfo& g = s.info;
        // a put notice carries no dtype or shape: strict mode checks its length only
        bool same = g.nbytes == e.nbytes && (is_put_notice(g) || (g.dtype == e.dtype && g.rank == e.rank));
        if (is_put_notice(g) && same) return;
        for (uint32_t i = 0; i < 4 && i < e.rank && same; ++i) same = g.dims[i] == e.dims[i];
        if (same) return;
        detail::Msg m;
        where(m, "recv", s.dir).s(": strict mode: message ").u(s.seq).s(" was sent with nbytes ").u(g.nbytes)
            .s(" dtype ").u(g.dtype).s(" shape [");
        for (uint32_t i = 0; i < g.rank && i < 4; ++i) m.s(i ? "," : "").u(g.dims[i]);
        m.s("] but recv expects nbytes ").u(e.nbytes).s(" dtype ").u(e.dtype).s(" shape [");
        for (uint32_t i = 0; i < e.rank && i < 4; ++i) m.s(i ? "," : "").u(e.dims[i]);
        m.s("]");
        die(m);
    }
    void trace(TraceOp op, uint32_t d, uint32_t nbytes, uint32_t seq) {
        if constexpr (!std::is_same_v<Tracer, NoTrace>)
            if (tracer_) (*tracer_)(TraceEvent{op, rank_, d, nbytes, seq});
        (void)op, (void)d, (void)nbytes, (void)seq;
    }

    H& hal_;
    Tracer* tracer_;
    uint32_t rank_ = 0;
    bool sleep_ = false, strict_ = false, any_rx_ = false;
    bool epochs_begun_ = false;  ///< open_window was called by this kernel
    /// Set when a release leaves a credit unreturned (credit_batch > 1); cleared when every
    /// direction's credit is written. Invariant: some credited != my_tail implies it is set.
    bool credits_pending_ = false;
    uint32_t rr_ = kDirs - 1;
    Q q_[kDirs];
};

}  // namespace kccl::ipcq
