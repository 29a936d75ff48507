// kccl/edm/channel.hpp — the EDM's per-channel state machines, as small steppable value types.
//
// Each channel is stepped by the EDM main loop, round robin with the others; `step()` never
// blocks: it advances every part of the channel that can advance now and returns whether
// anything did (the loop counts idle iterations from that). A test can step one channel alone
// against a scripted backend.
//
// A channel has n buffers (slots); the k-th message of the channel (k = 0, 1, ...) uses slot
// k mod n. Four cursors per channel, each a 32-bit message counter that wraps at 2^32, make
// multi-buffering explicit:
//   sender:   filled  >= sent >= acked >= completed   (in wrap-safe order: filled - completed <= n)
//             worker may fill the next slot           when filled - acked   < n  (my copy is free)
//             EDM may send the next filled message    when sent - completed < n  (remote copy is free)
//   receiver: received >= acked >= consumed >= completed
// Counters wrap (contract: "Counters wrap"). Every test on two counters is an equality or an
// unsigned difference, which 32-bit arithmetic keeps right across 2^32 because no two cursors of
// a channel are ever more than 2n apart (n <= 64). A slot is never `counter % n` (2^32 is not a multiple of
// 3, 5, 6, ... buffers, so at the wrap two consecutive messages would get the same slot): each
// cursor keeps its ring index beside it (`RingIndex`), advanced with the counter and reset to 0 at
// n. Round-robin sharing picks the worker the same way (a ring index over the workers, never
// `counter % workers`). The end of the channel is a flag plus a counter value, never a reserved
// counter value. The counters start at ChannelInfo::initial_counter (edm::host::ChannelSpec::
// initial_counter: 0 unless a test starts just below 2^32 to cross the wrap); slot and worker
// indices start at 0, as the worker adapters' do.
//
// The worker side is serialised: at most one notification is outstanding in each direction, so
// both semaphores only ever hold 0 or the expected count, and clear-before-notify is exact.
#pragma once

#include "types.hpp"

#include <common/window.hpp>
#include <hal/contract.hpp>

#include <stdint.h>

namespace kccl::edm {

/// Where a channel's pieces are, read from the EDM's runtime args.
struct ChannelInfo {
    bool is_sender = false;
    Sharing sharing = Sharing::not_shared;
    uint32_t buffers = 0;
    uint32_t packet_bytes = 0;
    uint32_t slot_bytes = 0;
    uint32_t buffers_base = 0;
    uint32_t edm_sem = 0;
    uint32_t signal_base = 0;
    uint32_t ack_src = 0;         ///< in the reserved area (constant content)
    uint32_t completion_src = 0;  ///< in the reserved area (constant content)
    uint32_t message_count = 0;
    uint32_t num_workers = 0;
    uint32_t initial_counter = 0;  ///< first value of every message counter (test hook: the wrap)

    /// L1 address of slot `index` (0 .. buffers - 1: a ring index, never a message counter).
    uint32_t slot(uint32_t index) const { return buffers_base + index * slot_bytes; }
};

/// A ring index that advances with a message counter: 0 .. n - 1, reset to 0 at n (no division,
/// and no dependence on where the counter wraps).
struct RingIndex {
    uint32_t at = 0;
    void advance(uint32_t n) { at = at + 1 == n ? 0 : at + 1; }
};

/// What a channel's worker side is doing. The closing phases exist for WORKER_INITIATED
/// receivers shared round robin: only the worker given the last message learns that the
/// channel ends, so the EDM then tells each of the others `terminate` and waits for them.
enum class WorkerPhase : uint8_t { signal_worker, wait_worker, closing_signal, closing_wait, finished };

/// Per-worker NoC coordinates and semaphore, read from the EDM's runtime args.
template <uint32_t MaxWorkers>
struct WorkerTable {
    uint32_t x[MaxWorkers] = {};
    uint32_t y[MaxWorkers] = {};
    uint32_t sem[MaxWorkers] = {};
};

namespace detail {

template <class H>
KCCL_FORCEINLINE void put_word(H& hal, uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(addr, 16));
    w[0] = a;
    w[1] = b;
    w[2] = c;
    w[3] = d;
}

/// Notifies the workers of a message (clear-before-notify is the caller's job); `rr_worker` is
/// the message's worker under round-robin sharing (a ring index over the workers).
template <class H, uint32_t MaxWorkers>
void notify_workers(H& hal, const ChannelInfo& ch, const WorkerTable<MaxWorkers>& w, uint32_t rr_worker,
                    uint32_t value) {
    if (ch.sharing == Sharing::round_robin) {
        const uint32_t k = rr_worker;
        hal.sem_inc(hal.noc_addr(w.x[k], w.y[k], w.sem[k]), value);
    } else {
        for (uint32_t k = 0; k < ch.num_workers; ++k) hal.sem_inc(hal.noc_addr(w.x[k], w.y[k], w.sem[k]), value);
    }
}

/// Clears the EDM's semaphore, then notifies the workers of a message (tt-metal CclDeveloperGuide: clear before
/// notify, or a fast worker's answer lands before the clear and is erased). The test-only
/// mutation swaps the two.
template <class Config, class H, uint32_t MaxWorkers>
void clear_then_notify(H& hal, const ChannelInfo& ch, const WorkerTable<MaxWorkers>& w, uint32_t rr_worker,
                       uint32_t value) {
    if (!Config::mutation_notify_before_clear) hal.sem_set(ch.edm_sem, 0);
    notify_workers(hal, ch, w, rr_worker, value);
    if (Config::mutation_notify_before_clear) hal.sem_set(ch.edm_sem, 0);
}

inline uint32_t expected_acks(const ChannelInfo& ch) {
    return ch.sharing == Sharing::round_robin ? 1u : ch.num_workers;
}

}  // namespace detail

/// Sender channel: worker payload -> Ethernet -> first-level ack -> completion.
template <class Config>
class SenderChannel {
public:
    static constexpr uint32_t max_workers = Config::max_workers_per_channel;

    ChannelInfo info{};
    WorkerTable<max_workers> workers{};
    WorkerPhase phase = WorkerPhase::signal_worker;
    /// Message counters (wrap at 2^32; start at info.initial_counter) and their ring indices.
    uint32_t filled = 0, sent = 0, acked = 0, completed = 0;
    RingIndex fill_slot{}, send_slot{}, ack_slot{}, complete_slot{};
    /// Round robin: the worker of message `filled`.
    RingIndex fill_worker{};
    /// The counter value after the last message, once known (MESSAGE_COUNT_REACHED: from the
    /// start; WORKER_INITIATED: once a worker has said last / terminate). A flag, not a reserved
    /// counter value: every counter value is a valid message.
    bool end_known = false;
    uint32_t end_at = 0;
    /// Signal of each slot's current message (last / terminate), sent in the sync word flags.
    uint32_t slot_flags[Config::max_buffers_per_channel] = {};

    /// The ring index of a cursor (the test-only mutation derives it from the counter instead).
    uint32_t idx(RingIndex r, uint32_t counter) const {
        return Config::mutation_slot_from_counter ? counter % info.buffers : r.at;
    }

    /// Prepares the channel before the handshake: the EDM's semaphore starts at 0.
    template <class H>
    void init(H& hal) {
        hal.sem_set(info.edm_sem, 0);
        filled = sent = acked = completed = info.initial_counter;
        if (Config::termination == Termination::message_count_reached) {
            end_known = true;
            end_at = info.initial_counter + info.message_count;
        }
        if (Config::mutation_end_marker && Config::termination == Termination::worker_initiated) {
            end_known = true;  // the old "no end yet" marker: a counter value taken for the end
            end_at = UINT32_MAX;
        }
        if (end_known && filled == end_at) phase = WorkerPhase::finished;
    }

    /// All messages sent and (unless the teardown mutation is on) completed by the receiver.
    bool done() const {
        if (phase != WorkerPhase::finished) return false;
        if (Config::mutation_teardown_without_wait) return sent == filled;
        return completed == filled;
    }

    template <class H>
    bool step(H& hal) {
        bool progress = false;
        progress |= step_worker(hal);
        progress |= step_send(hal);
        progress |= step_acks(hal);
        return progress;
    }

    /// Worker side: hand the next free slot to the worker(s), then wait for them to fill it.
    template <class H>
    bool step_worker(H& hal) {
        if (phase == WorkerPhase::signal_worker) {
            if (CreditWindow{info.buffers}.full(filled, acked)) return false;  // my copy of the slot is busy
            detail::clear_then_notify<Config>(hal, info, workers, fill_worker.at, 1);
            phase = WorkerPhase::wait_worker;
            return true;
        }
        if (phase == WorkerPhase::wait_worker) {
            const uint32_t sem = hal.sem_read(info.edm_sem);
            if (sem % note_written != detail::expected_acks(info)) return false;
            // The workers' notes, if they wrote any (before their increments, same destination:
            // N1). No note: a full packet with Signal::next. NOT_SHARED with several workers:
            // every worker wrote one.
            Signal signal = Signal::next;
            uint32_t length = info.packet_bytes;
            if (sem / note_written) {
                const bool rr = info.sharing == Sharing::round_robin;
                const uint32_t first = rr ? fill_worker.at : 0;
                const uint32_t note = hal.sem_read(info.signal_base + 4 * first);
                signal = note_signal(note);
                length = note_length(note);
                if (!rr)
                    for (uint32_t k = 1; k < info.num_workers; ++k) {
                        const uint32_t l = note_length(hal.sem_read(info.signal_base + 4 * k));
                        length = l > length ? l : length;
                    }
            }
            if (Config::termination == Termination::worker_initiated) {
                if (signal == Signal::last || signal == Signal::terminate) {
                    end_known = true;
                    end_at = filled + 1;
                }
            } else {
                signal = Signal::next;  // MESSAGE_COUNT_REACHED: the count ends the channel
            }
            slot_flags[idx(fill_slot, filled)] = make_note(signal, length);
            ++filled;
            fill_slot.advance(info.buffers);
            fill_worker.advance(info.num_workers);
            phase = end_known && filled == end_at ? WorkerPhase::finished : WorkerPhase::signal_worker;
            return true;
        }
        return false;
    }

    /// Ethernet side: send a filled slot once the receiver's copy is free and the queue is.
    template <class H>
    bool step_send(H& hal) {
        if (sent == filled || CreditWindow{info.buffers}.full(sent, completed)) return false;
        if (hal.eth_txq_busy(0)) return false;
        const uint32_t slot = info.slot(idx(send_slot, sent));
        const uint32_t sync = slot + sync_offset<Config>(info.packet_bytes);
        const uint32_t note = slot_flags[idx(send_slot, sent)];
        detail::put_word(hal, sync, info.packet_bytes, 0, sent, note);
        // Only the message's bytes travel (rounded up to whole Ethernet words), then the sync
        // word. A full packet is one send (payload and sync word are contiguous, sync word last:
        // E3); a shorter one is two sends on queue 0, payload first: commands complete in order
        // within one queue (E2), so the sync word still lands after every payload byte. The
        // bytes of the slot past the message are never read (receivers read the note's length).
        const uint32_t len = note_signal(note) == Signal::terminate ? 0 : payload_words(note_length(note));
        if (Config::mutation_sync_word_first) hal.eth_send(0, slot, slot, sync_word_bytes + len);
        else if (len == info.packet_bytes) hal.eth_send(0, slot, slot, info.packet_bytes + sync_word_bytes);
        else {
            if (len) hal.eth_send(0, slot, slot, len);
            hal.eth_send(0, sync, sync, sync_word_bytes);
        }
        ++sent;
        send_slot.advance(info.buffers);
        return true;
    }

    /// A message's payload bytes rounded up to whole Ethernet words, at most the packet.
    uint32_t payload_words(uint32_t length) const {
        const uint32_t w = length > info.packet_bytes ? info.packet_bytes : length;
        return (w + (sync_word_bytes - 1)) & ~(sync_word_bytes - 1);
    }

    /// Acknowledgements: first-level ack frees my copy; completion frees the receiver's.
    template <class H>
    bool step_acks(H& hal) {
        bool progress = false;
        if (acked != sent) {  // never `acked < sent`: the counters wrap
            const uint32_t sync = info.slot(idx(ack_slot, acked)) + sync_offset<Config>(info.packet_bytes);
            if (hal.sem_read(sync + sync_receiver_ack) != 0 || hal.sem_read(sync + sync_bytes_sent) == 0) {
                ++acked;
                ack_slot.advance(info.buffers);
                progress = true;
            }
        }
        if (completed != acked) {
            const uint32_t sync = info.slot(idx(complete_slot, completed)) + sync_offset<Config>(info.packet_bytes);
            if (hal.sem_read(sync + sync_bytes_sent) == 0) {
                ++completed;
                complete_slot.advance(info.buffers);
                progress = true;
            }
        }
        return progress;
    }
};

/// Receiver channel: Ethernet payload -> first-level ack -> worker(s) -> completion.
template <class Config>
class ReceiverChannel {
public:
    static constexpr uint32_t max_workers = Config::max_workers_per_channel;

    ChannelInfo info{};
    WorkerTable<max_workers> workers{};
    WorkerPhase phase = WorkerPhase::signal_worker;
    /// Message counters (wrap at 2^32; start at info.initial_counter) and their ring indices.
    uint32_t received = 0, acked = 0, consumed = 0, completed = 0;
    RingIndex receive_slot{}, ack_slot{}, consume_slot{}, complete_slot{};
    /// Round robin: the worker of message `consumed`, and of the last message consumed.
    RingIndex consume_worker{};
    uint32_t last_worker = 0;
    /// The counter value after the last message, once known (see SenderChannel::end_at).
    bool end_known = false;
    uint32_t end_at = 0;
    uint32_t slot_flags[Config::max_buffers_per_channel] = {};

    /// The ring index of a cursor (the test-only mutation derives it from the counter instead).
    uint32_t idx(RingIndex r, uint32_t counter) const {
        return Config::mutation_slot_from_counter ? counter % info.buffers : r.at;
    }

    /// Prepares the channel before the handshake. L1 is never zeroed and the previous program
    /// on this core may have left anything in the region: every slot's sync word is cleared
    /// here, before the handshake lets the sender send (a stale non-zero `bytes_sent` would be
    /// taken for a packet).
    template <class H>
    void init(H& hal) {
        hal.sem_set(info.edm_sem, 0);
        for (uint32_t b = 0; b < info.buffers; ++b)
            detail::put_word(hal, info.slot(b) + sync_offset<Config>(info.packet_bytes), 0, 0, 0, 0);
        // Source words (reserved area): the ack says "received" (non-zero ack field), the
        // completion says "slot free" (all zero). Their contents are the same in every program,
        // so a send of them still queued when a program returns reads the right bytes whenever
        // it executes (E1), and each may be re-sent while an earlier send of it is queued.
        detail::put_word(hal, info.ack_src, 1, 1, 0, 0);
        if (!Config::mutation_shared_ack_source) detail::put_word(hal, info.completion_src, 0, 0, 0, 0);
        received = acked = consumed = completed = info.initial_counter;
        if (Config::termination == Termination::message_count_reached) {
            end_known = true;
            end_at = info.initial_counter + info.message_count;
        }
        if (Config::mutation_end_marker && Config::termination == Termination::worker_initiated) {
            end_known = true;  // the old "no end yet" marker: a counter value taken for the end
            end_at = UINT32_MAX;
        }
        if (end_known && received == end_at) phase = WorkerPhase::finished;
    }

    bool done() const { return end_known && completed == end_at && phase == WorkerPhase::finished; }

    template <class H>
    bool step(H& hal) {
        bool progress = false;
        progress |= step_receive(hal);
        progress |= step_ack(hal);
        progress |= step_worker(hal);
        progress |= step_complete(hal);
        return progress;
    }

    /// A packet has arrived when its sync word (the last word of the send) shows bytes.
    template <class H>
    bool step_receive(H& hal) {
        if ((end_known && received == end_at) || CreditWindow{info.buffers}.full(received, completed)) return false;
        const uint32_t sync = info.slot(idx(receive_slot, received)) + sync_offset<Config>(info.packet_bytes);
        if (hal.sem_read(sync + sync_bytes_sent) == 0) return false;
        const uint32_t note = hal.sem_read(sync + sync_flags);
        slot_flags[idx(receive_slot, received)] = note;
        const Signal signal = note_signal(note);
        if (Config::termination == Termination::worker_initiated &&
            (signal == Signal::last || signal == Signal::terminate)) {
            end_known = true;
            end_at = received + 1;
        }
        ++received;
        receive_slot.advance(info.buffers);
        return true;
    }

    template <class H>
    bool step_ack(H& hal) {
        if (acked == received || hal.eth_txq_busy(0)) return false;
        const uint32_t sync = info.slot(idx(ack_slot, acked)) + sync_offset<Config>(info.packet_bytes);
        if (Config::mutation_shared_ack_source) detail::put_word(hal, info.ack_src, 1, 1, 0, 0);
        hal.eth_send(0, info.ack_src, sync, sync_word_bytes);
        ++acked;
        ack_slot.advance(info.buffers);
        return true;
    }

    template <class H>
    bool step_worker(H& hal) {
        if (phase == WorkerPhase::signal_worker) {
            if (consumed == acked) return false;
            // The worker's semaphore (cleared by the worker before it answered) becomes the note.
            const uint32_t note = slot_flags[idx(consume_slot, consumed)];
            detail::clear_then_notify<Config>(hal, info, workers, consume_worker.at, note & 3u ? note : note | 1u);
            phase = WorkerPhase::wait_worker;
            return true;
        }
        if (phase == WorkerPhase::wait_worker) {
            if (hal.sem_read(info.edm_sem) != detail::expected_acks(info)) return false;
            ++consumed;
            consume_slot.advance(info.buffers);
            last_worker = consume_worker.at;
            consume_worker.advance(info.num_workers);
            if (!(end_known && consumed == end_at)) phase = WorkerPhase::signal_worker;
            else if (Config::termination == Termination::worker_initiated &&
                     info.sharing == Sharing::round_robin && info.num_workers > 1)
                phase = WorkerPhase::closing_signal;
            else phase = WorkerPhase::finished;
            return true;
        }
        if (phase == WorkerPhase::closing_signal) {
            hal.sem_set(info.edm_sem, 0);
            const uint32_t told = last_worker;  // the worker given the last message knows
            for (uint32_t k = 0; k < info.num_workers; ++k)
                if (k != told)
                    hal.sem_inc(hal.noc_addr(workers.x[k], workers.y[k], workers.sem[k]), uint32_t(Signal::terminate));
            phase = WorkerPhase::closing_wait;
            return true;
        }
        if (phase == WorkerPhase::closing_wait) {
            if (hal.sem_read(info.edm_sem) != info.num_workers - 1) return false;
            phase = WorkerPhase::finished;
            return true;
        }
        return false;
    }

    /// Completion: clear my slot's sync word first (the next packet for this slot can only come
    /// after the completion), then tell the sender the slot is free.
    template <class H>
    bool step_complete(H& hal) {
        if (completed == consumed || hal.eth_txq_busy(0)) return false;
        const uint32_t sync = info.slot(idx(complete_slot, completed)) + sync_offset<Config>(info.packet_bytes);
        hal.sem_set(sync + sync_bytes_sent, 0);
        hal.sem_set(sync + sync_receiver_ack, 0);
        uint32_t src = info.completion_src;
        if (Config::mutation_shared_ack_source) {
            src = info.ack_src;
            detail::put_word(hal, src, 0, 0, 0, 0);
        }
        hal.eth_send(0, src, sync, sync_word_bytes);
        ++completed;
        complete_slot.advance(info.buffers);
        return true;
    }
};

}  // namespace kccl::edm
