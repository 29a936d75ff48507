// kccl/edm/edm.hpp — the ERISC Data Mover kernel: handshake, round-robin main loop, teardown.
//
//   template <class H> void my_erisc_kernel(H& hal) {
//       kccl::edm::Edm<MyConfig> edm;             // trivially destructible: may be a static
//       kccl::edm::Status s = edm.run(hal);        // args from edm::host::LinkPlan::edm_args
//   }
//
// Lifecycle (seed 000 "Initialization", seed 004 "Ethernet Kernel Setup / Teardown"):
//   1. load    read the runtime args; reject a layout the Config cannot hold (Status).
//   2. init    clear every channel semaphore (before anything can notify a worker).
//   3. handshake  the side whose lowest channel is a sender is the master (the builder decides):
//              it sends a 16-byte word to the reserved handshake address; the other side clears
//              it and answers into the word after it; the master clears the answer. Every EDM
//              uses the same reserved words, consumed at start, so a later program's handshake
//              can land early without being lost or taken for this one's.
//   4. loop    step every channel round robin until all are done; after
//              Config::idle_iterations_per_context_switch iterations without progress, call
//              context_switch(); every idle iteration calls idle().
//   5. teardown  a sender channel is done only when every message it sent is completed by the
//              receiver, so no credit of this program is in flight when it returns (a late
//              completion would corrupt the next program on this core).
#pragma once

#include "channel.hpp"
#include "types.hpp"

#include <hal/contract.hpp>

#include <stdint.h>

namespace kccl::edm {

enum class Status : uint32_t {
    ok = 0,
    too_many_channels = 1,
    too_many_workers = 2,
    too_many_buffers = 3,
    bad_layout = 4,  ///< zero buffers / workers, or unaligned addresses or sizes
};

template <class Config = DefaultConfig>
class Edm {
    static_assert(check_config<Config>());

public:
    static constexpr uint32_t max_channels = Config::max_channels;

    /// Runs the whole lifecycle. Returns ok, or why the args were rejected (then nothing ran).
    template <class H>
    [[nodiscard]] Status run(H& hal, uint32_t arg_base = 0) {
        const Status s = load(hal, arg_base);
        if (s != Status::ok) return s;
        init(hal);
        handshake(hal);
        main_loop(hal);
        return Status::ok;
    }

    template <class H>
    [[nodiscard]] Status load(H& hal, uint32_t base = 0) {
        num_channels_ = hal.arg(base + args::num_channels);
        handshake_addr_ = hal.arg(base + args::handshake_addr);
        master_ = hal.arg(base + args::is_handshake_master) != 0;
        if (num_channels_ > max_channels) return Status::too_many_channels;
        if (handshake_addr_ % 16) return Status::bad_layout;
        uint32_t a = base + args::first_channel;
        for (uint32_t c = 0; c < num_channels_; ++c) {
            ChannelInfo ch;
            ch.is_sender = hal.arg(a + args::ch_is_sender) != 0;
            ch.sharing = Sharing(hal.arg(a + args::ch_sharing));
            ch.buffers = hal.arg(a + args::ch_buffers);
            ch.packet_bytes = hal.arg(a + args::ch_packet_bytes);
            ch.slot_bytes = hal.arg(a + args::ch_slot_bytes);
            ch.buffers_base = hal.arg(a + args::ch_buffers_base);
            ch.edm_sem = hal.arg(a + args::ch_edm_sem);
            ch.signal_base = hal.arg(a + args::ch_signal_base);
            ch.ack_src = hal.arg(a + args::ch_ack_src);
            ch.completion_src = hal.arg(a + args::ch_completion_src);
            ch.message_count = hal.arg(a + args::ch_message_count);
            ch.num_workers = hal.arg(a + args::ch_num_workers);
            if (ch.num_workers > Config::max_workers_per_channel) return Status::too_many_workers;
            if (ch.buffers > Config::max_buffers_per_channel) return Status::too_many_buffers;
            if (ch.buffers == 0 || ch.num_workers == 0 || ch.packet_bytes == 0 || ch.packet_bytes % 16 ||
                ch.slot_bytes < ch.packet_bytes + sync_word_bytes || ch.slot_bytes % 16 || ch.buffers_base % 16 ||
                ch.ack_src % 16 || ch.completion_src % 16)
                return Status::bad_layout;
            WorkerTable<Config::max_workers_per_channel> w;
            for (uint32_t k = 0; k < ch.num_workers; ++k) {
                const uint32_t xy = hal.arg(a + args::ch_fixed + args::per_worker * k);
                w.x[k] = xy & 0xffff;
                w.y[k] = xy >> 16;
                w.sem[k] = hal.arg(a + args::ch_fixed + args::per_worker * k + 1);
            }
            is_sender_[c] = ch.is_sender;
            if (ch.is_sender) {
                senders_[c].info = ch;
                senders_[c].workers = w;
            } else {
                receivers_[c].info = ch;
                receivers_[c].workers = w;
            }
            a += args::ch_fixed + args::per_worker * ch.num_workers;
        }
        return Status::ok;
    }

    template <class H>
    void init(H& hal) {
        for (uint32_t c = 0; c < num_channels_; ++c) {
            if (is_sender_[c]) senders_[c].init(hal);
            else receivers_[c].init(hal);
        }
    }

    template <class H>
    void handshake(H& hal) {
        const uint32_t word = handshake_addr_, answer = handshake_addr_ + 16, src = handshake_addr_ + 32;
        detail::put_word(hal, src, 1, 0, 0, 0);
        if (master_) {
            hal.eth_send(0, src, word, 16);
            poll(hal, [&] { return hal.sem_read(answer) != 0; });
            hal.sem_set(answer, 0);
        } else {
            poll(hal, [&] { return hal.sem_read(word) != 0; });
            hal.sem_set(word, 0);
            hal.eth_send(0, src, answer, 16);
        }
    }

    template <class H>
    void main_loop(H& hal) {
        while (!all_done()) {
            bool progress = false;
            for (uint32_t c = 0; c < num_channels_; ++c) {
                if (is_sender_[c]) progress |= senders_[c].step(hal);
                else progress |= receivers_[c].step(hal);
            }
            if (progress) idle_iterations_ = 0;
            else idle_once(hal);
        }
    }

    bool all_done() const {
        for (uint32_t c = 0; c < num_channels_; ++c)
            if (is_sender_[c] ? !senders_[c].done() : !receivers_[c].done()) return false;
        return true;
    }

    uint32_t num_channels() const { return num_channels_; }
    bool is_sender(uint32_t c) const { return is_sender_[c]; }
    const SenderChannel<Config>& sender(uint32_t c) const { return senders_[c]; }
    const ReceiverChannel<Config>& receiver(uint32_t c) const { return receivers_[c]; }
    /// How many times the EDM gave the link firmware a turn.
    uint32_t context_switches() const { return context_switches_; }

private:
    template <class H>
    void idle_once(H& hal) {
        hal.idle();
        if (++idle_iterations_ >= Config::idle_iterations_per_context_switch) {
            hal.context_switch();
            ++context_switches_;
            idle_iterations_ = 0;
        }
    }
    template <class H, class Cond>
    void poll(H& hal, Cond cond) {
        while (!cond()) idle_once(hal);
        idle_iterations_ = 0;
    }

    uint32_t num_channels_ = 0;
    uint32_t handshake_addr_ = 0;
    bool master_ = false;
    uint32_t idle_iterations_ = 0;
    uint32_t context_switches_ = 0;
    bool is_sender_[max_channels] = {};
    SenderChannel<Config> senders_[max_channels];
    ReceiverChannel<Config> receivers_[max_channels];
};

}  // namespace kccl::edm
