// kccl/collectives/link_edm.hpp — the EDM model of the link concept (collectives/link.hpp).
//
//   kccl::coll::EdmLink<H> link(hal, link_arg_base);   // args from coll::host::GroupPlan
//
// A worker core's link: direction d is one Ethernet link of its chip. On each such link the EDM
// of the worker's chip has (up to) two channels for this worker: one it sends into (worker ->
// EDM -> the peer chip's EDM -> the peer's worker) and one it receives from. The EDMs run with
// Termination::worker_initiated (EdmLinkConfig): quiesce() ends every channel.
//
// Views: the worker pulls a message out of the EDM's slot into its own landing buffer for d
// (one per receive direction, max_message_bytes() long) and hands the EDM its slot back at once;
// the view is that landing buffer. So a view costs one NoC read (the EDM's slot is on another
// core: there is no zero-copy view of it) and the EDM keeps streaming while the view is held.
// At most one view per direction is held (max_held_views = 1).
//
// quiesce(): sends `terminate` on every send channel, then takes the peer's `terminate` from
// every receive channel (a data message still there is an error: every message sent must have
// been received), then waits for its own writes to land. After it, the EDMs of both chips finish.
//
// Link arguments (one block, GroupPlan writes it):
//   [0] directions, then per direction d (edm_link_dir_args each):
//   [+0] flags (1 send, 2 receive)  [+1] landing buffer L1  [+2 ..] send channel's worker args
//   (edm::args::w_count)  [+2+w_count ..] receive channel's worker args
#pragma once

#include "link.hpp"

#include <edm/types.hpp>
#include <edm/worker.hpp>

#include <stdint.h>

namespace kccl::coll {

/// The EDM configuration a link needs: worker-initiated termination (quiesce ends the channels).
struct EdmLinkConfig : edm::DefaultConfig {
    static constexpr edm::Termination termination = edm::Termination::worker_initiated;
};

inline constexpr uint32_t edm_link_max_dirs = max_group_dirs;
inline constexpr uint32_t edm_link_dir_args = 2 + 2 * edm::args::w_count;
inline constexpr uint32_t edm_link_flag_send = 1, edm_link_flag_recv = 2;
/// Number of link arguments of an EdmLink with `dirs` directions.
constexpr uint32_t edm_link_args(uint32_t dirs) { return 1 + dirs * edm_link_dir_args; }

template <class H, class Config = EdmLinkConfig>
class EdmLink {
    static_assert(Config::termination == edm::Termination::worker_initiated,
                  "kccl::coll::EdmLink needs EDMs with Termination::worker_initiated, because quiesce() ends each "
                  "channel with a terminate message; derive the Config from kccl::coll::EdmLinkConfig.");

public:
    using hal_type = H;
    static constexpr uint32_t max_held_views = 1;

    EdmLink(H& hal, uint32_t arg_base) : hal_(hal) {
        dirs_ = hal.arg(arg_base);
        if (dirs_ > edm_link_max_dirs) {
            detail::Msg m;
            where(m, "init", 0).s(": the link arguments name ").u(dirs_).s(" directions; at most ")
                .u(edm_link_max_dirs).s(" are allowed");
            detail::die(m);
        }
        for (uint32_t d = 0; d < dirs_; ++d) {
            const uint32_t b = arg_base + 1 + d * edm_link_dir_args;
            D& x = d_[d];
            x.flags = hal.arg(b);
            x.landing = hal.arg(b + 1);
            if (x.flags & edm_link_flag_send) {
                x.tx_ch = edm::load_worker_channel(hal, b + 2);
                x.tx = edm::SenderAdapter<Config>(x.tx_ch);
                max_ = (max_ == 0 || x.tx_ch.packet_bytes < max_) ? x.tx_ch.packet_bytes : max_;
            }
            if (x.flags & edm_link_flag_recv) {
                x.rx_ch = edm::load_worker_channel(hal, b + 2 + edm::args::w_count);
                x.rx = edm::ReceiverAdapter<Config>(x.rx_ch);
                max_ = (max_ == 0 || x.rx_ch.packet_bytes < max_) ? x.rx_ch.packet_bytes : max_;
            }
        }
    }
    EdmLink(const EdmLink&) = delete;
    EdmLink& operator=(const EdmLink&) = delete;

    H& hal() { return hal_; }
    uint32_t directions() const { return dirs_; }
    bool can_send(uint32_t d) const { return d < dirs_ && (d_[d].flags & edm_link_flag_send); }
    bool can_recv(uint32_t d) const { return d < dirs_ && (d_[d].flags & edm_link_flag_recv); }
    uint32_t max_message_bytes() const { return max_; }
    /// The EDM sender channel's buffers on d (the peer EDM's receiver channel adds more, which
    /// this does not count: a lower bound of what is in flight before a send waits).
    uint32_t slots(uint32_t d) const { return can_send(d) ? d_[d].tx_ch.buffers : 0; }

    void send(uint32_t d, uint32_t src_l1, uint32_t n) {
        D& x = tx_dir(d, n, "send");
        x.tx.send(hal_, src_l1, n);
    }
    bool try_send(uint32_t d, uint32_t src_l1, uint32_t n) {
        D& x = tx_dir(d, n, "try_send");
        return x.tx.try_send(hal_, src_l1, n);
    }

    View recv(uint32_t d) {
        D& x = rx_dir(d, "recv");
        return take(x, d, x.rx.recv(hal_, x.landing, x.rx_ch.packet_bytes), "recv");
    }
    bool try_recv(uint32_t d, View& out) {
        D& x = rx_dir(d, "try_recv");
        if (x.ended) return false;
        const edm::Received r = x.rx.try_recv(hal_, x.landing, x.rx_ch.packet_bytes);
        if (r.signal == edm::Signal::none) return false;
        if (r.signal == edm::Signal::terminate) {  // the peer quiesced: nothing more will come
            x.ended = true;
            return false;
        }
        out = take(x, d, r, "try_recv");
        return true;
    }
    void release(const View& v) {
        if (KCCL_UNLIKELY(v.dir >= dirs_ || !d_[v.dir].held || d_[v.dir].seq - 1 != v.seq)) {
            detail::Msg m;
            where(m, "release", v.dir).s(": view of message ").u(v.seq).s(" is not the one held (");
            if (v.dir < dirs_ && d_[v.dir].held) m.s("held: message ").u(d_[v.dir].seq - 1);
            else m.s("none is held");
            m.s("); release each view once, after its recv");
            detail::die(m);
        }
        d_[v.dir].held = false;
    }
    uint32_t recv_into(uint32_t d, uint32_t dst_l1, uint32_t capacity) {
        D& x = rx_dir(d, "recv_into");
        const edm::Received r = x.rx.recv(hal_, dst_l1, capacity);
        check_data(r, d, x.seq, "recv_into");
        if (KCCL_UNLIKELY(r.bytes > capacity)) {
            detail::Msg m;
            where(m, "recv_into", d).s(": message ").u(x.seq).s(" has ").u(r.bytes).s(" bytes; the destination holds ")
                .u(capacity).s(" (allowed: bytes <= capacity)");
            detail::die(m);
        }
        ++x.seq;
        return r.bytes;
    }

    void quiesce() {
        for (uint32_t d = 0; d < dirs_; ++d)
            if (d_[d].held) {
                detail::Msg m;
                where(m, "quiesce", d).s(": message ").u(d_[d].seq - 1).s(" is still held; release it first");
                detail::die(m);
            }
        for (uint32_t d = 0; d < dirs_; ++d)
            if (d_[d].flags & edm_link_flag_send) d_[d].tx.terminate(hal_);
        for (uint32_t d = 0; d < dirs_; ++d) {
            D& x = d_[d];
            if (!(x.flags & edm_link_flag_recv) || x.ended) continue;
            const edm::Received r = x.rx.recv(hal_, x.landing, x.rx_ch.packet_bytes);
            if (KCCL_UNLIKELY(r.signal != edm::Signal::terminate)) {
                detail::Msg m;
                where(m, "quiesce", d).s(": message ").u(x.seq).s(" (").u(r.bytes)
                    .s(" bytes) was never received; every message sent must be received before quiesce");
                detail::die(m);
            }
        }
        hal_.noc_write_barrier();
    }

    /// Messages sent / received on d so far (diagnostics, tests).
    uint32_t sent(uint32_t d) const { return d < dirs_ ? d_[d].tx.messages_sent() : 0; }
    uint32_t received(uint32_t d) const { return d < dirs_ ? d_[d].seq : 0; }

private:
    struct D {
        uint32_t flags = 0, landing = 0, seq = 0;
        bool held = false;
        bool ended = false;  ///< the peer's terminate was taken (by try_recv)
        edm::WorkerChannel tx_ch{}, rx_ch{};
        edm::SenderAdapter<Config> tx{};
        edm::ReceiverAdapter<Config> rx{};
    };

    detail::Msg& where(detail::Msg& m, const char* op, uint32_t d) const {
        m.s("edm link: core (").u(hal_.core_x()).s(",").u(hal_.core_y()).s("): ").s(op).s(" on direction ").u(d);
        return m;
    }
    D& tx_dir(uint32_t d, uint32_t n, const char* op) {
        if (KCCL_UNLIKELY(!can_send(d))) {
            detail::Msg m;
            where(m, op, d).s(d < dirs_ ? ": this direction does not send" : ": no such direction").s(" (directions: ")
                .u(dirs_).s(")");
            detail::die(m);
        }
        if (KCCL_UNLIKELY(n > d_[d].tx_ch.packet_bytes)) {
            detail::Msg m;
            where(m, op, d).s(": message of ").u(n).s(" bytes does not fit a packet of ").u(d_[d].tx_ch.packet_bytes)
                .s(" bytes (allowed: bytes <= max_message_bytes)");
            detail::die(m);
        }
        return d_[d];
    }
    D& rx_dir(uint32_t d, const char* op) {
        if (KCCL_UNLIKELY(!can_recv(d))) {
            detail::Msg m;
            where(m, op, d).s(d < dirs_ ? ": this direction does not receive" : ": no such direction")
                .s(" (directions: ").u(dirs_).s(")");
            detail::die(m);
        }
        if (KCCL_UNLIKELY(d_[d].ended)) {
            detail::Msg m;
            where(m, op, d).s(": the peer has quiesced (its terminate came after message ").u(d_[d].seq)
                .s("); nothing more will arrive on this direction");
            detail::die(m);
        }
        if (KCCL_UNLIKELY(d_[d].held)) {
            detail::Msg m;
            where(m, op, d).s(": the view of message ").u(d_[d].seq - 1)
                .s(" is still held; release it first (EDM link: max_held_views = 1)");
            detail::die(m);
        }
        return d_[d];
    }
    void check_data(const edm::Received& r, uint32_t d, uint32_t seq, const char* op) const {
        if (KCCL_LIKELY(r.signal == edm::Signal::next)) return;
        detail::Msg m;
        where(m, op, d).s(": message ").u(seq).s(" is ")
            .s(r.signal == edm::Signal::terminate ? "the peer's terminate (it quiesced while this core still receives)"
                                                  : "not a data message");
        detail::die(m);
    }
    View take(D& x, uint32_t d, const edm::Received& r, const char* op) {
        check_data(r, d, x.seq, op);
        x.held = true;
        return View{x.landing, r.bytes, d, x.seq++};
    }

    H& hal_;
    uint32_t dirs_ = 0, max_ = 0;
    D d_[edm_link_max_dirs];
};

}  // namespace kccl::coll
