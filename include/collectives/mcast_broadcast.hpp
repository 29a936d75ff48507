// kccl/collectives/mcast_broadcast.hpp — broadcast on a rectangle of Tensix cores of one chip by
// NoC multicast (hal contract MULTICAST, M1-M3): the root injects each chunk ONCE and the NoC
// delivers it to every core of the rectangle, where the tree / chain broadcasts (algorithms.hpp)
// send one unicast message per hop.
//
//   kccl::coll::McastBcastArgs a = kccl::coll::load_mcast_bcast_args(hal, arg_base);  // host::McastBcastPlan
//   kccl::coll::mcast_broadcast(hal, a, root, input_l1, output_l1, bytes);  // every rank of the group
//
// Contract
//   * The group's ranks are exactly the cores of the rectangle a.rect on the calling core's chip
//     (rank r is the core a.rank_x(r), a.rank_y(r): row-major over the rectangle), every one a
//     Tensix core; host::plan_mcast_broadcast checks that and names what is wrong otherwise.
//   * On return the output of EVERY rank (the root's too) holds the root's `bytes` of input. The
//     input is read only on the root. input and output must not overlap on the root.
//   * Every rank calls it with the same (root, bytes); calls may follow each other on the same
//     cores with any root, in one program or in later programs (the counters persist in L1).
//   * Every counter word is initialised by the host before the first program (the plan's
//     init_words: contract P2); nothing relies on L1 the host or this code did not write.
//
// Protocol (per call; `seq` = the group's chunks so far, the same on every rank between calls;
// S = a.slots staging slots of a.chunk_bytes at a.slots_l1 on every core):
//   root, start:    credits[r] := 0 for every receiver r (its own words; no ack is in flight)
//   root, chunk c:  c >= S: wait credits[r] >= c-S+1 for every receiver r (none still reads slot
//                   c%S; one counter per receiver: a sum could be reached by fast receivers alone)
//                   noc_write_mcast(input chunk c -> slot c%S, rect, loopback)
//                   noc_writes_flushed()     M1: the counter below must not land before the data
//                   word := seq+c+1; sem_set_mcast(word -> arrived, rect, loopback)
//                   (the root's own copy input -> output is a local copy)
//   receiver r, c:  wait arrived >= seq+c+1; copy slot c%S -> output; sem_inc(root.credits[r], 1)
//   end:            root waits credits[r] >= chunks for every receiver (every slot read), then
//                   sem_set_mcast(seq_end -> released); every receiver waits released >= seq_end
//                   before it returns. So no call starts while a receiver of the previous one
//                   still reads a slot, whoever the next root is (the next root's multicast
//                   overwrites every slot), and the `arrived` / `released` values every core
//                   holds only grow: a set sent later never lands before one sent earlier (the
//                   flushes between a root's sets, M1; the released handshake between roots).
//   All counters are 32-bit and compared by wrap-safe difference (contract P5); the slot of
//   chunk c is c % S with c counted from 0 in each call (never a wrapping counter mod S).
//   The credit words of a core are only incremented while it is the root, during its call.
//
// Direct mode (a.slots == 0, host McastBcastSpec::slots = 0): no staging and no copies — the
// chunks go straight into the outputs, which must then be at the SAME L1 address on every rank;
// each receiver hands its output to the root at entry (a ready word on the root), the root
// multicasts every chunk, flushes once and multicasts `arrived` (mb_direct below).
//
// Arguments (load_mcast_bcast_args; host::McastBcastPlan::args): [0..3] rect x0 y0 x1 y1,
// [4] slots_l1, [5] slots, [6] chunk_bytes (multiple of 16), [7] counters_l1: seq, arrived,
// released, two source words for the sets, then from word 8 one credit word per rank
// (mcast_bcast_counter_bytes(p) bytes, 16-byte aligned).
// C++17, freestanding, no heap.
#pragma once

#include <common/window.hpp>
#include <hal/config.hpp>
#include <hal/contract.hpp>

#include <stdint.h>
#include <string.h>

namespace kccl::coll {

inline constexpr uint32_t mcast_bcast_args = 8;
/// Counter words at McastBcastArgs::counters_l1 (4 bytes apart), then one credit word per rank
/// (mb_credits + r: rank r's acknowledgements to this core while it is the root).
enum McastBcastWord : uint32_t { mb_seq = 0, mb_arrived = 1, mb_released = 2, mb_src_arrived = 3, mb_src_released = 4, mb_credits = 8 };
/// Bytes of the counters of a group of p ranks (16-byte multiple).
constexpr uint32_t mcast_bcast_counter_bytes(uint32_t p) { return (4 * (uint32_t(mb_credits) + p) + 15) / 16 * 16; }

struct McastBcastArgs {
    hal::NocRect rect{};
    uint32_t slots_l1 = 0;
    uint32_t slots = 0;
    uint32_t chunk_bytes = 0;
    uint32_t counters_l1 = 0;

    uint32_t ranks() const { return rect.cores(); }
    uint32_t width() const { return rect.x1 - rect.x0 + 1; }
    uint32_t rank_x(uint32_t r) const { return rect.x0 + r % width(); }
    uint32_t rank_y(uint32_t r) const { return rect.y0 + r / width(); }
    uint32_t word(McastBcastWord w) const { return counters_l1 + 4 * uint32_t(w); }
    uint32_t credit(uint32_t r) const { return counters_l1 + 4 * (uint32_t(mb_credits) + r); }
};

template <class H>
McastBcastArgs load_mcast_bcast_args(H& hal, uint32_t base) {
    McastBcastArgs a;
    a.rect = hal::NocRect{hal.arg(base + 0), hal.arg(base + 1), hal.arg(base + 2), hal.arg(base + 3)};
    a.slots_l1 = hal.arg(base + 4);
    a.slots = hal.arg(base + 5);
    a.chunk_bytes = hal.arg(base + 6);
    a.counters_l1 = hal.arg(base + 7);
    return a;
}

/// The protocol's policy. A test substitutes one with flush_before_counter = false (the mutation
/// M1 forbids: the counter may then land before the data it announces).
struct McastBcastPolicy {
    static constexpr bool flush_before_counter = true;
};

namespace detail {

/// Blocks until the counter word at `l1` has reached `target` (wrap-safe: target - value < 2^31).
template <class H>
void mb_wait_reached(H& hal, uint32_t l1, uint32_t target) {
    while (!reached(hal.sem_read(l1), target)) hal.idle();
}

template <class H>
uint32_t mb_load(H& hal, uint32_t l1) {
    return *reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(l1, 4));
}

template <class H>
void mb_store(H& hal, uint32_t l1, uint32_t v) {
    *reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(l1, 4)) = v;
    hal::note_write(hal, l1, 4);
}

/// A store of the word a sem_set_mcast sends next, fenced: the NoC must not read the value from
/// before the store (N7).
template <class H>
void mb_store_sent(H& hal, uint32_t l1, uint32_t v) {
    mb_store(hal, l1, v);
    hal::l1_store_fence(hal, l1, 4);
}

/// Local L1 copy with the race detector's annotations.
template <class H>
void mb_copy(H& hal, uint32_t dst, uint32_t src, uint32_t n) {
    if (n == 0) return;
    hal::note_read(hal, src, n);
    memcpy(hal.l1_ptr(dst, n), hal.l1_ptr(src, n), n);
    hal::note_write(hal, dst, n);
}

/// Direct mode (a.slots == 0): the chunks go straight into every rank's output (the same address on
/// every rank). Each receiver first writes `end` into its ready word on the root (an inline write:
/// "my output is yours for the call ending at end"); the root waits for every ready word, then
/// multicasts input -> output chunk by chunk (loopback: its own output too), flushes ONCE (M1),
/// multicasts arrived := end and waits for its writes (barrier). A receiver returns once arrived
/// has reached end. No copy on any core, one counter multicast per call.
template <class Policy, class H>
void mb_direct(H& hal, const McastBcastArgs& a, uint32_t rx, uint32_t ry, uint32_t me, uint32_t input_l1,
               uint32_t output_l1, uint32_t bytes, uint32_t end) {
    const uint32_t p = a.ranks();
    if (hal.core_x() != rx || hal.core_y() != ry) {
        hal.noc_inline_write32(hal.noc_addr(rx, ry, a.credit(me)), end);
        mb_wait_reached(hal, a.word(mb_arrived), end);
        hal::note_read(hal, output_l1, bytes);  // the consumer's use of the output
        return;
    }
    for (uint32_t r = 0; r < p; ++r)
        if (r != me) mb_wait_reached(hal, a.credit(r), end);  // every receiver's output is free
    hal::note_read(hal, input_l1, bytes);
    for (uint32_t off = 0; off < bytes; off += a.chunk_bytes) {
        const uint32_t b = bytes - off < a.chunk_bytes ? bytes - off : a.chunk_bytes;
        hal.noc_write_mcast(input_l1 + off, a.rect, output_l1 + off, b, p, true);
    }
    if constexpr (Policy::flush_before_counter) hal.noc_writes_flushed();  // M1
    mb_store_sent(hal, a.word(mb_src_arrived), end);
    hal.sem_set_mcast(a.word(mb_src_arrived), a.rect, a.word(mb_arrived), p, true);
    hal.noc_write_barrier();
}

}  // namespace detail

/// This core's part of a broadcast of `bytes` from rank `root`'s input to every rank's output
/// (module comment). Device errors (KCCL_ASSERT) for a core outside the rectangle, a root out of
/// range, a chunk size that is 0 or not a multiple of 16, the root's input overlapping its output.
template <class Policy = McastBcastPolicy, class H>
void mcast_broadcast(H& hal, const McastBcastArgs& a, uint32_t root, uint32_t input_l1, uint32_t output_l1,
                     uint32_t bytes) {
    static_assert(hal::check_multicast<H>(), "mcast_broadcast needs a backend with NoC multicast (hal::has_multicast_v).");
    KCCL_ASSERT(a.rect.contains(hal.core_x(), hal.core_y()),
                "mcast_broadcast: this core is not in the group's rectangle");
    KCCL_ASSERT(root < a.ranks(), "mcast_broadcast: root is not a rank of the group (0 .. ranks-1)");
    KCCL_ASSERT(a.chunk_bytes > 0 && a.chunk_bytes % 16 == 0,
                "mcast_broadcast: needs a chunk size that is a positive multiple of 16");
    using namespace detail;
    const uint32_t chunks = bytes / a.chunk_bytes + (bytes % a.chunk_bytes != 0);
    if (chunks == 0) return;
    const uint32_t rx = a.rank_x(root), ry = a.rank_y(root), p = a.ranks();
    const uint32_t seq = mb_load(hal, a.word(mb_seq)), end = seq + chunks;
    mb_store(hal, a.word(mb_seq), end);
    KCCL_ASSERT(!(hal.core_x() == rx && hal.core_y() == ry) || input_l1 + bytes <= output_l1 ||
                    output_l1 + bytes <= input_l1,
                "mcast_broadcast: the root's input and output overlap; they must be disjoint (no in-place broadcast)");
    const uint32_t my_rank = (hal.core_y() - a.rect.y0) * a.width() + (hal.core_x() - a.rect.x0);
    if (a.slots == 0) return detail::mb_direct<Policy>(hal, a, rx, ry, my_rank, input_l1, output_l1, bytes, end);
    if (hal.core_x() == rx && hal.core_y() == ry) {
        if (p == 1) return mb_copy(hal, output_l1, input_l1, bytes);
        const uint32_t me = (ry - a.rect.y0) * a.width() + (rx - a.rect.x0);
        // No acknowledgement is in flight to this core now (acks go to the root of their call,
        // which waited for all of them), and none of this call comes before the first counter
        // multicast below: the root clears its credit words itself.
        for (uint32_t r = 0; r < p; ++r)
            if (r != me) hal.sem_set(a.credit(r), 0);
        uint32_t slot = 0;
        for (uint32_t c = 0; c < chunks; ++c) {
            const uint32_t off = c * a.chunk_bytes;
            const uint32_t b = bytes - off < a.chunk_bytes ? bytes - off : a.chunk_bytes;
            if (c >= a.slots)  // every receiver has copied chunk c - S out of this slot
                for (uint32_t r = 0; r < p; ++r)
                    if (r != me) mb_wait_reached(hal, a.credit(r), CreditWindow{a.slots}.wait_target(c));
            hal::note_read(hal, input_l1 + off, b);
            hal.noc_write_mcast(input_l1 + off, a.rect, a.slots_l1 + slot * a.chunk_bytes, b, p, true);
            if constexpr (Policy::flush_before_counter) hal.noc_writes_flushed();  // M1; the previous word has left (N3)
            mb_store_sent(hal, a.word(mb_src_arrived), seq + c + 1);
            hal.sem_set_mcast(a.word(mb_src_arrived), a.rect, a.word(mb_arrived), p, true);
            mb_copy(hal, output_l1 + off, input_l1 + off, b);
            slot = slot + 1 == a.slots ? 0 : slot + 1;
        }
        for (uint32_t r = 0; r < p; ++r)
            if (r != me) mb_wait_reached(hal, a.credit(r), chunks);
        hal.noc_writes_flushed();
        mb_store_sent(hal, a.word(mb_src_released), end);
        hal.sem_set_mcast(a.word(mb_src_released), a.rect, a.word(mb_released), p, true);
        hal.noc_write_barrier();
        return;
    }
    const auto credits = hal.noc_addr(rx, ry, a.credit(my_rank));
    uint32_t slot = 0;
    for (uint32_t c = 0; c < chunks; ++c) {
        const uint32_t off = c * a.chunk_bytes;
        const uint32_t b = bytes - off < a.chunk_bytes ? bytes - off : a.chunk_bytes;
        mb_wait_reached(hal, a.word(mb_arrived), seq + c + 1);
        mb_copy(hal, output_l1 + off, a.slots_l1 + slot * a.chunk_bytes, b);
        hal.sem_inc(credits, 1);
        slot = slot + 1 == a.slots ? 0 : slot + 1;
    }
    mb_wait_reached(hal, a.word(mb_released), end);
}

}  // namespace kccl::coll
