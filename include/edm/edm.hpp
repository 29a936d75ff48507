// kccl/edm/edm.hpp — the ERISC Data Mover kernel: handshake, round-robin main loop, teardown.
//
//   template <class H> void my_erisc_kernel(H& hal) {
//       kccl::edm::Edm<MyConfig> edm;             // trivially destructible: may be a static
//       kccl::edm::Status s = edm.run(hal);        // args from edm::host::LinkPlan::edm_args
//   }
//
// Lifecycle (tt-metal CclDeveloperGuide "Initialization"; BasicEthernetGuide "Ethernet Kernel
// Setup (Device Side)" and "Ethernet Kernel Teardown"):
//   1. load    read the runtime args; reject a layout the Config cannot hold (Status; with
//              KCCL_ENABLE_ASSERTS, run() also reports it through the device error path).
//   2. init    clear every channel semaphore and every receiver slot's sync word (L1 is never
//              zeroed: the previous program left its bytes there), write the constant source
//              words of the reserved area.
//   3. handshake  the side whose lowest channel is a sender is the master (the builder decides):
//              it sends handshake_magic into the slave's inbox in the reserved area; the slave
//              waits for all 16 bytes of it, clears it and answers answer_magic into the master's
//              inbox; the master clears the answer. Every kccl Ethernet kernel uses the same
//              reserved area (types.hpp), outside every channel region, so a later program's
//              handshake can land early without being lost, taken for this one's, or landing in
//              this program's live buffers.
//   4. loop    step every channel round robin until all are done; after
//              Config::idle_iterations_per_context_switch iterations without progress, call
//              context_switch(); every idle iteration calls idle().
//   5. teardown  a sender channel is done only when every message it sent is completed by the
//              receiver, so no credit of this program is in flight towards it when it returns (a
//              late completion would corrupt the next program on this core). A receiver returns
//              as soon as its last completion is queued: that send reads the constant completion
//              word of the reserved area, which no later program changes, and lands in the
//              sender, which is still waiting for it — so the next program on either core may
//              reuse the channel region at once, with no drain by the caller.
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
    bad_layout = 4,  ///< zero channels / buffers / workers, a bad sharing mode, unaligned addresses or sizes
};

/// What a Status means, in a sentence (for the device error path and logs).
constexpr const char* status_message(Status s) {
    switch (s) {
        case Status::ok: return "ok";
        case Status::too_many_channels: return "EDM runtime args: more channels than Config::max_channels";
        case Status::too_many_workers: return "EDM runtime args: more workers on a channel than Config::max_workers_per_channel";
        case Status::too_many_buffers: return "EDM runtime args: more buffers on a channel than Config::max_buffers_per_channel";
        case Status::bad_layout:
            return "EDM runtime args: bad layout (zero channels, buffers or workers, a sharing mode other than 0/1, a "
                   "packet that is 0, not a multiple of 16 or larger than its slot, or an address not 16-byte aligned); "
                   "use edm::host::build_link to make them";
    }
    return "EDM runtime args: unknown status";
}

template <class Config = DefaultConfig>
class Edm {
    static_assert(check_config<Config>());

public:
    static constexpr uint32_t max_channels = Config::max_channels;

    /// Runs the whole lifecycle. Returns ok, or why the args were rejected (then nothing ran;
    /// with KCCL_ENABLE_ASSERTS the rejection also goes through the device error path).
    template <class H>
    [[nodiscard]] Status run(H& hal, uint32_t arg_base = 0) {
        const Status s = load(hal, arg_base);
        KCCL_ASSERT(s == Status::ok, status_message(s));
        if (s != Status::ok) return s;
        init(hal);
        handshake(hal);
        main_loop(hal);
        return Status::ok;
    }

    template <class H>
    [[nodiscard]] Status load(H& hal, uint32_t base = 0) {
        num_channels_ = hal.arg(base + args::num_channels);
        reserved_ = hal.arg(base + args::reserved_addr);
        master_ = hal.arg(base + args::is_handshake_master) != 0;
        if (num_channels_ > max_channels) return Status::too_many_channels;
        if (num_channels_ == 0 || reserved_ % 16) return Status::bad_layout;
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
            ch.ack_src = reserved_ + reserved_ack_src;
            ch.completion_src = reserved_ + reserved_completion_src;
            ch.message_count = hal.arg(a + args::ch_message_count);
            ch.num_workers = hal.arg(a + args::ch_num_workers);
            ch.initial_counter = hal.arg(a + args::ch_initial_counter);
            if (ch.num_workers > Config::max_workers_per_channel) return Status::too_many_workers;
            if (ch.buffers > Config::max_buffers_per_channel) return Status::too_many_buffers;
            const uint32_t sharing = hal.arg(a + args::ch_sharing);
            if (ch.buffers == 0 || ch.num_workers == 0 || ch.packet_bytes == 0 || ch.packet_bytes % 16 ||
                ch.packet_bytes > max_message_bytes || sharing > uint32_t(Sharing::round_robin) ||
                ch.slot_bytes < ch.packet_bytes + sync_word_bytes || ch.slot_bytes % 16 || ch.buffers_base % 16)
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
        const uint32_t slave_inbox = reserved_ + reserved_slave_inbox, master_inbox = reserved_ + reserved_master_inbox;
        const uint32_t hs_src = reserved_ + reserved_handshake_src, ans_src = reserved_ + reserved_answer_src;
        const uint32_t* hs = handshake_magic;
        const uint32_t* ans = answer_magic;
        if (master_) {
            detail::put_word(hal, hs_src, hs[0], hs[1], hs[2], hs[3]);
            hal.eth_send(0, hs_src, slave_inbox, 16);
            poll(hal, [&] { return holds(hal, master_inbox, ans); });
            detail::put_word(hal, master_inbox, 0, 0, 0, 0);
        } else {
            detail::put_word(hal, ans_src, ans[0], ans[1], ans[2], ans[3]);
            poll(hal, [&] { return holds(hal, slave_inbox, hs); });
            detail::put_word(hal, slave_inbox, 0, 0, 0, 0);
            hal.eth_send(0, ans_src, master_inbox, 16);
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
    /// All four fields of the 16-byte word at `addr` equal `magic` (it arrives in one piece: E3).
    template <class H>
    static bool holds(H& hal, uint32_t addr, const uint32_t* magic) {
        for (uint32_t f = 0; f < 4; ++f)
            if (hal.sem_read(addr + 4 * f) != magic[f]) return false;
        return true;
    }
    template <class H, class Cond>
    void poll(H& hal, Cond cond) {
        while (!cond()) idle_once(hal);
        idle_iterations_ = 0;
    }

    uint32_t num_channels_ = 0;
    uint32_t reserved_ = 0;
    bool master_ = false;
    uint32_t idle_iterations_ = 0;
    uint32_t context_switches_ = 0;
    bool is_sender_[max_channels] = {};
    SenderChannel<Config> senders_[max_channels];
    ReceiverChannel<Config> receivers_[max_channels];
};

}  // namespace kccl::edm
