// kccl/collectives/host/checker.hpp — the symbolic checker of collective schedules (host only).
//
// WHAT IT DOES
//   Runs every (rank, lane) step stream of a schedule with symbolic values instead of numbers: a
//   value is the sequence of (rank, input chunk) leaves combined into it, in combine order (the
//   first operand's leaves, then the second's: schedule.hpp's order, local operand first), plus two
//   hashes of its combine tree: `tree` with each combine's operand order (ordered_combine(), a
//   non-commutative, non-associative function: what a non-commutative operator would compute) and
//   `sym` with the operands of each combine unordered. Sends and receives match FIFO per (sender,
//   receiver, lane); a multicast (Cast::children) puts one copy into the FIFO of each receiver.
//   Channels hold at most `capacity` messages (0: unbounded) and a send into a full channel waits
//   (a multicast until all its channels have room). Each pass runs at most one step of every
//   stream. Every step gets a logical time: a stream's clock advances by one after each send, and
//   a receive happens no earlier than the message's send plus its route's hops (hops(): 1 between
//   neighbours, the shortest route's length for a multi-hop message; a multicast reaches each
//   receiver after that receiver's hops); pictures use it (local copies take no time).
//
// WHAT IT REPORTS (each error names rank, lane, step and chunk where they apply)
//   bad_peer       a peer out of range, the rank itself, or not linked by the topology (unless
//                  the algorithm is multi-hop); a multicast on a verb that keeps nothing to resend
//                  (recv_reduce_send)
//   bad_chunk      a chunk range outside the buffer's grid, a count of 0, or a write to the input
//   uninit         a step reads a chunk nobody wrote (hardware never zeroes L1)
//   lane_race      two lanes of one rank touch the same output/scratch chunk
//   count_mismatch a receive names a different chunk count than the matching send
//   deadlock       no stream can move; the message gives the cycle of waits
//   unreceived     a message sent but never received
//   wrong_value    an output chunk misses a contribution, has one twice, or has a foreign one
//   written_twice  an output chunk written more often than `max_writes` (when set)
//   stray_write    an output chunk the op leaves alone (non-root ranks of reduce/gather/send_recv)
//                  was written
//   order          an all_reduce/barrier value combined in a different tree on two ranks
//                  (results would not be bitwise identical). Every supported operator is
//                  commutative bit for bit, so by default trees that differ only in the operand
//                  order of some combines are equal (`sym`); with CheckOptions::non_commutative the
//                  operand order counts too (`tree`): the schedule is then right for an operator
//                  that is not commutative.
//
// Who uses it: tests/collectives/schedule_test.cpp and host/picture.hpp. C++17 host code.
#pragma once

#include <collectives/algorithms.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kccl::coll::host {

struct Value {
    bool init = false;
    std::vector<uint32_t> leaves;  // rank * in_grid + chunk of each contributor, in combine order
    uint64_t tree = 0;             // the combine tree with operand order (ordered_combine)
    uint64_t sym = 0;              // the combine tree with each combine's operands unordered
};

inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return x;
}
/// The symbolic value of leaf `key` (rank * in_grid + chunk) and the combine the checker models:
/// a function of (first operand, second operand) that is neither commutative nor associative, so
/// its result names the combine tree with every operand order. Tests run it as a real operator
/// on the executor (tests/collectives/order_test.cpp) to hold the code to the order.
inline uint64_t leaf_hash(uint32_t key) { return mix64(uint64_t(key) + 1); }
inline uint64_t ordered_combine(uint64_t a, uint64_t b) {
    return mix64(a * 0x9e3779b97f4a7c15ULL ^ mix64(b + 0x632be59bd9b4e019ULL));
}
/// combine(a, b): a is the first operand (schedule.hpp: the local one, or reduce_local's dst).
inline Value combine(const Value& a, const Value& b) {
    Value v;
    v.init = a.init && b.init;
    v.leaves.reserve(a.leaves.size() + b.leaves.size());
    v.leaves.insert(v.leaves.end(), a.leaves.begin(), a.leaves.end());
    v.leaves.insert(v.leaves.end(), b.leaves.begin(), b.leaves.end());
    v.tree = ordered_combine(a.tree, b.tree);
    v.sym = ordered_combine(std::min(a.sym, b.sym), std::max(a.sym, b.sym));
    return v;
}
/// Are the value's contributors in ascending rank order (MPI's canonical order for an operator
/// that is associative but not commutative)? `in_grid`: the input grid, leaf = rank * in_grid + c.
inline bool rank_ordered(const Value& v, uint32_t in_grid) {
    for (size_t i = 1; i < v.leaves.size(); ++i)
        if (v.leaves[i - 1] / in_grid > v.leaves[i] / in_grid) return false;
    return true;
}

struct CheckError {
    std::string kind;
    uint32_t rank = kNoPeer, lane = kNoPeer, step = kNoPeer, chunk = kNoPeer;
    std::string message;
};

struct Event {  // one executed step, for pictures
    uint32_t rank, lane, index, time;  // time: logical (see top)
    Step step;
};

struct CheckOptions {
    uint32_t capacity = 0;   // messages per (sender, receiver, lane) channel; 0 = unbounded
    uint32_t max_writes = 0; // per output chunk; 0 = no limit
    bool record = false;     // keep the events (pictures)
    bool multi_hop = false;  // peers need not be topology neighbours
    bool non_commutative = false;  // `order` compares operand order too (see the top)
    bool serial_lanes = false;  // run each rank's lanes one after the other in ONE stream, with one
                                // FIFO per (sender, receiver): an executor that runs lanes in turn
                                // on one worker over shared link directions
    bool merged_lanes = false;  // run each rank's lanes MERGED into one stream, in proportion to
                                // their lengths (merge_lanes()), every message keeping its lane's
                                // FIFO: executor.hpp's execute / execute_any on one worker when the
                                // lanes use disjoint link directions (lanes_disjoint()) and the
                                // method allows it (lanes_mergeable())
};

struct CheckResult {
    bool ok = true;
    std::vector<CheckError> errors;  // the first few
    std::vector<Event> events;
    std::vector<std::vector<Value>> outputs;  // with `record`: every rank's output chunks at the end
    uint64_t steps = 0, messages = 0, chunk_messages = 0;
    uint32_t time = 0;  // logical time until everything finished (message latencies on the critical path)
    bool has(const std::string& kind) const {
        for (auto& e : errors)
            if (e.kind == kind) return true;
        return false;
    }
    const CheckError* first(const std::string& kind) const {
        for (auto& e : errors)
            if (e.kind == kind) return &e;
        return nullptr;
    }
    std::string summary() const {
        std::string s;
        for (auto& e : errors) s += "[" + e.kind + "] " + e.message + "\n";
        return s;
    }
};

/// Step streams of a schedule: streams[rank][lane].
using Streams = std::vector<std::vector<std::vector<Step>>>;

inline Streams collect(const Shape& sh) {
    Streams st(sh.ranks);
    const uint32_t L = lanes(sh);
    for (uint32_t r = 0; r < sh.ranks; ++r) {
        st[r].resize(L);
        for (uint32_t l = 0; l < L; ++l) for_each_step(sh, r, l, [&](const Step& s) { st[r][l].push_back(s); });
    }
    return st;
}

namespace detail_check {
inline std::string where(uint32_t r, uint32_t l, uint32_t i) {
    return "rank " + std::to_string(r) + " lane " + std::to_string(l) + " step " + std::to_string(i);
}
inline std::string describe(const Step& s) {
    std::string t = verb_name(s.verb);
    if (verb_receives(s.verb)) t += " from " + std::to_string(s.recv_peer);
    if (verb_sends(s.verb)) t += s.cast == Cast::children ? std::string(" to its children") : " to " + std::to_string(s.send_peer);
    if (verb_reads_src(s.verb)) t += std::string(" src ") + buf_name(s.src.buf) + "[" + std::to_string(s.src.chunk) + "]";
    if (verb_writes_dst(s.verb)) t += std::string(" dst ") + buf_name(s.dst.buf) + "[" + std::to_string(s.dst.chunk) + "]";
    if (s.count != 1) t += " x" + std::to_string(s.count);
    return t;
}
}  // namespace detail_check

/// Expected leaves of output chunk c at rank r (empty + false: the op leaves it alone).
inline bool expected(const Shape& sh, uint32_t r, uint32_t c, std::vector<uint32_t>& leaves) {
    const uint32_t p = sh.ranks, s = sh.chunks, gin = grid(sh, Buf::input);
    leaves.clear();
    auto key = [&](uint32_t q, uint32_t k) { return q * gin + k; };
    switch (sh.op) {
        case Op::all_gather: leaves.push_back(key(c / s, c % s)); return true;
        case Op::reduce_scatter: for (uint32_t q = 0; q < p; ++q) leaves.push_back(key(q, r * s + c)); return true;
        case Op::all_reduce:
        case Op::barrier: for (uint32_t q = 0; q < p; ++q) leaves.push_back(key(q, c)); return true;
        case Op::broadcast: leaves.push_back(key(sh.root, c)); return true;
        case Op::reduce:
            if (r != sh.root) return false;
            for (uint32_t q = 0; q < p; ++q) leaves.push_back(key(q, c));
            return true;
        case Op::gather:
            if (r != sh.root) return false;
            leaves.push_back(key(c / s, c % s));
            return true;
        case Op::scatter: leaves.push_back(key(sh.root, r * s + c)); return true;
        case Op::all_to_all: leaves.push_back(key(c / s, r * s + c % s)); return true;
        case Op::send_recv:
            if (r != sh.peer) return false;
            leaves.push_back(key(sh.root, c));
            return true;
    }
    return false;
}

/// Lane of each step of merged streams (merge_lanes()): chan_lane[rank][stream][i].
using ChanLanes = std::vector<std::vector<std::vector<uint32_t>>>;

/// One rank's lanes merged the way executor.hpp runs them on one worker: in proportion to their
/// lengths — the next step is taken from the unfinished lane that has done the smallest share of
/// its steps (index / length; ties: the lower lane), so lanes of unequal length (meet in the
/// middle: p/2 hops one way, (p-1)/2 the other) finish together; equal lanes alternate.
/// `lane_of` gets each step's lane.
inline std::vector<Step> merge_lanes(const std::vector<std::vector<Step>>& lanes, std::vector<uint32_t>& lane_of) {
    std::vector<Step> out;
    lane_of.clear();
    std::vector<uint64_t> idx(lanes.size(), 0);
    for (;;) {
        uint32_t best = kNoPeer;
        for (uint32_t l = 0; l < lanes.size(); ++l) {
            if (idx[l] >= lanes[l].size()) continue;
            if (best == kNoPeer || idx[l] * lanes[best].size() < idx[best] * lanes[l].size()) best = l;
        }
        if (best == kNoPeer) break;
        out.push_back(lanes[best][idx[best]++]);
        lane_of.push_back(best);
    }
    return out;
}

/// Do a rank's lanes send to pairwise different peers and receive from pairwise different peers
/// (so on one worker each lane's messages have link directions of their own)?
/// `sh` and `rank` resolve multicast peer sets (needed only when a step multicasts).
inline bool lanes_disjoint(const std::vector<std::vector<Step>>& lanes, const Shape* sh = nullptr, uint32_t rank = 0) {
    std::vector<uint32_t> tx_owner, rx_owner;  // peer -> lane + 1
    for (uint32_t l = 0; l < lanes.size(); ++l)
        for (const Step& s : lanes[l]) {
            auto claim = [&](std::vector<uint32_t>& owner, uint32_t peer) {
                if (peer >= owner.size()) owner.resize(peer + 1, 0);
                if (owner[peer] && owner[peer] != l + 1) return false;
                owner[peer] = l + 1;
                return true;
            };
            bool ok = true;
            if (s.cast == Cast::unicast || sh == nullptr) {
                if (verb_sends(s.verb)) ok = claim(tx_owner, s.send_peer);
            } else {
                for_each_send_peer(*sh, rank, s, [&](uint32_t q) { ok = ok && claim(tx_owner, q); });
            }
            if (!ok) return false;
            if (verb_receives(s.verb) && !claim(rx_owner, s.recv_peer)) return false;
        }
    return true;
}

inline CheckResult check_streams(const Shape& sh, const Streams& st, const CheckOptions& opt,
                                 const ChanLanes* chan_lane = nullptr) {
    using namespace detail_check;
    CheckResult res;
    // the FIFO a step's messages use: its stream's lane, or (merged streams) its own lane
    auto cl = [&](uint32_t r, uint32_t l, uint32_t i) { return chan_lane ? (*chan_lane)[r][l][i] : l; };
    const uint32_t p = sh.ranks;
    const uint32_t grids[3] = {grid(sh, Buf::input), grid(sh, Buf::output), scratch_chunks(sh)};
    auto fail = [&](const char* kind, uint32_t r, uint32_t l, uint32_t i, uint32_t c, std::string msg) {
        res.ok = false;
        if (res.errors.size() < 16) res.errors.push_back({kind, r, l, i, c, std::move(msg)});
    };
    // state
    std::vector<std::array<std::vector<Value>, 3>> mem(p);
    std::vector<std::array<std::vector<uint32_t>, 3>> owner(p);  // lane that wrote, kNoPeer = none
    std::vector<std::vector<uint32_t>> writes(p);
    for (uint32_t r = 0; r < p; ++r) {
        for (int b = 0; b < 3; ++b) {
            mem[r][b].assign(grids[b], Value{});
            owner[r][b].assign(grids[b], kNoPeer);
        }
        for (uint32_t c = 0; c < grids[0]; ++c) {
            Value& v = mem[r][0][c];
            v.init = true;
            v.leaves = {r * grids[0] + c};
            v.tree = v.sym = leaf_hash(r * grids[0] + c);
        }
        writes[r].assign(grids[1], 0);
    }
    struct Msg {
        std::vector<Value> vals;
        uint32_t step;
        uint32_t time;  // logical send time
    };
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::deque<Msg>> chan;  // (from, to, lane)
    std::vector<std::vector<uint32_t>> pc(p), clock(p);
    for (uint32_t r = 0; r < p; ++r) {
        pc[r].assign(st[r].size(), 0);
        clock[r].assign(st[r].size(), 0);
    }

    // static checks of one step; returns false if it cannot run
    auto valid = [&](uint32_t r, uint32_t l, uint32_t i, const Step& s) {
        bool ok = true;
        if (s.count == 0) { fail("bad_chunk", r, l, i, kNoPeer, where(r, l, i) + ": count 0 (" + describe(s) + ")"); return false; }
        auto peer_ok = [&](uint32_t q, const char* what) {
            if (q >= p || q == r) {
                fail("bad_peer", r, l, i, kNoPeer, where(r, l, i) + ": " + what + " peer " + std::to_string(q) + " is not another rank (" + describe(s) + ")");
                return false;
            }
            if (!opt.multi_hop && !linked(sh, r, q)) {
                fail("bad_peer", r, l, i, kNoPeer, where(r, l, i) + ": " + what + " peer " + std::to_string(q) + " is not linked to rank " + std::to_string(r) + " in the " + topology_name(sh.topo) + " (" + describe(s) + ")");
                return false;
            }
            return true;
        };
        if (verb_receives(s.verb)) ok &= peer_ok(s.recv_peer, "receive");
        if (verb_sends(s.verb)) {
            if (s.cast != Cast::unicast && !cast_lowerable(s.verb)) {
                fail("bad_peer", r, l, i, kNoPeer, where(r, l, i) + ": a multicast on " + verb_name(s.verb) + ", which keeps nothing to resend (multicast is allowed on send, recv_copy_send and recv_reduce_copy_send)");
                ok = false;
            } else {
                for_each_send_peer(sh, r, s, [&](uint32_t q) { ok &= peer_ok(q, "send"); });
            }
        }
        auto range_ok = [&](ChunkRef c, const char* what) {
            const uint32_t g = grids[int(c.buf)];
            if (uint64_t(c.chunk) + s.count > g) {
                fail("bad_chunk", r, l, i, c.chunk, where(r, l, i) + ": " + what + " " + buf_name(c.buf) + "[" + std::to_string(c.chunk) + "] x" + std::to_string(s.count) + " is outside the grid of " + std::to_string(g) + " chunks");
                return false;
            }
            return true;
        };
        if (verb_reads_src(s.verb)) ok &= range_ok(s.src, "src");
        if (verb_writes_dst(s.verb)) {
            ok &= range_ok(s.dst, "dst");
            if (s.dst.buf == Buf::input) { fail("bad_chunk", r, l, i, s.dst.chunk, where(r, l, i) + ": writes the input buffer"); ok = false; }
        }
        return ok;
    };
    std::vector<std::vector<bool>> broken(p);
    for (uint32_t r = 0; r < p; ++r) {
        broken[r].assign(st[r].size(), false);
        for (uint32_t l = 0; l < st[r].size(); ++l)
            for (uint32_t i = 0; i < st[r][l].size(); ++i)
                if (!valid(r, l, i, st[r][l][i])) broken[r][l] = true;
    }
    if (!res.ok) return res;

    auto touch = [&](uint32_t r, uint32_t l, uint32_t i, ChunkRef c, uint32_t n, bool write) {
        if (c.buf == Buf::input) return true;
        for (uint32_t k = 0; k < n; ++k) {
            uint32_t& o = owner[r][int(c.buf)][c.chunk + k];
            if (o != kNoPeer && o != l) {
                fail("lane_race", r, l, i, c.chunk + k, where(r, l, i) + ": " + buf_name(c.buf) + "[" + std::to_string(c.chunk + k) + "] is also used by lane " + std::to_string(o));
                return false;
            }
            if (write) o = l;
        }
        return true;
    };
    auto read = [&](uint32_t r, uint32_t l, uint32_t i, ChunkRef c, uint32_t n, std::vector<Value>& out) {
        if (!touch(r, l, i, c, n, false)) return false;
        out.clear();
        for (uint32_t k = 0; k < n; ++k) {
            const Value& v = mem[r][int(c.buf)][c.chunk + k];
            if (!v.init) {
                fail("uninit", r, l, i, c.chunk + k, where(r, l, i) + ": reads " + buf_name(c.buf) + "[" + std::to_string(c.chunk + k) + "], which nothing wrote");
                return false;
            }
            out.push_back(v);
        }
        return true;
    };
    auto write = [&](uint32_t r, uint32_t l, uint32_t i, ChunkRef c, const std::vector<Value>& vals) {
        if (!touch(r, l, i, c, uint32_t(vals.size()), true)) return false;
        for (uint32_t k = 0; k < vals.size(); ++k) {
            mem[r][int(c.buf)][c.chunk + k] = vals[k];
            if (c.buf == Buf::output) {
                const uint32_t n = ++writes[r][c.chunk + k];
                if (opt.max_writes && n > opt.max_writes)
                    fail("written_twice", r, l, i, c.chunk + k, where(r, l, i) + ": out[" + std::to_string(c.chunk + k) + "] written " + std::to_string(n) + " times (at most " + std::to_string(opt.max_writes) + " expected)");
            }
        }
        return true;
    };

    // one attempt to run step pc of (r, l); returns true if it ran
    auto run = [&](uint32_t r, uint32_t l) -> bool {
        uint32_t time = clock[r][l];
        const uint32_t i = pc[r][l];
        const Step& s = st[r][l][i];
        std::deque<Msg>* in = nullptr;
        std::vector<std::deque<Msg>*> outq;  // one channel per receiver (several: a multicast)
        const uint32_t ln = cl(r, l, i);
        if (verb_receives(s.verb)) {
            in = &chan[{s.recv_peer, r, ln}];
            if (in->empty()) return false;
        }
        bool room = true;
        for_each_send_peer(sh, r, s, [&](uint32_t q) {
            outq.push_back(&chan[{r, q, ln}]);
            room = room && !(opt.capacity && outq.back()->size() >= opt.capacity);
        });
        if (!room) return false;
        std::vector<Value> got, local, result;
        if (in) {
            Msg m = std::move(in->front());
            in->pop_front();
            if (m.vals.size() != s.count) {
                fail("count_mismatch", r, l, i, kNoPeer, where(r, l, i) + ": receives " + std::to_string(s.count) + " chunk(s) from rank " + std::to_string(s.recv_peer) + " whose matching send (step " + std::to_string(m.step) + ") has " + std::to_string(m.vals.size()));
                return true;
            }
            got = std::move(m.vals);
            time = std::max(time, m.time + hops(sh, s.recv_peer, r));
        }
        switch (s.verb) {
            case Verb::send:
            case Verb::copy:
                if (!read(r, l, i, s.src, s.count, result)) return true;
                break;
            case Verb::recv:
            case Verb::recv_copy_send: result = got; break;
            case Verb::recv_reduce_send:
            case Verb::recv_reduce_copy:
            case Verb::recv_reduce_copy_send:
                if (!read(r, l, i, s.src, s.count, local)) return true;
                for (uint32_t k = 0; k < s.count; ++k) result.push_back(combine(local[k], got[k]));
                break;
            case Verb::reduce_local: {
                std::vector<Value> d;
                if (!read(r, l, i, s.src, s.count, local) || !read(r, l, i, s.dst, s.count, d)) return true;
                for (uint32_t k = 0; k < s.count; ++k) result.push_back(combine(d[k], local[k]));
                break;
            }
        }
        if (verb_writes_dst(s.verb) && !write(r, l, i, s.dst, result)) return true;
        for (std::deque<Msg>* q : outq) q->push_back(Msg{result, i, time});
        if (verb_sends(s.verb)) {  // a multicast is one message (injected once)
            ++res.messages;
            res.chunk_messages += s.count;
        }
        ++res.steps;
        if (opt.record) res.events.push_back(Event{r, l, i, time, s});
        clock[r][l] = time + (verb_sends(s.verb) ? 1 : 0);
        res.time = std::max(res.time, clock[r][l]);
        return true;
    };

    for (;;) {
        bool progress = false, done = true;
        std::vector<std::pair<uint32_t, uint32_t>> ready;
        for (uint32_t r = 0; r < p; ++r)
            for (uint32_t l = 0; l < st[r].size(); ++l)
                if (pc[r][l] < st[r][l].size()) ready.push_back({r, l});
        // a pass: every stream tries one step; sends of this pass are visible next pass
        std::map<std::tuple<uint32_t, uint32_t, uint32_t>, size_t> visible;
        for (auto& [k, q] : chan) visible[k] = q.size();
        for (auto [r, l] : ready) {
            done = false;
            const Step& s = st[r][l][pc[r][l]];
            if (verb_receives(s.verb)) {
                auto it = visible.find({s.recv_peer, r, cl(r, l, pc[r][l])});
                if (it == visible.end() || it->second == 0) continue;
                --it->second;
            }
            if (run(r, l)) {
                ++pc[r][l];
                progress = true;
            }
            if (!res.ok) return res;
        }
        if (done) break;
        if (!progress) {
            // deadlock: follow the waits-for edges from the first blocked stream to find a cycle
            std::string msg;
            auto blocked_on = [&](uint32_t r, uint32_t l, uint32_t& q) {
                const Step& s = st[r][l][pc[r][l]];
                if (verb_receives(s.verb) && chan[{s.recv_peer, r, cl(r, l, pc[r][l])}].empty()) { q = s.recv_peer; return std::string("waits for a message from rank ") + std::to_string(q); }
                q = s.send_peer;
                for_each_send_peer(sh, r, s, [&](uint32_t c) {  // the (first) full channel
                    if (q == s.send_peer && opt.capacity && chan[{r, c, cl(r, l, pc[r][l])}].size() >= opt.capacity) q = c;
                });
                return std::string("waits for room in the channel to rank ") + std::to_string(q);
            };
            uint32_t r = ready[0].first, l = ready[0].second;
            std::vector<std::pair<uint32_t, uint32_t>> path;
            for (uint32_t hop = 0; hop <= p * kMaxLanes + 1; ++hop) {
                auto seen = std::find(path.begin(), path.end(), std::make_pair(r, l));
                if (seen != path.end()) { path.erase(path.begin(), seen); break; }
                path.push_back({r, l});
                if (pc[r][l] >= st[r][l].size()) break;
                uint32_t q;
                blocked_on(r, l, q);
                if (l >= st[q].size() || pc[q][l] >= st[q][l].size()) { path.push_back({q, l}); break; }
                r = q;
            }
            for (auto [rr, ll] : path) {
                if (pc[rr][ll] >= st[rr][ll].size()) { msg += "rank " + std::to_string(rr) + " lane " + std::to_string(ll) + " has finished (it never sends that message)"; break; }
                uint32_t q;
                const std::string w = blocked_on(rr, ll, q);
                msg += where(rr, ll, pc[rr][ll]) + " (" + describe(st[rr][ll][pc[rr][ll]]) + ") " + w + "; ";
            }
            const auto [r0, l0] = ready[0];
            fail("deadlock", r0, l0, pc[r0][l0], kNoPeer, "deadlock after " + std::to_string(res.steps) + " steps: " + msg);
            return res;
        }
    }
    for (auto& [k, q] : chan)
        if (!q.empty()) {
            const auto [from, to, l] = k;
            fail("unreceived", from, l, q.front().step, kNoPeer, where(from, l, q.front().step) + ": " + std::to_string(q.size()) + " message(s) to rank " + std::to_string(to) + " never received");
        }
    // postcondition
    std::vector<uint32_t> want;
    std::vector<uint64_t> trees(grids[1], 0);
    std::vector<uint32_t> tree_rank(grids[1], kNoPeer);
    std::vector<uint64_t> syms(grids[1], 0);
    for (uint32_t r = 0; r < p; ++r)
        for (uint32_t c = 0; c < grids[1]; ++c) {
            const bool result = expected(sh, r, c, want);
            if (!result) {
                if (writes[r][c]) fail("stray_write", r, kNoPeer, kNoPeer, c, "rank " + std::to_string(r) + ": out[" + std::to_string(c) + "] written, but " + op_name(sh.op) + " leaves this rank's output alone");
                continue;
            }
            const Value& v = mem[r][1][c];
            if (!v.init) { fail("wrong_value", r, kNoPeer, kNoPeer, c, "rank " + std::to_string(r) + ": out[" + std::to_string(c) + "] never written"); continue; }
            std::vector<uint32_t> got = v.leaves;
            std::sort(got.begin(), got.end());
            if (got != want) {
                // name the first difference
                std::string d;
                std::map<uint32_t, int> diff;
                for (auto x : want) diff[x]--;
                for (auto x : got) diff[x]++;
                for (auto [x, n] : diff) {
                    if (n == 0) continue;
                    const std::string leaf = "rank " + std::to_string(x / grids[0]) + "'s in[" + std::to_string(x % grids[0]) + "]";
                    d += n < 0 ? "missing " + leaf : (std::count(want.begin(), want.end(), x) ? leaf + " counted " + std::to_string(n + 1) + " times" : "foreign " + leaf);
                    d += "; ";
                }
                fail("wrong_value", r, kNoPeer, kNoPeer, c, "rank " + std::to_string(r) + ": out[" + std::to_string(c) + "]: " + d);
                continue;
            }
            if (sh.op == Op::all_reduce || sh.op == Op::barrier) {
                const uint64_t t = opt.non_commutative ? v.tree : v.sym;
                if (tree_rank[c] == kNoPeer) { trees[c] = t; tree_rank[c] = r; syms[c] = v.sym; }
                else if (trees[c] != t)
                    fail("order", r, kNoPeer, kNoPeer, c, "out[" + std::to_string(c) + "] is combined in a different order on rank " + std::to_string(tree_rank[c]) + " and rank " + std::to_string(r) +
                         (syms[c] == v.sym ? std::string(" (the same combine tree with the operands of some combine swapped: a non-commutative operator gives different results)")
                                           : std::string(" (results would differ in the last bits)")));
            }
        }
    if (opt.record)
        for (uint32_t r = 0; r < p; ++r) res.outputs.push_back(mem[r][1]);
    return res;
}

/// The schedule as an executor that STREAMS each chunk as `pieces` packet-sized messages runs it:
/// every step becomes `pieces` steps on pieces (chunk c -> pieces c*pieces .. c*pieces+pieces-1 of
/// a grid `pieces` times finer; the returned shape has chunks * pieces). Checking the result with
/// capacity C models C packet slots per channel: rings then need pieces + 1 slots (each rank
/// injects a whole chunk before it receives), so executors should make a chunk one packet
/// (slicer.hpp) rather than stream a larger chunk.
inline std::pair<Shape, Streams> stream_pieces(const Shape& sh, uint32_t pieces) {
    Shape fine = sh;
    fine.chunks = sh.chunks * pieces;
    Streams st = collect(sh);
    for (auto& rank : st)
        for (auto& lane : rank) {
            std::vector<Step> out;
            for (const Step& s : lane)
                for (uint32_t k = 0; k < pieces * s.count; ++k) {
                    Step t = s;
                    t.count = 1;
                    t.src.chunk = s.src.chunk * pieces + k;
                    t.dst.chunk = s.dst.chunk * pieces + k;
                    out.push_back(t);
                }
            lane = std::move(out);
        }
    return {fine, std::move(st)};
}

/// Checks the shape's own algorithm (dispatch by op and method).
inline CheckResult check(const Shape& sh, CheckOptions opt = {}) {
    CheckResult res;
    if (const char* e = validate(sh)) {
        res.ok = false;
        res.errors.push_back({"invalid", kNoPeer, kNoPeer, kNoPeer, kNoPeer, e});
        return res;
    }
    opt.multi_hop = opt.multi_hop || multi_hop(sh);
    Streams st = collect(sh);
    if (opt.merged_lanes) {
        ChanLanes lanes_of(st.size());
        for (uint32_t r = 0; r < st.size(); ++r) {
            lanes_of[r].resize(1);
            if (st[r].size() > 1 && (!lanes_mergeable(sh) || !lanes_disjoint(st[r], &sh, r))) {
                res.ok = false;
                res.errors.push_back({"invalid", r, kNoPeer, kNoPeer, kNoPeer,
                                      "merged_lanes: rank " + std::to_string(r) + "'s lanes share a peer or the method's lanes may not merge (lanes_mergeable); an executor runs them in turn (serial_lanes)"});
                return res;
            }
            std::vector<Step> m = merge_lanes(st[r], lanes_of[r][0]);
            st[r].assign(1, std::move(m));
        }
        return check_streams(sh, st, opt, &lanes_of);
    }
    if (opt.serial_lanes)
        for (auto& rank : st) {
            std::vector<Step> all;
            for (auto& lane : rank) all.insert(all.end(), lane.begin(), lane.end());
            rank.assign(1, std::move(all));
        }
    return check_streams(sh, st, opt);
}

}  // namespace kccl::coll::host
