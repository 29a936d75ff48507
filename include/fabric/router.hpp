// kccl/fabric/router.hpp — the chip fabric's router: one kernel per Ethernet core that
// forwards packets between chips (tt-metal's fabric router, the "fabric EDM").
//
//   template <class H> void router_kernel(H& hal) {
//       kccl::fabric::Router<> r;                  // trivially destructible
//       r.run(hal);                                     // args from host::FabricPlan::router_args
//   }
//
// WHAT IT DOES
//   A router faces one direction (N, S, E or W) of its chip and owns that direction's Ethernet
//   link. It has
//   * sender channels (tx_slots slots each): channel 0 is filled by the chip's worker over the
//     NoC (a connection, worker.hpp); channel 1 + d by the router facing d on the same chip, with
//     packets that entered the chip there and leave here (tt-metal's 1D router: channel 0 for
//     local workers, channel 1 for pass-through; 2D: one per upstream direction). One producer
//     per channel, so a channel's credits are one counter: the producer increments `fill`, the
//     router returns a slot by incrementing the producer's credit semaphore.
//   * one receiver channel (rx_slots slots, tt-metal: 16) for its link's inbound packets, shared
//     by every sender channel of the router at the other end of the link.
//   * a routing table in L1 (RouterLayout::route_table: this chip's mesh and chip, host-written),
//     which a 2D router reads for every packet to check the header's destination, as tt-metal's
//     2D router reads its own (my_mesh_id against the header's dst_start_mesh_id).
//   A 2D router polls the local channel and the channel of each other direction in every loop,
//   fed or not, as tt-metal's 2D router steps its four sender channels; a 1D router the two it has.
//   Main loop (round robin, never blocking): find the packets that have landed and process the
//   head of the receiver channel (execute its NoC command here, forward it to the router of the
//   next direction, or both) — first, so a packet that lands while the router idles is forwarded
//   at once; send one packet of a ready sender channel over the link when the peer's receiver has
//   room; acknowledge what landed (rings); give back sender slots whose packets the peer has freed.
//
// ORDERING: one virtual channel per direction. A route's packets enter one sender channel, leave
//   it in order, cross the link on one Ethernet queue in order, are processed by the receiver in
//   order and forwarded or delivered by one core to one core (contract N1): per source and route,
//   packets arrive in the order they were sent. A NoC multicast write is the exception the
//   contract makes (M1: a multicast is ordered with no other NoC operation of its core), so the
//   delivering router waits for it (noc_write_barrier) before it executes anything else: a
//   multicast has landed at every core of its rectangle before any later command of any route
//   this router delivers (a later increment on the same route is a "data is there" signal).
//
// CREDITS (every word that another core writes was initialised by the host, contract P2, or is
//   cleared by this router before its link handshake, P1)
//   * link: a packet and its 16-byte sync word go into the peer's receiver slot with ONE eth_send
//     (the Ethernet guide's advice: the sync word at the end of the payload, sent in one packet):
//     the router writes the sync word right behind the packet in its sender slot and sends both
//     so that the sync word lands as the receiver slot's last 16 bytes (E3: it lands after every
//     byte before it). The sync word carries the packet's length, so the receiver finds the
//     packet's start (RouterLayout::rx_packet) without reading anything that may not have landed. The
//     peer clears the sync word when it has finished with the slot, then sends its count of freed
//     slots (cumulative) into this router's credit inbox. Free slots = rx_slots - (sent - freed).
//   * first-level acknowledgement (rings only: with bubble flow control, as tt-metal's fabric
//     router, whose EDM asserts "Bubble flow control and first level ack must be set to the same
//     values"): as soon as a packet has landed (its sync word is there), the peer sends its count
//     of landed packets into this router's ack inbox, and the sender slot goes back to its
//     producer (the eth_send source is no longer needed, E1). Without it a packet would hold a
//     sender slot and a receiver slot at once, and a full ring deadlocks even with the bubble
//     rule. tt-metal's rings pay the same: "first-level acknowledgement ... doubles the credit
//     traffic" (tt-metal's CCL bandwidth notes). Lines and meshes without a ring (no bubble) send
//     no ack, as tt-metal's FABRIC_1D: a sender slot goes back to its producer when the peer's
//     completion (the freed-slot count above) says the packet was processed — one credit message
//     per packet instead of two; their channels form no cycle, so holding both slots is safe.
//   * forwarding: the receiver writes the packet into the next router's channel 1 + (its own
//     direction) and increments that channel's fill; the next router gives the slot back by
//     incrementing this router's fwd_credit[next direction].
//
// DEADLOCK RULE (rings): bubble flow control — a packet from the local worker (an injection) is
//   sent only when the peer's receiver has >= 2 free slots; pass-through packets need 1. Injections
//   then never take a ring's last free slot, so the packets already on the ring can always move.
//   The host builder refuses a ring (or torus dimension) without it. Lines and meshes routed
//   dimension by dimension (E/W first, then N/S) have no cycle of channels and need no bubble.
//
// TERMINATION: a route's last packet carries flag_last (the worker's quiesce sends one to every
//   other rank). The host counts how many last packets cross each link; a router ends when it has
//   sent and received that many, every packet it sent was freed by the peer, and every packet it
//   forwarded was given back by the next router. After a route's last packet nothing more comes
//   on that route, so nothing more comes through this router.
//
// WRAP: every counter (sender channels' taken / released and fill, link sent / freed / acked /
//   processed, forwarded / given back, the workers' sent / credit / arrival) starts at the host's
//   FabricSpec::initial_counter (0 unless a test starts just below 2^32) and runs mod 2^32: every
//   test is a difference (common/window.hpp: CreditWindow, reached) or an equality, never `a < b`,
//   and every slot index is kept on its own (wraps at the slot count), never `counter % slots`.
//   The sync word of packet n carries n, ~n and a hash of n and its length, so n = 0 after the wrap is no weaker.
//
// FAULTS: a header without magic or with a wrong check (an uninitialised slot) is a device error
//   naming the router, the channel and the slot; so is a route that leaves the mesh, a 2D packet
//   for another mesh or whose route ends off its destination chip, a packet in a polled channel
//   that no router feeds, and a NoC multicast to an empty rectangle (or on a backend without NoC
//   multicast). The router keeps a status block (header.hpp, st::)
//   in its L1: the host's dump hooks read it to say what a stalled router waits for.
//
// C++17, freestanding, no heap.
#pragma once

#include "header.hpp"

#include <common/window.hpp>
#include <hal/contract.hpp>

#include <stdint.h>

namespace kccl::fabric {

/// Router kernel arguments (host::FabricPlan::router_args writes them).
namespace rargs {
inline constexpr uint32_t magic = 0, chip = 1, dir = 2, layout_base = 3, header_bytes = 4, max_payload = 5,
                          rx_slots = 6, tx_slots = 7, master = 8, reserved = 9, bubble = 10, in_last = 11,
                          out_last = 12, channels = 13, router_xy = 14 /* 4 words */, worker_xy = 18,
                          worker_credit = 19, peer_chip = 20, initial_counter = 21, count = 22;
}
/// Flag in the `channels` argument (above the channel mask): the 1D layout, RouterLayout::sender_positions = 2.
inline constexpr uint32_t channels_packed_1d = 1u << 16;
inline constexpr uint32_t router_args_magic = 0x46524F55u;  // "FROU"
inline constexpr uint32_t no_router = 0xFFFFFFFFu;

/// Handshake words of the fabric routers, in the Ethernet reserved area every kccl Ethernet kernel
/// shares (edm/types.hpp: slave inbox at +0, master inbox at +16, sources at +32 / +48).
inline constexpr uint32_t fabric_hello[4] = {0x6C63636Bu, 0x62616620u, 0x6C6C6568u, 0x3172206Fu};
inline constexpr uint32_t fabric_answer[4] = {0x6C63636Bu, 0x62616620u, 0x77736E61u, 0x31207265u};

/// Compile-time options; derive to change. The mutations are test-only: each must make a test fail.
struct RouterConfig {
    static constexpr uint32_t max_tx_slots = 16;
    static constexpr uint32_t max_rx_slots = 64;
    static constexpr uint32_t idle_iterations_per_context_switch = 4096;
    static constexpr bool mutation_leak_link_credit = false;  ///< the receiver never returns slots to the peer
    static constexpr bool mutation_no_bubble = false;         ///< injections need only 1 free slot on rings
    /// The receiver asks "has the head packet been acknowledged?" with a plain unsigned compare
    /// (acked > processed) instead of the wrap-safe signed difference: stalls at the 2^32 wrap.
    static constexpr bool mutation_unsafe_compare = false;
};

template <class Config = RouterConfig>
class Router {
public:
    template <class H>
    void run(H& hal, uint32_t base = 0) {
        load(hal, base);
        init(hal);
        handshake(hal);
        set_status(hal, st::phase, uint32_t(Phase::running));
        while (!finished(hal)) {
            // The receiver first: a packet that landed while the router was idle is forwarded or
            // delivered before anything else (the hop's latency), then the sender side.
            bool progress = ack_step(hal);
            progress = rx_step(hal) || progress;
            progress = tx_step(hal) || progress;
            progress = ack_send(hal) || progress;  // after rx_step: the ack's Ethernet send is off the forwarding path
            progress = free_step(hal) || progress;
            if (progress) idle_ = 0;
            else idle_once(hal);
        }
        set_status(hal, st::phase, uint32_t(Phase::done));
    }

    uint32_t packets_sent() const { return tx_sent_; }
    uint32_t packets_received() const { return rx_processed_; }

private:
    struct Channel {
        bool present = false;  ///< a producer feeds it (the worker, or the router facing its direction)
        bool polled = false;   ///< the loop reads its fill semaphore (present, or any non-own direction on 2D)
        uint32_t taken = 0, released = 0, idx = 0, rel_idx = 0;
        uint32_t seq[Config::max_tx_slots] = {};
    };

    template <class H>
    void load(H& hal, uint32_t b) {
        if (hal.arg(b + rargs::magic) != router_args_magic) {
            ::kccl::detail::Msg m;
            m.s("fabric router at (").u(hal.core_x()).s(",").u(hal.core_y())
                .s("): its arguments do not start with the router magic; pass host::FabricPlan::router_args");
            die(m);
        }
        chip_ = hal.arg(b + rargs::chip);
        dir_ = hal.arg(b + rargs::dir);
        L_.base = hal.arg(b + rargs::layout_base);
        L_.header_bytes = hal.arg(b + rargs::header_bytes);
        L_.max_payload = hal.arg(b + rargs::max_payload);
        L_.rx_slots = hal.arg(b + rargs::rx_slots);
        L_.tx_slots = hal.arg(b + rargs::tx_slots);
        master_ = hal.arg(b + rargs::master) != 0;
        reserved_ = hal.arg(b + rargs::reserved);
        bubble_ = hal.arg(b + rargs::bubble) != 0 && !Config::mutation_no_bubble;
        first_level_ack_ = hal.arg(b + rargs::bubble) != 0;  // tt-metal: on exactly when bubble flow control is
        in_last_ = hal.arg(b + rargs::in_last);
        out_last_ = hal.arg(b + rargs::out_last);
        const uint32_t mask = hal.arg(b + rargs::channels);
        for (uint32_t d = 0; d < num_dirs; ++d) router_xy_[d] = hal.arg(b + rargs::router_xy + d);
        worker_xy_ = hal.arg(b + rargs::worker_xy);
        worker_credit_ = hal.arg(b + rargs::worker_credit);
        peer_chip_ = hal.arg(b + rargs::peer_chip);
        const uint32_t c0 = hal.arg(b + rargs::initial_counter);  // every counter starts here (WRAP)
        tx_sent_ = rx_processed_ = rx_acked_ = c0;
        for (uint32_t d = 0; d < num_dirs; ++d) fwd_sent_[d] = c0;
        for (uint32_t c = 0; c < max_sender_channels; ++c) ch_[c].taken = ch_[c].released = c0;
        if (L_.tx_slots == 0 || L_.tx_slots > Config::max_tx_slots || L_.rx_slots < 2 ||
            L_.rx_slots > Config::max_rx_slots || L_.header_bytes % 16 || L_.header_bytes < header_base_bytes ||
            L_.header_bytes > header_max_bytes || L_.base % 16 || dir_ >= num_dirs) {
            ::kccl::detail::Msg m;
            where(m, hal).s("bad layout arguments (slots, header size, alignment); use host::build_fabric");
            die(m);
        }
        for (uint32_t c = 0; c < max_sender_channels; ++c) ch_[c].present = (mask >> c) & 1u;
        // 2D: the loop polls the worker's channel and the channel of every other direction, fed
        // or not (tt-metal's 2D router runs a sender-channel step for each of its four sender
        // channels in every loop iteration, whatever routers the chip has); 1D: the present ones.
        const bool two_d = !(mask & channels_packed_1d);
        for (uint32_t c = 0; c < max_sender_channels; ++c) ch_[c].polled = ch_[c].present || (two_d && c != 1 + dir_);
        if (mask & channels_packed_1d) {  // 1D: one pass-through channel, slots at position 1
            L_.sender_positions = 2;
            uint32_t through = 0;
            for (uint32_t c = 1; c < max_sender_channels; ++c) through += ch_[c].present ? 1u : 0u;
            if (through > 1) {
                ::kccl::detail::Msg m;
                where(m, hal).s("a 1D layout (2 sender channels) with more than one pass-through channel; use host::build_fabric");
                die(m);
            }
        }
    }

    template <class H>
    void init(H& hal) {
        set_status(hal, st::magic, status_magic);
        set_status(hal, st::phase, uint32_t(Phase::init));
        for (uint32_t w = st::rx_processed; w < status_words; ++w) set_status(hal, w, 0);
        for (uint32_t i = 0; i < L_.rx_slots; ++i) put4(hal, L_.rx_slot(i) + L_.slot_bytes() - 16, 0, 0, 0, 0);
        put4(hal, L_.credit_inbox(), tx_sent_, 0, 0, 0);  // nothing sent, nothing freed
        put4(hal, L_.ack_inbox(), tx_sent_, 0, 0, 0);
        put4(hal, L_.credit_src(), 0, 0, 0, 0);
        put4(hal, L_.ack_src(), 0, 0, 0, 0);
    }

    template <class H>
    void handshake(H& hal) {
        set_status(hal, st::phase, uint32_t(Phase::handshake));
        const uint32_t slave_inbox = reserved_, master_inbox = reserved_ + 16, src = reserved_ + (master_ ? 32 : 48);
        if (master_) {
            put4(hal, src, fabric_hello[0], fabric_hello[1], fabric_hello[2], fabric_hello[3]);
            hal.eth_send(0, src, slave_inbox, 16);
            while (!holds(hal, master_inbox, fabric_answer)) idle_once(hal);
            put4(hal, master_inbox, 0, 0, 0, 0);
        } else {
            put4(hal, src, fabric_answer[0], fabric_answer[1], fabric_answer[2], fabric_answer[3]);
            while (!holds(hal, slave_inbox, fabric_hello)) idle_once(hal);
            put4(hal, slave_inbox, 0, 0, 0, 0);
            hal.eth_send(0, src, master_inbox, 16);
        }
        idle_ = 0;
    }

    template <class H>
    bool finished(H& hal) {
        if (rx_last_ != in_last_ || tx_last_ != out_last_) return false;
        set_status(hal, st::phase, uint32_t(Phase::draining));
        if (link_freed(hal) != tx_sent_) {
            set_wait(hal, 3, 0, link_freed(hal), tx_sent_);
            return false;
        }
        for (uint32_t c = 0; c < max_sender_channels; ++c)
            if (ch_[c].present && ch_[c].released != ch_[c].taken) return false;
        for (uint32_t d = 0; d < num_dirs; ++d)
            if (fwd_sent_[d] != hal.sem_read(L_.fwd_credit_sem(d))) return false;
        return true;
    }

    // ---- sender side: sender channels -> link ---------------------------------------------------
    template <class H>
    bool tx_step(H& hal) {
        const uint32_t free = L_.rx_slots - (tx_sent_ - link_freed(hal));
        for (uint32_t k = 0; k < max_sender_channels; ++k) {
            const uint32_t c = (rr_ + k) % max_sender_channels;
            Channel& x = ch_[c];
            if (!x.polled || hal.sem_read(L_.fill_sem(c)) == x.taken) continue;
            if (KCCL_UNLIKELY(!x.present)) {  // 2D: a polled channel that no router feeds
                ::kccl::detail::Msg m;
                where(m, hal).s("sender channel ").u(c).s(" (from direction ").s(dir_name(c - 1))
                    .s(") was filled, but this chip has no router facing that direction; use host::build_fabric");
                die(m);
            }
            const uint32_t need = (c == 0 && bubble_) ? 2u : 1u;
            if (free < need) {
                set_wait(hal, 1, c, free, need);
                continue;
            }
            const uint32_t slot = L_.tx_slot(c, x.idx);
            // A worker's header is read whole (checked); a forwarded one only for its kind and length.
            volatile uint32_t* h = words(hal, slot, c == 0 ? L_.header_bytes : 4u * (hw::payload + 1u));
            if (c == 0) {  // a worker's packet: the first router that reads it checks it
                const HeaderFault f = validate_header(h, L_.header_bytes, L_.max_payload);
                if (KCCL_UNLIKELY(f != HeaderFault::none)) header_error(hal, "sender channel 0 (local worker)", x.idx, x.taken, f);
            }
            const uint32_t bytes = (L_.header_bytes + h[hw::payload] + 15u) & ~15u;
            if (kind_last(h[hw::kind])) set_status(hal, st::tx_last, ++tx_last_);
            const uint32_t n = ++tx_sent_;
            // The sync word behind the packet (the slot has 16 bytes of room after the largest
            // one), then packet + sync in one send, ending at the receiver slot's end.
            put4(hal, slot + bytes, sync_field(n, bytes, 0), sync_field(n, bytes, 1), sync_field(n, bytes, 2),
                 sync_field(n, bytes, 3));
            hal.eth_send(0, slot, L_.rx_packet(tx_rx_idx_, bytes), bytes + 16);
            tx_rx_idx_ = tx_rx_idx_ + 1 == L_.rx_slots ? 0 : tx_rx_idx_ + 1;
            x.seq[x.idx] = n;
            x.idx = x.idx + 1 == L_.tx_slots ? 0 : x.idx + 1;
            ++x.taken;
            set_status(hal, st::tx_sent, n);
            set_wait(hal, 0, 0, 0, 0);
            rr_ = (c + 1) % max_sender_channels;
            return true;
        }
        return false;
    }

    /// Gives back sender slots whose packets the peer is done with: on rings those that have landed
    /// in its receiver (first-level acknowledgement: the eth_send source is no longer needed, E1),
    /// elsewhere those it has processed (its freed-slot count).
    template <class H>
    bool free_step(H& hal) {
        set_status(hal, st::tx_freed, link_freed(hal));
        const uint32_t freed = first_level_ack_ ? hal.sem_read(L_.ack_inbox()) : link_freed(hal);
        bool progress = false;
        for (uint32_t c = 0; c < max_sender_channels; ++c) {
            Channel& x = ch_[c];
            uint32_t n = 0;
            while (x.present && x.released != x.taken && reached(freed, x.seq[x.rel_idx])) {
                x.rel_idx = x.rel_idx + 1 == L_.tx_slots ? 0 : x.rel_idx + 1;
                ++x.released;
                ++n;
            }
            if (n == 0) {
                if (x.present && x.taken - x.released == L_.tx_slots) set_wait(hal, 4, c, freed, tx_sent_);  // freed: acked
                continue;
            }
            progress = true;
            if (c == 0) hal.sem_inc(hal.noc_addr(worker_xy_ & 0xFFFFu, worker_xy_ >> 16, worker_credit_), n);
            else {
                const uint32_t p = router_xy_[c - 1];
                hal.sem_inc(hal.noc_addr(p & 0xFFFFu, p >> 16, L_.fwd_credit_sem(dir_)), n);
            }
        }
        return progress;
    }

    // ---- receiver side: link -> this chip or the next router ---------------------------------------
    /// Finds every packet that has landed in the receiver channel; on rings ack_send acknowledges them
    /// (the first-level ack: tt-metal's rings pay it as doubled credit traffic), so the peer can reuse
    /// its sender slots. The loop sends the ack after rx_step, so a packet that can be forwarded
    /// or delivered at once is, before the ack's Ethernet send (one fewer send on every hop's path).
    template <class H>
    bool ack_step(H& hal) {
        uint32_t acked = rx_acked_;
        while (CreditWindow{L_.rx_slots}.has_space(acked, rx_processed_)) {
            const uint32_t n = acked + 1;
            const uint32_t sync = L_.rx_sync(ack_idx_);
            if (hal.sem_read(sync) != n) break;
            const uint32_t bytes = hal.sem_read(sync + 4);  // the other words check it
            if (bytes < L_.header_bytes || bytes > L_.slot_bytes() - 16u || bytes % 16u) break;
            if (hal.sem_read(sync + 8) != sync_field(n, bytes, 2) || hal.sem_read(sync + 12) != sync_field(n, bytes, 3)) break;
            rx_bytes_[ack_idx_] = bytes;
            acked = n;
            ack_idx_ = ack_idx_ + 1 == L_.rx_slots ? 0 : ack_idx_ + 1;
            if (rx_acked_ == rx_processed_) break;  // the receiver waits for this one: process it first
        }
        if (acked == rx_acked_) return false;
        rx_acked_ = acked;
        return true;
    }
    template <class H>
    bool ack_send(H& hal) {
        if (!first_level_ack_ || ack_sent_ == rx_acked_) return false;  // lines: no first-level ack
        ack_sent_ = rx_acked_;
        if (!Config::mutation_leak_link_credit) {
            put4(hal, L_.ack_src(), ack_sent_, sync_magic, ~ack_sent_, 0);
            hal.eth_send(1, L_.ack_src(), L_.ack_inbox(), 16);
        }
        return true;
    }

    template <class H>
    bool rx_step(H& hal) {
        const uint32_t n = rx_processed_ + 1;
        const uint32_t bytes = rx_bytes_[rx_idx_];  // header + payload, rounded to 16 (the sync word's length)
        const uint32_t slot = L_.rx_packet(rx_idx_, bytes);
        const uint32_t sync = L_.rx_sync(rx_idx_);
        if (Config::mutation_unsafe_compare ? !(rx_acked_ > rx_processed_) : !reached(rx_acked_, n))
            return false;  // not acknowledged yet: not here
        volatile uint32_t* h = words(hal, slot, L_.header_bytes);
        if (!rx_checked_) {
            const HeaderFault f = validate_header(h, L_.header_bytes, L_.max_payload);
            if (KCCL_UNLIKELY(f != HeaderFault::none)) header_error(hal, "receiver channel", rx_idx_, rx_processed_, f);
            rx_checked_ = true;
            // A 2D packet's hop-command decode and full NoC write setup (once per packet, however
            // often forwarding has to wait for credits): the timing model's cost, nothing on hardware.
            if (kind_routing(h[hw::kind]) == uint32_t(Routing::path_2d)) kccl::hal::note_work(hal, kccl::hal::Work::route_2d_hop);
        }
        // Decide what to do, without changing the header yet (forwarding may have to wait).
        const uint32_t routing = kind_routing(h[hw::kind]);
        uint32_t route = h[hw::route];
        bool deliver = false, forward = false;
        uint32_t to = opposite(dir_);
        volatile uint8_t* cmds = reinterpret_cast<volatile uint8_t*>(h + hw::words);
        if (routing == uint32_t(Routing::unicast_1d)) {
            if (KCCL_UNLIKELY(route == 0)) route_error(hal, h, "a 1D unicast packet with 0 hops left");
            --route;
            deliver = route == 0;
            forward = !deliver;
        } else if (routing == uint32_t(Routing::multicast_1d)) {
            uint32_t start = route & 0xFFFFu, range = route >> 16;
            if (KCCL_UNLIKELY(start == 0 || range == 0)) route_error(hal, h, "a 1D multicast packet with start or range 0");
            if (start > 1) {
                --start;
                forward = true;
            } else {
                deliver = true;
                --range;
                forward = range > 0;
            }
            route = start | (range << 16);
        } else {
            const uint32_t i = route & 0xFFFFu, cnt = route >> 16;
            if (KCCL_UNLIKELY(i >= cnt)) route_error(hal, h, "a 2D packet past its last route command");
            if (KCCL_UNLIKELY(i < route_dest_bytes)) route_error(hal, h, "a 2D route index inside the destination word");
            // The routing table in L1, read for every packet as tt-metal's 2D router reads its own
            // (its mesh, compared with the header's destination mesh).
            volatile uint32_t* table = words(hal, L_.route_table(), 8u);
            const uint32_t dest = h[hw::dest];
            if (KCCL_UNLIKELY((dest >> 16) != table[0]))
                route_error(hal, h, "a 2D packet for another mesh (this fabric is one mesh; routes between meshes are not supported)");
            const uint8_t c = cmds[i];
            deliver = (c & cmd_deliver) != 0;
            forward = (c & cmd_forward) != 0;
            to = c & 3u;
            if (KCCL_UNLIKELY(!deliver && !forward)) route_error(hal, h, "a 2D route command that neither delivers nor forwards");
            if (KCCL_UNLIKELY(deliver && !forward && (dest & 0xFFFFu) != table[1]))
                route_error(hal, h, "a 2D route that ends on another chip than the header's destination");
            route = (i + 1) | (cnt << 16);
        }
        uint32_t target = 0;
        if (forward) {
            if (KCCL_UNLIKELY(to == dir_ || router_xy_[to] == no_router)) route_error(hal, h, "route beyond the mesh (no router in its next direction)", to);
            target = router_xy_[to];
            if (CreditWindow{L_.tx_slots}.full(fwd_sent_[to], hal.sem_read(L_.fwd_credit_sem(to)))) {
                set_wait(hal, 2, to, fwd_sent_[to], L_.tx_slots);
                return false;
            }
        }
        if (KCCL_UNLIKELY(((L_.header_bytes + h[hw::payload] + 15u) & ~15u) != bytes))
            route_error(hal, h, "a packet whose header's payload length differs from the length its sync word carries");
        if (deliver) execute(hal, h, slot + L_.header_bytes);
        if (forward) {
            h[hw::route] = route;
            seal_header(h);
            const uint32_t tx = target & 0xFFFFu, ty = target >> 16;
            const uint32_t c = 1 + dir_;
            kccl::hal::l1_store_fence(hal, slot, L_.header_bytes);  // the header stores above (N7)
            hal.noc_write(slot, hal.noc_addr(tx, ty, L_.tx_slot(c, fwd_idx_[to])), bytes);
            hal.noc_writes_flushed();  // the packet before its announcement (contract N1, strict profile)
            hal.sem_inc(hal.noc_addr(tx, ty, L_.fill_sem(c)), 1);
            ++fwd_sent_[to];
            fwd_idx_[to] = fwd_idx_[to] + 1 == L_.tx_slots ? 0 : fwd_idx_[to] + 1;
        }
        if (kind_last(h[hw::kind])) set_status(hal, st::rx_last, ++rx_last_);
        hal.noc_writes_flushed();  // the slot has been read out (N3): it may be refilled
        put4(hal, sync, 0, 0, 0, 0);
        rx_checked_ = false;
        rx_idx_ = rx_idx_ + 1 == L_.rx_slots ? 0 : rx_idx_ + 1;
        rx_processed_ = n;
        set_status(hal, st::rx_processed, n);
        set_wait(hal, 0, 0, 0, 0);
        if (!Config::mutation_leak_link_credit) {
            put4(hal, L_.credit_src(), n, sync_magic, ~n, 0);
            hal.eth_send(1, L_.credit_src(), L_.credit_inbox(), 16);
        }
        return true;
    }

    /// Executes the packet's NoC command on this chip.
    template <class H>
    void execute(H& hal, volatile uint32_t* h, uint32_t payload_l1) {
        const uint32_t cmd = kind_cmd(h[hw::kind]), n = h[hw::payload];
        const uint32_t dx = h[hw::dst_xy] & 0xFFFFu, dy = h[hw::dst_xy] >> 16;
        const uint32_t sx = h[hw::sem_xy] & 0xFFFFu, sy = h[hw::sem_xy] >> 16;
        switch (NocCmd(cmd)) {
            case NocCmd::unicast_write:
                if (n) hal.noc_write(payload_l1, hal.noc_addr(dx, dy, h[hw::dst_l1]), n);
                break;
            case NocCmd::inline_write: hal.noc_inline_write32(hal.noc_addr(dx, dy, h[hw::dst_l1]), h[hw::value]); break;
            case NocCmd::atomic_inc: hal.sem_inc(hal.noc_addr(sx, sy, h[hw::sem_l1]), h[hw::value]); break;
            case NocCmd::fused_write_inc:
                if (n) hal.noc_write(payload_l1, hal.noc_addr(dx, dy, h[hw::dst_l1]), n);
                if (h[hw::sem_xy] != h[hw::dst_xy]) hal.noc_write_barrier();  // N1 orders only one destination core
                else hal.noc_writes_flushed();  // same core: ordered across a flush (N1, strict profile)
                hal.sem_inc(hal.noc_addr(sx, sy, h[hw::sem_l1]), h[hw::value]);
                break;
            case NocCmd::scatter_write: {
                const uint32_t k = h[hw::scatter2n] >> 16;
                const uint32_t size[3] = {h[hw::scatter01] & 0xFFFFu, h[hw::scatter01] >> 16, h[hw::scatter2n] & 0xFFFFu};
                const uint32_t addr[4] = {h[hw::dst_l1], h[hw::sem_xy], h[hw::sem_l1], h[hw::value]};
                if (KCCL_UNLIKELY(k == 0 || k > max_scatter_chunks)) route_error(hal, h, "a scatter write with 0 or more than 4 chunks");
                uint32_t off = 0;
                for (uint32_t i = 0; i < k; ++i) {
                    const uint32_t len = i + 1 == k ? n - off : size[i];
                    if (KCCL_UNLIKELY(off + len > n)) route_error(hal, h, "scatter chunks longer than the payload");
                    if (len) hal.noc_write(payload_l1 + off, hal.noc_addr(dx, dy, addr[i]), len);
                    off += len;
                }
                break;
            }
            case NocCmd::multicast_write: {
                const hal::NocRect r = mcast_rect_of(h);  // validate_header: not empty
                if constexpr (hal::has_multicast_v<H>) {
                    if (n) hal.noc_write_mcast(payload_l1, r, h[hw::dst_l1], n, r.cores(), false);
                    hal.noc_write_barrier();  // landed everywhere before the route's next command (M1)
                } else {
                    route_error(hal, h, "a NoC multicast write on a backend without NoC multicast (hal::has_multicast_v)");
                }
                break;
            }
        }
    }

    // ---- helpers ---------------------------------------------------------------------------------
    template <class H>
    uint32_t link_freed(H& hal) { return hal.sem_read(L_.credit_inbox()); }
    template <class H>
    static volatile uint32_t* words(H& hal, uint32_t l1, uint32_t bytes = 16) {
        return reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(l1, bytes));
    }
    template <class H>
    static void put4(H& hal, uint32_t l1, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
        volatile uint32_t* w = words(hal, l1);
        w[0] = a;
        w[1] = b;
        w[2] = c;
        w[3] = d;
    }
    template <class H>
    static bool holds(H& hal, uint32_t l1, const uint32_t* magic) {
        for (uint32_t f = 0; f < 4; ++f)
            if (hal.sem_read(l1 + 4 * f) != magic[f]) return false;
        return true;
    }
    template <class H>
    void set_status(H& hal, uint32_t w, uint32_t v) { words(hal, L_.status() + 4u * w, 4u)[0] = v; }  // one store
    template <class H>
    void set_wait(H& hal, uint32_t kind, uint32_t c, uint32_t a, uint32_t b) {
        static_assert(st::wait_channel == st::wait_kind + 1 && st::wait_a == st::wait_kind + 2 && st::wait_b == st::wait_kind + 3,
                      "set_wait stores the four wait words of the status block as one range.");
        volatile uint32_t* s = words(hal, L_.status() + 4u * st::wait_kind, 16u);  // the four stores it makes
        s[0] = kind;
        s[1] = c;
        s[2] = a;
        s[3] = b;
    }
    template <class H>
    void idle_once(H& hal) {
        hal.idle();
        if (++idle_ >= Config::idle_iterations_per_context_switch) {
            hal.context_switch();
            idle_ = 0;
        }
    }
    template <class H>
    ::kccl::detail::Msg& where(::kccl::detail::Msg& m, H& hal) const {
        return m.s("fabric router chip ").u(chip_).s(" (").u(hal.core_x()).s(",").u(hal.core_y()).s(") facing ")
            .s(dir_name(dir_)).s(" (link to chip ").u(peer_chip_).s("): ");
    }
    template <class H>
    [[noreturn]] KCCL_COLD void header_error(H& hal, const char* channel, uint32_t slot, uint32_t packet, HeaderFault f) const {
        ::kccl::detail::Msg m;
        where(m, hal).s(channel).s(" slot ").u(slot).s(", packet ").u(packet).s(": invalid header: ").s(fault_text(f));
        die(m);
    }
    template <class H>
    [[noreturn]] KCCL_COLD void route_error(H& hal, volatile uint32_t* h, const char* what, uint32_t to = no_router) const {
        ::kccl::detail::Msg m;
        where(m, hal).s(what);
        if (to != no_router) m.s(" (direction ").s(dir_name(to)).s(")");
        m.s("; packet from chip ").u(h[hw::source] & 0xFFu).s(" #").u(h[hw::source] >> 8);
        die(m);
    }
    [[noreturn]] static void die(const ::kccl::detail::Msg& m) { ::kccl::detail::assert_fail("fabric", m.buf, __FILE__, __LINE__); }

    RouterLayout L_{};
    uint32_t chip_ = 0, dir_ = 0, reserved_ = 0, in_last_ = 0, out_last_ = 0, worker_xy_ = 0, worker_credit_ = 0,
             peer_chip_ = 0;
    bool master_ = false, bubble_ = false, first_level_ack_ = false, rx_checked_ = false;
    uint32_t router_xy_[num_dirs] = {};
    Channel ch_[max_sender_channels];
    uint32_t rr_ = 0, tx_sent_ = 0, tx_rx_idx_ = 0, tx_last_ = 0;
    uint32_t rx_idx_ = 0, rx_processed_ = 0, rx_last_ = 0, rx_acked_ = 0, ack_sent_ = 0, ack_idx_ = 0;
    uint32_t rx_bytes_[Config::max_rx_slots] = {};  ///< length of each landed packet, from its sync word
    uint32_t fwd_sent_[num_dirs] = {}, fwd_idx_[num_dirs] = {};
    uint32_t idle_ = 0;
};

}  // namespace kccl::fabric
