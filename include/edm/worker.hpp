// kccl/edm/worker.hpp — worker-side adapters of an EDM channel (tt-metal CclDeveloperGuide, "Worker - Sender Side
// EDM Interface" and "Receiver Side EDM - Worker Interface").
//
//   kccl::edm::WorkerChannel ch = kccl::edm::load_worker_channel(hal, /*arg_base=*/4);
//   kccl::edm::SenderAdapter<> tx(ch);
//   for (...) tx.send(hal, src_l1, bytes);          // blocking; try_send() is the non-blocking form
//   tx.send_last(hal, src_l1, bytes);               // WORKER_INITIATED: the channel's last message
//   tx.close(hal);                                  // everything written has landed
//
//   kccl::edm::ReceiverAdapter<> rx(ch);
//   for (;;) { kccl::edm::Received m = rx.recv(hal, dst_l1, capacity);   // m.bytes: message length
//              if (m.signal == kccl::edm::Signal::terminate) break; ... }
//
// Sender, per message: wait for my semaphore (the EDM granted me a slot) -> clear it -> write the
// payload into the slot -> write my note (signal and length, types.hpp; skipped for a full
// packet with Signal::next) -> increment the EDM's semaphore (by 1, or 1 + note_written). All
// three writes go to the EDM core back to back, so they land in order (N1).
// Receiver, per message: wait for my semaphore -> read its value (the note: signal and length)
// -> clear it -> read min(capacity, length - offset) bytes of the slot into L1 -> read barrier
// -> increment the EDM's semaphore.
//
// Sizes are checked (device error path, KCCL_ASSERT): a send with offset + bytes beyond the
// packet would overwrite the slot's sync word. A receive may ask for more than the message
// holds: it copies what the message has and returns the message's length (like POSIX recv).
//
// Semaphores: the worker's semaphore must hold 0 when the program starts (tt-metal:
// CreateSemaphore with initial value 0; emulation: Launcher::init_word). The adapters cannot
// clear it themselves: the EDM may already have granted a slot by the time the worker starts.
//
// Slots: the k-th message of the channel (k = 0, 1, ...) uses slot k mod buffers. With NOT_SHARED
// every worker takes part in every message (each writes / reads its own part: `offset`); with
// ROUND_ROBIN worker j takes messages j, j+W, j+2W, ... The adapters keep the slot as a ring index
// (advanced by 1 or by W mod buffers per message), never as `counter % buffers`: nothing here
// depends on where the EDM's message counters wrap (edm/channel.hpp).
#pragma once

#include "types.hpp"

#include <hal/contract.hpp>

#include <stdint.h>

namespace kccl::edm {

/// A worker's view of one EDM channel, from edm::host::LinkPlan::worker_args.
struct WorkerChannel {
    uint32_t edm_x = 0, edm_y = 0;
    uint32_t buffers_base = 0, buffers = 1, packet_bytes = 0, slot_bytes = 0;
    uint32_t edm_sem = 0, signal_addr = 0, worker_sem = 0;
    uint32_t worker_index = 0, num_workers = 1;
    Sharing sharing = Sharing::not_shared;
};

template <class H>
WorkerChannel load_worker_channel(H& hal, uint32_t base) {
    WorkerChannel c;
    const uint32_t xy = hal.arg(base + args::w_edm_xy);
    c.edm_x = xy & 0xffff;
    c.edm_y = xy >> 16;
    c.buffers_base = hal.arg(base + args::w_buffers_base);
    c.buffers = hal.arg(base + args::w_buffers);
    c.packet_bytes = hal.arg(base + args::w_packet_bytes);
    c.slot_bytes = hal.arg(base + args::w_slot_bytes);
    c.edm_sem = hal.arg(base + args::w_edm_sem);
    c.signal_addr = hal.arg(base + args::w_signal_addr);
    c.worker_sem = hal.arg(base + args::w_worker_sem);
    c.worker_index = hal.arg(base + args::w_worker_index);
    c.num_workers = hal.arg(base + args::w_num_workers);
    c.sharing = Sharing(hal.arg(base + args::w_sharing));
    return c;
}

/// What a receive got: the message's signal and its length in bytes (for NOT_SHARED messages,
/// the largest offset + bytes any sender worker wrote).
struct Received {
    Signal signal = Signal::none;
    uint32_t bytes = 0;
    friend constexpr bool operator==(const Received& r, Signal s) { return r.signal == s; }
    friend constexpr bool operator!=(const Received& r, Signal s) { return r.signal != s; }
    friend constexpr bool operator==(Signal s, const Received& r) { return r.signal == s; }
    friend constexpr bool operator!=(Signal s, const Received& r) { return r.signal != s; }
};

namespace detail {
/// The slot of one worker's next message: its messages are all of the channel's (NOT_SHARED) or
/// every W-th (ROUND_ROBIN), so the slot advances by 1 or by W mod buffers, wrapping at buffers.
struct WorkerCursor {
    uint32_t slot = 0, step = 0, buffers = 1;
    WorkerCursor() = default;
    explicit WorkerCursor(const WorkerChannel& c) : buffers(c.buffers ? c.buffers : 1) {
        const bool rr = c.sharing == Sharing::round_robin;
        slot = (rr ? c.worker_index : 0) % buffers;
        step = (rr ? c.num_workers : 1) % buffers;
    }
    void advance() {
        slot += step;
        if (slot >= buffers) slot -= buffers;
    }
};
}  // namespace detail

template <class Config = DefaultConfig>
class SenderAdapter {
public:
    /// An adapter of no channel (to be assigned one); using it before that is meaningless.
    SenderAdapter() = default;
    explicit SenderAdapter(const WorkerChannel& c) : ch_(c), cur_(c) {}

    /// True when the EDM has granted this worker a slot (the next send will not block).
    template <class H>
    bool ready(H& hal) {
        return hal.sem_read(ch_.worker_sem) != 0;
    }

    /// Blocking send of `bytes` from local `src_l1` into the slot at `offset` (bytes and offset
    /// multiples of 16, offset + bytes <= packet size).
    template <class H>
    void send(H& hal, uint32_t src_l1, uint32_t bytes, uint32_t offset = 0, Signal signal = Signal::next) {
        hal.sem_wait(ch_.worker_sem, 1);
        emit(hal, src_l1, bytes, offset, signal);
    }
    /// Non-blocking form: returns false (and does nothing) when no slot is granted yet.
    template <class H>
    bool try_send(H& hal, uint32_t src_l1, uint32_t bytes, uint32_t offset = 0, Signal signal = Signal::next) {
        if (!ready(hal)) return false;
        emit(hal, src_l1, bytes, offset, signal);
        return true;
    }
    /// WORKER_INITIATED: the last payload of the channel.
    template <class H>
    void send_last(H& hal, uint32_t src_l1, uint32_t bytes, uint32_t offset = 0) {
        send(hal, src_l1, bytes, offset, Signal::last);
    }
    /// WORKER_INITIATED: end the channel without a payload.
    template <class H>
    void terminate(H& hal) {
        hal.sem_wait(ch_.worker_sem, 1);
        emit(hal, 0, 0, 0, Signal::terminate);
    }
    /// Ends this worker's use of the channel: makes sure everything it wrote has landed. It
    /// does not end the channel: under WORKER_INITIATED that is send_last() or terminate() by
    /// the worker whose message is the last one (with ROUND_ROBIN the others cannot know).
    template <class H>
    void close(H& hal) {
        hal.noc_write_barrier();
    }
    /// True after this worker sent last or terminate.
    bool ended() const { return ended_; }

    uint32_t messages_sent() const { return sent_; }

private:
    template <class H>
    void emit(H& hal, uint32_t src_l1, uint32_t bytes, uint32_t offset, Signal signal) {
        if (signal == Signal::terminate) bytes = offset = 0;
        KCCL_ASSERT(uint64_t(offset) + bytes <= ch_.packet_bytes,
                    "edm::SenderAdapter: offset + bytes exceed the channel's packet size (they would overwrite the "
                    "slot's sync word); allowed: offset + bytes <= packet_bytes");
        hal.sem_set(ch_.worker_sem, 0);  // clear before notifying the EDM
        const uint32_t slot = ch_.buffers_base + cur_.slot * ch_.slot_bytes;
        if (bytes)
            hal.noc_write(src_l1, hal.noc_addr(ch_.edm_x, ch_.edm_y, slot + payload_offset<Config>() + offset), bytes);
        const uint32_t end = bytes ? offset + bytes : 0;
        const bool note = signal != Signal::next || end != ch_.packet_bytes ||
                          (ch_.sharing == Sharing::not_shared && ch_.num_workers > 1);
        // The payload has left this core before the note and the increment (contract N1, strict
        // profile: a write is ordered before a later inline write / increment to the same core only
        // across a flush); src_l1 may be reused when send returns (N3).
        hal.noc_writes_flushed();
        if (note) hal.noc_inline_write32(hal.noc_addr(ch_.edm_x, ch_.edm_y, ch_.signal_addr), make_note(signal, end));
        hal.sem_inc(hal.noc_addr(ch_.edm_x, ch_.edm_y, ch_.edm_sem), note ? 1 + note_written : 1);
        cur_.advance();
        ++sent_;
        if (signal == Signal::last || signal == Signal::terminate) ended_ = true;
    }

    WorkerChannel ch_;
    detail::WorkerCursor cur_;
    uint32_t sent_ = 0;
    bool ended_ = false;
};

template <class Config = DefaultConfig>
class ReceiverAdapter {
public:
    ReceiverAdapter() = default;
    explicit ReceiverAdapter(const WorkerChannel& c) : ch_(c), cur_(c) {}

    template <class H>
    bool ready(H& hal) {
        return hal.sem_read(ch_.worker_sem) != 0;
    }

    /// Blocking receive of the next message: copies the part [offset, offset + capacity) of it
    /// that exists (the message may be shorter) into local `dst_l1`. Returns the message's
    /// signal (next, last, or terminate: no payload, nothing copied) and its length in bytes.
    template <class H>
    Received recv(H& hal, uint32_t dst_l1, uint32_t capacity, uint32_t offset = 0) {
        hal.sem_wait_min(ch_.worker_sem, 1);
        return take(hal, dst_l1, capacity, offset);
    }
    /// Non-blocking form: {Signal::none, 0} when nothing has arrived yet.
    template <class H>
    Received try_recv(H& hal, uint32_t dst_l1, uint32_t capacity, uint32_t offset = 0) {
        if (!ready(hal)) return {};
        return take(hal, dst_l1, capacity, offset);
    }
    /// Nothing is outstanding after the last recv returned: every payload was acknowledged.
    template <class H>
    void close(H& hal) {
        hal.noc_write_barrier();
    }

    uint32_t messages_received() const { return received_; }

private:
    template <class H>
    Received take(H& hal, uint32_t dst_l1, uint32_t capacity, uint32_t offset) {
        const uint32_t note = hal.sem_read(ch_.worker_sem);
        hal.sem_set(ch_.worker_sem, 0);  // clear before notifying the EDM
        const Signal s = note_signal(note);
        const uint32_t length = note_length(note);
        KCCL_ASSERT(length <= ch_.packet_bytes, "edm::ReceiverAdapter: the message is longer than the channel's packet; "
                                                "the semaphore held something other than an EDM note");
        const uint32_t bytes = offset >= length ? 0 : (length - offset < capacity ? length - offset : capacity);
        if (s != Signal::terminate && bytes) {
            const uint32_t slot = ch_.buffers_base + cur_.slot * ch_.slot_bytes;
            hal.noc_read(hal.noc_addr(ch_.edm_x, ch_.edm_y, slot + payload_offset<Config>() + offset), dst_l1, bytes);
            hal.noc_read_barrier();
        }
        hal.sem_inc(hal.noc_addr(ch_.edm_x, ch_.edm_y, ch_.edm_sem), 1);
        cur_.advance();
        ++received_;
        return {s, s == Signal::terminate ? 0u : length};
    }

    WorkerChannel ch_;
    detail::WorkerCursor cur_;
    uint32_t received_ = 0;
};

}  // namespace kccl::edm
