// kccl/collectives/link_fabric.hpp — the chip fabric's model of the link concept (collectives/link.hpp):
// a collective link over tt-metal's routed chip fabric (fabric/worker.hpp) in which every rank of the
// group is one direction away.
//
//   // the collective link
//   kccl::fabric::FabricLink<H> link(hal, arg_base);    // args from host::FabricPlan::worker_args
//   kccl::coll::execute_any<Red>(link, params, kccl::coll::AllPairsDirs{rank, ranks});
//   link.quiesce();
//
// LINK (every rank reachable): direction d of rank r is peer q = (d < r ? d : d + 1), as in an
// all_pairs group (coll::AllPairsDirs), so trees, recursive doubling, Rabenseifner, pairwise and
// direct methods run on any line, ring or mesh of chips. Per peer q, the worker keeps `slots`
// receive slots in its own L1 (16-byte message header: length, sequence, magic; then the message).
//   send(d, src, n)  waits for a credit of peer q (every message slot of q for us is full until q
//                    releases one), then sends ONE packet to q's slot: NoC command fused write +
//                    increment (payload into the slot, then q's arrival counter for us).
//   recv(d)          waits until the arrival counter passes what was viewed; the view is the slot
//                    itself (zero copy). Up to `slots` views of one direction may be held.
//   release(v)       frees the slot and returns a credit to q: one atomic-increment packet.
//   multicast_write(d, src, n, rect, dst)  one NoC multicast write packet to q's chip: n bytes to
//                    dst of every Tensix core of rect there (in order with the messages to q).
//   quiesce()        waits for every credit (all sent messages were released), sends a route's
//                    LAST packet (an increment of q's done counter) to every peer, waits for the
//                    last packets of every peer (so nothing more will land in this core), then for
//                    every router slot (close).
//
// C++17, freestanding, no heap.
#pragma once

#include "link.hpp"

#include <common/window.hpp>
#include <fabric/header.hpp>
#include <fabric/router.hpp>
#include <fabric/worker.hpp>
#include <hal/contract.hpp>

#include <stdint.h>
#include <string.h>

namespace kccl::fabric {

struct FabricLinkConfig {
    static constexpr uint32_t max_ranks = max_link_ranks;
    static constexpr uint32_t max_held_views = 4;
    static constexpr bool mutation_skip_header = false;   ///< the packet's header is never written (uninitialised)
    static constexpr bool mutation_leak_credit = false;   ///< release never returns the credit to the sender
};

template <class H, class Config = FabricLinkConfig>
class FabricLink {
public:
    using hal_type = H;
    static constexpr uint32_t max_held_views = Config::max_held_views;

    FabricLink(H& hal, uint32_t b) : hal_(hal) {
        if (hal.arg(b + wargs::magic) != worker_args_magic) {
            ::kccl::detail::Msg m;
            m.s("fabric link at (").u(hal.core_x()).s(",").u(hal.core_y())
                .s("): the link arguments do not start with the fabric magic; pass host::FabricPlan::worker_args");
            die(m);
        }
        rank_ = hal.arg(b + wargs::rank);
        ranks_ = hal.arg(b + wargs::ranks);
        chip_ = hal.arg(b + wargs::chip);
        W_.base = hal.arg(b + wargs::worker_base);
        W_.ranks = ranks_;
        W_.slots = hal.arg(b + wargs::slots);
        W_.max_message = hal.arg(b + wargs::max_message);
        W_.header_bytes = hal.arg(b + wargs::header_bytes);
        if (ranks_ == 0 || ranks_ > Config::max_ranks || rank_ >= ranks_ || W_.slots == 0 || W_.header_bytes % 16 ||
            W_.header_bytes < header_base_bytes || W_.header_bytes > header_max_bytes) {
            ::kccl::detail::Msg m;
            where(m, "init", 0).s(": bad arguments (ranks ").u(ranks_).s(", at most ").u(Config::max_ranks)
                .s("; slots ").u(W_.slots).s(", header ").u(W_.header_bytes).s(" B); use host::build_fabric");
            die(m);
        }
        RouterLayout R;
        R.base = hal.arg(b + wargs::router_base);
        R.header_bytes = W_.header_bytes;
        R.max_payload = hal.arg(b + wargs::router_max_payload);
        R.rx_slots = hal.arg(b + wargs::router_rx_slots);
        R.tx_slots = hal.arg(b + wargs::router_tx_slots);
        for (uint32_t d = 0; d < num_dirs; ++d) {
            Connection& c = conn_[d];
            c.dir = d;
            c.router_xy = hal.arg(b + wargs::router_xy + d);
            c.slot_base = R.tx_slot(0, 0);
            c.slots = R.tx_slots;
            c.slot_bytes = R.slot_bytes();
            c.fill_sem = R.fill_sem(0);
            c.credit_sem = W_.router_credit(d);
            c.status = W_.status();
        }
        const uint32_t c0 = hal.arg(b + wargs::initial_counter);  // every counter starts here (router.hpp, WRAP)
        c0_ = c0;
        const uint32_t lo = hal.arg(b + wargs::tensix_lo), hi = hal.arg(b + wargs::tensix_hi);
        tensix_ = hal::NocRect{lo & 0xFFFFu, lo >> 16, hi & 0xFFFFu, hi >> 16};
        for (uint32_t d = 0; d < num_dirs; ++d) conn_[d].sent = c0;
        const uint32_t stride = hal.arg(b + wargs::peer_stride);
        for (uint32_t q = 0; q < ranks_; ++q) {
            const uint32_t a = b + wargs::first_peer + q * stride;
            P& p = peer_[q];
            p.xy = hal.arg(a + wargs::p_xy);
            p.dir = hal.arg(a + wargs::p_dir);
            p.routing = hal.arg(a + wargs::p_routing);
            p.route = hal.arg(a + wargs::p_route);
            p.cmd_arg = a + wargs::p_cmds;
            p.sent = p.viewed = p.consumed = c0;
        }
        volatile uint32_t* s = status();
        s[wstatus::magic] = worker_status_magic;
        s[wstatus::kind] = wstatus::running;
        for (uint32_t d = 0; d < num_dirs; ++d)
            if (conn_[d].present()) conn_[d].open(hal);
    }
    FabricLink(const FabricLink&) = delete;
    FabricLink& operator=(const FabricLink&) = delete;

    H& hal() { return hal_; }
    uint32_t rank() const { return rank_; }
    uint32_t ranks() const { return ranks_; }
    uint32_t directions() const { return ranks_ > 0 ? ranks_ - 1 : 0; }
    uint32_t peer(uint32_t d) const { return d < rank_ ? d : d + 1; }
    bool can_send(uint32_t d) const { return d < directions(); }
    bool can_recv(uint32_t d) const { return d < directions(); }
    uint32_t max_message_bytes() const { return W_.max_message; }
    uint32_t slots(uint32_t d) const { return can_send(d) ? W_.slots : 0; }
    /// The route to rank q from the arguments: first direction, routing kind, route word.
    uint32_t route_dir(uint32_t q) const { return peer_[q].dir; }
    /// The worker core (x | y << 16) of rank q.
    uint32_t peer_xy(uint32_t q) const { return peer_[q].xy; }
    /// This worker's connection to the router facing `dir` (the raw packet API).
    Connection& connection(uint32_t dir) { return conn_[dir & 3u]; }

    void send(uint32_t d, uint32_t src, uint32_t n) {
        const uint32_t q = check_send(d, n, "send");
        if (!credit_free(q)) {
            note(wstatus::peer_credit, q, peer_[q].sent, W_.slots);
            while (!credit_free(q)) hal_.idle();
            note(wstatus::running, 0, 0, 0);
        }
        send_message(q, src, n);
    }
    bool try_send(uint32_t d, uint32_t src, uint32_t n) {
        const uint32_t q = check_send(d, n, "try_send");
        if (!credit_free(q) || !conn_[peer_[q].dir].slot_free(hal_)) return false;
        send_message(q, src, n);
        return true;
    }

    coll::View recv(uint32_t d) {
        const uint32_t q = check_recv(d, "recv");
        if (!arrived(q)) {
            note(wstatus::arrival, q, peer_[q].viewed + 1, 0);
            while (!arrived(q)) hal_.idle();
            note(wstatus::running, 0, 0, 0);
        }
        return take(q, d);
    }
    bool try_recv(uint32_t d, coll::View& out) {
        const uint32_t q = check_recv(d, "try_recv");
        if (!arrived(q)) return false;
        out = take(q, d);
        return true;
    }
    void release(const coll::View& v) {
        const uint32_t q = v.dir < directions() ? peer(v.dir) : 0;
        if (KCCL_UNLIKELY(v.dir >= directions() || peer_[q].viewed == peer_[q].consumed || v.seq != peer_[q].consumed)) {
            ::kccl::detail::Msg m;
            where(m, "release", v.dir).s(": view of message ").u(v.seq).s(" is not the oldest held (");
            if (v.dir < directions() && peer_[q].viewed != peer_[q].consumed) m.s("oldest: ").u(peer_[q].consumed);
            else m.s("none is held");
            m.s("); release views in receive order, once each");
            die(m);
        }
        ++peer_[q].consumed;
        peer_[q].rel_idx = peer_[q].rel_idx + 1 == W_.slots ? 0 : peer_[q].rel_idx + 1;
        if (!Config::mutation_leak_credit) control(q, NocCmd::atomic_inc, W_.credit(rank_), false);
    }
    uint32_t recv_into(uint32_t d, uint32_t dst_l1, uint32_t capacity) {
        const coll::View v = recv(d);
        if (KCCL_UNLIKELY(v.bytes > capacity)) {
            ::kccl::detail::Msg m;
            where(m, "recv_into", d).s(": message ").u(v.seq).s(" has ").u(v.bytes).s(" bytes; the destination holds ")
                .u(capacity).s(" (allowed: bytes <= capacity)");
            die(m);
        }
        if (v.bytes && dst_l1 != v.l1) {  // the core's NoC DMA, as EDM and IPCQ links copy (32 B a cycle, not RISC-V loads and stores;
                                          // no store, so no N7 fence: the barrier lands it)
            hal_.noc_write(v.l1, hal_.noc_addr(hal_.core_x(), hal_.core_y(), dst_l1), v.bytes);
            hal_.noc_write_barrier();
        }
        release(v);
        return v.bytes;
    }

    void quiesce() {
        for (uint32_t q = 0; q < ranks_; ++q)
            if (q != rank_ && peer_[q].viewed != peer_[q].consumed) {
                ::kccl::detail::Msg m;
                where(m, "quiesce", q < rank_ ? q : q - 1).s(": message ").u(peer_[q].consumed).s(" is still held; release it first");
                die(m);
            }
        for (uint32_t q = 0; q < ranks_; ++q) {  // every message sent was released by its receiver
            if (q == rank_ || hal_.sem_read(W_.credit(q)) == peer_[q].sent) continue;
            note(wstatus::peer_credit, q, peer_[q].sent, W_.slots);
            while (hal_.sem_read(W_.credit(q)) != peer_[q].sent) hal_.idle();
        }
        for (uint32_t q = 0; q < ranks_; ++q)
            if (q != rank_) control(q, NocCmd::atomic_inc, W_.done(), true);  // each route's last packet
        if (hal_.sem_read(W_.done()) - c0_ != ranks_ - 1) {
            note(wstatus::last_packets, ranks_ - 1, 0, 0);
            while (hal_.sem_read(W_.done()) - c0_ != ranks_ - 1) hal_.idle();
        }
        for (uint32_t d = 0; d < num_dirs; ++d)
            if (conn_[d].present()) conn_[d].close(hal_);
        hal_.noc_write_barrier();
        note(wstatus::finished, 0, 0, 0);
    }

    /// NoC multicast write on the chip of the peer of direction d: `n` bytes from src_l1 to dst_l1
    /// of every core of `rect` (Tensix cores of that chip; at most max_message_bytes). One packet on
    /// the route to that peer (so in order with the messages sent to it: a later send lands after
    /// the multicast has landed everywhere, router.hpp ORDERING). src may be reused on return. The
    /// caller owns dst_l1 on those cores: the fabric takes no credit for it.
    void multicast_write(uint32_t d, uint32_t src_l1, uint32_t n, hal::NocRect rect, uint32_t dst_l1) {
        const uint32_t q = check_send(d, n, "multicast_write");
        if (KCCL_UNLIKELY(rect.cores() == 0 || !tensix_.contains(rect.x0, rect.y0) || !tensix_.contains(rect.x1, rect.y1))) {
            ::kccl::detail::Msg m;
            where(m, "multicast_write", d).s(": rectangle (").u(rect.x0).s(",").u(rect.y0).s(")..(").u(rect.x1).s(",")
                .u(rect.y1).s(") is ").s(rect.cores() == 0 ? "empty or inverted" : "not inside the chip's Tensix cores")
                .s(" (allowed: x0 <= x1, y0 <= y1, within (").u(tensix_.x0).s(",").u(tensix_.y0).s(")..(").u(tensix_.x1)
                .s(",").u(tensix_.y1).s("); NoC multicast reaches only Tensix cores)");
            die(m);
        }
        P& p = peer_[q];
        Connection& c = conn_[p.dir];
        hal_.noc_writes_flushed();  // the staging area of the previous packet was read out (N3)
        const uint32_t st = W_.stage(0);
        header(st, q, NocCmd::multicast_write, n, dst_l1, 0, false);
        volatile uint32_t* h = reinterpret_cast<volatile uint32_t*>(hal_.l1_ptr(st, W_.header_bytes));
        if (!Config::mutation_skip_header) {
            h[hw::dst_xy] = xy(rect.x0, rect.y0);
            h[hw::sem_xy] = xy(rect.x1, rect.y1);
            seal_header(h);
        }
        c.reserve(hal_);
        c.write(hal_, st, W_.header_bytes, src_l1, n);
        hal_.noc_writes_flushed();  // src may be reused on return
    }

    /// Messages sent to / received from the peer of direction d (diagnostics, tests).
    uint32_t sent(uint32_t d) const { return d < directions() ? peer_[peer(d)].sent : 0; }
    uint32_t received(uint32_t d) const { return d < directions() ? peer_[peer(d)].viewed : 0; }

private:
    struct P {
        uint32_t xy = 0, dir = no_router, routing = 0, route = 0, cmd_arg = 0;
        uint32_t sent = 0, tx_idx = 0, viewed = 0, view_idx = 0, consumed = 0, rel_idx = 0, packets = 0;
    };

    volatile uint32_t* status() { return reinterpret_cast<volatile uint32_t*>(hal_.l1_ptr(W_.status(), status_bytes)); }
    void note(uint32_t kind, uint32_t a, uint32_t b, uint32_t c) {
        volatile uint32_t* s = status();
        s[wstatus::kind] = kind;
        s[wstatus::a] = a;
        s[wstatus::b] = b;
        s[wstatus::c] = c;
    }
    bool credit_free(uint32_t q) { return CreditWindow{W_.slots}.has_space(peer_[q].sent, hal_.sem_read(W_.credit(q))); }
    bool arrived(uint32_t q) {
        return hal_.sem_read(W_.arrival(q)) != peer_[q].viewed;
    }

    /// Writes the header of a packet to peer q into staging area `stage` (route from the args).
    void header(uint32_t stage, uint32_t q, NocCmd cmd, uint32_t payload, uint32_t dst_l1, uint32_t sem_l1, bool last) {
        P& p = peer_[q];
        volatile uint32_t* h = reinterpret_cast<volatile uint32_t*>(hal_.l1_ptr(stage, W_.header_bytes));
        if (Config::mutation_skip_header) return;
        HeaderFields f;
        f.cmd = cmd;
        f.routing = Routing(p.routing);
        f.payload = payload;
        f.route = p.route;
        f.dst_xy = p.xy;
        f.dst_l1 = dst_l1;
        f.sem_xy = p.xy;
        f.sem_l1 = sem_l1;
        f.source = (chip_ & 0xFFu) | (++p.packets << 8);
        f.last = last;
        const uint32_t n = p.routing == uint32_t(Routing::path_2d) ? (p.route >> 16) : 0u;
        write_header(h, f, n, [&](uint32_t i) { return uint8_t(hal_.arg(p.cmd_arg + i / 4) >> (8 * (i % 4))); });
    }

    void send_message(uint32_t q, uint32_t src, uint32_t n) {
        P& p = peer_[q];
        Connection& c = conn_[p.dir];
        hal_.noc_writes_flushed();  // the staging area of the previous packet was read out (N3)
        const uint32_t st = W_.stage(0);
        const uint32_t dst = W_.rx_slot(rank_, p.tx_idx);
        header(st, q, NocCmd::fused_write_inc, 16 + n, dst, W_.arrival(rank_), false);
        volatile uint32_t* mh = reinterpret_cast<volatile uint32_t*>(hal_.l1_ptr(st + W_.header_bytes, 16));
        mh[0] = n;
        mh[1] = p.sent;
        mh[2] = message_magic;
        mh[3] = rank_;
        c.reserve(hal_);
        c.write(hal_, st, W_.header_bytes + 16, src, n);
        hal_.noc_writes_flushed();  // src may be reused on return
        p.tx_idx = p.tx_idx + 1 == W_.slots ? 0 : p.tx_idx + 1;
        ++p.sent;
    }
    /// A header-only packet to peer q: an increment of its semaphore `sem_l1`.
    void control(uint32_t q, NocCmd cmd, uint32_t sem_l1, bool last) {
        Connection& c = conn_[peer_[q].dir];
        hal_.noc_writes_flushed();
        const uint32_t st = W_.stage(1);
        header(st, q, cmd, 0, 0, sem_l1, last);
        c.reserve(hal_);
        c.write(hal_, st, W_.header_bytes, 0, 0);
    }

    coll::View take(uint32_t q, uint32_t d) {
        P& p = peer_[q];
        const uint32_t slot = W_.rx_slot(q, p.view_idx);
        const volatile uint32_t* mh = reinterpret_cast<const volatile uint32_t*>(hal_.l1_ptr(slot, 16));
        const uint32_t n = mh[0];
        if (KCCL_UNLIKELY(mh[2] != message_magic || mh[1] != p.viewed || mh[3] != q || n > W_.max_message)) {
            ::kccl::detail::Msg m;
            where(m, "recv", d).s(": message ").u(p.viewed).s(" from rank ").u(q).s(" has a bad message header (length ")
                .u(n).s(", sequence ").u(mh[1]).s(", magic ").hex(mh[2]).s(")");
            die(m);
        }
        p.view_idx = p.view_idx + 1 == W_.slots ? 0 : p.view_idx + 1;
        return coll::View{slot + 16, n, d, p.viewed++};
    }

    uint32_t check_send(uint32_t d, uint32_t n, const char* op) {
        if (KCCL_UNLIKELY(d >= directions() || n > W_.max_message)) {
            ::kccl::detail::Msg m;
            where(m, op, d);
            if (d >= directions()) m.s(": no such direction (directions: ").u(directions()).s(")");
            else m.s(": message of ").u(n).s(" bytes; at most ").u(W_.max_message).s(" (max_message_bytes)");
            die(m);
        }
        const uint32_t q = peer(d);
        if (KCCL_UNLIKELY(peer_[q].dir >= num_dirs || !conn_[peer_[q].dir].present())) {
            ::kccl::detail::Msg m;
            where(m, op, d).s(": no route to rank ").u(q).s(" (no router facing its first hop)");
            die(m);
        }
        return q;
    }
    uint32_t check_recv(uint32_t d, const char* op) {
        if (KCCL_UNLIKELY(d >= directions())) {
            ::kccl::detail::Msg m;
            where(m, op, d).s(": no such direction (directions: ").u(directions()).s(")");
            die(m);
        }
        const uint32_t q = peer(d);
        if (KCCL_UNLIKELY(peer_[q].viewed - peer_[q].consumed >= Config::max_held_views)) {
            ::kccl::detail::Msg m;
            where(m, op, d).s(": ").u(Config::max_held_views).s(" views are held (max_held_views); release one first");
            die(m);
        }
        return q;
    }
    ::kccl::detail::Msg& where(::kccl::detail::Msg& m, const char* op, uint32_t d) const {
        return m.s("fabric link: rank ").u(rank_).s(" (chip ").u(chip_).s("): ").s(op).s(" on direction ").u(d);
    }
    [[noreturn]] static void die(const ::kccl::detail::Msg& m) { ::kccl::detail::assert_fail("fabric", m.buf, __FILE__, __LINE__); }

    H& hal_;
    uint32_t rank_ = 0, ranks_ = 0, chip_ = 0, c0_ = 0;
    hal::NocRect tensix_{};
    WorkerLayout W_{};
    Connection conn_[num_dirs];
    P peer_[Config::max_ranks];
};

}  // namespace kccl::fabric
