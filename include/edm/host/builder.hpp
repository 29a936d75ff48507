// kccl/edm/host/builder.hpp — host-side EDM builder: lays out the ERISC L1 of both ends of a link
// and emits the runtime args of the two EDM kernels and of every worker.
//
// Host code (allocates, throws edm::host::ConfigError); never include it from device code.
//
//   kccl::edm::host::EdmEnd a, b;                       // one per Ethernet core of the link
//   a.add_sender({.buffers = 2, .packet_bytes = 4096, .message_count = 100, .workers = {{1, 0, 0x100}}});
//   b.add_receiver({.buffers = 2, .packet_bytes = 4096, .message_count = 100, .workers = {{2, 0, 0x100}}});
//   auto plan = kccl::edm::host::build_link(a, b, {.base = 0x1000, .size = 150 * 1024});
//   plan.edm_args(Side::a)        -> runtime args of the EDM on a's Ethernet core
//   plan.worker_args(Side::a, /*channel=*/0, /*worker=*/0)  -> that worker's adapter args
//
// Channel c of `a` and channel c of `b` are the two ends of one channel: one must be a sender
// and the other a receiver, with the same buffers, packet size and message count. Both ends get
// the same L1 layout (a sender writes into the receiver's slot at the address of its own).
//
// L1 layout from `region.base` (all 16-byte aligned):
//   handshake: 48 B (word, answer word, source word)
//   per channel: EDM semaphore 16 B | worker signal slots 4 B x max workers (rounded up to 16) |
//                ack source word 16 B | completion source word 16 B |
//                buffers x (packet_bytes + 16)   [packet | sync word]
#pragma once

#include "../types.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kccl::edm::host {

/// Every invalid configuration; the message says what was wrong and what is allowed.
struct ConfigError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

enum class Side { a, b };

struct Worker {
    uint32_t x = 0, y = 0;   ///< NoC coordinates of the worker core (same chip as its EDM)
    uint32_t sem_addr = 0;   ///< the worker's semaphore for this channel (4-byte aligned, starts at 0)
};

struct ChannelSpec {
    uint32_t buffers = 2;           ///< slots per channel (multi-buffering)
    uint32_t packet_bytes = 4096;   ///< bytes per message (multiple of 16)
    /// Largest packet a slot may hold; 0 = packet_bytes. A packet larger than this is an error.
    uint32_t buffer_bytes = 0;
    Sharing sharing = Sharing::not_shared;
    uint32_t message_count = 0;     ///< MESSAGE_COUNT_REACHED: messages over this channel
    std::vector<Worker> workers;
};

/// Limits the builder enforces; defaults match edm::DefaultConfig.
struct Limits {
    uint32_t max_channels = DefaultConfig::max_channels;
    uint32_t max_workers_per_channel = DefaultConfig::max_workers_per_channel;
    uint32_t max_buffers_per_channel = DefaultConfig::max_buffers_per_channel;
    Termination termination = DefaultConfig::termination;

    template <class Config>
    static Limits of() {
        return {Config::max_channels, Config::max_workers_per_channel, Config::max_buffers_per_channel,
                Config::termination};
    }
};

/// The L1 range the EDM may use on each Ethernet core (e.g. ERISC_L1_UNRESERVED_BASE to end).
struct L1Region {
    uint32_t base = 0;
    uint32_t size = 0;
};

/// One end of a link: its channels in order, each a sender or a receiver.
class EdmEnd {
public:
    EdmEnd& add_sender(ChannelSpec spec) { return add(true, std::move(spec)); }
    EdmEnd& add_receiver(ChannelSpec spec) { return add(false, std::move(spec)); }

    struct Channel {
        bool sender;
        ChannelSpec spec;
    };
    const std::vector<Channel>& channels() const { return channels_; }

private:
    EdmEnd& add(bool sender, ChannelSpec spec) {
        channels_.push_back({sender, std::move(spec)});
        return *this;
    }
    std::vector<Channel> channels_;
};

/// Addresses of one channel (identical on both ends).
struct ChannelLayout {
    uint32_t edm_sem, signal_base, ack_src, completion_src, buffers_base, slot_bytes;
};

class LinkPlan {
public:
    uint32_t handshake_addr = 0;
    uint32_t end_addr = 0;  ///< first byte after the layout
    std::vector<ChannelLayout> layout;

    std::vector<uint32_t> edm_args(Side side) const {
        const EdmEnd& e = side == Side::a ? a_ : b_;
        std::vector<uint32_t> v(args::first_channel, 0);
        v[args::num_channels] = uint32_t(e.channels().size());
        v[args::handshake_addr] = handshake_addr;
        v[args::is_handshake_master] = (side == Side::a) == a_is_master_ ? 1 : 0;
        for (size_t c = 0; c < e.channels().size(); ++c) {
            const auto& ch = e.channels()[c];
            const ChannelLayout& l = layout[c];
            std::vector<uint32_t> blk(args::ch_fixed, 0);
            blk[args::ch_is_sender] = ch.sender ? 1 : 0;
            blk[args::ch_sharing] = uint32_t(ch.spec.sharing);
            blk[args::ch_buffers] = ch.spec.buffers;
            blk[args::ch_packet_bytes] = ch.spec.packet_bytes;
            blk[args::ch_slot_bytes] = l.slot_bytes;
            blk[args::ch_buffers_base] = l.buffers_base;
            blk[args::ch_edm_sem] = l.edm_sem;
            blk[args::ch_signal_base] = l.signal_base;
            blk[args::ch_ack_src] = l.ack_src;
            blk[args::ch_completion_src] = l.completion_src;
            blk[args::ch_message_count] = ch.spec.message_count;
            blk[args::ch_num_workers] = uint32_t(ch.spec.workers.size());
            for (const Worker& w : ch.spec.workers) {
                blk.push_back(w.x | (w.y << 16));
                blk.push_back(w.sem_addr);
            }
            v.insert(v.end(), blk.begin(), blk.end());
        }
        return v;
    }

    /// Adapter args of worker `k` of channel `c` on `side`, for an EDM at NoC (edm_x, edm_y).
    std::vector<uint32_t> worker_args(Side side, uint32_t c, uint32_t k, uint32_t edm_x, uint32_t edm_y) const {
        const EdmEnd& e = side == Side::a ? a_ : b_;
        if (c >= e.channels().size())
            throw ConfigError("worker_args: channel " + std::to_string(c) + " does not exist (this end has " +
                              std::to_string(e.channels().size()) + ")");
        const auto& ch = e.channels()[c];
        if (k >= ch.spec.workers.size())
            throw ConfigError("worker_args: channel " + std::to_string(c) + " has " +
                              std::to_string(ch.spec.workers.size()) + " worker(s); index " + std::to_string(k) +
                              " is out of range");
        const ChannelLayout& l = layout[c];
        std::vector<uint32_t> v(args::w_count, 0);
        v[args::w_edm_xy] = edm_x | (edm_y << 16);
        v[args::w_buffers_base] = l.buffers_base;
        v[args::w_buffers] = ch.spec.buffers;
        v[args::w_packet_bytes] = ch.spec.packet_bytes;
        v[args::w_slot_bytes] = l.slot_bytes;
        v[args::w_edm_sem] = l.edm_sem;
        v[args::w_signal_addr] = l.signal_base + 4 * k;
        v[args::w_worker_sem] = ch.spec.workers[k].sem_addr;
        v[args::w_worker_index] = k;
        v[args::w_num_workers] = uint32_t(ch.spec.workers.size());
        v[args::w_sharing] = uint32_t(ch.spec.sharing);
        return v;
    }

    bool a_is_master() const { return a_is_master_; }

private:
    friend LinkPlan build_link(const EdmEnd&, const EdmEnd&, L1Region, Limits);
    EdmEnd a_, b_;
    bool a_is_master_ = true;
};

namespace detail {
inline std::string ch_name(size_t c) { return "channel " + std::to_string(c); }
inline uint32_t round16(uint32_t v) { return (v + 15u) & ~15u; }
}  // namespace detail

/// Validates the two ends against each other and the limits, and lays out L1.
inline LinkPlan build_link(const EdmEnd& a, const EdmEnd& b, L1Region region, Limits limits = {}) {
    using detail::ch_name;
    const auto& ca = a.channels();
    const auto& cb = b.channels();
    if (ca.empty())
        throw ConfigError("EDM link has zero channels; at least 1 and at most " +
                          std::to_string(limits.max_channels) + " are allowed");
    if (ca.size() > limits.max_channels)
        throw ConfigError("EDM link has " + std::to_string(ca.size()) + " channels; at most " +
                          std::to_string(limits.max_channels) + " are allowed (Config::max_channels)");
    if (ca.size() != cb.size())
        throw ConfigError("the two ends of the link have " + std::to_string(ca.size()) + " and " +
                          std::to_string(cb.size()) + " channels; both ends must declare every channel");
    if (region.base % 16 || region.size % 16)
        throw ConfigError("L1 region base " + std::to_string(region.base) + " and size " + std::to_string(region.size) +
                          " must be multiples of 16 (Ethernet word alignment)");

    for (size_t c = 0; c < ca.size(); ++c) {
        const auto& x = ca[c];
        const auto& y = cb[c];
        if (x.sender == y.sender)
            throw ConfigError(ch_name(c) + " is a " + (x.sender ? "sender" : "receiver") +
                              " on both ends; one end must send and the other receive");
        for (const auto* e : {&x, &y}) {
            const ChannelSpec& s = e->spec;
            const std::string who = ch_name(c) + " (" + (e == &x ? "end a" : "end b") + ")";
            if (s.buffers == 0 || s.buffers > limits.max_buffers_per_channel)
                throw ConfigError(who + " has " + std::to_string(s.buffers) + " buffers; 1.." +
                                  std::to_string(limits.max_buffers_per_channel) + " are allowed");
            if (s.packet_bytes == 0 || s.packet_bytes % 16)
                throw ConfigError(who + " packet size " + std::to_string(s.packet_bytes) +
                                  " must be a non-zero multiple of 16 bytes");
            const uint32_t cap = s.buffer_bytes ? s.buffer_bytes : s.packet_bytes;
            if (cap % 16)
                throw ConfigError(who + " buffer size " + std::to_string(cap) + " must be a multiple of 16 bytes");
            if (s.packet_bytes > cap)
                throw ConfigError(who + " packet of " + std::to_string(s.packet_bytes) +
                                  " bytes is larger than its buffer of " + std::to_string(cap) +
                                  " bytes; packets must fit a buffer");
            if (s.workers.empty() || s.workers.size() > limits.max_workers_per_channel)
                throw ConfigError(who + " has " + std::to_string(s.workers.size()) + " workers; 1.." +
                                  std::to_string(limits.max_workers_per_channel) + " are allowed");
            for (const Worker& w : s.workers)
                if (w.sem_addr % 4)
                    throw ConfigError(who + " worker (" + std::to_string(w.x) + "," + std::to_string(w.y) +
                                      ") semaphore address " + std::to_string(w.sem_addr) + " is not 4-byte aligned");
            if (limits.termination == Termination::message_count_reached && s.message_count == 0)
                throw ConfigError(who + " has message count 0; MESSAGE_COUNT_REACHED needs at least 1 message");
        }
        if (x.spec.buffers != y.spec.buffers || x.spec.packet_bytes != y.spec.packet_bytes ||
            (x.spec.buffer_bytes ? x.spec.buffer_bytes : x.spec.packet_bytes) !=
                (y.spec.buffer_bytes ? y.spec.buffer_bytes : y.spec.packet_bytes))
            throw ConfigError(ch_name(c) + ": buffers/packet/buffer sizes differ between the ends (" +
                              std::to_string(x.spec.buffers) + " x " + std::to_string(x.spec.packet_bytes) + " vs " +
                              std::to_string(y.spec.buffers) + " x " + std::to_string(y.spec.packet_bytes) +
                              "); both ends of a channel share one layout");
        if (limits.termination == Termination::message_count_reached && x.spec.message_count != y.spec.message_count)
            throw ConfigError(ch_name(c) + ": message count " + std::to_string(x.spec.message_count) +
                              " on end a differs from " + std::to_string(y.spec.message_count) +
                              " on end b; both ends must move the same number of messages");
    }

    LinkPlan plan;
    plan.a_ = a;
    plan.b_ = b;
    // Seed 000: the side whose lowest-numbered sender channel is lowest leads the handshake.
    plan.a_is_master_ = ca[0].sender;
    uint64_t at = region.base;
    plan.handshake_addr = uint32_t(at);
    at += 48;
    const uint32_t signal_bytes = detail::round16(4 * limits.max_workers_per_channel);
    for (size_t c = 0; c < ca.size(); ++c) {
        const ChannelSpec& s = ca[c].spec;
        ChannelLayout l{};
        l.edm_sem = uint32_t(at);
        at += 16;
        l.signal_base = uint32_t(at);
        at += signal_bytes;
        l.ack_src = uint32_t(at);
        at += 16;
        l.completion_src = uint32_t(at);
        at += 16;
        l.buffers_base = uint32_t(at);
        l.slot_bytes = (s.buffer_bytes ? s.buffer_bytes : s.packet_bytes) + sync_word_bytes;
        at += uint64_t(s.buffers) * l.slot_bytes;
        plan.layout.push_back(l);
    }
    if (at > uint64_t(region.base) + region.size)
        throw ConfigError("EDM layout needs " + std::to_string(at - region.base) + " bytes of L1 but the region has " +
                          std::to_string(region.size) + " (from " + std::to_string(region.base) +
                          "); use fewer channels or buffers, or smaller packets");
    plan.end_addr = uint32_t(at);
    return plan;
}

}  // namespace kccl::edm::host
