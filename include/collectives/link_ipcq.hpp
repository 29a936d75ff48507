// kccl/collectives/link_ipcq.hpp — the IPCQ model of the link concept (collectives/link.hpp).
//
//   kccl::coll::IpcqLink<H> link(hal, link_arg_base);   // args from coll::host::GroupPlan
//   link.send(Nsew::E, src_l1, n);  View v = link.recv(Nsew::W);  ...  link.release(v);
//   link.quiesce();
//   link.open_window(out_l1);  link.put(Nsew::E, src_l1, n, link.peer_window(Nsew::E) + off);   // puts
//
// Directions are the IPCQ direction set's (Nsew: N=0 S=1 E=2 W=3). A view is the rx slot itself
// (zero copy; DRAM placement: the one-slot staging buffer), or where a put landed. max_message_bytes() is the smallest
// slot size over the installed directions (the group plan gives them all one size).
// Link arguments: [0] the IPCQ block address (ipcq::host::Plan::runtime_args).
#pragma once

#include "link.hpp"

#include <ipcq/queues.hpp>

#include <stdint.h>

namespace kccl::coll {

/// The IPCQ direction set of an all_pairs group (GroupShape::all_pairs): max_group_dirs (8)
/// directions, direction d of rank r reaching rank (d < r ? d : d + 1). No fixed reverse (the
/// plan names each link's two ends). A kernel of an all_pairs group uses IpcqLink<H, PeerDirSet>:
/// the queue block's layout depends on the direction set.
struct PeerDirSet {
    static constexpr uint32_t count = max_group_dirs;
    static constexpr bool has_reverse = false;
    static constexpr uint32_t reverse(uint32_t) { return 0; }
    static constexpr const char* name(uint32_t d) {
        return d == 0 ? "p0" : d == 1 ? "p1" : d == 2 ? "p2" : d == 3 ? "p3" : d == 4 ? "p4" : d == 5 ? "p5"
             : d == 6 ? "p6" : d == 7 ? "p7" : "?";
    }
};
static_assert(max_group_dirs == 8, "PeerDirSet names 8 directions; extend name() with max_group_dirs.");

/// Number of link arguments of an IpcqLink.
inline constexpr uint32_t ipcq_link_args = 1;

template <class H, class Dirs = ipcq::Nsew, class Policy = ipcq::DefaultPolicy>
class IpcqLink {
public:
    using hal_type = H;
    using queues_type = ipcq::Queues<H, Dirs, Policy>;
    /// DRAM placement stages one slot per direction; L1 placement could hold n_slots, but the
    /// concept promises what every plan gives.
    static constexpr uint32_t max_held_views = 1;

    /// Reads the block address at runtime argument `arg_base`.
    IpcqLink(H& hal, uint32_t arg_base) : hal_(hal), q_(hal, hal.arg(arg_base)) {
        for (uint32_t d = 0; d < Dirs::count; ++d)
            if (q_.installed(d)) {
                const uint32_t b = q_.slot_bytes(d);
                max_ = (max_ == 0 || b < max_) ? b : max_;
            }
    }
    IpcqLink(const IpcqLink&) = delete;
    IpcqLink& operator=(const IpcqLink&) = delete;

    H& hal() { return hal_; }
    queues_type& queues() { return q_; }
    uint32_t directions() const { return Dirs::count; }
    bool can_send(uint32_t d) const { return q_.can_send(d); }
    bool can_recv(uint32_t d) const { return q_.can_recv(d); }
    uint32_t max_message_bytes() const { return max_; }
    /// The peer's rx ring on d: n_slots messages are in flight before a send waits for credit.
    uint32_t slots(uint32_t d) const { return q_.can_send(d) ? q_.n_slots(d) : 0; }

    void send(uint32_t d, uint32_t src_l1, uint32_t n) { q_.send(d, src_l1, n); }
    bool try_send(uint32_t d, uint32_t src_l1, uint32_t n) { return q_.try_send(d, src_l1, n); }

    View recv(uint32_t d) { return view(q_.recv(d)); }
    bool try_recv(uint32_t d, View& out) {
        ipcq::Slot s;
        if (!q_.try_recv(d, s)) return false;
        out = view(s);
        return true;
    }
    void release(const View& v) {
        ipcq::Slot s;
        s.dir = v.dir;
        s.seq = v.seq;
        s.l1 = v.l1;
        s.info.nbytes = v.bytes;
        q_.release(s);
    }
    /// A put notice must have landed at dst_l1 (the executor told its sender where): nothing is
    /// copied then; a plain message is copied out of its slot.
    uint32_t recv_into(uint32_t d, uint32_t dst_l1, uint32_t capacity) { return q_.recv_in_place(d, dst_l1, capacity); }
    void quiesce() { q_.quiesce(); }

    // puts (the link concept's optional capability, link.hpp "PUTS")
    void open_window(uint32_t base) { q_.open_window(base); }
    uint32_t peer_window(uint32_t d) { return q_.peer_window(d); }
    bool try_peer_window(uint32_t d, uint32_t& base) { return q_.try_peer_window(d, base); }
    void put(uint32_t d, uint32_t src_l1, uint32_t n, uint32_t peer_l1) { q_.put(d, src_l1, n, peer_l1); }
    bool try_put(uint32_t d, uint32_t src_l1, uint32_t n, uint32_t peer_l1) { return q_.try_put(d, src_l1, n, peer_l1); }

private:
    static View view(const ipcq::Slot& s) { return View{s.l1, s.info.nbytes, s.dir, s.seq, s.landed}; }

    H& hal_;
    queues_type q_;
    uint32_t max_ = 0;
};

}  // namespace kccl::coll
