// kccl/wafer/host/layout.hpp — a pattern's layout: the streams it uses (each a path or a
// multicast tree through routers) and the steps each PE takes on them; colors are assigned last.
//
// Contract
//   * A stream is a list of hops (router, the direction it arrives from, the directions it
//     leaves by: several = multicast, RAMP = delivered to that PE). Its source hop arrives from
//     RAMP. `path(from, to)` makes an X-then-Y unicast; `line_multicast` a row or column multicast
//     that delivers to every PE on the way; streams can be built hop by hop (`add_hop`).
//   * Steps name streams by id (send / recv / relay / advance); `finalize` assigns colors and
//     returns the Grid and every PE's kernel arguments (wafer/program.hpp's encoding).
//   * Groups: streams made in one group share a color and follow each other in creation order
//     through the routers they share. A router's switch positions for the group are its hops in
//     stream order, consecutive equal hops merged; the PE that sends stream k (when its router
//     has a later position) advances after sending, which lets stream k+1 through (this is how a
//     PE's children reach it one after the other on one color, as in the thesis's tree figure).
//     A stream made without a group is a group of its own.
//   * Colors: greedily, in the order of the first router each group touches, the lowest color
//     not used by an earlier group at any
//     router this one touches; so no rx set has two directions. Running out of the profile's
//     colors is the "too many colors" error, naming the router.
//   * Host-only (allocates, throws); C++17.
#pragma once

#include <common/host/error.hpp>
#include <wafer/host/grid.hpp>
#include <wafer/program.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <map>
#include <string>
#include <vector>

namespace kccl::wafer::host {

struct Hop {
    Coord at;
    Dir rx = Dir::ramp;
    DirSet tx;
};

class Layout {
public:
    Layout(uint32_t w, uint32_t h) : w_(w), h_(h) {}
    uint32_t width() const { return w_; }
    uint32_t height() const { return h_; }

    /// A new group: its streams share one color, in creation order (see the contract).
    uint32_t group() { return groups_++; }
    /// A new, empty stream (in a new group unless `grp` names one); returns its id.
    uint32_t stream(int grp = -1) {
        streams_.emplace_back();
        group_of_.push_back(grp < 0 ? group() : uint32_t(grp));
        return uint32_t(streams_.size() - 1);
    }
    void add_hop(uint32_t s, Coord at, Dir rx, DirSet tx) { streams_.at(s).push_back(Hop{at, rx, tx}); }
    /// Unicast from `from` to `to`: along the row first, then the column.
    uint32_t path(Coord from, Coord to, int grp = -1) {
        if (from == to) throw kccl::Error(kccl::Errc::plan, "fabric layout: a path from " + to_string(from) + " to itself");
        const uint32_t s = stream(grp);
        Coord c = from;
        Dir rx = Dir::ramp;
        while (c != to) {
            const Dir d = toward(c, to);
            add_hop(s, c, rx, d);
            c = neighbour(c, d);
            rx = opposite(d);
        }
        add_hop(s, to, rx, Dir::ramp);
        return s;
    }
    /// Row or column multicast from `from` to `to`: every PE after `from` gets a copy.
    uint32_t line_multicast(Coord from, Coord to) {
        const uint32_t s = stream();
        extend_line(s, from, Dir::ramp, to, DirSet{});
        return s;
    }
    /// Appends to stream s the hops from `from` (arriving from `rx`, also leaving by `extra` there)
    /// along a straight line to `to`, copying to every PE after `from`.
    void extend_line(uint32_t s, Coord from, Dir rx, Coord to, DirSet extra) {
        if (from == to) {
            add_hop(s, from, rx, extra | (rx == Dir::ramp ? DirSet{} : DirSet(Dir::ramp)));
            return;
        }
        if (from.x != to.x && from.y != to.y) throw kccl::Error(kccl::Errc::plan, "fabric layout: a line multicast goes along one row or column");
        const Dir d = toward(from, to);
        add_hop(s, from, rx, extra | DirSet(d) | (rx == Dir::ramp ? DirSet{} : DirSet(Dir::ramp)));
        for (Coord c = neighbour(from, d); c != to; c = neighbour(c, d)) add_hop(s, c, opposite(d), DirSet{d, Dir::ramp});
        add_hop(s, to, opposite(d), Dir::ramp);
    }

    // ---- steps --------------------------------------------------------------------------------
    void send(Coord pe, uint32_t s, uint32_t offset, uint32_t n) { push(pe, StepKind::send, kCopy, s, 0, offset, n); }
    void recv(Coord pe, uint32_t s, uint32_t offset, uint32_t n, coll::RedOp op) { push(pe, StepKind::recv, op, s, 0, offset, n); }
    void relay(Coord pe, uint32_t in, uint32_t out, uint32_t offset, uint32_t n, coll::RedOp op) { push(pe, StepKind::relay, op, in, out, offset, n); }
    void advance(Coord pe, uint32_t s) { push(pe, StepKind::advance, kCopy, s, 0, 0, 0); }
    /// Send n_out elements at byte offset off_out on stream `out` while receiving n_in on `in`
    /// into off_in (combined with op).
    void exchange(Coord pe, uint32_t out, uint32_t off_out, uint32_t n_out, uint32_t in, uint32_t off_in, uint32_t n_in, coll::RedOp op) {
        if (off_out > 0xFFFFu || off_in > 0xFFFFu || n_out > 0xFFFFu || n_in > 0xFFFFu)
            throw kccl::Error(kccl::Errc::plan, "fabric layout: an exchange's offsets and counts must fit in 16 bits (a PE has at most 64 KiB)");
        push(pe, StepKind::exchange, op, out, in, off_out | off_in << 16, n_out | n_in << 16);
    }

    /// The steps given to PE `pe` so far, in order (stream ids as given, before coloring).
    std::vector<Step> steps_at(Coord pe) const {
        const auto it = steps_.find(idx(pe));
        return it == steps_.end() ? std::vector<Step>{} : it->second;
    }

    struct Program {
        Coord pe;
        std::vector<uint32_t> args;
    };
    struct Result {
        Grid grid;
        std::vector<Program> programs;
        std::vector<uint32_t> color_of;  ///< per stream
        uint32_t colors_used = 0;
    };
    /// Colors the streams, configures a Grid for `profile`, encodes every PE's steps.
    Result finalize(const Profile& profile, coll::DataType type) const {
        Result r{Grid(profile, w_, h_), {}, {}, 0};
        std::vector<uint32_t> used(size_t(w_) * h_, 0);
        if (profile.colors > 32) throw kccl::Error(kccl::Errc::plan, "fabric layout: at most 32 colors are supported");
        r.color_of.resize(streams_.size());
        std::vector<std::vector<uint32_t>> members(groups_);
        for (uint32_t s = 0; s < streams_.size(); ++s) members[group_of_[s]].push_back(s);
        // Groups in order of the first router they touch (for routes along a line this is the
        // interval-graph order, in which greedy coloring uses the fewest colors).
        std::vector<std::pair<size_t, uint32_t>> order;
        for (uint32_t g = 0; g < groups_; ++g) {
            size_t lo = SIZE_MAX;
            for (uint32_t s : members[g])
                for (const Hop& h : streams_[s]) lo = std::min(lo, idx(h.at));
            order.push_back({lo, g});
        }
        std::stable_sort(order.begin(), order.end());
        for (const auto& og : order) {
            const uint32_t g = og.second;
            if (members[g].empty()) continue;
            uint32_t mask = 0;
            for (uint32_t s : members[g])
                for (const Hop& h : streams_[s]) {
                    if (!r.grid.contains(h.at))
                        throw kccl::Error(kccl::Errc::plan, "fabric layout: stream " + std::to_string(s) + " passes PE " + to_string(h.at) + ", outside the " +
                                                    std::to_string(w_) + " x " + std::to_string(h_) + " grid");
                    mask |= used[idx(h.at)];
                }
            // Each router's positions: the group's hops there in stream order, consecutive equal
            // ones merged into one position.
            std::map<size_t, std::vector<Position>> pos;
            bool switches = false;
            for (uint32_t s : members[g])
                for (const Hop& h : streams_[s]) {
                    auto& v = pos[idx(h.at)];
                    if (v.empty() || !(v.back().rx == DirSet(h.rx)) || !(v.back().tx == h.tx)) v.push_back(Position{h.rx, h.tx});
                    switches = switches || v.size() > 1;
                }
            uint32_t c = 0;
            while (c < profile.colors && (((mask >> c) & 1u) || (switches && !can_switch(profile, c)))) ++c;
            const auto& first = streams_[members[g].front()];
            if (c == profile.colors) {
                Coord worst = first.front().at;
                for (uint32_t s : members[g])
                    for (const Hop& h : streams_[s])
                        if (__builtin_popcount(used[idx(h.at)]) > __builtin_popcount(used[idx(worst)])) worst = h.at;
                throw kccl::Error(kccl::Errc::plan, "fabric layout: too many colors: the route from PE " + to_string(first.front().at) +
                                            " needs a color free at every router it crosses" + (switches ? " that supports switch positions" : "") +
                                            ", and PE " + to_string(worst) + " already uses " + std::to_string(__builtin_popcount(used[idx(worst)])) +
                                            " of the " + std::to_string(profile.colors) + " routable colors of " + profile.name);
            }
            r.colors_used = std::max(r.colors_used, c + 1);
            for (uint32_t s : members[g]) {
                r.color_of[s] = c;
                for (const Hop& h : streams_[s]) used[idx(h.at)] |= 1u << c;
            }
            for (const auto& kv : pos)
                for (const Position& p : kv.second) r.grid.add_position(Coord{uint32_t(kv.first % w_), uint32_t(kv.first / w_)}, c, p.rx, p.tx);
        }
        for (const auto& kv : steps_) {
            Program p;
            p.pe = Coord{uint32_t(kv.first % w_), uint32_t(kv.first / w_)};
            p.args = {uint32_t(type), uint32_t(kv.second.size())};
            uint32_t bytes = 0;
            for (Step st : kv.second) {
                st.color_a = r.color_of.at(st.color_a);
                if (st.kind == StepKind::relay || st.kind == StepKind::exchange) st.color_b = r.color_of.at(st.color_b);
                p.args.push_back(encode_step_word0(st));
                p.args.push_back(st.offset);
                p.args.push_back(st.n);
                if (st.kind == StepKind::exchange)
                    bytes = std::max({bytes, (st.offset & 0xFFFFu) + 4 * (st.n & 0xFFFFu), (st.offset >> 16) + 4 * (st.n >> 16)});
                else
                    bytes = std::max(bytes, st.offset + 4 * st.n);
            }
            r.grid.use_memory(p.pe, bytes);
            r.programs.push_back(std::move(p));
        }
        r.grid.validate();
        return r;
    }

private:
    size_t idx(Coord c) const { return size_t(c.y) * w_ + c.x; }
    void push(Coord pe, StepKind k, coll::RedOp op, uint32_t a, uint32_t b, uint32_t offset, uint32_t n) {
        if (pe.x >= w_ || pe.y >= h_) throw kccl::Error(kccl::Errc::plan, "fabric layout: a step on PE " + to_string(pe) + ", outside the grid");
        if (a >= streams_.size() || ((k == StepKind::relay || k == StepKind::exchange) && b >= streams_.size())) throw kccl::Error(kccl::Errc::plan, "fabric layout: a step names a stream that does not exist");
        Step s;
        s.kind = k;
        s.op = op;
        s.color_a = a;
        s.color_b = b;
        s.offset = offset;
        s.n = n;
        steps_[idx(pe)].push_back(s);
    }

    uint32_t w_, h_;
    std::vector<std::vector<Hop>> streams_;
    std::vector<uint32_t> group_of_;
    uint32_t groups_ = 0;
    std::map<size_t, std::vector<Step>> steps_;
};

}  // namespace kccl::wafer::host
