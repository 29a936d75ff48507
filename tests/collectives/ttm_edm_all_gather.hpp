// A model of tt-metal's ring all_gather OP STRUCTURE (interleaved DRAM
// tensors, EDM per link, workers split into reader and writer kernels), for the fidelity test
// tests/collectives/fidelity_coll_test.cpp. It does NOT use kccl's collective executor: the worker
// kernels below are written after the structure tt-metal's CCL developer guide describes ("(Ring/
// Line) All Gather", "Implementation"):
//   * each logical worker is two Tensix cores, a SENDER core ("reads the input tensor and forwards
//     it to the output tensor and to the EDM"; later "reads from the output tensor and forwards the
//     data any time it sees the local semaphore increment") and a RECEIVER core ("accepts payloads
//     from EDM and fills the portion it is responsible for", and "for every chunk of data committed
//     to the output tensor — typically EDM packet size worth of pages — increments a semaphore on
//     the sender worker core");
//   * each of those cores runs two data-movement kernels (a reader on one RISC, a writer on the
//     other) that hand chunks of pages to each other through a circular buffer (CB) in the core's L1.
// So one logical worker is four kernels:
//   RR  receiver reader   EDM receiver slot -> CB (noc_read per page, read barrier, EDM ack)
//   RW  receiver writer   CB -> DRAM output (noc_write per page), write barrier (committed),
//                         frees the CB slot, signals SR when the chunk is to be forwarded
//   SR  sender reader     DRAM (input, then committed output chunks) -> CB (noc_read per page)
//   SW  sender writer     CB -> EDM sender slot (noc_write per page, then the EDM semaphore);
//                         the own input's chunks also -> DRAM output (the local copy)
// THE EMULATION RUNS ONE KERNEL PER CORE (Launcher::add refuses a second kernel on a core; a core
// is one fiber with one clock and one NoC port), so each of the four kernels runs on an emulated
// core of its own. The CB between the reader and the writer of one Tensix core is modelled as
// shared L1 (detail::SharedCb, the default): the reader fills a slot of its own L1 and increments
// the writer's "filled" semaphore over the NoC; the writer takes the slot's bytes by a host copy
// between the two emulated memories (no modelled time: on the hardware both kernels address the
// same bytes) and increments the reader's "credit" semaphore once its writes have left the slot.
// Without a SharedCb (Cb::noc on the host side) the reader instead pushes the chunk into the
// writer's L1 with a NoC write: a transfer tt-metal does not make (ceil(bytes / 32) cycles at each
// port plus the NoC latency, twice per forwarding hop), kept as a variant.
//
// Ring, bidirectional as tt-metal's ring all_gather (FULL_TENSOR mode): W workers per link send
// clockwise and W anticlockwise (8 EDM channels at W = 4), each direction moving full fragments
// half the ring (`hops`: clockwise ring_size / 2, anticlockwise (ring_size - 1) / 2, so every
// fragment reaches every chip once; the host side also offers SPLIT_TENSOR, half of each fragment
// each way, ring_size - 1 hops). A worker moves one slice of every fragment (args slice_off,
// slice_bytes: bytes [off, off + slice) of each chip's tensor; the host decides the split) in
// chunks of up to `chunk` bytes (its EDM packet), pages of `page` bytes. Chunk k received by chip r
// in a direction is slice-chunk k % C of the fragment of the chip k / C + 1 hops upstream; it is
// forwarded when k / C + 1 < hops.
//
// Kernel part (this file): the kernels are written as device code (no heap, no exceptions, no
// iostream); checks on the host after the run (RR returns the number of packets whose length was
// not the expected one). EMULATION ONLY: with a SharedCb the writer kernels copy between two
// emulated cores' memories through host pointers, which no device can do, and the file includes
// the emulation's TSan annotations; it is a model of tt-metal's op for the fidelity test, not a
// kernel to run on hardware.
// Host part: tests/collectives/ttm_edm_all_gather_bed.hpp.
#pragma once

#include <common/window.hpp>
#include <edm/edm.hpp>
#include <edm/types.hpp>
#include <edm/worker.hpp>

#include <stdint.h>

// The shared CB's host copy reads another emulated core's memory outside the contract. On the
// untimed engines the reader's own sem_inc orders it; on the timed engine the sem_inc lands in a
// delivery event that another fiber runs, and a fiber switch is no synchronisation under TSan, so
// the hand-over of a CB slot is told to TSan directly (what the one L1 gives on the hardware).
// The emulation's TSan detection and annotations (KCCL_EMU_TSAN, <sanitizer/tsan_interface.h>).
#include <emulation/platform.hpp>

namespace kccl::ttm {

/// Runtime args shared by the four roles (indices into the core's args).
namespace a {
inline constexpr uint32_t rank = 0, ranks = 1, hops = 2, cw = 3;  // cw: 1 clockwise (data r -> r + 1)
inline constexpr uint32_t frag_bytes = 4;   ///< bytes per chip (one fragment of the output)
inline constexpr uint32_t slice_off = 5;    ///< this worker's slice: offset in a fragment
inline constexpr uint32_t slice_bytes = 6;
inline constexpr uint32_t chunk = 7, page = 8;
inline constexpr uint32_t dram_x = 9, dram_y = 10;
inline constexpr uint32_t input = 11, output = 12;  ///< DRAM byte addresses (low 32 bits)
inline constexpr uint32_t local_copy = 13;  ///< SW: this direction writes the own input to the output
// Peers and semaphores (L1 addresses); the CB is 2 chunks in the writer's L1 at cb.
inline constexpr uint32_t peer_x = 14, peer_y = 15;      ///< the other kernel of my core (RR <-> RW, SR <-> SW)
inline constexpr uint32_t fwd_x = 16, fwd_y = 17;        ///< RW: SR of the same worker (committed chunks)
inline constexpr uint32_t cb = 18;                       ///< the CB (in the writer's L1)
inline constexpr uint32_t stage = 19;                    ///< readers: 2 chunks of local L1 they read into
inline constexpr uint32_t sem_filled = 20;               ///< writer's L1: chunks pushed into its CB
inline constexpr uint32_t sem_credit = 21;               ///< reader's L1: CB slots freed by the writer
inline constexpr uint32_t sem_committed = 22;            ///< SR's L1: chunks RW committed to DRAM
inline constexpr uint32_t shared_cb = 23;                ///< readers: 1 = the CB is shared L1 (no NoC push)
inline constexpr uint32_t edm = 24;                      ///< RR / SW: edm::args::w_count worker-channel args
inline constexpr uint32_t count = edm + edm::args::w_count;
}  // namespace a

inline constexpr uint32_t cb_slots = 2;  ///< chunks per CB (tt-metal sizes its CBs to 2 chunks)

struct Geometry {
    uint32_t rank, ranks, hops, frag, off, slice, chunk, page, chunks_per_slice;
    bool cw;
    template <class H>
    explicit Geometry(H& h)
        : rank(h.arg(a::rank)), ranks(h.arg(a::ranks)), hops(h.arg(a::hops)), frag(h.arg(a::frag_bytes)),
          off(h.arg(a::slice_off)), slice(h.arg(a::slice_bytes)), chunk(h.arg(a::chunk)), page(h.arg(a::page)),
          chunks_per_slice(slice == 0 ? 0 : (slice + chunk - 1) / chunk), cw(h.arg(a::cw) != 0) {}
    /// The chip k hops upstream of me in my direction.
    uint32_t upstream(uint32_t k) const { return cw ? (rank + ranks - k % ranks) % ranks : (rank + k) % ranks; }
    /// Bytes of chunk c of a slice.
    uint32_t chunk_bytes(uint32_t c) const { return slice - c * chunk < chunk ? slice - c * chunk : chunk; }
    /// Byte offset in the output tensor of chunk c of fragment f's slice.
    uint32_t out_at(uint32_t f, uint32_t c) const { return f * frag + off + c * chunk; }
    /// Chunks through my direction's channel: my own slice, then the forwarded ones.
    uint32_t chunks_moved() const { return hops * chunks_per_slice; }
};

namespace detail {
/// Pushes `n` bytes at local `src` into slot k % cb_slots of the peer writer's CB and announces it
/// (same destination core: the sem_inc lands after the data, contract N1). The caller waited for
/// the slot's credit.
template <class H>
void push_chunk(H& h, uint32_t src, uint32_t n, uint32_t k, uint32_t chunk) {
    const uint32_t px = h.arg(a::peer_x), py = h.arg(a::peer_y);
    if (h.arg(a::shared_cb) == 0) h.noc_write(src, h.noc_addr(px, py, h.arg(a::cb) + (k % cb_slots) * chunk), n);
    h.sem_inc(h.noc_addr(px, py, h.arg(a::sem_filled)), 1);
}
/// A CB shared by the two kernels of one Tensix core, emulated on two cores: the reader core's
/// and the writer core's memories (host pointers). On the hardware both kernels address the same
/// L1 bytes, so nothing moves and nothing is charged: the writer's CB slot takes the reader's
/// bytes by a host copy (not hal.l1_ptr, which would charge an L1 access).
struct SharedCb {
    const uint8_t* reader_l1 = nullptr;  ///< nullptr: the CB is filled over the NoC (Cb::noc)
    uint8_t* writer_l1 = nullptr;
};
/// TSan only (no-ops otherwise): the reader hands stage slot k over (release) or takes it back
/// (acquire) — the sync object is the slot's first byte in the reader's memory.
inline void cb_release(const SharedCb& s, uint32_t at) {
#if KCCL_EMU_TSAN
    if (s.reader_l1) __tsan_release(const_cast<uint8_t*>(s.reader_l1 + at));
#else
    (void)s, (void)at;
#endif
}
inline void cb_acquire(const SharedCb& s, uint32_t at) {
#if KCCL_EMU_TSAN
    if (s.reader_l1) __tsan_acquire(const_cast<uint8_t*>(s.reader_l1 + at));
#else
    (void)s, (void)at;
#endif
}
/// Writer side: chunk k (n bytes) of the reader's stage becomes the writer's CB slot.
template <class H>
void take_chunk(H& h, const SharedCb& s, uint32_t cb_slot, uint32_t k, uint32_t n, uint32_t chunk) {
    if (!s.reader_l1) return;
    const uint32_t at = h.arg(a::stage) + (k % cb_slots) * chunk;
    cb_acquire(s, at);
    __builtin_memcpy(s.writer_l1 + cb_slot, s.reader_l1 + at, n);
    cb_release(s, at);  // the reader may refill the slot once the credit comes
}
/// Page-wise NoC reads of [from, +n) into local `dst`, then a read barrier.
template <class H>
void read_pages(H& h, uint64_t from, uint32_t dst, uint32_t n, uint32_t page) {
    for (uint32_t o = 0; o < n; o += page) h.noc_read(from + o, dst + o, n - o < page ? n - o : page);
    h.noc_read_barrier();
}
/// Page-wise posted NoC writes of local [src, +n) to [to, +n).
template <class H>
void write_pages(H& h, uint32_t src, uint64_t to, uint32_t n, uint32_t page) {
    for (uint32_t o = 0; o < n; o += page) h.noc_write(src + o, to + o, n - o < page ? n - o : page);
}
}  // namespace detail

/// RR: EDM receiver channel -> CB of RW, chunk by chunk.
template <class H, class Config = edm::DefaultConfig>
uint64_t receiver_reader(H& h, const detail::SharedCb& shared = {}) {
    const Geometry g(h);
    const edm::WorkerChannel ch = edm::load_worker_channel(h, a::edm);
    const uint32_t stage = h.arg(a::stage), credit = h.arg(a::sem_credit);
    const uint32_t n = g.chunks_moved();
    uint64_t bad = 0;
    for (uint32_t k = 0; k < n; ++k) {
        h.sem_wait_min(ch.worker_sem, 1);  // the EDM has a packet for me (the semaphore holds its note)
        const uint32_t note = h.sem_read(ch.worker_sem);
        h.sem_set(ch.worker_sem, 0);  // clear before acknowledging (the EDM adds the next note to it)
        const uint32_t want = g.chunk_bytes(k % g.chunks_per_slice);
        if (edm::note_length(note) != want) ++bad;  // checked on the host (the kernel's return value)
        if (k >= cb_slots) h.sem_wait_min(credit, kccl::CreditWindow{cb_slots}.wait_target(k));  // RW freed the CB slot
        detail::cb_acquire(shared, stage + (k % cb_slots) * g.chunk);
        const uint32_t dst = stage + (k % cb_slots) * g.chunk;
        if (k >= cb_slots) h.noc_writes_flushed();  // the stage slot's previous push has left it
        const uint32_t slot = ch.buffers_base + (k % ch.buffers) * ch.slot_bytes + edm::payload_offset<Config>();
        detail::read_pages(h, h.noc_addr(ch.edm_x, ch.edm_y, slot), dst, want, g.page);
        h.sem_inc(h.noc_addr(ch.edm_x, ch.edm_y, ch.edm_sem), 1);  // the EDM may reuse its slot
        detail::cb_release(shared, dst);
        detail::push_chunk(h, dst, want, k, g.chunk);
    }
    h.noc_write_barrier();
    return bad;
}

/// RW: CB -> DRAM output, committed per chunk; frees the CB slot and tells SR about chunks it
/// forwards.
template <class H>
uint64_t receiver_writer(H& h, const detail::SharedCb& shared = {}) {
    const Geometry g(h);
    const uint32_t cb = h.arg(a::cb), filled = h.arg(a::sem_filled);
    const uint64_t out = h.noc_addr(h.arg(a::dram_x), h.arg(a::dram_y), h.arg(a::output));
    const uint64_t credit = h.noc_addr(h.arg(a::peer_x), h.arg(a::peer_y), h.arg(a::sem_credit));
    const uint64_t committed = h.noc_addr(h.arg(a::fwd_x), h.arg(a::fwd_y), h.arg(a::sem_committed));
    const uint32_t n = g.chunks_moved();
    for (uint32_t k = 0; k < n; ++k) {
        h.sem_wait_min(filled, k + 1);
        const uint32_t c = k % g.chunks_per_slice, hop = k / g.chunks_per_slice + 1;
        const uint32_t bytes = g.chunk_bytes(c);
        detail::take_chunk(h, shared, cb + (k % cb_slots) * g.chunk, k, bytes, g.chunk);
        detail::write_pages(h, cb + (k % cb_slots) * g.chunk, out + g.out_at(g.upstream(hop), c), bytes, g.page);
        h.noc_write_barrier();  // committed: the sender reader may read it back; the CB slot is free
        h.sem_inc(credit, 1);
        if (hop < g.hops) h.sem_inc(committed, 1);
    }
    h.noc_write_barrier();
    return 0;
}

/// SR: DRAM -> CB of SW: the own input's slice, then every chunk to forward once RW committed it.
template <class H>
uint64_t sender_reader(H& h, const detail::SharedCb& shared = {}) {
    const Geometry g(h);
    const uint32_t stage = h.arg(a::stage), credit = h.arg(a::sem_credit), committed = h.arg(a::sem_committed);
    const uint32_t dx = h.arg(a::dram_x), dy = h.arg(a::dram_y);
    const uint64_t in = h.noc_addr(dx, dy, h.arg(a::input)), out = h.noc_addr(dx, dy, h.arg(a::output));
    const uint32_t n = g.chunks_moved();
    for (uint32_t k = 0; k < n; ++k) {
        const uint32_t c = k % g.chunks_per_slice, hop = k / g.chunks_per_slice;  // hop 0: my own input
        const uint32_t bytes = g.chunk_bytes(c);
        if (hop > 0) h.sem_wait_min(committed, k - g.chunks_per_slice + 1);  // RW committed it
        if (k >= cb_slots) h.sem_wait_min(credit, kccl::CreditWindow{cb_slots}.wait_target(k));
        detail::cb_acquire(shared, stage + (k % cb_slots) * g.chunk);
        const uint32_t dst = stage + (k % cb_slots) * g.chunk;
        if (k >= cb_slots) h.noc_writes_flushed();
        const uint64_t from = hop == 0 ? in + g.off + c * g.chunk : out + g.out_at(g.upstream(hop), c);
        detail::read_pages(h, from, dst, bytes, g.page);
        detail::cb_release(shared, dst);
        detail::push_chunk(h, dst, bytes, k, g.chunk);
    }
    h.noc_write_barrier();
    return 0;
}

/// SW: CB -> EDM sender channel (and the own input's chunks -> DRAM output when local_copy).
template <class H, class Config = edm::DefaultConfig>
uint64_t sender_writer(H& h, const detail::SharedCb& shared = {}) {
    const Geometry g(h);
    const edm::WorkerChannel ch = edm::load_worker_channel(h, a::edm);
    const uint32_t cb = h.arg(a::cb), filled = h.arg(a::sem_filled);
    const uint64_t out = h.noc_addr(h.arg(a::dram_x), h.arg(a::dram_y), h.arg(a::output));
    const uint64_t credit = h.noc_addr(h.arg(a::peer_x), h.arg(a::peer_y), h.arg(a::sem_credit));
    const bool local_copy = h.arg(a::local_copy) != 0;
    const uint32_t n = g.chunks_moved();
    for (uint32_t k = 0; k < n; ++k) {
        h.sem_wait_min(filled, k + 1);
        const uint32_t c = k % g.chunks_per_slice;
        const uint32_t bytes = g.chunk_bytes(c), src = cb + (k % cb_slots) * g.chunk;
        detail::take_chunk(h, shared, src, k, bytes, g.chunk);
        if (local_copy && k < g.chunks_per_slice) detail::write_pages(h, src, out + g.out_at(g.rank, c), bytes, g.page);
        h.sem_wait(ch.worker_sem, 1);  // the EDM granted a slot
        h.sem_set(ch.worker_sem, 0);   // clear before notifying the EDM
        const uint32_t slot = ch.buffers_base + (k % ch.buffers) * ch.slot_bytes + edm::payload_offset<Config>();
        detail::write_pages(h, src, h.noc_addr(ch.edm_x, ch.edm_y, slot), bytes, g.page);
        const bool note = bytes != ch.packet_bytes;
        if (note) h.noc_inline_write32(h.noc_addr(ch.edm_x, ch.edm_y, ch.signal_addr), edm::make_note(edm::Signal::next, bytes));
        h.sem_inc(h.noc_addr(ch.edm_x, ch.edm_y, ch.edm_sem), note ? 1 + edm::note_written : 1);
        h.noc_writes_flushed();  // the CB slot's bytes have left: it may be refilled
        h.sem_inc(credit, 1);
    }
    h.noc_write_barrier();
    return 0;
}

}  // namespace kccl::ttm
