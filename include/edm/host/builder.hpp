// kccl/edm/host/builder.hpp — host-side EDM builder: lays out the ERISC L1 of both ends of a link
// and emits the runtime args of the two EDM kernels and of every worker.
//
// Host code (allocates, throws edm::host::ConfigError); never include it from device code.
//
//   kccl::edm::host::EdmEnd a, b;                       // one per Ethernet core of the link
//   a.add_sender({.buffers = 2, .packet_bytes = 4096, .message_count = 100, .workers = {{1, 0, 0x100}}});
//   b.add_receiver({.buffers = 2, .packet_bytes = 4096, .message_count = 100, .workers = {{2, 0, 0x100}}});
//   auto plan = kccl::edm::host::build_link(a, b, {.base = 0x1100, .size = 150 * 1024, .reserved = 0x1000});
//   plan.edm_args(Side::a)        -> runtime args of the EDM on a's Ethernet core
//   plan.worker_args(Side::a, /*channel=*/0, /*worker=*/0)  -> that worker's adapter args
//
// Channel c of `a` and channel c of `b` are the two ends of one channel: one must be a sender
// and the other a receiver, with the same buffers, packet size and message count. Both ends get
// the same L1 layout (a sender writes into the receiver's slot at the address of its own).
//
// L1 layout (all 16-byte aligned):
//   at `region.reserved`: the reserved area shared by every kccl Ethernet kernel (edm::reserved_bytes
//     = 96 B: handshake inboxes and the constant handshake / ack / completion source words; see
//     edm/types.hpp). It must be the SAME address in every program on every Ethernet core, and
//     outside every program's channel region. On tt-metal: ERISC_L1_UNRESERVED_BASE, with the
//     region starting 96 bytes later.
//   from `region.base`, per channel: EDM semaphore 16 B | worker note slots 4 B x max workers
//     (rounded up to 16) | buffers x (packet_bytes + 16)   [packet | sync word]
#pragma once

#include "../types.hpp"

#include <common/host/error.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kccl::edm::host {

/// Every invalid configuration; the message says what was wrong and what is allowed.
struct ConfigError : ErrorOf<Errc::config> {
    using ErrorOf::ErrorOf;
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
    /// Test hook: the first value of the channel's 32-bit message counters in both EDMs (they
    /// wrap at 2^32). 0 normally; a test sets 2^32 - k so that the channel crosses the wrap after
    /// k messages. Both ends of a channel must agree. Nothing else changes: slots and round-robin
    /// workers still start at 0, and a MESSAGE_COUNT_REACHED channel still moves message_count
    /// messages.
    uint32_t initial_counter = 0;
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

/// The L1 the EDM may use on each Ethernet core: the channel region [base, base + size) and the
/// reserved area at `reserved` (edm::reserved_bytes, outside the region; the same address for every
/// program: e.g. ERISC_L1_UNRESERVED_BASE, the region after it).
struct L1Region {
    uint32_t base = 0;
    uint32_t size = 0;
    uint32_t reserved = 0;
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
    uint32_t edm_sem, signal_base, buffers_base, slot_bytes;
};

class LinkPlan {
public:
    uint32_t reserved_addr = 0;  ///< the reserved area (edm::reserved_bytes)
    uint32_t begin_addr = 0;     ///< first byte of the channel layout (region.base)
    uint32_t end_addr = 0;       ///< first byte after the channel layout
    std::vector<ChannelLayout> layout;

    std::vector<uint32_t> edm_args(Side side) const {
        const EdmEnd& e = side == Side::a ? a_ : b_;
        std::vector<uint32_t> v(args::first_channel, 0);
        v[args::num_channels] = uint32_t(e.channels().size());
        v[args::reserved_addr] = reserved_addr;
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
            blk[args::ch_message_count] = ch.spec.message_count;
            blk[args::ch_num_workers] = uint32_t(ch.spec.workers.size());
            blk[args::ch_initial_counter] = ch.spec.initial_counter;
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
        if (edm_x > 0xffff || edm_y > 0xffff)
            throw ConfigError("worker_args: EDM core (" + std::to_string(edm_x) + "," + std::to_string(edm_y) +
                              "): NoC coordinates travel as 16-bit halves of one argument; at most 65535");
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

    /// Every worker semaphore of `side`'s channels: the host must set each to 0 before the
    /// program starts (tt-metal: CreateSemaphore(..., 0); emulation: Launcher::init_word). L1 is
    /// never zeroed, and neither the EDM nor the worker can clear it without racing the other.
    std::vector<Worker> worker_semaphores(Side side) const {
        std::vector<Worker> v;
        for (const auto& ch : (side == Side::a ? a_ : b_).channels())
            for (const Worker& w : ch.spec.workers) v.push_back(w);
        return v;
    }

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
    if (region.base % 16 || region.size % 16 || region.reserved % 16)
        throw ConfigError("L1 region base " + std::to_string(region.base) + ", size " + std::to_string(region.size) +
                          " and reserved area " + std::to_string(region.reserved) +
                          " must be multiples of 16 (Ethernet word alignment)");
    if (uint64_t(region.base) + region.size > (uint64_t(1) << 32))
        throw ConfigError("L1 region [" + std::to_string(region.base) + ", +" + std::to_string(region.size) +
                          ") ends beyond the 32-bit L1 address space");
    if (uint64_t(region.reserved) + reserved_bytes > region.base &&
        region.reserved < uint64_t(region.base) + region.size)
        throw ConfigError("the reserved area [" + std::to_string(region.reserved) + ", " +
                          std::to_string(uint64_t(region.reserved) + reserved_bytes) + ") overlaps the channel region [" +
                          std::to_string(region.base) + ", " + std::to_string(uint64_t(region.base) + region.size) +
                          "); it must lie outside it (every program shares it, at the same address)");

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
            if (s.packet_bytes > max_message_bytes)
                throw ConfigError(who + " packet size " + std::to_string(s.packet_bytes) + " exceeds the largest message of " +
                                  std::to_string(max_message_bytes) + " bytes");
            if (s.sharing != Sharing::not_shared && s.sharing != Sharing::round_robin)
                throw ConfigError(who + " has sharing mode " + std::to_string(uint32_t(s.sharing)) +
                                  "; allowed: Sharing::not_shared (0) or Sharing::round_robin (1)");
            for (size_t k = 0; k < s.workers.size(); ++k) {
                const Worker& w = s.workers[k];
                const std::string wn = who + " worker (" + std::to_string(w.x) + "," + std::to_string(w.y) + ")";
                if (w.sem_addr % 4)
                    throw ConfigError(wn + " semaphore address " + std::to_string(w.sem_addr) + " is not 4-byte aligned");
                if (w.x > 0xffff || w.y > 0xffff)
                    throw ConfigError(wn + ": NoC coordinates travel as 16-bit halves of one argument; x and y "
                                      "must be at most 65535");
                for (size_t j = 0; j < k; ++j)
                    if (s.workers[j].x == w.x && s.workers[j].y == w.y)
                        throw ConfigError(wn + " is listed twice on this channel end; each worker core takes part once");
            }
            if (limits.termination == Termination::message_count_reached && s.message_count == 0)
                throw ConfigError(who + " has message count 0; MESSAGE_COUNT_REACHED needs at least 1 message");
        }
        if (x.spec.sharing != y.spec.sharing)
            throw ConfigError(ch_name(c) + ": sharing mode " + std::to_string(uint32_t(x.spec.sharing)) + " on end a and " +
                              std::to_string(uint32_t(y.spec.sharing)) +
                              " on end b; both ends of a channel must use the same sharing mode");
        if (x.spec.buffers != y.spec.buffers || x.spec.packet_bytes != y.spec.packet_bytes ||
            (x.spec.buffer_bytes ? x.spec.buffer_bytes : x.spec.packet_bytes) !=
                (y.spec.buffer_bytes ? y.spec.buffer_bytes : y.spec.packet_bytes))
            throw ConfigError(ch_name(c) + ": buffers/packet/buffer sizes differ between the ends (" +
                              std::to_string(x.spec.buffers) + " x " + std::to_string(x.spec.packet_bytes) + " vs " +
                              std::to_string(y.spec.buffers) + " x " + std::to_string(y.spec.packet_bytes) +
                              "); both ends of a channel share one layout");
        if (x.spec.initial_counter != y.spec.initial_counter)
            throw ConfigError(ch_name(c) + ": initial counter " + std::to_string(x.spec.initial_counter) +
                              " on end a differs from " + std::to_string(y.spec.initial_counter) +
                              " on end b; both ends of a channel must agree on initial_counter");
        if (limits.termination == Termination::message_count_reached && x.spec.message_count != y.spec.message_count)
            throw ConfigError(ch_name(c) + ": message count " + std::to_string(x.spec.message_count) +
                              " on end a differs from " + std::to_string(y.spec.message_count) +
                              " on end b; both ends must move the same number of messages");
    }

    // One semaphore per (worker core, address) on each chip: two channels of one end that name
    // the same worker semaphore would take each other's notifications (a hang or lost message).
    for (const auto* end : {&ca, &cb}) {
        std::vector<std::pair<std::pair<uint32_t, uint32_t>, uint32_t>> seen;
        for (size_t c = 0; c < end->size(); ++c)
            for (const Worker& w : (*end)[c].spec.workers) {
                const auto key = std::make_pair(std::make_pair(w.x, w.y), w.sem_addr);
                for (const auto& k : seen)
                    if (k == key)
                        throw ConfigError(ch_name(c) + " (" + (end == &ca ? "end a" : "end b") + ") worker (" +
                                          std::to_string(w.x) + "," + std::to_string(w.y) + ") semaphore " +
                                          std::to_string(w.sem_addr) +
                                          " is already used by another channel of this end; give each channel its own "
                                          "semaphore address");
                seen.push_back(key);
            }
    }

    LinkPlan plan;
    plan.a_ = a;
    plan.b_ = b;
    // The end whose first channel is a sender leads the handshake (as the legacy EDM does).
    plan.a_is_master_ = ca[0].sender;
    uint64_t at = region.base;
    plan.reserved_addr = region.reserved;
    plan.begin_addr = region.base;
    const uint32_t signal_bytes = detail::round16(4 * limits.max_workers_per_channel);
    for (size_t c = 0; c < ca.size(); ++c) {
        const ChannelSpec& s = ca[c].spec;
        ChannelLayout l{};
        l.edm_sem = uint32_t(at);
        at += 16;
        l.signal_base = uint32_t(at);
        at += signal_bytes;
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
