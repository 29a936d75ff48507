// kccl/wafer/host/model_sim.hpp — a reference simulator of the wafer performance model of the
// Cerebras WSE reduce/allreduce thesis (its chapter 3), cycle by cycle and wavelet by wavelet.
//
// WHAT IT IS
//   The oracle the cost model (wafer/cost.hpp) and the routed-fabric emulation are checked
//   against. It is deliberately small and slow: every cycle it looks at every wavelet that could
//   move. Host only (C++17, allocates, throws `ModelSimError`).
//
// THE MODEL'S RULES, AS SIMULATED
//   * Time is counted in cycles from 0. A processor operation "in cycle t" completes at time t.
//   * Processor (one per PE): per cycle at most one wavelet taken from the off-ramp and at most
//     one wavelet put on the on-ramp (the thesis's "it can both send a wavelet to the onramp and
//     receive a wavelet from the offramp each cycle"). send = load + emit (T_send = 1), store =
//     take + add into memory (T_store = 1), relay = take + add + emit, all in one cycle (its class
//     O of one-cycle operations). An operation on element k in cycle t needs element k to have
//     reached the processor at time <= t-1.
//   * On-ramp and off-ramp: T_R cycles, one wavelet entering per cycle. A wavelet emitted at time
//     t is in its router at t + T_R; a wavelet leaving a router for the off-ramp at time t reaches
//     the processor at t + T_R.
//   * Links: 1 cycle per hop, one wavelet per cycle per link direction. Routers add no delay: a
//     wavelet in a router at time t may leave it at time t.
//   * Multicast: a wavelet leaves a router through all of its outputs (links, off-ramp) in the
//     same cycle, at no extra cost; it waits until all of them are free.
//   * Streams and switch positions. A stream is one vector sent by one PE, along a tree of routers
//     (a path, or a multicast tree). Each output (a link direction or an off-ramp) serves the
//     streams that use it in the order of their `key`: a stream may use the output only after
//     every stream with a smaller key has passed it completely (the router's switch position
//     moves on behind the last wavelet, as control wavelets do). Streams with equal keys (on
//     other colors) share the output, one wavelet per cycle: the stream whose first wavelet was
//     emitted first takes it (ties: the source PE first in row-major order, then the stream made
//     first), the others use the cycles it leaves free. (The thesis fixes one wavelet per cycle per link direction, not the arbitration.) Wavelets that wait are buffered in their
//     router (per stream, unbounded): the thesis's "all other wavelets will stall".
//   * Programs. Each PE runs a list of phases; a phase is a set of operations (send n, store n,
//     relay n) that run concurrently (earlier operations get the ramp first); the next phase
//     starts in the cycle after the last operation of the phase. Patterns are written as
//     programs + streams (`model_patterns.hpp`).
//   * The run's cycle count is the cycle of the last operation of any PE. If nothing can move
//     for 4 T_R + 64 consecutive cycles, the run fails with `ModelSimError` naming who waits for
//     what (a pattern with inconsistent keys deadlocks instead of hanging).
#pragma once

#include <common/direction.hpp>
#include <common/host/error.hpp>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kccl::wafer::host {

struct ModelSimError : ErrorOf<Errc::emulation> {
    using ErrorOf::ErrorOf;
};

class ModelSim {
public:
    enum class OpKind : uint8_t { send, store, relay };

    ModelSim(uint32_t cols, uint32_t rows, uint32_t t_r) : cols_(cols), rows_(rows), t_r_(t_r) {
        if (t_r < 1) throw ModelSimError("model_sim: T_R must be at least 1 cycle, got 0");
        if (cols < 1 || rows < 1)
            throw ModelSimError("model_sim: the grid needs at least 1 x 1 PEs, got " + std::to_string(cols) +
                                " x " + std::to_string(rows));
        programs_.resize(size_t(cols) * rows);
        outputs_.resize(size_t(cols) * rows * 5);
    }

    uint32_t cols() const { return cols_; }
    uint32_t rows() const { return rows_; }
    uint32_t pe(uint32_t x, uint32_t y) const { return y * cols_ + x; }
    uint32_t pes() const { return cols_ * rows_; }

    /// A new stream of `n` wavelets emitted by PE `src`, starting in `src`'s router. Returns its id.
    uint32_t add_stream(uint32_t src, uint32_t n, uint64_t key) {
        check_pe(src, "stream source");
        Stream s;
        s.src = src;
        s.n = n;
        s.key = key;
        s.nodes.push_back(Node{src, -1, {}, false, {}, 0, {}});
        streams_.push_back(std::move(s));
        return uint32_t(streams_.size() - 1);
    }
    /// Extend stream `s` from its node `from` one hop in `dir`; returns the new node's index.
    uint32_t hop(uint32_t s, uint32_t from, Dir dir) {
        Stream& st = stream(s);
        if (from >= st.nodes.size()) throw ModelSimError("model_sim: hop from a node the stream does not have");
        const uint32_t at = st.nodes[from].pe;
        uint32_t x = at % cols_, y = at / cols_;
        switch (dir) {
            case Dir::E: ++x; break;
            case Dir::W: x = x == 0 ? cols_ : x - 1; break;
            case Dir::N: y = y == 0 ? rows_ : y - 1; break;
            case Dir::S: ++y; break;
            default: throw ModelSimError("model_sim: a hop goes N, S, E or W");
        }
        if (x >= cols_ || y >= rows_)
            throw ModelSimError("model_sim: stream " + std::to_string(s) + " leaves the grid at PE " +
                                std::to_string(at));
        for (const auto& c : st.nodes[from].children)
            if (c.dir == dir) throw ModelSimError("model_sim: a stream cannot use one link twice from one router");
        st.nodes.push_back(Node{pe(x, y), int32_t(from), {}, false, {}, 0, {}});
        const uint32_t idx = uint32_t(st.nodes.size() - 1);
        st.nodes[from].children.push_back(Child{dir, idx});
        return idx;
    }
    /// Straight path (x first, then y) from node `from` of stream `s` to PE `dst`; returns the node at `dst`.
    /// With `deliver_along`, every router on the way (not the start) also delivers to its PE.
    uint32_t path(uint32_t s, uint32_t from, uint32_t dst, bool deliver_along = false) {
        check_pe(dst, "path destination");
        uint32_t node = from;
        auto here = [&] { return stream(s).nodes[node].pe; };
        while (here() % cols_ != dst % cols_) {
            node = hop(s, node, here() % cols_ < dst % cols_ ? Dir::E : Dir::W);
            if (deliver_along && here() != dst) deliver(s, node);
        }
        while (here() / cols_ != dst / cols_) {
            node = hop(s, node, here() / cols_ < dst / cols_ ? Dir::S : Dir::N);
            if (deliver_along && here() != dst) deliver(s, node);
        }
        return node;
    }
    /// Node `node` of stream `s` also delivers each wavelet to its PE's processor (off-ramp).
    void deliver(uint32_t s, uint32_t node) {
        Stream& st = stream(s);
        if (node >= st.nodes.size()) throw ModelSimError("model_sim: deliver at a node the stream does not have");
        if (st.nodes[node].pe == st.src && node == 0)
            throw ModelSimError("model_sim: a stream cannot deliver to its own source");
        st.nodes[node].deliver = true;
    }

    /// Start a new phase in PE `p`'s program.
    void phase(uint32_t p) {
        check_pe(p, "phase");
        programs_[p].phases.emplace_back();
    }
    /// Add an operation to PE `p`'s current phase. send: emit `n` wavelets on `out`; store: take
    /// `n` wavelets of `in`; relay: take element k of `in`, emit element k on `out`.
    void op(uint32_t p, OpKind k, int64_t in, int64_t out, uint32_t n) {
        check_pe(p, "op");
        if (programs_[p].phases.empty()) phase(p);
        if ((k != OpKind::send) != (in >= 0) || (k != OpKind::store) != (out >= 0))
            throw ModelSimError("model_sim: op streams do not match its kind");
        if (out >= 0 && (stream(uint32_t(out)).src != p || stream(uint32_t(out)).n != n))
            throw ModelSimError("model_sim: PE " + std::to_string(p) + " emits on stream " + std::to_string(out) +
                                " which it does not source (or with another length)");
        if (in >= 0 && n > stream(uint32_t(in)).n)
            throw ModelSimError("model_sim: PE " + std::to_string(p) + " takes more wavelets than the stream has");
        programs_[p].phases.back().push_back(Op{k, in, out, n, 0, -1});
    }

    struct Result {
        uint64_t cycles = 0;              ///< cycle of the last operation of any PE
        std::vector<uint64_t> finish;     ///< per PE: cycle of its last operation (0: none)
        uint64_t wavelet_hops = 0;        ///< link traversals (a measure of simulation work)
    };

    /// Run to completion. Can be called once.
    Result run() {
        if (ran_) throw ModelSimError("model_sim: run() called twice");
        ran_ = true;
        prepare();
        Result r;
        r.finish.assign(pes(), 0);
        uint64_t t = 0, idle = 0;
        const uint64_t patience = 4ull * t_r_ + 64;
        std::vector<uint32_t> active_pes;
        for (uint32_t p = 0; p < pes(); ++p)
            if (!programs_[p].phases.empty()) active_pes.push_back(p);
        for (uint32_t p : active_pes) prog_skip_empty(p, 0);
        size_t unfinished = count_unfinished();
        while (unfinished > 0) {
            ++t;
            bool moved = false;
            // 1. Routers: wavelets in routers at time t leave through their outputs.
            moved |= route(t, r);
            // 2. Processors: one take and one emit per PE per cycle.
            for (uint32_t p : active_pes) moved |= step_pe(p, t, r);
            unfinished = count_unfinished();
            idle = moved ? 0 : idle + 1;
            if (idle > patience) throw ModelSimError(deadlock_report(t));
        }
        for (uint32_t p = 0; p < pes(); ++p) r.cycles = std::max(r.cycles, r.finish[p]);
        return r;
    }

private:
    struct Child {
        Dir dir;
        uint32_t node;
    };
    struct Node {
        uint32_t pe;
        int32_t parent;
        std::vector<Child> children;
        bool deliver;
        std::vector<uint64_t> arrivals;   ///< time each wavelet reached this router
        uint32_t left = 0;                 ///< wavelets that have left this router
        std::vector<uint64_t> delivered;  ///< time each wavelet reached this PE's processor
    };
    struct Stream {
        uint32_t src = 0, n = 0;
        uint64_t key = 0;
        std::vector<Node> nodes;
        std::vector<uint64_t> emitted;  ///< time each wavelet was emitted by the source processor
    };
    struct Op {
        OpKind kind;
        int64_t in, out;
        uint32_t n, done;
        int32_t in_node;  ///< node of `in` that delivers to this PE
    };
    struct Program {
        std::vector<std::vector<Op>> phases;
        size_t cur = 0;
        uint64_t phase_start = 1;  ///< first cycle the current phase may run
    };
    struct Use {
        uint64_t key;
        uint32_t stream;
        uint32_t passed = 0;  ///< wavelets of this stream that have gone through the output
    };
    struct Output {
        std::vector<Use> uses;  ///< sorted by key
        size_t first = 0;       ///< uses before this one have passed completely
        uint64_t busy_at = 0;   ///< last time a wavelet went through (one per cycle)
    };

    Stream& stream(uint32_t s) {
        if (s >= streams_.size()) throw ModelSimError("model_sim: no stream " + std::to_string(s));
        return streams_[s];
    }
    void check_pe(uint32_t p, const char* what) const {
        if (p >= pes())
            throw ModelSimError(std::string("model_sim: ") + what + " PE " + std::to_string(p) +
                                " is outside the " + std::to_string(cols_) + " x " + std::to_string(rows_) + " grid");
    }
    size_t out_id(uint32_t pe, uint32_t port) const { return size_t(pe) * 5 + port; }  // a router's links (kccl::Dir) and its off-ramp (Dir::ramp)

    void prepare() {
        for (uint32_t s = 0; s < streams_.size(); ++s) {
            Stream& st = streams_[s];
            for (auto& nd : st.nodes) {
                for (auto& c : nd.children) outputs_[out_id(nd.pe, uint32_t(c.dir))].uses.push_back(Use{st.key, s, 0});
                if (nd.deliver) outputs_[out_id(nd.pe, Dir::ramp)].uses.push_back(Use{st.key, s, 0});
            }
        }
        for (auto& o : outputs_)
            std::stable_sort(o.uses.begin(), o.uses.end(), [](const Use& a, const Use& b) { return a.key < b.key; });
        for (uint32_t p = 0; p < pes(); ++p)
            for (auto& ph : programs_[p].phases)
                for (auto& o : ph) {
                    if (o.in < 0) continue;
                    const Stream& st = streams_[size_t(o.in)];
                    for (uint32_t i = 0; i < st.nodes.size(); ++i)
                        if (st.nodes[i].deliver && st.nodes[i].pe == p) o.in_node = int32_t(i);
                    if (o.in_node < 0)
                        throw ModelSimError("model_sim: PE " + std::to_string(p) + " takes stream " +
                                            std::to_string(o.in) + " which is not delivered to it");
                }
    }

    Use* use_of(Output& o, uint32_t s) {
        for (size_t i = o.first; i < o.uses.size(); ++i)
            if (o.uses[i].stream == s) return &o.uses[i];
        return nullptr;
    }
    /// May stream s pass output o now (switch position reached)?
    bool admitted(Output& o, uint32_t s) {
        if (o.first >= o.uses.size()) return false;
        const uint64_t k = o.uses[o.first].key;
        for (size_t i = o.first; i < o.uses.size() && o.uses[i].key == k; ++i)
            if (o.uses[i].stream == s) return true;
        return false;
    }
    void passed(Output& o, uint32_t s) {
        Use* u = use_of(o, s);
        ++u->passed;
        while (o.first < o.uses.size() && o.uses[o.first].passed == streams_[o.uses[o.first].stream].n) ++o.first;
    }

    bool route(uint64_t t, Result& r) {
        // Requests: every head wavelet that is in its router by time t asks for all its outputs.
        struct Req {
            uint32_t s, node;
        };
        std::vector<Req> reqs;
        for (uint32_t s = 0; s < streams_.size(); ++s) {
            Stream& st = streams_[s];
            for (uint32_t i = 0; i < st.nodes.size(); ++i) {
                Node& nd = st.nodes[i];
                if (nd.left < nd.arrivals.size() && nd.arrivals[nd.left] <= t &&
                    (!nd.children.empty() || nd.deliver))
                    reqs.push_back(Req{s, i});
            }
        }
        // Grant: an output takes, among admitted requesters, the stream first emitted (ties: the
        // source PE first in row-major order, then the stream made first).
        if (winner_.size() != outputs_.size()) winner_.assign(outputs_.size(), -1);
        std::vector<int64_t>& winner = winner_;
        std::vector<size_t> touched;
        auto consider = [&](size_t oid, uint32_t s) {
            Output& o = outputs_[oid];
            if (o.busy_at == t || !admitted(o, s)) return;
            if (winner[oid] < 0) {
                winner[oid] = s;
                touched.push_back(oid);
                return;
            }
            const uint32_t a = uint32_t(winner[oid]);
            const uint64_t ea = streams_[a].emitted.front(), es = streams_[s].emitted.front();
            const uint32_t pa = streams_[a].src, ps = streams_[s].src;
            if (es < ea || (es == ea && (ps < pa || (ps == pa && s < a)))) winner[oid] = s;
        };
        for (const Req& q : reqs) {
            const Node& nd = streams_[q.s].nodes[q.node];
            for (const auto& c : nd.children) consider(out_id(nd.pe, uint32_t(c.dir)), q.s);
            if (nd.deliver) consider(out_id(nd.pe, Dir::ramp), q.s);
        }
        bool moved = false;
        for (const Req& q : reqs) {
            Stream& st = streams_[q.s];
            Node& nd = st.nodes[q.node];
            bool all = true;
            for (const auto& c : nd.children) all &= winner[out_id(nd.pe, uint32_t(c.dir))] == int64_t(q.s);
            if (nd.deliver) all &= winner[out_id(nd.pe, Dir::ramp)] == int64_t(q.s);
            if (!all) continue;
            for (const auto& c : nd.children) {
                Output& o = outputs_[out_id(nd.pe, uint32_t(c.dir))];
                o.busy_at = t;
                passed(o, q.s);
                st.nodes[c.node].arrivals.push_back(t + 1);
                ++r.wavelet_hops;
            }
            if (nd.deliver) {
                Output& o = outputs_[out_id(nd.pe, Dir::ramp)];
                o.busy_at = t;
                passed(o, q.s);
                nd.delivered.push_back(t + t_r_);
            }
            ++nd.left;
            moved = true;
        }
        for (size_t oid : touched) winner[oid] = -1;
        return moved;
    }

    bool step_pe(uint32_t p, uint64_t t, Result& r) {
        Program& pg = programs_[p];
        if (pg.cur >= pg.phases.size() || t < pg.phase_start) return false;
        bool took = false, emitted = false, moved = false;
        auto& ph = pg.phases[pg.cur];
        for (Op& o : ph) {
            if (o.done >= o.n) continue;
            const bool needs_in = o.in >= 0, needs_out = o.out >= 0;
            if ((needs_in && took) || (needs_out && emitted)) continue;
            if (needs_in) {
                const auto& d = streams_[size_t(o.in)].nodes[size_t(o.in_node)].delivered;
                if (d.size() <= o.done || d[o.done] + 1 > t) continue;
            }
            if (needs_in) took = true;
            if (needs_out) {
                emitted = true;
                Stream& st = streams_[size_t(o.out)];
                st.emitted.push_back(t);
                st.nodes[0].arrivals.push_back(t + t_r_);
            }
            ++o.done;
            r.finish[p] = t;
            moved = true;
        }
        prog_skip_empty(p, t);
        return moved;
    }
    void prog_skip_empty(uint32_t p, uint64_t t) {
        Program& pg = programs_[p];
        while (pg.cur < pg.phases.size()) {
            bool done = true;
            for (const Op& o : pg.phases[pg.cur]) done &= o.done >= o.n;
            if (!done) break;
            ++pg.cur;
            pg.phase_start = t + 1;
        }
    }
    size_t count_unfinished() const {
        size_t n = 0;
        for (const auto& pg : programs_) n += pg.cur < pg.phases.size();
        return n;
    }

    std::string deadlock_report(uint64_t t) {
        std::string m = "model_sim: no wavelet or operation moved for " + std::to_string(4ull * t_r_ + 64) +
                        " cycles (at cycle " + std::to_string(t) + "); waiting:";
        uint32_t shown = 0;
        for (uint32_t p = 0; p < pes() && shown < 16; ++p) {
            const Program& pg = programs_[p];
            if (pg.cur >= pg.phases.size()) continue;
            for (const Op& o : pg.phases[pg.cur]) {
                if (o.done >= o.n) continue;
                m += "\n  PE " + std::to_string(p) + " phase " + std::to_string(pg.cur) + ": " +
                     (o.kind == OpKind::send ? "send" : o.kind == OpKind::store ? "store" : "relay") + " element " +
                     std::to_string(o.done) + "/" + std::to_string(o.n);
                if (o.in >= 0) m += " of stream " + std::to_string(o.in);
                if (o.out >= 0) m += " onto stream " + std::to_string(o.out);
                ++shown;
            }
        }
        for (uint32_t s = 0; s < streams_.size() && shown < 32; ++s)
            for (const auto& nd : streams_[s].nodes)
                if (nd.left < nd.arrivals.size()) {
                    m += "\n  stream " + std::to_string(s) + " (key " + std::to_string(streams_[s].key) +
                         ") waits in the router of PE " + std::to_string(nd.pe) + " for a switch position";
                    ++shown;
                    break;
                }
        return m;
    }

    uint32_t cols_, rows_, t_r_;
    bool ran_ = false;
    std::vector<Stream> streams_;
    std::vector<Program> programs_;
    std::vector<Output> outputs_;
    std::vector<int64_t> winner_;  ///< per output, the stream granted this cycle (-1: none)
};

}  // namespace kccl::wafer::host
