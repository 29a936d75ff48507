// Collective schedules: the symbolic sweep over every op x method x topology x rank count x
// chunking, GCL's worked examples as literal vectors (run by a small independent interpreter),
// the Cerebras thesis's tree shapes, a mutation per algorithm family caught by the checker with the specific
// error, and the docs' pictures kept current.
//
//   scripts/dev_test.sh tests/collectives/schedule_test.cpp tests/collectives/slicer_test.cpp
#include <collectives/executor.hpp>
#include <collectives/host/checker.hpp>
#include <collectives/host/picture.hpp>
#include <collectives/slicer.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace kccl::coll;
using host::CheckOptions;
using host::CheckResult;
using host::CheckError;

namespace {

std::string describe(const Shape& sh) {
    std::string t = std::string(op_name(sh.op)) + " " + method_name(sh.method) + " " + topology_name(sh.topo) +
                    " p=" + std::to_string(sh.ranks) + " s=" + std::to_string(sh.chunks) + " root=" +
                    std::to_string(sh.root);
    if (sh.op == Op::send_recv) t += " peer=" + std::to_string(sh.peer);
    if (sh.rows) t += " " + std::to_string(sh.rows) + "x" + std::to_string(sh.cols);
    return t;
}

/// A ring / line shape with root 1 and peer p - 1 where there are such ranks.
Shape shape_of(Op op, Method m, Topology t, uint32_t p, uint32_t chunks = 1, uint32_t window = 1) {
    Shape sh;
    sh.op = op;
    sh.method = m;
    sh.topo = t;
    sh.ranks = p;
    sh.chunks = chunks;
    sh.window = window;
    sh.root = p > 1 ? 1 : 0;
    sh.peer = p > 2 ? p - 1 : 0;
    return sh;
}

/// Output writes a method may make per chunk: every output chunk is written exactly once, except by
/// the methods that accumulate in the output (recursive doubling, Rabenseifner, the 2D bucket
/// all_reduce, broadcast-then-local-reduce).
uint32_t max_writes(const Shape& sh) {
    switch (sh.method) {
        case Method::recursive_doubling:
        case Method::rabenseifner:
        case Method::broadcast_local_reduce: return 0;
        case Method::mesh_2d: return sh.op == Op::all_reduce ? 0 : 1;
        default: return 1;
    }
}

/// Relabels a parent array built for root 0 so that `root` is the root.
std::vector<uint32_t> rerooted(const std::vector<uint32_t>& par, uint32_t root) {
    const uint32_t p = uint32_t(par.size());
    std::vector<uint32_t> out(p);
    for (uint32_t i = 0; i < p; ++i) out[(i + root) % p] = (par[i] + root) % p;
    return out;
}

std::vector<std::vector<uint32_t>> trees_for(uint32_t p, uint32_t root, const Shape& sh) {
    std::vector<std::vector<uint32_t>> t;
    std::vector<uint32_t> a(p);
    tree_chain(a.data(), p);
    t.push_back(rerooted(a, root));
    tree_binomial(a.data(), p);
    t.push_back(rerooted(a, root));
    tree_two_phase(a.data(), p, 2);
    t.push_back(rerooted(a, root));
    tree_two_phase(a.data(), p, uint32_t(std::ceil(std::sqrt(double(p)))));
    t.push_back(rerooted(a, root));
    std::vector<uint32_t> star(p, root);
    t.push_back(star);
    if ((sh.topo == Topology::mesh || sh.topo == Topology::torus) && root == 0) {
        std::vector<uint32_t> row(sh.cols), col(sh.rows);
        tree_binomial(row.data(), sh.cols);
        tree_chain(col.data(), sh.rows);
        tree_rows_then_cols(a.data(), sh.rows, sh.cols, row.data(), col.data());
        t.push_back(a);
    }
    return t;
}

}  // namespace

namespace {
/// Does every rank's set of lanes use pairwise different peers (executor.hpp then merges them)?
bool merges(const Shape& sh) {
    if (lanes(sh) < 2 || !lanes_mergeable(sh)) return false;
    const host::Streams st = host::collect(sh);
    for (auto& rank : st)
        if (rank.size() > 1 && !host::lanes_disjoint(rank)) return false;
    return true;
}
struct SweepCount {
    uint64_t cases = 0, rejected = 0, serial = 0, windowed = 0, merged = 0;
    std::set<std::pair<int, int>> seen;
    std::map<std::string, uint64_t> per_op;
};
SweepCount sweep(const std::vector<uint32_t>& ranks, const std::vector<uint32_t>& chunkings);
}  // namespace

TEST_CASE("every op x method x topology x rank count 1..16 x chunking passes the symbolic checker",
          "[collectives][schedule]") {
    std::vector<uint32_t> ranks;
    for (uint32_t p = 1; p <= 16; ++p) ranks.push_back(p);
    const SweepCount c = sweep(ranks, {1, 2, 3, 5});
    // every (op, method) pair the dispatcher offers was exercised
    for (uint32_t op = 0; op < kOpCount; ++op)
        for (uint32_t m = 0; m < kMethodCount; ++m) {
            Shape sh;
            sh.op = Op(op);
            sh.method = Method(m);
            const bool offered = dispatch(sh, [](auto) {});
            INFO(op_name(Op(op)) << " x " << method_name(Method(m)));
            CHECK(offered == (c.seen.count({int(op), int(m)}) == 1));
        }
    std::printf("symbolic coverage: %llu schedules checked (op x method x topology x ranks 1..16 x chunking x root/tree/peer), "
                "%llu of them also with their lanes run in turn on one worker; %llu combinations rejected by validate()\n",
                (unsigned long long)c.cases, (unsigned long long)c.serial, (unsigned long long)c.rejected);
    for (auto& [k, v] : c.per_op) std::printf("  %-15s %llu\n", k.c_str(), (unsigned long long)v);
    std::printf("  %llu multi-lane schedules also with their lanes merged on one worker (execute / execute_any)\n",
                (unsigned long long)c.merged);
    std::printf("  plus %llu pipelined ring schedules (all_gather / reduce_scatter / all_reduce x ring methods x "
                "window 2, 3, 5 with window + 1 slots)\n", (unsigned long long)c.windowed);
    CHECK(c.cases > 10000);
    CHECK(c.windowed > 1000);
}

TEST_CASE("larger rank counts (17..64) pass the symbolic checker", "[collectives][schedule][long]") {
    const SweepCount c = sweep({17, 24, 31, 32, 33, 48, 64}, {1, 2});
    std::printf("symbolic coverage, long: %llu schedules checked for p in {17, 24, 31, 32, 33, 48, 64}\n",
                (unsigned long long)c.cases);
    CHECK(c.cases > 1000);
}

namespace {
SweepCount sweep(const std::vector<uint32_t>& rank_counts, const std::vector<uint32_t>& chunkings) {
    SweepCount out;
    uint64_t& cases = out.cases;
    uint64_t& rejected = out.rejected;
    uint64_t& serial = out.serial;
    auto& seen = out.seen;
    auto& per_op = out.per_op;
    for (uint32_t op = 0; op < kOpCount; ++op)
        for (uint32_t m = 0; m < kMethodCount; ++m)
            for (int topo = 0; topo < 4; ++topo)
                for (uint32_t p : rank_counts) {
                    std::vector<std::pair<uint32_t, uint32_t>> grids{{0, 0}};
                    if (topo >= 2) {
                        grids.clear();
                        for (uint32_t r = 1; r <= p; ++r)
                            if (p % r == 0) grids.push_back({r, p / r});
                    }
                    std::set<uint32_t> roots{0, p / 2, p - 1};
                    for (auto [rows, cols] : grids)
                        for (uint32_t s : chunkings)
                            for (uint32_t root : roots) {
                                Shape sh;
                                sh.op = Op(op);
                                sh.method = Method(m);
                                sh.topo = Topology(topo);
                                sh.ranks = p;
                                sh.rows = rows;
                                sh.cols = cols;
                                sh.chunks = s;
                                sh.root = root;
                                const bool rooted = sh.op == Op::broadcast || sh.op == Op::reduce || sh.op == Op::gather ||
                                                    sh.op == Op::scatter || sh.op == Op::send_recv ||
                                                    sh.method == Method::reduce_broadcast_chain ||
                                                    sh.method == Method::reduce_broadcast_tree;
                                if (!rooted && root != 0) continue;
                                if (sh.op == Op::barrier && s != 1) continue;  // a barrier has one token chunk
                                std::vector<std::vector<uint32_t>> trees{{}};
                                if (sh.method == Method::tree) trees = trees_for(p, root, sh);
                                std::set<uint32_t> peers{0};
                                if (sh.op == Op::send_recv) peers = {0, p - 1, (root + 1) % p, root};
                                for (auto& tr : trees)
                                    for (uint32_t peer : peers) {
                                        sh.tree = tr.empty() ? nullptr : tr.data();
                                        sh.peer = peer;
                                        if (validate(sh) != nullptr) {
                                            ++rejected;
                                            continue;
                                        }
                                        CheckOptions o;
                                        o.capacity = kSlotsNeeded;  // what every link provides
                                        o.max_writes = max_writes(sh);
                                        const CheckResult r = host::check(sh, o);
                                        if (!r.ok) FAIL(describe(sh) << "\n" << r.summary());
                                        if (lanes(sh) > 1) {  // also with the lanes run in turn on one worker
                                            o.serial_lanes = true;
                                            const CheckResult q = host::check(sh, o);
                                            if (!q.ok) FAIL(describe(sh) << " (serial lanes)\n" << q.summary());
                                            ++serial;
                                            o.serial_lanes = false;
                                            if (merges(sh)) {  // how execute / execute_any run them
                                                o.merged_lanes = true;
                                                const CheckResult mq = host::check(sh, o);
                                                if (!mq.ok) FAIL(describe(sh) << " (merged lanes)\n" << mq.summary());
                                                ++out.merged;
                                                o.merged_lanes = false;
                                            }
                                        }
                                        // the pipelined ring schedules: window W chunks in
                                        // flight, with the W + 1 slots window_slots() promises
                                        const bool ring_op = sh.op == Op::all_gather || sh.op == Op::reduce_scatter ||
                                                             sh.op == Op::all_reduce;
                                        const bool ring_m = sh.method == Method::ring_cw || sh.method == Method::ring_ccw ||
                                                            sh.method == Method::ring_bidir ||
                                                            sh.method == Method::ring_meet_middle || sh.method == Method::line;
                                        if (ring_op && ring_m)
                                            for (uint32_t w : {2u, 3u, 5u}) {
                                                Shape wsh = sh;
                                                wsh.window = w;
                                                CheckOptions wo;
                                                wo.capacity = window_slots(wsh);
                                                wo.max_writes = max_writes(wsh);
                                                const CheckResult wr = host::check(wsh, wo);
                                                if (!wr.ok) FAIL(describe(wsh) << " window " << w << "\n" << wr.summary());
                                                if (lanes(wsh) > 1) {
                                                    wo.serial_lanes = true;
                                                    const CheckResult wq = host::check(wsh, wo);
                                                    if (!wq.ok) FAIL(describe(wsh) << " window " << w << " (serial lanes)\n" << wq.summary());
                                                    wo.serial_lanes = false;
                                                    if (merges(wsh)) {
                                                        wo.merged_lanes = true;
                                                        const CheckResult wm = host::check(wsh, wo);
                                                        if (!wm.ok) FAIL(describe(wsh) << " window " << w << " (merged lanes)\n" << wm.summary());
                                                    }
                                                }
                                                ++out.windowed;
                                            }
                                        ++cases;
                                        ++per_op[op_name(sh.op)];
                                        seen.insert({int(op), int(m)});
                                    }
                            }
                }
    return out;
}
}  // namespace

TEST_CASE("rings need two message slots per link; every other schedule runs with one", "[collectives][schedule]") {
    Shape sh;
    sh.op = Op::all_gather;
    sh.method = Method::ring_cw;
    sh.ranks = 4;
    sh.chunks = 2;
    CheckOptions one;
    one.capacity = 1;
    const CheckResult r = host::check(sh, one);
    REQUIRE_FALSE(r.ok);
    REQUIRE(r.has("deadlock"));
    // every rank holds a full outbound slot and waits for room at its successor: a cycle of 4
    const std::string& msg = r.first("deadlock")->message;
    for (int q = 0; q < 4; ++q) CHECK(msg.find("waits for room in the channel to rank " + std::to_string(q)) != std::string::npos);
    one.capacity = 2;
    CHECK(host::check(sh, one).ok);
    sh.method = Method::line;
    one.capacity = 1;
    CHECK(host::check(sh, one).ok);
    sh.op = Op::all_reduce;
    sh.method = Method::rabenseifner;
    sh.ranks = 7;
    CHECK(host::check(sh, one).ok);
}

TEST_CASE("a pipelined ring keeps `window` chunks in flight and needs window + 1 slots", "[collectives][schedule]") {
    // Order: rank 0 of an 8-rank clockwise all_gather with 8 chunks injects exactly `window` of
    // its own chunks before the first of them has come all the way round (its first plain recv).
    for (uint32_t w : {1u, 2u, 3u, 4u}) {
        Shape sh;
        sh.op = Op::all_gather;
        sh.method = Method::ring_cw;
        sh.ranks = 8;
        sh.chunks = 8;
        sh.window = w;
        uint32_t own_sends = 0;
        bool seen_recv = false;
        for_each_step(sh, 0, 0, [&](const Step& s) {
            if (s.verb == Verb::recv) seen_recv = true;
            if (!seen_recv && s.verb == Verb::send && s.src.buf == Buf::input) ++own_sends;
        });
        INFO("window " << w);
        CHECK(own_sends == w);
    }
    // Slots: window + 1 always suffice (the sweep checks every ring op x method); window alone
    // may not: on 8 ranks with window 2 every rank holds a full outbound channel.
    for (Op op : {Op::all_gather, Op::reduce_scatter, Op::all_reduce})
        for (uint32_t w : {2u, 4u}) {
            Shape sh;
            sh.op = op;
            sh.method = Method::ring_cw;
            sh.ranks = 8;
            sh.chunks = 8;
            sh.window = w;
            CheckOptions o;
            o.capacity = w;
            INFO(op_name(op) << " window " << w);
            if (w == 2) CHECK(host::check(sh, o).has("deadlock"));
            o.capacity = window_slots(sh);
            CHECK(o.capacity == w + 1);
            CHECK(host::check(sh, o).ok);
        }
}

TEST_CASE("lanes merged step by step on one worker: ring_bidir and meet run; a line's would deadlock", "[collectives][schedule]") {
    for (Method m : {Method::ring_bidir, Method::ring_meet_middle}) {
        Shape sh;
        sh.op = Op::all_gather;
        sh.method = m;
        sh.ranks = 5;
        sh.chunks = 4;
        sh.window = 3;
        CheckOptions o;
        o.capacity = window_slots(sh);
        o.merged_lanes = true;
        INFO(method_name(m));
        CHECK(host::check(sh, o).ok);
    }
    // A line's end ranks have one-sided lanes, so merging by step index puts the ranks out of
    // step: merged by hand (the checker refuses merged_lanes for it), it deadlocks.
    Shape sh;
    sh.op = Op::all_gather;
    sh.method = Method::line;
    sh.topo = Topology::line;
    sh.ranks = 3;
    sh.chunks = 8;
    CHECK_FALSE(lanes_mergeable(sh));
    host::Streams st = host::collect(sh);
    host::ChanLanes cl(st.size());
    for (uint32_t r = 0; r < st.size(); ++r) {
        cl[r].resize(1);
        std::vector<Step> merged = host::merge_lanes(st[r], cl[r][0]);
        st[r].assign(1, merged);
    }
    CheckOptions o;
    o.capacity = 2;
    CHECK(host::check_streams(sh, st, o, &cl).has("deadlock"));
    o.merged_lanes = true;
    CHECK(host::check(sh, o).has("invalid"));
}

TEST_CASE("a chunk streamed as P packets needs P+1 packet slots on a ring: make a chunk one packet",
          "[collectives][schedule]") {
    for (Op op : {Op::all_gather, Op::reduce_scatter, Op::all_reduce})
        for (uint32_t P : {2u, 4u}) {
            Shape sh;
            sh.op = op;
            sh.method = Method::ring_cw;
            sh.ranks = 5;
            sh.chunks = 2;
            auto [fine, st] = host::stream_pieces(sh, P);
            CheckOptions o;
            o.capacity = P;
            const CheckResult r = host::check_streams(fine, st, o);
            INFO(op_name(op) << " P=" << P);
            CHECK(r.has("deadlock"));
            o.capacity = P + 1;
            CHECK(host::check_streams(fine, st, o).ok);
            // the same data cut into P times more chunks (one packet each) runs with 2 slots
            Shape cut = sh;
            cut.chunks = sh.chunks * P;
            o.capacity = 2;
            CHECK(host::check(cut, o).ok);
        }
}

TEST_CASE("validate() rejects unsupported shapes with a sentence", "[collectives][schedule]") {
    Shape sh;
    sh.op = Op::all_gather;
    sh.topo = Topology::line;
    sh.method = Method::ring_cw;
    sh.ranks = 4;
    const char* e = validate(sh);
    REQUIRE(e != nullptr);
    CHECK(std::string(e).find("need a ring topology; use Method::line") != std::string::npos);
    sh.method = Method::mesh_2d;
    e = validate(sh);
    REQUIRE(e != nullptr);
    CHECK(std::string(e).find("mesh or torus") != std::string::npos);
    sh.topo = Topology::mesh;
    sh.rows = 3;
    sh.cols = 2;
    e = validate(sh);
    REQUIRE(e != nullptr);
    CHECK(std::string(e).find("rows * cols == ranks") != std::string::npos);
    sh.op = Op::reduce_scatter;
    sh.method = Method::pairwise;
    e = validate(sh);
    REQUIRE(e != nullptr);
    CHECK(std::string(e).find("allowed_methods") != std::string::npos);
    CHECK(std::string(allowed_methods(Op::reduce_scatter)) == "ring_cw, ring_ccw, ring_bidir, ring_meet_middle, line");
    // a parent array with a cycle
    std::vector<uint32_t> par{0, 2, 1, 0};
    sh.op = Op::reduce;
    sh.method = Method::tree;
    sh.topo = Topology::ring;
    sh.tree = par.data();
    e = validate(sh);
    REQUIRE(e != nullptr);
    CHECK(std::string(e).find("cycle") != std::string::npos);
    sh.tree = nullptr;
    CHECK(std::string(validate(sh)).find("parent array") != std::string::npos);
}

TEST_CASE("choose_method picks a valid method, by size, topology and routing", "[collectives][schedule]") {
    for (uint32_t op = 0; op < kOpCount; ++op)
        for (int topo = 0; topo < 4; ++topo)
            for (bool routed : {false, true})
                for (uint32_t p : {1u, 2u, 5u, 8u})
                    for (uint64_t bytes : {uint64_t(0), uint64_t(64), uint64_t(4096), uint64_t(1) << 20, uint64_t(64) << 20}) {
                        Shape sh;
                        sh.op = Op(op);
                        sh.topo = Topology(topo);
                        sh.ranks = p;
                        if (topo >= 2) {
                            sh.rows = 1;
                            sh.cols = p;
                        }
                        sh.method = choose_method(sh.op, sh.topo, p, bytes, routed);
                        const bool mesh = topo >= 2;
                        const bool exists = !mesh || routed ? sh.op != Op::reduce_scatter || !mesh
                                                            : (sh.op == Op::all_gather || sh.op == Op::all_reduce);
                        INFO(op_name(sh.op) << " " << topology_name(sh.topo) << " routed=" << routed << " p=" << p
                                            << " bytes=" << bytes << " -> " << method_name(sh.method));
                        CHECK((validate(sh) == nullptr) == exists);
                        if (exists) CHECK(host::check(sh).ok);
                    }
    // the documented thresholds
    CHECK(choose_method(Op::all_reduce, Topology::ring, 8, 256) == Method::broadcast_local_reduce);
    CHECK(choose_method(Op::all_reduce, Topology::ring, 8, 257) == Method::ring_meet_middle);
    CHECK(choose_method(Op::all_gather, Topology::ring, 8, 8 * 8 * 26 * 1024) == Method::ring_meet_middle);
    CHECK(choose_method(Op::all_gather, Topology::ring, 8, 8 * 8 * 26 * 1024 + 1) == Method::ring_bidir);
    CHECK(choose_method(Op::all_reduce, Topology::ring, 8, 4096, true) == Method::recursive_doubling);
    CHECK(choose_method(Op::broadcast, Topology::line, 8, 1 << 20) == Method::line);
    CHECK(choose_method(Op::all_reduce, Topology::torus, 8, 1 << 20) == Method::mesh_2d);
}

TEST_CASE("step(i) gives the same steps as the generator's pass", "[collectives][schedule]") {
    for (Method m : {Method::ring_bidir, Method::line, Method::rabenseifner}) {
        Shape sh;
        sh.op = Op::all_reduce;
        sh.method = m;
        sh.ranks = 6;
        sh.chunks = 3;
        dispatch(sh, [&](auto tag) {
            using A = typename decltype(tag)::type;
            for (uint32_t r = 0; r < sh.ranks; ++r)
                for (uint32_t l = 0; l < A::lanes(sh); ++l) {
                    std::vector<Step> seq;
                    A::for_each(sh, r, l, [&](const Step& s) { seq.push_back(s); });
                    REQUIRE(A::steps(sh, r, l) == seq.size());
                    for (uint32_t i = 0; i < seq.size(); ++i) {
                        const Step a = A::step(sh, r, l, i);
                        CHECK((a.verb == seq[i].verb && a.recv_peer == seq[i].recv_peer &&
                               a.send_peer == seq[i].send_peer && a.src.chunk == seq[i].src.chunk &&
                               a.dst.chunk == seq[i].dst.chunk && a.count == seq[i].count));
                    }
                    CHECK(A::step(sh, r, l, uint32_t(seq.size())).count == 0);
                }
        });
    }
}

// ---- an independent interpreter: runs the step streams on concrete values ----
namespace {
template <class V>
struct Run {
    std::vector<std::vector<V>> out;
};

template <class V, class C>
std::vector<std::vector<V>> interpret(const Shape& sh, const std::vector<std::vector<V>>& in, C comb, V blank) {
    const uint32_t p = sh.ranks;
    std::vector<std::vector<std::vector<Step>>> st(p);
    for (uint32_t r = 0; r < p; ++r) {
        st[r].resize(lanes(sh));
        for (uint32_t l = 0; l < st[r].size(); ++l) for_each_step(sh, r, l, [&](const Step& s) { st[r][l].push_back(s); });
    }
    std::vector<std::vector<V>> out(p, std::vector<V>(grid(sh, Buf::output), blank));
    std::vector<std::vector<V>> scr(p, std::vector<V>(scratch_chunks(sh), blank));
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::deque<V>> q;
    std::vector<std::vector<size_t>> pc(p);
    for (uint32_t r = 0; r < p; ++r) pc[r].assign(st[r].size(), 0);
    auto at = [&](uint32_t r, ChunkRef c, uint32_t k) -> V& {
        if (c.buf == Buf::output) return out[r].at(c.chunk + k);
        if (c.buf == Buf::scratch) return scr[r].at(c.chunk + k);
        static V bad;
        return bad;
    };
    auto get = [&](uint32_t r, ChunkRef c, uint32_t k) -> V { return c.buf == Buf::input ? in[r].at(c.chunk + k) : at(r, c, k); };
    for (bool progress = true; progress;) {
        progress = false;
        for (uint32_t r = 0; r < p; ++r)
            for (uint32_t l = 0; l < st[r].size(); ++l)
                while (pc[r][l] < st[r][l].size()) {
                    const Step& s = st[r][l][pc[r][l]];
                    std::deque<V>* iq = verb_receives(s.verb) ? &q[{s.recv_peer, r, l}] : nullptr;
                    if (iq && iq->size() < s.count) break;
                    for (uint32_t k = 0; k < s.count; ++k) {
                        V v{};
                        V rx = iq ? iq->front() : V{};
                        if (iq) iq->pop_front();
                        switch (s.verb) {
                            case Verb::send:
                            case Verb::copy: v = get(r, s.src, k); break;
                            case Verb::recv:
                            case Verb::recv_copy_send: v = rx; break;
                            case Verb::reduce_local: v = comb(get(r, s.dst, k), get(r, s.src, k)); break;
                            default: v = comb(get(r, s.src, k), rx); break;
                        }
                        if (verb_writes_dst(s.verb)) at(r, s.dst, k) = v;
                        for_each_send_peer(sh, r, s, [&](uint32_t to) { q[{r, to, l}].push_back(v); });
                    }
                    ++pc[r][l];
                    progress = true;
                }
    }
    for (uint32_t r = 0; r < p; ++r)
        for (uint32_t l = 0; l < st[r].size(); ++l) REQUIRE(pc[r][l] == st[r][l].size());
    return out;
}

std::vector<Method> all_reduce_methods() {
    return {Method::ring_cw, Method::ring_ccw, Method::ring_bidir, Method::ring_meet_middle, Method::line,
            Method::broadcast_local_reduce, Method::reduce_broadcast_chain, Method::reduce_broadcast_tree,
            Method::recursive_doubling, Method::rabenseifner};
}
}  // namespace

TEST_CASE("GCL worked examples (Graphcore's GCL documentation): AllReduce with every operator, every method", "[collectives][schedule][gcl]") {
    // input_replica_0: 1,2,3,4  input_replica_1: 5,6,7,8 (one element per chunk: p*s = 4)
    const std::vector<std::vector<double>> in{{1, 2, 3, 4}, {5, 6, 7, 8}};
    struct Case {
        const char* name;
        std::function<double(double, double)> comb;
        std::function<double(double)> prepare;
        bool mean;
        std::vector<double> want;
    };
    const std::vector<Case> cases{
        {"ADD", [](double a, double b) { return a + b; }, [](double x) { return x; }, false, {6, 8, 10, 12}},
        {"MEAN", [](double a, double b) { return a + b; }, [](double x) { return x; }, true, {3, 4, 5, 6}},
        {"MUL", [](double a, double b) { return a * b; }, [](double x) { return x; }, false, {5, 12, 21, 32}},
        {"MIN", [](double a, double b) { return std::min(a, b); }, [](double x) { return x; }, false, {1, 2, 3, 4}},
        {"MAX", [](double a, double b) { return std::max(a, b); }, [](double x) { return x; }, false, {5, 6, 7, 8}},
        {"SQUARE_ADD", [](double a, double b) { return a + b; }, [](double x) { return x * x; }, false, {26, 40, 58, 80}},
    };
    for (const Case& c : cases)
        for (Method m : all_reduce_methods())
            for (Topology t : {Topology::ring, Topology::line}) {
                Shape sh;
                sh.op = Op::all_reduce;
                sh.method = m;
                sh.topo = t;
                sh.ranks = 2;
                sh.chunks = 2;
                if (validate(sh)) continue;
                auto prepared = in;
                for (auto& v : prepared)
                    for (auto& x : v) x = c.prepare(x);
                auto out = interpret<double>(sh, prepared, c.comb, -1.0);
                for (uint32_t r = 0; r < 2; ++r) {
                    if (c.mean)
                        for (auto& x : out[r]) x /= 2;
                    INFO(c.name << " " << method_name(m) << " " << topology_name(t) << " rank " << r);
                    CHECK(out[r] == c.want);
                }
            }
    // LOGICAL_AND / LOGICAL_OR: true,false,true,false and false,true,true,false
    const std::vector<std::vector<int>> b{{1, 0, 1, 0}, {0, 1, 1, 0}};
    for (Method m : all_reduce_methods()) {
        Shape sh;
        sh.op = Op::all_reduce;
        sh.method = m;
        sh.ranks = 2;
        sh.chunks = 2;
        auto land = interpret<int>(sh, b, [](int x, int y) { return int(x && y); }, -1);
        auto lor = interpret<int>(sh, b, [](int x, int y) { return int(x || y); }, -1);
        for (uint32_t r = 0; r < 2; ++r) {
            CHECK(land[r] == std::vector<int>{0, 0, 1, 0});
            CHECK(lor[r] == std::vector<int>{1, 1, 1, 0});
        }
    }
}

TEST_CASE("GCL worked examples (Graphcore's GCL documentation): AllGather, AllToAll, Broadcast, ReduceScatter with padding",
          "[collectives][schedule][gcl]") {
    auto str_comb = [](const std::string& a, const std::string& b) {
        if (a == "0" && b == "0") return std::string("0");  // zero padding: op(0, 0) = 0 for every operator
        return "op(" + std::min(a, b) + "," + std::max(a, b) + ")";
    };
    // AllGather: [x_r, y_r] on 4 replicas -> [x0,y0,x1,y1,x2,y2,x3,y3] everywhere
    {
        std::vector<std::vector<std::string>> in;
        for (int r = 0; r < 4; ++r) in.push_back({"x" + std::to_string(r), "y" + std::to_string(r)});
        const std::vector<std::string> want{"x0", "y0", "x1", "y1", "x2", "y2", "x3", "y3"};
        for (Method m : {Method::ring_cw, Method::ring_ccw, Method::ring_bidir, Method::ring_meet_middle, Method::line,
                         Method::mesh_2d}) {
            Shape sh;
            sh.op = Op::all_gather;
            sh.method = m;
            sh.ranks = 4;
            sh.chunks = 2;
            if (m == Method::mesh_2d) {
                sh.topo = Topology::mesh;
                sh.rows = 2;
                sh.cols = 2;
            }
            auto out = interpret<std::string>(sh, in, str_comb, "?");
            for (int r = 0; r < 4; ++r) {
                INFO(method_name(m) << " rank " << r);
                CHECK(out[r] == want);
            }
        }
    }
    // AllToAll: a0..a3 / b0..b3 / c0..c3 / d0..d3 -> rank r gets a_r, b_r, c_r, d_r
    {
        std::vector<std::vector<std::string>> in;
        for (char c : std::string("abcd")) {
            std::vector<std::string> v;
            for (int k = 0; k < 4; ++k) v.push_back(std::string(1, c) + std::to_string(k));
            in.push_back(v);
        }
        for (Method m : {Method::pairwise, Method::ring_cw, Method::ring_ccw, Method::ring_meet_middle, Method::line}) {
            Shape sh;
            sh.op = Op::all_to_all;
            sh.method = m;
            sh.ranks = 4;
            sh.chunks = 1;
            auto out = interpret<std::string>(sh, in, str_comb, "?");
            for (int r = 0; r < 4; ++r) {
                const std::string k = std::to_string(r);
                CHECK(out[r] == std::vector<std::string>{"a" + k, "b" + k, "c" + k, "d" + k});
            }
        }
    }
    // Broadcast from replica 0: a0..a3 everywhere
    {
        std::vector<std::vector<std::string>> in{{"a0", "a1", "a2", "a3"}, {"b0", "b1", "b2", "b3"},
                                                 {"c0", "c1", "c2", "c3"}, {"d0", "d1", "d2", "d3"}};
        for (Method m : {Method::ring_cw, Method::ring_ccw, Method::ring_meet_middle, Method::line, Method::binomial_tree}) {
            Shape sh;
            sh.op = Op::broadcast;
            sh.method = m;
            sh.ranks = 4;
            sh.chunks = 4;
            auto out = interpret<std::string>(sh, in, str_comb, "?");
            for (int r = 0; r < 4; ++r) CHECK(out[r] == in[0]);
        }
    }
    // ReduceScatter: x0,y0,z0 / x1,y1,z1 -> op(x0,x1),op(y0,y1) / op(z0,z1),0 (ceil(3/2) = 2, zero padded)
    {
        SliceConfig cfg;
        cfg.elem_bytes = 4;
        cfg.packet_bytes = 4;  // one element per chunk
        const Slicer sl(Op::reduce_scatter, 3, 2, cfg);
        REQUIRE(sl.m == 2);
        REQUIRE(sl.chunks(0) == 2);
        const std::vector<std::vector<std::string>> elems{{"x0", "y0", "z0"}, {"x1", "y1", "z1"}};
        for (Method m : {Method::ring_cw, Method::ring_ccw, Method::ring_bidir, Method::ring_meet_middle, Method::line}) {
            Shape sh;
            sh.op = Op::reduce_scatter;
            sh.method = m;
            sh.ranks = 2;
            sh.chunks = sl.chunks(0);
            std::vector<std::vector<std::string>> in(2);
            for (uint32_t r = 0; r < 2; ++r)
                for (uint32_t c = 0; c < grid(sh, Buf::input); ++c) {
                    const ElemRange e = sl.chunk_range(0, Buf::input, c, r);
                    in[r].push_back(e.count ? elems[r][e.begin] : "0");
                }
            auto out = interpret<std::string>(sh, in, str_comb, "?");
            INFO(method_name(m));
            CHECK(out[0] == std::vector<std::string>{"op(x0,x1)", "op(y0,y1)"});
            CHECK(out[1] == std::vector<std::string>{"op(z0,z1)", "0"});
            CHECK(sl.rs_padding(1).begin == 1);
            CHECK(sl.rs_padding(1).count == 1);
            CHECK(sl.rs_padding(0).count == 0);
        }
    }
}

TEST_CASE("the Cerebras thesis's reduce trees are parent arrays and reduce correctly on a 2D PE mesh", "[collectives][schedule][thesis_trees]") {
    // Figure 5.4: 9 PEs, groups of 3 assigned from the end: chains 8->7->6, 5->4->3, 2->1->0, heads 6->3->0
    std::vector<uint32_t> two(9);
    REQUIRE(tree_two_phase(two.data(), 9, 3));
    CHECK(two == std::vector<uint32_t>{0, 0, 1, 0, 3, 4, 3, 6, 7});
    // 10 PEs, S = 3: groups [7,10) [4,7) [1,4) [0,1)
    std::vector<uint32_t> ten(10);
    tree_two_phase(ten.data(), 10, 3);
    CHECK(ten == std::vector<uint32_t>{0, 0, 1, 2, 1, 4, 5, 4, 7, 8});
    std::vector<uint32_t> bin(8);
    tree_binomial(bin.data(), 8);
    CHECK(bin == std::vector<uint32_t>{0, 0, 0, 2, 0, 4, 4, 6});
    // 3 x 4 PE mesh: binomial rows into column 0, then a chain down column 0
    std::vector<uint32_t> row(4), col(3), mesh(12);
    tree_binomial(row.data(), 4);
    tree_chain(col.data(), 3);
    tree_rows_then_cols(mesh.data(), 3, 4, row.data(), col.data());
    CHECK(mesh == std::vector<uint32_t>{0, 0, 0, 2, 0, 4, 4, 6, 4, 8, 8, 10});
    // an arbitrary pre-order tree (Figure 5.6 style): 0 <- {1 <- {2, 3}, 4 <- 5}
    std::vector<uint32_t> pre{0, 0, 1, 1, 0, 4};
    for (auto* par : {&mesh, &pre, &two}) {
        Shape sh;
        sh.op = Op::reduce;
        sh.method = Method::tree;
        sh.ranks = uint32_t(par->size());
        sh.topo = sh.ranks == 12 ? Topology::mesh : Topology::line;
        sh.rows = sh.ranks == 12 ? 3 : 0;
        sh.cols = sh.ranks == 12 ? 4 : 0;
        sh.chunks = 4;
        sh.tree = par->data();
        const CheckResult r = host::check(sh);
        INFO(r.summary());
        CHECK(r.ok);
        // the chain (two-phase inner edges) are neighbour links; the row trees jump PEs: multi-hop
        CHECK(TreeReduce::multi_hop);
    }
}

// ---- mutations: each family's schedule, corrupted in one step, is caught with the specific error ----
namespace {
host::Streams streams(const Shape& sh) { return host::collect(sh); }
CheckResult run(const Shape& sh, const host::Streams& st, uint32_t max_w = 0) {
    CheckOptions o;
    o.multi_hop = multi_hop(sh);
    o.max_writes = max_w;
    return host::check_streams(sh, st, o);
}
size_t find_step(const std::vector<Step>& v, Verb verb, size_t from = 0) {
    for (size_t i = from; i < v.size(); ++i)
        if (v[i].verb == verb) return i;
    FAIL("no such verb");
    return 0;
}
}  // namespace

TEST_CASE("mutation: ring all_gather with a chunk index off by one", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::all_gather;
    sh.method = Method::ring_cw;
    sh.ranks = 4;
    auto st = streams(sh);
    REQUIRE(run(sh, st).ok);
    const size_t i = find_step(st[2][0], Verb::recv_copy_send);  // receives rank 1's fragment into out[1]
    REQUIRE(st[2][0][i].dst.chunk == 1);
    st[2][0][i].dst.chunk = 2;  // off by one: lands on rank 2's own fragment
    const CheckResult r = run(sh, st);
    REQUIRE_FALSE(r.ok);
    const CheckError* e = r.first("wrong_value");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 2);
    CHECK(e->chunk == 1);
    CHECK(e->message.find("never written") != std::string::npos);
    CHECK(r.summary().find("rank 2: out[2]: foreign rank 1's in[0]; missing rank 2's in[0]") != std::string::npos);
    // with the single-write rule the overwrite itself is caught at the step
    const CheckResult w = run(sh, st, 1);
    REQUIRE(w.first("written_twice") != nullptr);
    CHECK(w.first("written_twice")->rank == 2);
    CHECK(w.first("written_twice")->step == i);
}

TEST_CASE("mutation: ring reduce_scatter sending to a rank that is not a neighbour", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::reduce_scatter;
    sh.method = Method::ring_cw;
    sh.ranks = 5;
    auto st = streams(sh);
    REQUIRE(st[3][0][0].verb == Verb::send);
    REQUIRE(st[3][0][0].send_peer == 4);
    st[3][0][0].send_peer = 0;
    const CheckResult r = run(sh, st);
    const CheckError* e = r.first("bad_peer");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 3);
    CHECK(e->step == 0);
    CHECK(e->message.find("send peer 0 is not linked to rank 3 in the ring") != std::string::npos);
}

TEST_CASE("mutation: chain broadcast that forgets to forward deadlocks the rank behind", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::broadcast;
    sh.method = Method::line;
    sh.topo = Topology::line;
    sh.ranks = 6;
    sh.root = 2;
    sh.chunks = 2;
    auto st = streams(sh);
    const size_t i = find_step(st[4][0], Verb::recv_copy_send);
    st[4][0][i].verb = Verb::recv;
    st[4][0][i].send_peer = kNoPeer;
    const CheckResult r = run(sh, st);
    const CheckError* e = r.first("deadlock");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 5);
    CHECK(e->message.find("waits for a message from rank 4") != std::string::npos);
    CHECK(e->message.find("rank 4 lane 0 has finished") != std::string::npos);
}

TEST_CASE("mutation: chain gather sending scratch it never wrote", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::gather;
    sh.method = Method::ring_cw;
    sh.ranks = 4;
    auto st = streams(sh);
    REQUIRE(st[3][0][0].verb == Verb::send);
    st[3][0][0].src = {Buf::scratch, 0};
    const CheckResult r = run(sh, st);
    const CheckError* e = r.first("uninit");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 3);
    CHECK(e->step == 0);
    CHECK(e->message.find("reads scratch[0], which nothing wrote") != std::string::npos);
}

TEST_CASE("mutation: tree reduce folding the wrong chunk", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::reduce;
    sh.method = Method::binomial_tree;
    sh.ranks = 8;
    sh.chunks = 2;
    auto st = streams(sh);
    // rank 4's children are 5 and 6; chunk 0: recv_reduce_copy(5, in[0] -> scratch[0]) first
    const size_t i = find_step(st[4][0], Verb::recv_reduce_copy);
    REQUIRE(st[4][0][i].recv_peer == 5);
    st[4][0][i].src.chunk = 1;
    const CheckResult r = run(sh, st);
    const CheckError* e = r.first("wrong_value");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 0);
    CHECK(e->chunk == 0);
    CHECK(e->message.find("missing rank 4's in[0]; foreign rank 4's in[1]") != std::string::npos);
}

TEST_CASE("mutation: recursive doubling dropping the fold of an extra rank", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::all_reduce;
    sh.method = Method::recursive_doubling;
    sh.ranks = 6;  // P = 4: ranks 4 and 5 fold into 0 and 1
    sh.chunks = 1;
    auto st = streams(sh);
    // rank 0 folds rank 4's 6 chunks with recv_reduce_copy; turn them into plain copies
    for (uint32_t j = 0; j < 6; ++j) {
        REQUIRE(st[0][0][j].verb == Verb::recv_reduce_copy);
        REQUIRE(st[0][0][j].recv_peer == 4);
        st[0][0][j] = mk::copy(mk::in(j), mk::out(j));
    }
    const CheckResult r = run(sh, st);
    const CheckError* u = r.first("unreceived");
    REQUIRE(u != nullptr);
    CHECK(u->rank == 4);
    CHECK(u->step == 0);
    CHECK(u->message.find("6 message(s) to rank 0 never received") != std::string::npos);
    const CheckError* w = r.first("wrong_value");
    REQUIRE(w != nullptr);
    CHECK(w->message.find("missing rank 4's in[0]") != std::string::npos);
}

TEST_CASE("mutation: Rabenseifner sending two chunks where one is received", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::all_reduce;
    sh.method = Method::rabenseifner;
    sh.ranks = 4;
    sh.chunks = 2;
    auto st = streams(sh);
    // rank 1, distance 2: keeps [0,4), sends [4,8) to rank 3: step 0 is the copy, step 1 the send of out[4]
    REQUIRE(st[1][0][1].verb == Verb::send);
    REQUIRE(st[1][0][1].send_peer == 3);
    REQUIRE(st[1][0][1].src.chunk == 4);
    st[1][0][1].count = 2;
    const CheckResult r = run(sh, st);
    const CheckError* e = r.first("count_mismatch");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 3);
    CHECK(e->step == 2);
    CHECK(e->message.find("receives 1 chunk(s) from rank 1 whose matching send (step 1) has 2") != std::string::npos);
}

TEST_CASE("mutation: pairwise all_to_all sending the wrong block", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::all_to_all;
    sh.method = Method::pairwise;
    sh.ranks = 5;
    auto st = streams(sh);
    bool done = false;
    for (auto& s : st[1][0])
        if (s.verb == Verb::send && s.send_peer == 3) {
            REQUIRE(s.src.chunk == 3);
            s.src.chunk = 2;
            done = true;
        }
    REQUIRE(done);
    const CheckResult r = run(sh, st);
    const CheckError* e = r.first("wrong_value");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 3);
    CHECK(e->chunk == 1);
    CHECK(e->message.find("foreign rank 1's in[2]") != std::string::npos);
    CHECK(e->message.find("missing rank 1's in[3]") != std::string::npos);
}

TEST_CASE("mutation: 2D mesh all_gather sending across the diagonal", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::all_gather;
    sh.method = Method::mesh_2d;
    sh.topo = Topology::mesh;
    sh.ranks = 6;
    sh.rows = 2;
    sh.cols = 3;
    auto st = streams(sh);
    const size_t i = find_step(st[0][0], Verb::send);
    st[0][0][i].send_peer = 4;  // (y=1, x=1)
    const CheckResult r = run(sh, st);
    const CheckError* e = r.first("bad_peer");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 0);
    CHECK(e->message.find("send peer 4 is not linked to rank 0 in the mesh") != std::string::npos);
}

TEST_CASE("mutation: broadcast-then-local-reduce in a different order on one rank", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::all_reduce;
    sh.method = Method::broadcast_local_reduce;
    sh.ranks = 4;
    auto st = streams(sh);
    auto& v = st[2][0];
    const size_t a = find_step(v, Verb::reduce_local), b = find_step(v, Verb::reduce_local, a + 1);
    std::swap(v[a].src, v[b].src);  // rank 2 adds rank 2's input before rank 1's
    const CheckResult r = run(sh, st);
    const CheckError* e = r.first("order");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 2);
    CHECK(e->chunk == 0);
    CHECK(e->message.find("different order on rank 0 and rank 2") != std::string::npos);
}

TEST_CASE("mutation: bidirectional ring pair whose lanes write the same chunk", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::all_gather;
    sh.method = Method::ring_bidir;
    sh.ranks = 4;
    sh.chunks = 2;  // lane 0 carries chunk 0 of every fragment, lane 1 chunk 1
    auto st = streams(sh);
    const size_t i = find_step(st[0][1], Verb::recv_copy_send);
    REQUIRE(st[0][1][i].dst.chunk % 2 == 1);
    st[0][1][i].dst.chunk -= 1;
    const CheckResult r = run(sh, st);
    const CheckError* e = r.first("lane_race");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 0);
    CHECK(e->message.find("is also used by lane") != std::string::npos);
}

TEST_CASE("mutation: a ring whose ranks all receive before sending deadlocks in a cycle", "[collectives][schedule][mutation]") {
    Shape sh;
    sh.op = Op::reduce_scatter;
    sh.method = Method::ring_cw;
    sh.ranks = 3;
    auto st = streams(sh);
    for (uint32_t r = 0; r < 3; ++r) std::swap(st[r][0][0], st[r][0][1]);
    const CheckResult r = run(sh, st);
    const CheckError* e = r.first("deadlock");
    REQUIRE(e != nullptr);
    for (int q = 0; q < 3; ++q) CHECK(e->message.find("waits for a message from rank " + std::to_string(q)) != std::string::npos);
}

// ---- pictures: docs/collectives-algorithms.md holds the pictures generated from the schedules ----
namespace {
struct Pic {
    const char* title;
    Shape sh;
};
std::vector<Pic> doc_pictures() {
    auto S = [](Op op, Method m, Topology t, uint32_t p, uint32_t s, uint32_t rows = 0, uint32_t cols = 0) {
        Shape sh;
        sh.op = op;
        sh.method = m;
        sh.topo = t;
        sh.ranks = p;
        sh.chunks = s;
        sh.rows = rows;
        sh.cols = cols;
        return sh;
    };
    return {
        {"all_gather ring_cw, 4 ranks", S(Op::all_gather, Method::ring_cw, Topology::ring, 4, 1)},
        {"all_gather ring_bidir, 4 ranks, 2 chunks", S(Op::all_gather, Method::ring_bidir, Topology::ring, 4, 2)},
        {"all_gather ring_meet_middle, 4 ranks", S(Op::all_gather, Method::ring_meet_middle, Topology::ring, 4, 1)},
        {"all_gather line, 4 ranks", S(Op::all_gather, Method::line, Topology::line, 4, 1)},
        {"reduce_scatter ring_cw, 4 ranks", S(Op::reduce_scatter, Method::ring_cw, Topology::ring, 4, 1)},
        {"reduce_scatter line, 4 ranks", S(Op::reduce_scatter, Method::line, Topology::line, 4, 1)},
        {"all_reduce ring_cw (reduce_scatter + all_gather), 3 ranks", S(Op::all_reduce, Method::ring_cw, Topology::ring, 3, 1)},
        {"all_reduce recursive_doubling, 3 ranks (fold)", S(Op::all_reduce, Method::recursive_doubling, Topology::ring, 3, 1)},
        {"all_reduce rabenseifner, 4 ranks", S(Op::all_reduce, Method::rabenseifner, Topology::ring, 4, 1)},
        {"all_reduce broadcast_local_reduce, 3 ranks", S(Op::all_reduce, Method::broadcast_local_reduce, Topology::ring, 3, 1)},
        {"all_reduce reduce_broadcast_chain, 4 ranks (line)", S(Op::all_reduce, Method::reduce_broadcast_chain, Topology::line, 4, 1)},
        {"all_reduce mesh_2d, 2 x 2 mesh", S(Op::all_reduce, Method::mesh_2d, Topology::mesh, 4, 1, 2, 2)},
        {"broadcast binomial_tree, 5 ranks", S(Op::broadcast, Method::binomial_tree, Topology::ring, 5, 1)},
        {"reduce tree: two-phase (Cerebras thesis), 9 PEs in groups of 3", [] {
             static uint32_t par[9];
             tree_two_phase(par, 9, 3);
             Shape sh;
             sh.op = Op::reduce;
             sh.method = Method::tree;
             sh.topo = Topology::line;
             sh.ranks = 9;
             sh.tree = par;
             return sh;
         }()},
        {"reduce ring_meet_middle (chain), 5 ranks, 2 chunks", S(Op::reduce, Method::ring_meet_middle, Topology::ring, 5, 2)},
        {"gather line, 4 ranks", S(Op::gather, Method::line, Topology::line, 4, 1)},
        {"scatter line, 4 ranks", S(Op::scatter, Method::line, Topology::line, 4, 1)},
        {"all_to_all pairwise, 3 ranks", S(Op::all_to_all, Method::pairwise, Topology::ring, 3, 1)},
        {"all_to_all ring_cw relay, 3 ranks", S(Op::all_to_all, Method::ring_cw, Topology::ring, 3, 1)},
        {"all_to_all line relay, 4 ranks", S(Op::all_to_all, Method::line, Topology::line, 4, 1)},
    };
}
std::string render_docs_pictures() {
    std::string md;
    for (const Pic& p : doc_pictures()) md += "#### " + std::string(p.title) + "\n\n```mermaid\n" + host::mermaid(p.sh) + "```\n\n";
    return md;
}
}  // namespace

TEST_CASE("picture of a ring all_gather: one arrow per message, in time order", "[collectives][schedule][pictures]") {
    Shape sh;
    sh.op = Op::all_gather;
    sh.method = Method::ring_cw;
    sh.ranks = 3;
    const std::string m = host::mermaid(sh);
    // t0: everyone sends its input; t1: everyone forwards what it got from its predecessor
    CHECK(m.find("R0->>R1: t0 in[0]\n") != std::string::npos);
    CHECK(m.find("R2->>R0: t0 in[0]\n") != std::string::npos);
    CHECK(m.find("R1->>R2: t1 out[0]\n") != std::string::npos);  // rank 1 forwards rank 0's fragment
    CHECK(m.find("R0->>R1: t1 out[2]\n") != std::string::npos);
    size_t arrows = 0;
    for (size_t k = m.find("->>"); k != std::string::npos; k = m.find("->>", k + 1)) ++arrows;
    CHECK(arrows == 6);  // p (p-2) forwards + p first sends
    const std::string t = host::table(sh);
    CHECK(t.find("| 0 | ->1 in[0] | ->2 in[0] | ->0 in[0] |") != std::string::npos);
}

TEST_CASE("docs/collectives-algorithms.md holds the current schedule pictures", "[collectives][schedule][pictures]") {
    // the source tree from this file's path (absolute under CMake, relative under dev_test.sh)
    std::string root = __FILE__;
    root = root.substr(0, root.rfind("tests/collectives/"));
    std::ifstream f(root + "docs/collectives-algorithms.md");
    REQUIRE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string doc = ss.str();
    for (const Pic& p : doc_pictures()) {
        const std::string block = "```mermaid\n" + host::mermaid(p.sh) + "```\n";
        INFO(p.title << " is stale: regenerate with kccl_tests \"[.print_pictures]\"");
        CHECK(doc.find(block) != std::string::npos);
    }
}

TEST_CASE("print the docs' schedule pictures", "[.print_pictures]") {
    std::fputs(render_docs_pictures().c_str(), stdout);
}

// Review finding (2026-11-24): a window near 2^32 wrapped `rounds + window - 1` to a small number,
// made the wavefront's chunk spacing 0 and divided by zero; window_slots wrapped to 0 slots.
TEST_CASE("wavefront: a huge window orders like a window of `rounds`, and window_slots saturates", "[collectives][schedule]") {
    auto order = [](uint32_t chunks, uint32_t rounds, uint32_t window) {
        std::vector<std::pair<uint32_t, uint32_t>> v;
        detail::wavefront(chunks, rounds, window, [&](uint32_t j, uint32_t t) { v.emplace_back(j, t); });
        return v;
    };
    for (uint32_t rounds : {1u, 2u, 3u, 7u})
        for (uint32_t chunks : {1u, 2u, 5u}) {
            const auto ref = order(chunks, rounds, rounds);
            CHECK(ref.size() == size_t(chunks) * rounds);  // every (chunk, round) exactly once
            for (uint32_t w : {rounds + 1, 0xFFFFFFF0u, 0xFFFFFFFEu, 0xFFFFFFFFu}) CHECK(order(chunks, rounds, w) == ref);
        }
    Shape sh;
    sh.window = 0xFFFFFFFFu;
    CHECK(window_slots(sh) == 0xFFFFFFFFu);
    sh.window = 0xFFFFFFFEu;
    CHECK(window_slots(sh) == 0xFFFFFFFFu);
    sh.window = 0;
    CHECK(window_slots(sh) == 2);
    sh.window = 3;
    CHECK(window_slots(sh) == 4);
}

// ---- resuming a lane's step stream (schedule.hpp StepResume, executor.hpp LaneStream) ----------
// Review finding (2026-11-24): the merged / interleaved executors re-ran a lane's generator from
// its first step for every 32 steps they read (quadratic), in a 4 KiB window on the device stack.
// They now read a lane a few steps at a time, each run resuming at a cursor.
namespace {
/// A lane read `cap` steps at a time the way LaneStream does; `emitted` counts every step the
/// generator passed to the sink over all runs (kept or skipped).
std::vector<Step> read_resumed(const Shape& sh, uint32_t rank, uint32_t lane, uint32_t cap, uint64_t& emitted,
                               uint64_t& runs) {
    std::vector<Step> all, buf(cap);
    StepCursor next{};
    for (;;) {
        StepResume r;
        r.from = next;
        r.out = buf.data();
        r.cap = cap;
        struct Ctx { StepResume* r; uint64_t* emitted; } ctx{&r, &emitted};
        for_each_step(sh, rank, lane, StepSink{&ctx, [](void* c, const Step& s) {
                                                   Ctx& x = *static_cast<Ctx*>(c);
                                                   ++*x.emitted;
                                                   x.r->take(s);
                                               },
                                               &r});
        ++runs;
        all.insert(all.end(), buf.begin(), buf.begin() + r.n);
        if (!r.full) return all;
        REQUIRE(cursor_less(next, r.stop));  // progress: a run that kept nothing would loop forever
        next = r.stop;
    }
}
bool same_steps(const Step& a, const Step& b) {
    return a.verb == b.verb && a.cast == b.cast && a.recv_peer == b.recv_peer && a.send_peer == b.send_peer && a.src.buf == b.src.buf &&
           a.src.chunk == b.src.chunk && a.dst.buf == b.dst.buf && a.dst.chunk == b.dst.chunk && a.count == b.count;
}
}  // namespace

TEST_CASE("a lane read a few steps at a time, resuming at a cursor, is the generator's stream", "[collectives][schedule]") {
    uint64_t lanes_checked = 0, steps_checked = 0;
    for (Op op : {Op::all_gather, Op::reduce_scatter, Op::all_reduce, Op::broadcast, Op::reduce, Op::gather,
                  Op::scatter, Op::all_to_all, Op::send_recv, Op::barrier})
        for (Method m : {Method::ring_cw, Method::ring_ccw, Method::ring_bidir, Method::ring_meet_middle, Method::line,
                         Method::broadcast_local_reduce, Method::reduce_broadcast_chain, Method::recursive_doubling,
                         Method::rabenseifner, Method::binomial_tree, Method::pairwise})
            for (Topology t : {Topology::ring, Topology::line})
                for (uint32_t p : {1u, 2u, 3u, 4u, 5u, 8u})
                    for (uint32_t s : {1u, 2u, 5u})
                        for (uint32_t w : {1u, 2u, 3u, 9u}) {
                            const Shape sh = shape_of(op, m, t, p, s, w);
                            if (validate(sh) != nullptr) continue;
                            for (uint32_t r = 0; r < p; ++r)
                                for (uint32_t l = 0; l < lanes(sh); ++l) {
                                    std::vector<Step> full;
                                    for_each_step(sh, r, l, [&](const Step& st) { full.push_back(st); });
                                    for (uint32_t cap : {1u, 2u, 3u, 8u}) {
                                        uint64_t emitted = 0, runs = 0;
                                        const std::vector<Step> got = read_resumed(sh, r, l, cap, emitted, runs);
                                        INFO(describe(sh) << " window " << w << " rank " << r << " lane " << l << " cap " << cap);
                                        REQUIRE(got.size() == full.size());
                                        for (size_t i = 0; i < full.size(); ++i) REQUIRE(same_steps(got[i], full[i]));
                                    }
                                    // the executors' own reader
                                    detail::LaneStream ls;
                                    auto for_lane = [&](uint32_t lane, const StepSink& sink) { for_each_step(sh, r, lane, sink); };
                                    std::vector<Step> got;
                                    Step st;
                                    while (ls.get(for_lane, l, st)) got.push_back(st);
                                    REQUIRE(got.size() == full.size());
                                    for (size_t i = 0; i < full.size(); ++i) REQUIRE(same_steps(got[i], full[i]));
                                    ++lanes_checked;
                                    steps_checked += full.size();
                                }
                        }
    CHECK(lanes_checked > 1000);
    std::printf("resumed streams: %llu lanes, %llu steps, each read with 1, 2, 3, 8 steps per run\n",
                (unsigned long long)lanes_checked, (unsigned long long)steps_checked);
}

TEST_CASE("reading a long merged lane costs generator work linear in its steps", "[collectives][schedule]") {
    // ring_bidir all_gather on 8 ranks, 4096 chunks: each lane has ~16 k steps. Re-running the
    // generator from the start for every 8 steps would emit ~16k^2 / 16 = 16 M steps per lane.
    for (Op op : {Op::all_gather, Op::reduce_scatter, Op::all_reduce})
        for (Method m : {Method::ring_bidir, Method::ring_meet_middle, Method::line})
            for (uint32_t w : {1u, 4u}) {
                const Shape sh = shape_of(op, m, Topology::ring, 8, op == Op::all_gather ? 4096 : 512, w);
                if (validate(sh) != nullptr) continue;
                for (uint32_t l = 0; l < lanes(sh); ++l) {
                    uint64_t emitted = 0, runs = 0;
                    const uint64_t S = read_resumed(sh, 3, l, lane_stream_steps, emitted, runs).size();
                    INFO(describe(sh) << " window " << w << " lane " << l << ": " << S << " steps, " << emitted
                                      << " emitted over " << runs << " runs");
                    CHECK(S > 1000);
                    CHECK(emitted <= 2 * S + 16 * runs);  // each run re-emits at most the item it resumes in
                }
            }
}

// The executor checks slots(d) >= slots_needed(shape, pieces) at the first send on a direction
// (executor.hpp, StepRunner::check_slots). The checker shows that suffices for every windowed
// method in every model an executor runs (concurrent lanes, lanes in turn, merged lanes), for
// windows up to and past the clamp, chunks of several pieces, and window 1; and it is tight for
// a ring.
TEST_CASE("slots_needed suffices for every windowed schedule, in every lane model, and is tight for a ring", "[collectives][schedule]") {
    uint32_t checked = 0;
    for (Op op : {Op::all_gather, Op::reduce_scatter, Op::all_reduce})
        for (Method m : {Method::ring_cw, Method::ring_ccw, Method::ring_bidir, Method::ring_meet_middle, Method::line})
            for (Topology t : {Topology::ring, Topology::line})
                for (uint32_t p : {1u, 2u, 3u, 4u, 5u, 8u})
                    for (uint32_t W : {0u, 1u, 2u, 3u, 4u, 6u, 9u, 17u})
                        for (uint32_t P : {1u, 2u, 3u})
                            for (uint32_t s : {1u, 6u}) {
                                const Shape sh = shape_of(op, m, t, p, s, W);
                                if (validate(sh) != nullptr) continue;
                                REQUIRE(uses_window(sh));
                                auto [fine, st] = host::stream_pieces(sh, P);
                                CheckOptions o;
                                o.capacity = uint32_t(slots_needed(sh, P));
                                std::vector<CheckOptions> models{o};
                                if (lanes(sh) > 1) {
                                    models.push_back(o);
                                    models.back().serial_lanes = true;
                                    if (lanes_mergeable(sh)) {
                                        models.push_back(o);
                                        models.back().merged_lanes = true;
                                    }
                                }
                                for (const CheckOptions& x : models) {
                                    INFO(describe(sh) << " window " << W << " pieces " << P << " capacity " << x.capacity
                                                      << (x.serial_lanes ? " serial" : x.merged_lanes ? " merged" : ""));
                                    CHECK(host::check_streams(fine, st, x).ok);
                                    ++checked;
                                }
                            }
    CHECK(checked == 8064);
    // the chunk-major schedule on a line with one-message chunks needs 1 slot, a ring 2
    Shape ln = shape_of(Op::all_reduce, Method::line, Topology::line, 5);
    CHECK(slots_needed(ln, 1) == 1);
    ln.method = Method::ring_cw;
    ln.topo = Topology::ring;
    CHECK(slots_needed(ln, 1) == 2);
    // tight: one slot less deadlocks an 8-rank clockwise all_gather (window 2, 2 pieces: 5 slots)
    Shape sh = shape_of(Op::all_gather, Method::ring_cw, Topology::ring, 8, 6, 2);
    REQUIRE(slots_needed(sh, 2) == 5);
    auto [fine, st] = host::stream_pieces(sh, 2);
    CheckOptions o;
    o.capacity = 4;
    CHECK(host::check_streams(fine, st, o).has("deadlock"));
    // and window 1 with chunks of 4 pieces needs 5 (a chunk-major ring of multi-piece chunks)
    sh.window = 1;
    REQUIRE(slots_needed(sh, 4) == 5);
    auto [fine1, st1] = host::stream_pieces(sh, 4);
    o.capacity = 4;
    CHECK(host::check_streams(fine1, st1, o).has("deadlock"));
    // the window is clamped at 2 * ranks (the wavefront clamps it at a chunk's rounds)
    sh.window = 1000;
    CHECK(slots_needed(sh, 1) == 17);
    // algorithms that ignore the window are not checked at run time (1)
    sh.op = Op::broadcast;
    CHECK_FALSE(uses_window(sh));
    CHECK(slots_needed(sh, 3) == 1);
}

// ---- the method table --------------------------------------------------------------------------
namespace {
/// A shape of (op, method) on topology t with 6 ranks (mesh / torus 2 x 3), root 1, trees for
/// Method::tree (all_reduce: a different broadcast tree).
Shape table_shape(Op op, Method m, Topology t, std::vector<uint32_t>& tree, std::vector<uint32_t>& bcast) {
    Shape sh = shape_of(op, m, t, 6, 2);
    if (op == Op::barrier) sh.chunks = 1;
    if (t == Topology::mesh || t == Topology::torus) {
        sh.rows = 2;
        sh.cols = 3;
    }
    if (m == Method::tree) {
        tree.assign(6, 0);
        tree_two_phase(tree.data(), 6, 2);
        tree = rerooted(tree, sh.root);
        sh.tree = tree.data();
        if (op == Op::all_reduce) {
            bcast.assign(6, sh.root);  // a star: one multicast from the root
            sh.bcast_tree = bcast.data();
        }
    }
    return sh;
}
}  // namespace

TEST_CASE("the method table: every row dispatches and checks on exactly its topologies; nothing else dispatches",
          "[collectives][schedule][table]") {
    static_assert(kMethodCount == 15, "KCCL_COLL_METHODS lists the 15 methods");
    CHECK(std::string(method_name(Method::rabenseifner)) == "rabenseifner");
    CHECK(std::string(method_name(Method::mesh_2d)) == "mesh_2d");
    uint32_t rows = 0, checked = 0;
    for (uint32_t op = 0; op < kOpCount; ++op) {
        std::string listed;
        for (uint32_t m = 0; m < kMethodCount; ++m) {
            const Op o = Op(op);
            const Method me = Method(m);
            const MethodRow* row = method_row(o, me);
            INFO(op_name(o) << " x " << method_name(me));
            Shape probe;
            probe.op = o;
            probe.method = me;
            CHECK(dispatch(probe, [](auto) {}) == (row != nullptr));
            CHECK(offers(o, me) == (row != nullptr));
            if (!row) {
                CHECK(std::string(validate(probe)).find("allowed_methods") != std::string::npos);
                continue;
            }
            ++rows;
            listed += (listed.empty() ? "" : ", ") + std::string(method_name(me));
            bool mh = false;
            dispatch(probe, [&](auto tag) { mh = decltype(tag)::type::multi_hop; });
            CHECK(row->multi_hop == mh);
            for (uint32_t t = 0; t < kTopologyCount; ++t) {
                std::vector<uint32_t> tree, bcast;
                const Shape sh = table_shape(o, me, Topology(t), tree, bcast);
                INFO(topology_name(Topology(t)));
                const char* err = validate(sh);
                CHECK((err == nullptr) == row->topologies.has(Topology(t)));
                if (err) continue;
                CHECK(runs_on(o, me, Topology(t)));
                CheckOptions opt;
                opt.capacity = kSlotsNeeded;
                const CheckResult r = host::check(sh, opt);
                INFO(r.summary());
                CHECK(r.ok);
                ++checked;
            }
        }
        CHECK(std::string(allowed_methods(Op(op))) == listed);
    }
    CHECK(rows == kMethodRows);
    CHECK(checked > rows);
    // the table's topology column backs the algorithms' own checks
    std::vector<uint32_t> tree, bcast;
    Shape sh = table_shape(Op::all_to_all, Method::ring_cw, Topology::line, tree, bcast);
    CHECK(validate(sh) != nullptr);
}

// ---- all_reduce Method::tree: reduce and broadcast trees of their own ------------------------------
TEST_CASE("all_reduce Method::tree reduces up one parent array and broadcasts down another", "[collectives][schedule]") {
    uint64_t cases = 0;
    for (uint32_t p = 1; p <= 24; ++p)
        for (uint32_t root : {0u, p / 2, p - 1}) {
            Shape sh = shape_of(Op::all_reduce, Method::tree, Topology::line, p, 2);
            sh.root = root;
            const auto trees = trees_for(p, root, sh);
            for (size_t a = 0; a < trees.size(); ++a)
                for (size_t b = 0; b < trees.size(); ++b) {
                    if (p > 12 && b != (a + 1) % trees.size()) continue;  // fewer pairs for the larger counts
                    sh.tree = trees[a].data();
                    sh.bcast_tree = trees[b].data();
                    REQUIRE(validate(sh) == nullptr);
                    CheckOptions o;
                    o.capacity = kSlotsNeeded;
                    o.max_writes = 1;
                    o.non_commutative = true;  // computed once at the root, copied: any operator
                    const CheckResult r = host::check(sh, o);
                    if (!r.ok) FAIL(describe(sh) << " reduce tree " << a << " broadcast tree " << b << "\n" << r.summary());
                    ++cases;
                }
        }
    CHECK(cases > 800);
    // the broadcast really follows the second tree: a chain reduce, a star broadcast from rank 0
    std::vector<uint32_t> chain(5), star(5, 0);
    tree_chain(chain.data(), 5);
    Shape sh = shape_of(Op::all_reduce, Method::tree, Topology::line, 5, 1);
    sh.root = 0;
    sh.tree = chain.data();
    sh.bcast_tree = star.data();
    const host::Streams st = host::collect(sh);
    uint32_t mc = 0;
    for (const Step& s : st[0][0]) mc += s.cast == Cast::children;
    CHECK(mc == 5);  // one multicast per chunk from the root to all four others
    for (uint32_t r = 1; r < 5; ++r)
        for (const Step& s : st[r][0])
            if (s.verb == Verb::recv) CHECK(s.recv_peer == 0);
    // bad input: a broadcast tree not rooted at the root, and one on a method without trees
    std::vector<uint32_t> wrong(5, 1);
    sh.bcast_tree = wrong.data();
    REQUIRE(validate(sh) != nullptr);
    CHECK(std::string(validate(sh)).find("root its own parent") != std::string::npos);
    sh.bcast_tree = star.data();
    sh.method = Method::reduce_broadcast_tree;
    REQUIRE(validate(sh) != nullptr);
    CHECK(std::string(validate(sh)).find("Shape::bcast_tree") != std::string::npos);
}

// ---- the combine order --------------------------------------------------------------------------
TEST_CASE("the checker's ordered tree is the schedule's value under a non-commutative combine (independent interpreter)",
          "[collectives][schedule][order]") {
    static uint32_t pre[6] = {0, 0, 1, 1, 0, 4};
    std::vector<Shape> shapes{
        shape_of(Op::reduce, Method::binomial_tree, Topology::ring, 7, 2),
        shape_of(Op::reduce, Method::ring_meet_middle, Topology::ring, 6, 1),
        shape_of(Op::reduce_scatter, Method::line, Topology::line, 5, 2),
        shape_of(Op::all_reduce, Method::ring_bidir, Topology::ring, 4, 3),
        shape_of(Op::all_reduce, Method::broadcast_local_reduce, Topology::ring, 4, 1),
        shape_of(Op::all_reduce, Method::recursive_doubling, Topology::ring, 6, 1),
        shape_of(Op::all_reduce, Method::rabenseifner, Topology::ring, 5, 2),
        shape_of(Op::all_reduce, Method::mesh_2d, Topology::mesh, 6, 1),
    };
    shapes.back().rows = 2;
    shapes.back().cols = 3;
    Shape t = shape_of(Op::reduce, Method::tree, Topology::line, 6, 1);
    t.root = 0;
    t.tree = pre;
    shapes.push_back(t);
    for (const Shape& sh : shapes) {
        INFO(describe(sh));
        const uint32_t gin = grid(sh, Buf::input);
        std::vector<std::vector<uint64_t>> in(sh.ranks, std::vector<uint64_t>(gin));
        for (uint32_t r = 0; r < sh.ranks; ++r)
            for (uint32_t c = 0; c < gin; ++c) in[r][c] = host::leaf_hash(r * gin + c);
        const auto local_first = interpret<uint64_t>(sh, in, host::ordered_combine, 0);
        const auto swapped = interpret<uint64_t>(sh, in, [](uint64_t a, uint64_t b) { return host::ordered_combine(b, a); }, 0);
        CheckOptions o;
        o.record = true;
        const CheckResult r = host::check(sh, o);
        REQUIRE(r.ok);
        std::vector<uint32_t> want;
        uint32_t agree = 0, differ = 0;
        for (uint32_t q = 0; q < sh.ranks; ++q)
            for (uint32_t c = 0; c < grid(sh, Buf::output); ++c) {
                if (!host::expected(sh, q, c, want)) continue;
                CHECK(r.outputs[q][c].tree == local_first[q][c]);
                agree += r.outputs[q][c].tree == local_first[q][c];
                if (want.size() > 1) differ += r.outputs[q][c].tree != swapped[q][c];
            }
        CHECK(agree > 0);
        CHECK(differ > 0);  // the order is visible: the swapped combine gives other values
    }
}

TEST_CASE("combine order: rank-ordered contributors for the thesis's pre-order trees rooted at rank 0",
          "[collectives][schedule][order]") {
    // local operand first: a node folds its own input, then its children's subtrees closest
    // first, so a pre-order numbered tree reduces in ascending rank order (MPI's canonical order
    // for an associative, non-commutative operator)
    for (uint32_t p = 2; p <= 16; ++p) {
        std::vector<uint32_t> par(p);
        for (int kind = 0; kind < 3; ++kind) {
            if (kind == 0) tree_chain(par.data(), p);
            if (kind == 1) tree_binomial(par.data(), p);
            if (kind == 2) tree_two_phase(par.data(), p, 3);
            Shape sh = shape_of(Op::reduce, Method::tree, Topology::line, p, 2);
            sh.root = 0;
            sh.tree = par.data();
            CheckOptions o;
            o.record = true;
            const CheckResult r = host::check(sh, o);
            REQUIRE(r.ok);
            for (uint32_t c = 0; c < 2; ++c) {
                INFO("p=" << p << " tree " << kind << " out[" << c << "]");
                CHECK(r.outputs[0][c].leaves.size() == p);
                CHECK(host::rank_ordered(r.outputs[0][c], grid(sh, Buf::input)));
            }
        }
    }
}

TEST_CASE("mutation: recursive doubling's partners combine (mine, theirs): fine for commutative operators, "
          "caught as `order` for a non-commutative one",
          "[collectives][schedule][order][mutation]") {
    const Shape sh = shape_of(Op::all_reduce, Method::recursive_doubling, Topology::ring, 2, 1);
    CHECK(host::check(sh).ok);
    CheckOptions o;
    o.non_commutative = true;
    const CheckResult r = host::check(sh, o);
    const CheckError* e = r.first("order");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 1);
    CHECK(e->message.find("different order on rank 0 and rank 1 (the same combine tree with the operands of some "
                          "combine swapped") != std::string::npos);
    // every other all_reduce method computes each value once (or identically everywhere)
    for (const MethodRow& row : kMethodTable) {
        if (row.op != Op::all_reduce || row.method == Method::recursive_doubling || row.method == Method::tree) continue;
        for (uint32_t p : {1u, 2u, 3u, 5u, 8u}) {
            Shape s = shape_of(Op::all_reduce, row.method, row.topologies.has(Topology::ring) ? Topology::ring : Topology::mesh, p, 2);
            if (s.topo == Topology::mesh) {
                s.rows = 1;
                s.cols = p;
            }
            INFO(describe(s));
            const CheckResult q = host::check(s, o);
            CHECK(q.ok);
        }
    }
    // a swapped operand order inside one rank's reduce_local: order error for any operator
    auto st = host::collect(shape_of(Op::all_reduce, Method::broadcast_local_reduce, Topology::ring, 3, 1));
    const Shape bl = shape_of(Op::all_reduce, Method::broadcast_local_reduce, Topology::ring, 3, 1);
    // rank 2: out = in_0 (+) in_1 (+) in_2 becomes out = in_1 (+) (in_0 ...): copy scr[1] first
    auto& v = st[2][0];
    const size_t a = find_step(v, Verb::copy, 0);
    size_t c0 = a;
    while (v[c0].dst.buf != Buf::output) c0 = find_step(v, Verb::copy, c0 + 1);
    const size_t r1 = find_step(v, Verb::reduce_local);
    std::swap(v[c0].src, v[r1].src);  // out = in_1; out = out (+) in_0: the operands of one combine swapped
    CheckOptions no;
    no.multi_hop = false;
    CHECK(host::check_streams(bl, st, no).ok);  // commutative: the same bits
    no.non_commutative = true;
    const CheckResult w = host::check_streams(bl, st, no);
    REQUIRE(w.first("order") != nullptr);
    CHECK(w.first("order")->rank == 2);
    CHECK(w.first("order")->message.find("operands of some combine swapped") != std::string::npos);
}

// ---- multicast and routes -----------------------------------------------------------------------
TEST_CASE("multicast: a tree broadcast is one message per node, queued to every child; lowered it is the unicast schedule",
          "[collectives][schedule][multicast]") {
    for (uint32_t p = 1; p <= 16; ++p)
        for (uint32_t s : {1u, 3u}) {
            Shape sh = shape_of(Op::broadcast, Method::binomial_tree, Topology::ring, p, s);
            INFO(describe(sh));
            CheckOptions o;
            o.capacity = 1;
            o.max_writes = 1;
            const CheckResult r = host::check(sh, o);
            REQUIRE(r.ok);
            uint32_t inner = 0;
            const host::Streams st = host::collect(sh);
            host::Streams low(p, std::vector<std::vector<Step>>(1));
            for (uint32_t q = 0; q < p; ++q) {
                bool sends = false;
                for (const Step& x : st[q][0]) sends = sends || verb_sends(x.verb);
                inner += sends;
                for (const Step& x : st[q][0]) CHECK((x.cast == Cast::children) == verb_sends(x.verb));
                for_each_unicast_step(sh, q, 0, [&](const Step& x) { low[q][0].push_back(x); });
                for (const Step& x : low[q][0]) CHECK(x.cast == Cast::unicast);
            }
            CHECK(r.messages == uint64_t(inner) * s);  // one injection per inner node and chunk
            o.multi_hop = true;
            const CheckResult lr = host::check_streams(sh, low, o);
            INFO(lr.summary());
            CHECK(lr.ok);
            CHECK(lr.messages == uint64_t(p - 1) * s);  // lowered: one message per child
        }
}

TEST_CASE("mutation: multicasts are checked per receiver (a child that never receives, a multicast of a partial)",
          "[collectives][schedule][multicast][mutation]") {
    Shape sh = shape_of(Op::broadcast, Method::binomial_tree, Topology::ring, 8, 1);
    sh.root = 0;
    auto st = host::collect(sh);
    // rank 5 (a leaf child of 4) drops its receive: the copy queued for it is never received
    REQUIRE(st[5][0][0].recv_peer == 4);
    st[5][0][0] = mk::copy(mk::in(0), mk::out(0));
    const CheckResult r = run(sh, st);
    const CheckError* u = r.first("unreceived");
    REQUIRE(u != nullptr);
    CHECK(u->rank == 4);
    CHECK(u->message.find("1 message(s) to rank 5 never received") != std::string::npos);
    // a multicast on recv_reduce_send keeps nothing an executor could resend to the next child
    Shape rd = shape_of(Op::reduce, Method::binomial_tree, Topology::ring, 4, 1);
    rd.root = 0;
    auto rs = host::collect(rd);
    const size_t i = find_step(rs[2][0], Verb::recv_reduce_send);
    rs[2][0][i].cast = Cast::children;
    const CheckResult b = run(rd, rs);
    const CheckError* e = b.first("bad_peer");
    REQUIRE(e != nullptr);
    CHECK(e->rank == 2);
    CHECK(e->message.find("a multicast on recv_reduce_send") != std::string::npos);
}

TEST_CASE("routes: a message's logical time is its route's hops; a multicast reaches each child after its own hops",
          "[collectives][schedule][multicast]") {
    CHECK(hops(shape_of(Op::broadcast, Method::binomial_tree, Topology::ring, 8, 1), 0, 5) == 3);
    CHECK(hops(shape_of(Op::broadcast, Method::binomial_tree, Topology::line, 8, 1), 0, 5) == 5);
    Shape m = shape_of(Op::broadcast, Method::binomial_tree, Topology::torus, 12, 1);
    m.rows = 3;
    m.cols = 4;
    CHECK(hops(m, 0, 11) == 2);  // (0,0) -> (3,2): one hop each way round
    m.topo = Topology::mesh;
    CHECK(hops(m, 0, 11) == 5);
    for (Topology t : {Topology::line, Topology::ring}) {
        Shape sh = shape_of(Op::broadcast, Method::binomial_tree, t, 8, 1);
        sh.root = 0;
        CheckOptions o;
        o.record = true;
        const CheckResult r = host::check(sh, o);
        REQUIRE(r.ok);
        std::map<uint32_t, uint32_t> got;  // rank -> time of its receive
        for (const host::Event& e : r.events)
            if (verb_receives(e.step.verb)) got[e.rank] = e.time;
        // root multicasts at t0 to 4, 2, 1; 4 at t4 to 6, 5; 2 at t2 to 3; 6 at t6 to 7
        const bool line = t == Topology::line;
        CHECK(got[4] == 4);
        CHECK(got[2] == 2);
        CHECK(got[1] == 1);
        CHECK(got[6] == 6);
        CHECK(got[5] == 5);
        CHECK(got[3] == 3);
        CHECK(got[7] == 7);
        CHECK(r.time == 7);
        (void)line;
    }
    // neighbours stay one message time apart (every ring / line schedule's pictures unchanged)
    const CheckResult ring = host::check(shape_of(Op::all_gather, Method::ring_cw, Topology::ring, 5, 1));
    CHECK(ring.time == 4);
}
