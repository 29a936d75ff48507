// kccl/wafer/host/lower.hpp — a collective schedule (collectives/schedule.hpp: a Shape and its
// algorithm's per-rank step streams) lowered to a fabric Layout: which streams, which colors, which
// steps every PE takes. What lets a pattern of the Cerebras WSE reduce/allreduce thesis be written
// once, as a schedule the symbolic checker checks, and run on the PE fabric.
//
// Contract
//   * `lower(shape, place, B, op, width, height)`: rank r runs on PE place[r] (distinct PEs inside
//     the width x height grid; 0 x 0: the smallest grid holding them). Every buffer of the schedule
//     is the PE's vector of B elements at offset 0 (the thesis's patterns work in place): chunk c of
//     a buffer of N chunks (coll::grid) covers B / N elements, one more for each of the first
//     B % N chunks (the thesis's cost model's split of a ring's segments). A step naming
//     different elements as its local operand and its destination is refused.
//   * Word streaming: the fabric streams every message word by word, so a schedule that repeats
//     the same steps for chunk j, j+1, ... (a tree pipelined chunk by chunk) is lowered as those
//     steps once over the whole run of chunks (the same combines per element, in the same order).
//   * Streams: one per channel — (sender, receiver) for a unicast, (sender, its broadcast-tree
//     children) for a Cast::children multicast. A unicast goes X then Y (Layout::path); a multicast
//     is the union of the X-then-Y routes to its receivers (one stream, copied to every receiver).
//   * Verbs: send -> send; recv -> recv (copy); recv_reduce_copy -> recv (combine) in place;
//     recv_reduce_send -> relay (combined with the local vector and forwarded word by word);
//     recv_copy_send / recv_reduce_copy_send -> recv, then send; copy onto the same elements ->
//     nothing. reduce_local, a copy elsewhere, or a schedule with more than one lane is refused.
//   * Exchange (the ring's rounds, thesis 7.2): a send followed at once by a receive into other
//     elements becomes one fabric exchange (sending one segment while receiving another). A
//     recv_reduce_send whose next step receives into other elements is, for that, lowered as a
//     receive combined into its operand's elements and a send of them (the partial overwrites the
//     operand: refused if a later step reads it before writing it).
//   * Colors (Layout groups): the streams arriving at one PE from one direction share a color, in
//     the order that PE receives them; the sender of each but the last advances the routers after
//     its last send on it (the thesis's tree figure: a parent's children reach it one after the
//     other on one color). Every other stream (a multicast) has a color of its own. Layout::finalize
//     then assigns colors and validates (its errors apply: "too many colors", two inputs, ...).
//   * Errors: kccl::Error naming what was wrong and what is allowed.
//   * Host-only (allocates, throws); C++17.
#pragma once

#include <collectives/algorithms.hpp>
#include <common/host/error.hpp>
#include <wafer/host/layout.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kccl::wafer::host {

namespace detail_lower {

/// Is b step a shifted by a.count chunks (every chunk the verb uses moved on, the rest equal)?
inline bool follows(const coll::Step& a, const coll::Step& b) {
    if (a.verb != b.verb || a.recv_peer != b.recv_peer || a.send_peer != b.send_peer || a.cast != b.cast || a.count != b.count) return false;
    const bool src = coll::verb_reads_src(a.verb) || a.verb == coll::Verb::recv_copy_send;
    const bool dst = coll::verb_writes_dst(a.verb);
    if (src && (a.src.buf != b.src.buf || b.src.chunk != a.src.chunk + a.count)) return false;
    if (dst && (a.dst.buf != b.dst.buf || b.dst.chunk != a.dst.chunk + a.count)) return false;
    return true;
}

/// Word streaming (see the contract): runs of a repeated block of steps over consecutive chunks
/// become the block once, each step covering the whole run.
inline std::vector<coll::Step> coalesce(const std::vector<coll::Step>& st) {
    std::vector<coll::Step> out;
    const size_t n = st.size();
    size_t i = 0;
    while (i < n) {
        size_t k = 0, reps = 1;
        for (size_t kk = 1; i + 2 * kk <= n && k == 0; ++kk) {
            bool ok = true;
            for (size_t t = 0; t < kk && ok; ++t) ok = follows(st[i + t], st[i + kk + t]);
            if (ok) k = kk;
        }
        if (k == 0) {
            out.push_back(st[i++]);
            continue;
        }
        while (i + (reps + 1) * k <= n) {
            bool ok = true;
            for (size_t t = 0; t < k && ok; ++t) ok = follows(st[i + (reps - 1) * k + t], st[i + reps * k + t]);
            if (!ok) break;
            ++reps;
        }
        for (size_t t = 0; t < k; ++t) {
            coll::Step s = st[i + t];
            s.count = uint32_t(s.count * reps);
            out.push_back(s);
        }
        i += k * reps;
    }
    return out;
}

inline Dir arrival(Coord from, Coord to) {  // the direction an X-then-Y route enters `to` from
    if (from.y != to.y) return from.y < to.y ? Dir::N : Dir::S;
    return from.x < to.x ? Dir::W : Dir::E;
}

}  // namespace detail_lower

/// lower() appending to L (its grid): the streams and steps of one more schedule after what L
/// already has on each PE (a pattern made of schedules run one after the other).
inline void lower_into(Layout& L, const coll::Shape& sh, const std::vector<Coord>& place, uint32_t B, coll::RedOp op);

inline Layout lower(const coll::Shape& sh, const std::vector<Coord>& place, uint32_t B, coll::RedOp op, uint32_t width = 0, uint32_t height = 0) {
    if (width == 0 || height == 0) {
        for (const Coord& c : place) width = std::max(width, c.x + 1), height = std::max(height, c.y + 1);
    }
    Layout L(width, height);
    lower_into(L, sh, place, B, op);
    return L;
}

inline void lower_into(Layout& L, const coll::Shape& sh, const std::vector<Coord>& place, uint32_t B, coll::RedOp op) {
    const uint32_t width = L.width(), height = L.height();
    using coll::Verb;
    const std::string what = std::string("fabric lowering of ") + coll::op_name(sh.op) + " / " + coll::method_name(sh.method);
    if (const char* e = coll::validate(sh)) throw kccl::Error(kccl::Errc::plan, what + ": the shape is invalid: " + e);
    const uint32_t p = sh.ranks;
    if (place.size() != p)
        throw kccl::Error(kccl::Errc::plan, what + ": the placement names " + std::to_string(place.size()) + " PEs for " + std::to_string(p) + " ranks (one PE per rank)");
    if (coll::lanes(sh) != 1)
        throw kccl::Error(kccl::Errc::plan, what + ": the schedule has " + std::to_string(coll::lanes(sh)) + " lanes; the lowering takes one lane per rank");
    if (B == 0) throw kccl::Error(kccl::Errc::plan, what + ": B (elements per PE) must be >= 1");
    std::vector<uint32_t> owner(size_t(width) * height, UINT32_MAX);  // linear in the grid, not quadratic in the ranks
    for (uint32_t r = 0; r < p; ++r) {
        if (place[r].x >= width || place[r].y >= height)
            throw kccl::Error(kccl::Errc::plan, what + ": rank " + std::to_string(r) + " is placed on PE " + to_string(place[r]) + ", outside the " + std::to_string(width) +
                                        " x " + std::to_string(height) + " grid");
        uint32_t& q = owner[size_t(place[r].y) * width + place[r].x];
        if (q != UINT32_MAX)
            throw kccl::Error(kccl::Errc::plan, what + ": ranks " + std::to_string(q) + " and " + std::to_string(r) + " are both placed on PE " + to_string(place[r]) +
                                        " (one rank per PE)");
        q = r;
    }
    // Every rank's steps, word-streamed.
    std::vector<std::vector<coll::Step>> steps(p);
    for (uint32_t r = 0; r < p; ++r) {
        std::vector<coll::Step> v;
        coll::for_each_step(sh, r, 0, [&](const coll::Step& s) { v.push_back(s); });
        steps[r] = detail_lower::coalesce(v);
    }
    // Elements of a chunk range of a buffer.
    auto range = [&](coll::ChunkRef c, uint32_t count, uint32_t& off, uint32_t& n) {
        const uint64_t N = coll::grid(sh, c.buf == coll::Buf::scratch ? coll::Buf::output : c.buf);
        auto at = [&](uint64_t k) { return k * (B / N) + std::min<uint64_t>(k, B % N); };  // the first B % N chunks one element longer
        const uint64_t lo = at(c.chunk), hi = at(uint64_t(c.chunk) + count);
        off = uint32_t(4 * lo);
        n = uint32_t(hi - lo);
    };
    // Channels: key (sender, receiver), receiver = kNoPeer for a multicast to the sender's children.
    using Chan = std::pair<uint32_t, uint32_t>;
    std::map<Chan, int> stream_of;
    std::map<Chan, std::pair<uint32_t, size_t>> last_send;  // channel -> (sender, step index of its last send)
    auto sends_to = [](uint32_t, const coll::Step& s) { return s.cast == coll::Cast::children ? coll::kNoPeer : s.send_peer; };
    for (uint32_t r = 0; r < p; ++r)
        for (size_t i = 0; i < steps[r].size(); ++i) {
            const coll::Step& s = steps[r][i];
            if (s.verb == Verb::reduce_local)
                throw kccl::Error(kccl::Errc::plan, what + ": rank " + std::to_string(r) + " step " + std::to_string(i) +
                                            " is reduce_local; a fabric step combines only what arrives (send, recv, recv_reduce_copy, recv_reduce_send, recv_copy_send, "
                                            "recv_reduce_copy_send, and copies onto the same elements are lowered)");
            if (coll::verb_sends(s.verb)) last_send[{r, sends_to(r, s)}] = {r, i};
        }
    // Unicast streams into each receiver, grouped by arrival direction, in the receiver's order.
    for (uint32_t q = 0; q < p; ++q) {
        std::map<Dir, int> grp;
        for (const coll::Step& s : steps[q]) {
            if (!coll::verb_receives(s.verb)) continue;
            const uint32_t from = s.recv_peer;
            if (stream_of.count({from, q}) || last_send.count({from, q}) == 0) continue;  // a multicast, or already made
            const Dir d = detail_lower::arrival(place[from], place[q]);
            if (!grp.count(d)) grp[d] = int(L.group());
            stream_of[{from, q}] = int(L.path(place[from], place[q], grp[d]));
        }
    }
    // Multicast streams: the union of the X-then-Y routes from the sender to its children.
    std::vector<std::vector<uint32_t>> mcast_to(p);
    for (const auto& kv : last_send) {
        if (kv.first.second != coll::kNoPeer) continue;
        const uint32_t r = kv.first.first;
        std::vector<uint32_t> kids;
        coll::for_each_send_peer(sh, r, steps[r][kv.second.second], [&](uint32_t c) { kids.push_back(c); });
        std::sort(kids.begin(), kids.end());
        std::vector<size_t> order;               // routers in first-visit order
        std::map<size_t, Hop> hop;               // router index -> its hop
        auto visit = [&](Coord c, Dir rx, DirSet tx) {
            const size_t k = size_t(c.y) * width + c.x;
            auto it = hop.find(k);
            if (it == hop.end()) {
                hop[k] = Hop{c, rx, tx};
                order.push_back(k);
            } else {
                if (it->second.rx != rx)
                    throw kccl::Error(kccl::Errc::plan, what + ": rank " + std::to_string(r) + "'s multicast reaches PE " + to_string(c) + " from two directions");
                it->second.tx = it->second.tx | tx;
            }
        };
        for (uint32_t kid : kids) {
            Coord c = place[r];
            const Coord to = place[kid];
            Dir rx = Dir::ramp;
            while (c != to) {
                const Dir d = toward(c, to);
                visit(c, rx, d);
                c = neighbour(c, d);
                rx = opposite(d);
            }
            visit(to, rx, Dir::ramp);
        }
        const uint32_t s = L.stream();
        for (size_t k : order) L.add_hop(s, hop[k].at, hop[k].rx, hop[k].tx);
        stream_of[kv.first] = int(s);
        for (uint32_t kid : kids) {  // each receiver takes it from there
            if (stream_of.count({r, kid}))
                throw kccl::Error(kccl::Errc::plan, what + ": rank " + std::to_string(r) + " sends to rank " + std::to_string(kid) +
                                            " both by unicast and by multicast; the lowering gives a pair of ranks one stream");
            stream_of[{r, kid}] = int(s);
        }
    }
    // The stream after each unicast stream in its group (its sender advances after its last send).
    // Groups were made per (receiver, direction) with streams in receive order: walk them again.
    std::map<int, bool> has_next;
    for (uint32_t q = 0; q < p; ++q) {
        std::map<Dir, int> last;
        for (const coll::Step& s : steps[q]) {
            if (!coll::verb_receives(s.verb) || last_send.count({s.recv_peer, q}) == 0) continue;
            const int st = stream_of.at({s.recv_peer, q});
            const Dir d = detail_lower::arrival(place[s.recv_peer], place[q]);
            auto it = last.find(d);
            if (it != last.end() && it->second != st) has_next[it->second] = true;
            last[d] = st;
        }
    }
    // Steps: every step becomes its parts (a receive, a send, a relay), then a send followed at
    // once by a receive into other elements is fused into one exchange (see the contract).
    struct Part {
        enum Kind : uint8_t { send, recv, relay } kind;
        int in, out;
        uint32_t off, n;
        coll::RedOp op;
        bool adv;  // the sender advances the routers after it (the last send on a grouped stream)
    };
    for (uint32_t r = 0; r < p; ++r) {
        const Coord pe = place[r];
        const auto& st = steps[r];
        // The elements a step receives into (its receive part), when it receives.
        auto recv_elems = [&](const coll::Step& s, uint32_t& off, uint32_t& n) {
            if (coll::verb_writes_dst(s.verb)) range(s.dst, s.count, off, n);
            else range(s.src, s.count, off, n);
        };
        auto disjoint = [](uint32_t o1, uint32_t n1, uint32_t o2, uint32_t n2) { return o1 + 4 * n1 <= o2 || o2 + 4 * n2 <= o1; };
        std::vector<Part> parts;
        for (size_t i = 0; i < st.size(); ++i) {
            const coll::Step& s = st[i];
            auto at = [&](const char* k) {
                return what + ": rank " + std::to_string(r) + " step " + std::to_string(i) + " (" + coll::verb_name(s.verb) + ") " + k;
            };
            uint32_t so = 0, sn = 0, dof = 0, dn = 0;
            range(s.src, s.count, so, sn);
            range(s.dst, s.count, dof, dn);
            const bool rd = coll::verb_reads_src(s.verb), wr = coll::verb_writes_dst(s.verb);
            if (rd && wr && (so != dof || sn != dn))
                throw kccl::Error(kccl::Errc::plan, at("reads and writes different elements; the fabric patterns work in place (every buffer at offset 0)"));
            const uint32_t off = wr ? dof : so, n = wr ? dn : sn;
            const int in = coll::verb_receives(s.verb) ? stream_of.at({s.recv_peer, r}) : -1;
            const int out = coll::verb_sends(s.verb) ? stream_of.at({r, sends_to(r, s)}) : -1;
            const bool adv = out >= 0 && s.cast == coll::Cast::unicast && last_send.at({r, s.send_peer}).second == i && has_next.count(out);
            switch (s.verb) {
                case Verb::send: parts.push_back(Part{Part::send, -1, out, off, n, kCopy, adv}); break;
                case Verb::recv: parts.push_back(Part{Part::recv, in, -1, off, n, kCopy, false}); break;
                case Verb::recv_reduce_copy: parts.push_back(Part{Part::recv, in, -1, off, n, op, false}); break;
                case Verb::recv_reduce_send: {
                    // A relay whose next step receives into other elements: the ring's round (receive
                    // and combine this segment, send it next round while receiving the next one). It
                    // is lowered as a receive into its elements and a send of them, so that send can be
                    // fused with the next receive; the partial then overwrites the relay's operand,
                    // which no later step may still read.
                    uint32_t no = 0, nn = 0;
                    const bool split = i + 1 < st.size() && coll::verb_receives(st[i + 1].verb) && (recv_elems(st[i + 1], no, nn), disjoint(off, n, no, nn));
                    if (!split) {
                        parts.push_back(Part{Part::relay, in, out, off, n, op, adv});
                        break;
                    }
                    for (size_t t = i + 1; t < st.size() && n > 0; ++t) {
                        const coll::Step& u = st[t];
                        uint32_t uo = 0, un = 0, wo = 0, wn = 0;
                        range(u.src, u.count, uo, un);
                        range(u.dst, u.count, wo, wn);
                        if ((coll::verb_reads_src(u.verb) || u.verb == Verb::send) && !disjoint(off, n, uo, un))
                            throw kccl::Error(kccl::Errc::plan, at("is a relay followed by a receive into other elements (lowered as a receive into its operand, then a send "
                                                           "fused with that receive), but step ") +
                                                        std::to_string(t) + " reads its operand again");
                        if (coll::verb_writes_dst(u.verb) && wo <= off && off + 4 * n <= wo + 4 * wn) break;
                    }
                    parts.push_back(Part{Part::recv, in, -1, off, n, op, false});
                    parts.push_back(Part{Part::send, -1, out, off, n, kCopy, adv});
                    break;
                }
                case Verb::recv_copy_send:
                case Verb::recv_reduce_copy_send:
                    parts.push_back(Part{Part::recv, in, -1, off, n, s.verb == Verb::recv_copy_send ? kCopy : op, false});
                    parts.push_back(Part{Part::send, -1, out, off, n, kCopy, adv});
                    break;
                case Verb::copy:
                    if (so != dof || sn != dn) throw kccl::Error(kccl::Errc::plan, at("copies to other elements; a fabric PE only moves what streams through it"));
                    break;
                case Verb::reduce_local: break;  // refused above
            }
        }
        for (size_t k = 0; k < parts.size(); ++k) {
            const Part& a = parts[k];
            if (a.kind == Part::send && k + 1 < parts.size() && parts[k + 1].kind == Part::recv && disjoint(a.off, a.n, parts[k + 1].off, parts[k + 1].n)) {
                const Part& b = parts[k + 1];
                L.exchange(pe, uint32_t(a.out), a.off, a.n, uint32_t(b.in), b.off, b.n, b.op);
                if (a.adv) L.advance(pe, uint32_t(a.out));
                ++k;
                continue;
            }
            if (a.n == 0) continue;  // an empty chunk range: nothing moves (both ends skip it)
            switch (a.kind) {
                case Part::send: L.send(pe, uint32_t(a.out), a.off, a.n); break;
                case Part::recv: L.recv(pe, uint32_t(a.in), a.off, a.n, a.op); break;
                case Part::relay: L.relay(pe, uint32_t(a.in), uint32_t(a.out), a.off, a.n, a.op); break;
            }
            if (a.adv) L.advance(pe, uint32_t(a.out));
        }
    }
}

}  // namespace kccl::wafer::host
