// kccl/edm/types.hpp — vocabulary of the ERISC Data Mover: modes, the sync word, the
// compile-time configuration, and the runtime-argument layouts shared by the EDM kernel, its
// worker adapters and the host builder.
//
// Protocol summary (docs/edm.md has the state diagrams):
//   * A channel is a sender on one end of a link and a receiver on the other, with n buffers at
//     the SAME L1 addresses on both Ethernet cores. A buffer slot is [packet | 16-byte sync word].
//   * Sender EDM: sends the message's bytes (rounded up to 16) and then the sync word: one
//     eth_send when the packet is full (sync word last, contract E3), else payload then sync word
//     as two sends on one queue (in order, contract E2).
//     Receiver EDM: sees the sync word, sends a first-level ACK (the sender's copy of the slot
//     may be refilled), hands the packet to its workers, and when they are done clears its slot
//     and sends a COMPLETION (the receiver's slot may be written again). ACK and COMPLETION go
//     out from two distinct source words (tt-metal BasicEthernetGuide, "End-to-End Flow Control").
//   * Worker <-> EDM: two semaphores per channel (one on the worker, one on the EDM); each side
//     clears its own semaphore before notifying the other; a payload write and the semaphore
//     increment that announces it go to the same core back to back (contract N1).
#pragma once

#include <hal/config.hpp>

#include <stdint.h>

namespace kccl::edm {

/// When the EDM stops (tt-metal CclDeveloperGuide, "Termination Mode"); shared by all channels of an EDM.
enum class Termination : uint32_t {
    message_count_reached = 0,  ///< each channel moves a fixed number of messages
    worker_initiated = 1,       ///< each channel runs until its sender worker says last/terminate
};

/// How several workers share a channel's buffers (tt-metal CclDeveloperGuide, buffer sharing modes).
enum class Sharing : uint32_t {
    not_shared = 0,   ///< every message involves every worker (each fills / reads its part);
                      ///< the EDM notifies all of them and waits for all of them
    round_robin = 1,  ///< message m involves worker m mod W only
};

/// Worker signals (WORKER_INITIATED): what the sender worker says with each message, and what
/// the receiver EDM tells its workers.
enum class Signal : uint32_t {
    none = 0,
    next = 1,       ///< a payload, more follow
    last = 2,       ///< a payload, the last one
    terminate = 3,  ///< no payload: the channel ends
};

/// The 16-byte word after every packet (legacy `eth_channel_sync_t`).
struct SyncWord {
    uint32_t bytes_sent;    ///< non-zero: a packet is in the slot (sender sets, receiver clears)
    uint32_t receiver_ack;  ///< non-zero: first-level ack (receiver -> sender)
    uint32_t src_id;        ///< sequence number of the message (diagnostics)
    uint32_t flags;         ///< the message's note: signal and length (see make_note)
};
static_assert(sizeof(SyncWord) == 16, "The sync word is exactly one 16-byte Ethernet word.");

inline constexpr uint32_t sync_word_bytes = 16;
/// Field offsets inside the sync word.
inline constexpr uint32_t sync_bytes_sent = 0;
inline constexpr uint32_t sync_receiver_ack = 4;
inline constexpr uint32_t sync_src_id = 8;
inline constexpr uint32_t sync_flags = 12;

// ---- message notes -------------------------------------------------------------------------
// A note is one 32-bit word that travels with a message: bits 0-1 the Signal (next / last /
// terminate; never 0), bits 2-31 the message length in bytes (what the sender worker wrote:
// offset + bytes, the largest over the workers of a NOT_SHARED message). The sender worker writes
// it into its signal slot, the sender EDM into the sync word's flags, the receiver EDM adds it to
// the receiver worker's semaphore (which the worker cleared before, so the semaphore then holds
// exactly the note).
inline constexpr uint32_t max_message_bytes = (1u << 30) - 1;
/// A sender worker that wrote its note slot for a message increments the EDM's semaphore by
/// 1 + note_written instead of 1. A full packet with Signal::next needs no note (the EDM then
/// takes {next, packet_bytes}), so the common send costs no extra NoC write. NOT_SHARED channels
/// with several workers always write notes (the EDM needs every worker's length).
inline constexpr uint32_t note_written = 1u << 16;
constexpr uint32_t make_note(Signal s, uint32_t length) { return (length << 2) | (uint32_t(s) & 3u); }
constexpr Signal note_signal(uint32_t note) { return (note & 3u) ? Signal(note & 3u) : Signal::next; }
constexpr uint32_t note_length(uint32_t note) { return note >> 2; }

// ---- the reserved area ---------------------------------------------------------------------
// Every kccl Ethernet kernel (the EDM and anything written with it) shares ONE reserved area at
// the same L1 address on every Ethernet core, outside every program's channel region. Programs
// run back to back and chips start them at different times, so a handshake must land where no
// other program keeps live data, and a send that is still queued when its program returns must
// read a source whose content no later program changes (contract E1). The area holds:
//   +0   handshake inbox of the slave    (the master's handshake word lands here)
//   +16  handshake inbox of the master   (the slave's answer lands here)
//   +32  source of the master's handshake word   (constant: handshake_magic)
//   +48  source of the slave's answer            (constant: answer_magic)
//   +64  source of every first-level ACK         (constant: {1, 1, 0, 0})
//   +80  source of every COMPLETION              (constant: all zero)
// The two inboxes are consumed (cleared) by the handshake. L1 is never zeroed by hardware, so an
// inbox is only taken to hold a handshake when all 16 bytes equal the magic word; garbage (or an
// earlier program's data) matches with probability 2^-128.
inline constexpr uint32_t reserved_bytes = 96;
inline constexpr uint32_t reserved_slave_inbox = 0;
inline constexpr uint32_t reserved_master_inbox = 16;
inline constexpr uint32_t reserved_handshake_src = 32;
inline constexpr uint32_t reserved_answer_src = 48;
inline constexpr uint32_t reserved_ack_src = 64;
inline constexpr uint32_t reserved_completion_src = 80;
/// "kccl" "edm " "hand" "shk1" / "kccl" "edm " "answ" "er 1" as little-endian words.
inline constexpr uint32_t handshake_magic[4] = {0x6C63636Bu, 0x206D6465u, 0x646E6168u, 0x316B6873u};
inline constexpr uint32_t answer_magic[4] = {0x6C63636Bu, 0x206D6465u, 0x77736E61u, 0x31207265u};

/// Default compile-time configuration. Derive and override to change:
///   struct MyEdm : kccl::edm::DefaultConfig {
///       static constexpr auto termination = kccl::edm::Termination::worker_initiated; };
struct DefaultConfig {
    /// Channels per EDM (legacy EDM: 8).
    static constexpr uint32_t max_channels = 8;
    /// Workers per channel.
    static constexpr uint32_t max_workers_per_channel = 8;
    /// Buffers (slots) per channel (legacy EDM: typically 2).
    static constexpr uint32_t max_buffers_per_channel = 16;
    static constexpr Termination termination = Termination::message_count_reached;
    /// Main-loop iterations without progress between two context_switch() calls. A too-eager
    /// switch once halved all-gather throughput (tenstorrent/tt-metal#6196); tt-metal's
    /// BasicEthernetGuide ("Ethernet Kernel Teardown") asks for "a large number of idle loop
    /// iterations". Counted, not timed, so it costs no timer read.
    static constexpr uint32_t idle_iterations_per_context_switch = 4096;

    // Protocol mutations tt-metal's Ethernet and CCL guides warn about. Test-only: each must make a test fail.
    static constexpr bool mutation_sync_word_first = false;     ///< sync word before the payload
    static constexpr bool mutation_notify_before_clear = false; ///< EDM notifies, then clears
    static constexpr bool mutation_shared_ack_source = false;   ///< ack and completion share a source word
    static constexpr bool mutation_teardown_without_wait = false;  ///< sender exits before completions
    /// The EDM maps message counter c to slot c % buffers (the workers keep ring indices): at the
    /// 2^32 wrap two consecutive messages get different slots on the two sides unless buffers
    /// divides 2^32.
    static constexpr bool mutation_slot_from_counter = false;
    /// WORKER_INITIATED: "no end yet" is the counter value UINT32_MAX instead of a flag, so a
    /// channel whose counter reaches it ends there while its workers still send.
    static constexpr bool mutation_end_marker = false;
};

template <class Config>
constexpr bool check_config() {
    static_assert(Config::max_channels >= 1 && Config::max_channels <= 32,
                  "EDM Config::max_channels must be between 1 and 32.");
    static_assert(Config::max_workers_per_channel >= 1 && Config::max_workers_per_channel <= 32,
                  "EDM Config::max_workers_per_channel must be between 1 and 32.");
    static_assert(Config::max_buffers_per_channel >= 1 && Config::max_buffers_per_channel <= 64,
                  "EDM Config::max_buffers_per_channel must be between 1 and 64.");
    static_assert(Config::idle_iterations_per_context_switch >= 1,
                  "EDM Config::idle_iterations_per_context_switch must be at least 1.");
    return true;
}

// ---- runtime argument layouts --------------------------------------------------------------
//
// EDM kernel args (written by edm::host::LinkPlan::edm_args):
//   [0] num_channels   [1] reserved_addr (the shared reserved area, reserved_bytes)
//   [2] is_handshake_master
//   then per channel: kChannelArgs values, then 2 per worker: (x | y << 16), worker_sem_addr
namespace args {
inline constexpr uint32_t num_channels = 0;
inline constexpr uint32_t reserved_addr = 1;
inline constexpr uint32_t is_handshake_master = 2;
inline constexpr uint32_t first_channel = 3;

// Offsets within one channel's block.
inline constexpr uint32_t ch_is_sender = 0;
inline constexpr uint32_t ch_sharing = 1;
inline constexpr uint32_t ch_buffers = 2;
inline constexpr uint32_t ch_packet_bytes = 3;   ///< bytes sent per message (sync word at this offset)
inline constexpr uint32_t ch_slot_bytes = 4;     ///< stride between slots (packet capacity + 16)
inline constexpr uint32_t ch_buffers_base = 5;
inline constexpr uint32_t ch_edm_sem = 6;
inline constexpr uint32_t ch_signal_base = 7;    ///< one 4-byte note slot per worker
inline constexpr uint32_t ch_message_count = 8;
inline constexpr uint32_t ch_num_workers = 9;
/// First value of the channel's message counters (host::ChannelSpec::initial_counter; 0 unless a
/// test starts just below 2^32 to cross the wrap).
inline constexpr uint32_t ch_initial_counter = 10;
inline constexpr uint32_t ch_fixed = 11;  ///< fixed args per channel, before the worker pairs
inline constexpr uint32_t per_worker = 2;

// Worker adapter args (LinkPlan::worker_args), at an offset the kernel author chooses.
inline constexpr uint32_t w_edm_xy = 0;
inline constexpr uint32_t w_buffers_base = 1;
inline constexpr uint32_t w_buffers = 2;
inline constexpr uint32_t w_packet_bytes = 3;
inline constexpr uint32_t w_slot_bytes = 4;
inline constexpr uint32_t w_edm_sem = 5;
inline constexpr uint32_t w_signal_addr = 6;  ///< this worker's own signal slot
inline constexpr uint32_t w_worker_sem = 7;
inline constexpr uint32_t w_worker_index = 8;
inline constexpr uint32_t w_num_workers = 9;
inline constexpr uint32_t w_sharing = 10;
inline constexpr uint32_t w_count = 11;
}  // namespace args

/// Address of the sync word of a slot (the mutation moves it to the front).
template <class Config>
constexpr uint32_t sync_offset(uint32_t packet_bytes) {
    return Config::mutation_sync_word_first ? 0 : packet_bytes;
}
/// Offset of the payload inside a slot.
template <class Config>
constexpr uint32_t payload_offset() {
    return Config::mutation_sync_word_first ? sync_word_bytes : 0;
}

}  // namespace kccl::edm
