// The schedule representation held to the code on the emulation:
//   * the combine order (schedule.hpp: combine(local, received); reduce_local: combine(dst, src)):
//     the executor runs with a NON-commutative, non-associative operator (the checker's own
//     ordered_combine), and every reduced output must equal the checker's ordered tree; a run
//     whose combine takes its operands the other way round is caught, with the specific value;
//   * multicast (Cast::children): on a link with send_multicast the executor injects one message
//     per tree node and piece; on a link without it the same schedule runs as unicasts.
//
//   scripts/dev_test.sh tests/collectives/order_test.cpp -- "[order],[multicast]"
#include "collectives/e2e_bed.hpp"

#include <collectives/host/checker.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

using namespace kccl::coll;
namespace cb = kccl::emu::collective;
namespace emu = ::kccl::emu;
using host::ordered_combine;

namespace {

/// The checker's combine as a real operator on uint64_t: first operand a, second b.
struct OrderedMix {
    using value_type = uint64_t;
    static constexpr bool has_prepare = false, has_finalize = false;
    static void combine(uint64_t* dst, const uint64_t* a, const uint64_t* b, uint32_t n) {
        for (uint32_t i = 0; i < n; ++i) {
            const uint64_t x = ordered_combine(a[i], b[i]);
            dst[i] = x;
        }
    }
    static void prepare(uint64_t* dst, const uint64_t* src, uint32_t n) {
        if (dst != src) std::memmove(dst, src, n * sizeof(uint64_t));
    }
    static void finalize(uint64_t*, uint32_t, uint32_t) {}
};
/// The mutation: an operator (or a primitive) that takes the received operand first.
struct SwappedMix : OrderedMix {
    static void combine(uint64_t* dst, const uint64_t* a, const uint64_t* b, uint32_t n) {
        for (uint32_t i = 0; i < n; ++i) {
            const uint64_t x = ordered_combine(b[i], a[i]);
            dst[i] = x;
        }
    }
};

/// A chain reduce to the last rank through recv_reduce_copy_send (no method uses that verb): rank
/// 0 sends, rank i keeps combine(in_i, partial) in scratch and forwards it, the last rank combines
/// into its output.
struct CopySendChain : AlgorithmBase<CopySendChain> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape&) { return nullptr; }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t r, uint32_t, E& e) {
        const uint32_t p = sh.ranks;
        for (uint32_t j = 0; j < sh.chunks; ++j) {
            if (p == 1) e(mk::copy(mk::in(j), mk::out(j)));
            else if (r == 0) e(mk::send(1, mk::in(j)));
            else if (r + 1 < p) e(mk::recv_reduce_copy_send(r - 1, r + 1, mk::in(j), mk::scr(j)));
            else e(mk::recv_reduce_copy(r - 1, mk::in(j), mk::out(j)));
        }
    }
};

struct Outcome {
    std::string error;                              ///< "" if the run finished
    std::vector<std::vector<uint64_t>> out;         ///< per rank, per output element
};

/// Runs `sh` with reducer Red on an IPCQ group (chunks of `ce` elements, input element e of chunk
/// c of rank r = leaf_hash(r * grid_in + c)). run(link, params, group_args) runs a rank.
template <class Red, class Run>
Outcome run_on_bed(const Shape& sh, uint32_t ce, GroupShape group, Run run) {
    const uint32_t gin = grid(sh, Buf::input), gout = grid(sh, Buf::output), gscr = scratch_chunks(sh);
    cb::GroupOptions bo;
    bo.transport = Transport::ipcq;
    bo.shape = group;
    bo.ranks = sh.ranks;
    bo.message_bytes = 64;
    bo.slots = 4;
    bo.buffer_bytes = uint32_t((std::max({gin, gout, gscr, 1u}) * ce * 8 + 15) & ~15u);
    cb::Group bed(bo);
    bed.add([sh, ce, gin, run](auto& hal, auto& link, const GroupArgs& g) -> uint64_t {
        uint64_t* in = reinterpret_cast<uint64_t*>(hal.l1_ptr(g.input_l1, gin * ce * 8));
        for (uint32_t c = 0; c < gin; ++c)
            for (uint32_t e = 0; e < ce; ++e) in[c * ce + e] = host::leaf_hash(g.rank * gin + c);
        ExecParams ep;
        ep.shape = sh;
        ep.rank = g.rank;
        ep.chunk_elems = ce;
        ep.buf = {g.input_l1, g.output_l1, g.scratch_l1, g.input_l1};
        ep.count = gin * ce;
        run(link, ep, g);
        link.quiesce();
        return 0;
    });
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(5000);
    ro.adversary.enabled = true;
    ro.adversary.seed = 17;
    const emu::RunReport rep = bed.run(ro);
    Outcome o;
    if (!rep.ok()) {
        o.error = rep.summary();
        return o;
    }
    for (uint32_t r = 0; r < sh.ranks; ++r) {
        o.out.emplace_back(gout * ce);
        std::memcpy(o.out.back().data(), bed.output(r), gout * ce * 8);
    }
    return o;
}

/// The reduced outputs (those the op defines) that differ from the checker's ordered trees, as
/// text ("" if none); `cmp` counts the compared chunks.
std::string differences(const Shape& sh, const host::Streams& st, const Outcome& o, uint32_t ce, uint32_t& cmp) {
    host::CheckOptions opt;
    opt.record = true;
    opt.multi_hop = true;
    const host::CheckResult cr = host::check_streams(sh, st, opt);
    if (!cr.ok) return "checker: " + cr.summary();
    std::string d;
    std::vector<uint32_t> want;
    for (uint32_t r = 0; r < sh.ranks; ++r)
        for (uint32_t c = 0; c < grid(sh, Buf::output); ++c) {
            if (!host::expected(sh, r, c, want) || want.size() < 2) continue;  // copies only: no combine
            ++cmp;
            for (uint32_t e = 0; e < ce; ++e)
                if (o.out[r][c * ce + e] != cr.outputs[r][c].tree) {
                    d += "rank " + std::to_string(r) + " out[" + std::to_string(c) + "] elem " + std::to_string(e) + "; ";
                    break;
                }
        }
    return d;
}

Shape shape(Op op, Method m, uint32_t p, uint32_t s, uint32_t root = 0) {
    Shape sh;
    sh.op = op;
    sh.method = m;
    sh.topo = Topology::ring;
    sh.ranks = p;
    sh.chunks = s;
    sh.root = root;
    return sh;
}

template <class Red>
Outcome run_any(const Shape& sh, uint32_t ce, bool interleaved = false) {
    return run_on_bed<Red>(sh, ce, GroupShape::all_pairs, [interleaved](auto& link, const ExecParams& ep, const GroupArgs& g) {
        if (interleaved) execute_any_interleaved<Red>(link, ep, cb::all_pairs_dirs_of(g));
        else execute_any<Red>(link, ep, cb::all_pairs_dirs_of(g));
    });
}

}  // namespace

TEST_CASE("combine order: the executor computes combine(local, received), as the checker models it, with a "
          "non-commutative operator",
          "[collectives][order]") {
    static uint32_t two_phase[7], chain[7];
    tree_two_phase(two_phase, 7, 3);
    tree_chain(chain, 7);
    Shape tree_ar = shape(Op::all_reduce, Method::tree, 7, 1);
    tree_ar.tree = two_phase;
    tree_ar.bcast_tree = chain;
    struct Case {
        Shape sh;
        bool interleaved;
    };
    const std::vector<Case> cases{
        {shape(Op::reduce, Method::binomial_tree, 5, 2), false},             // recv_reduce_copy, recv_reduce_send
        {shape(Op::reduce, Method::ring_meet_middle, 5, 1, 2), false},       // chains from both sides
        {shape(Op::reduce_scatter, Method::ring_cw, 4, 2), false},
        {shape(Op::all_reduce, Method::ring_bidir, 4, 2), false},            // merged lanes
        {shape(Op::all_reduce, Method::ring_bidir, 4, 2), true},             // interleaved lanes (advance())
        {shape(Op::all_reduce, Method::broadcast_local_reduce, 3, 1), false},  // reduce_local
        {shape(Op::all_reduce, Method::recursive_doubling, 6, 1), false},    // (mine, theirs) on both sides
        {shape(Op::all_reduce, Method::rabenseifner, 4, 1), false},
        {tree_ar, false},
    };
    for (const Case& c : cases) {
        INFO(op_name(c.sh.op) << " " << method_name(c.sh.method) << " p=" << c.sh.ranks << (c.interleaved ? " interleaved" : ""));
        REQUIRE(validate(c.sh) == nullptr);
        const Outcome o = run_any<OrderedMix>(c.sh, 3, c.interleaved);
        REQUIRE(o.error == "");
        uint32_t cmp = 0;
        CHECK(differences(c.sh, host::collect(c.sh), o, 3, cmp) == "");
        CHECK(cmp > 0);
    }
    // recv_reduce_copy_send (used by no method yet) through a custom algorithm and execute<>
    Shape sh = shape(Op::reduce, Method::line, 4, 2, 3);
    sh.topo = Topology::line;
    const Outcome o = run_on_bed<OrderedMix>(sh, 2, GroupShape::line, [](auto& link, const ExecParams& ep, const GroupArgs& g) {
        execute<CopySendChain, OrderedMix>(link, ep, cb::dirs_of(g));
    });
    REQUIRE(o.error == "");
    host::Streams st(4, std::vector<std::vector<Step>>(1));
    for (uint32_t r = 0; r < 4; ++r) CopySendChain::for_each(sh, r, 0, [&](const Step& s) { st[r][0].push_back(s); });
    uint32_t cmp = 0;
    CHECK(differences(sh, st, o, 2, cmp) == "");
    CHECK(cmp == 2);
}

TEST_CASE("mutation: a combine that takes the received operand first is caught, with the mirrored value",
          "[collectives][order][mutation]") {
    // binomial reduce of 4 ranks to rank 0: rank 2 folds rank 3, rank 0 folds rank 1 then rank 2
    const Shape sh = shape(Op::reduce, Method::binomial_tree, 4, 1);
    auto x = [](uint32_t r) { return host::leaf_hash(r); };  // one input chunk per rank
    const uint64_t contract = ordered_combine(ordered_combine(x(0), x(1)), ordered_combine(x(2), x(3)));
    const uint64_t mirrored = ordered_combine(ordered_combine(x(3), x(2)), ordered_combine(x(1), x(0)));
    REQUIRE(contract != mirrored);
    const Outcome good = run_any<OrderedMix>(sh, 1);
    REQUIRE(good.error == "");
    CHECK(good.out[0][0] == contract);
    const Outcome bad = run_any<SwappedMix>(sh, 1);
    REQUIRE(bad.error == "");
    CHECK(bad.out[0][0] == mirrored);
    uint32_t cmp = 0;
    CHECK(differences(sh, host::collect(sh), bad, 1, cmp) == "rank 0 out[0] elem 0; ");
    // and through every reducing verb: the mutated operator disagrees with the checker everywhere
    cmp = 0;
    const Shape bidir = shape(Op::all_reduce, Method::ring_bidir, 4, 2);
    const Outcome b2 = run_any<SwappedMix>(bidir, 1);
    REQUIRE(b2.error == "");
    const std::string d = differences(bidir, host::collect(bidir), b2, 1, cmp);
    CHECK(d.find("rank 0 out[0] elem 0") != std::string::npos);
    CHECK(cmp == 4 * 8);
}

namespace {
/// A link that can multicast (send_multicast), over any link: one send per direction underneath,
/// counting the multicasts.
template <class L>
struct MulticastLink {
    using hal_type = typename L::hal_type;
    static constexpr uint32_t max_held_views = L::max_held_views;
    L& in;
    uint32_t* multicasts;
    hal_type& hal() { return in.hal(); }
    uint32_t directions() const { return in.directions(); }
    bool can_send(uint32_t d) const { return in.can_send(d); }
    bool can_recv(uint32_t d) const { return in.can_recv(d); }
    uint32_t max_message_bytes() const { return in.max_message_bytes(); }
    uint32_t slots(uint32_t d) const { return in.slots(d); }
    void send(uint32_t d, uint32_t l1, uint32_t b) { in.send(d, l1, b); }
    bool try_send(uint32_t d, uint32_t l1, uint32_t b) { return in.try_send(d, l1, b); }
    View recv(uint32_t d) { return in.recv(d); }
    bool try_recv(uint32_t d, View& v) { return in.try_recv(d, v); }
    void release(const View& v) { in.release(v); }
    uint32_t recv_into(uint32_t d, uint32_t l1, uint32_t cap) { return in.recv_into(d, l1, cap); }
    void quiesce() { in.quiesce(); }
    void send_multicast(const uint32_t* dirs, uint32_t n, uint32_t l1, uint32_t b) {
        ++*multicasts;
        for (uint32_t i = 0; i < n; ++i) in.send(dirs[i], l1, b);
    }
};
}  // namespace

TEST_CASE("multicast: the tree broadcast injects one message per node on a multicast link, unicasts elsewhere",
          "[collectives][multicast]") {
    static uint32_t star[6] = {2, 2, 2, 2, 2, 2};
    for (int kind = 0; kind < 3; ++kind) {
        Shape sh = kind == 2 ? shape(Op::all_reduce, Method::tree, 6, 2, 2)
                             : shape(Op::broadcast, Method::binomial_tree, 6, 2, 1);
        if (kind == 2) {
            sh.tree = star;  // reduce up a star, broadcast down the star as one multicast
        }
        if (kind == 1) sh.chunks = 3;
        INFO(op_name(sh.op) << " " << method_name(sh.method));
        REQUIRE(validate(sh) == nullptr);
        // the schedule: one multicast step per inner node and chunk
        uint32_t mc_steps = 0;
        for (uint32_t r = 0; r < sh.ranks; ++r)
            for_each_step(sh, r, 0, [&](const Step& s) { mc_steps += s.cast == Cast::children; });
        const uint32_t n = sh.op == Op::broadcast ? sh.chunks : tensor_chunks(sh);
        const uint32_t inner = sh.op == Op::broadcast ? 3 : 1;  // binomial of 6: relative ranks 0, 2, 4; star: its root
        CHECK(mc_steps == inner * n);
        static uint32_t calls[16];
        for (auto& c : calls) c = 0;
        const Outcome m = run_on_bed<OrderedMix>(sh, 2, GroupShape::all_pairs, [](auto& link, const ExecParams& ep, const GroupArgs& g) {
            MulticastLink<std::remove_reference_t<decltype(link)>> ml{link, &calls[g.rank]};
            static_assert(link_multicasts<decltype(ml)>, "the test link multicasts");
            execute_any<OrderedMix>(ml, ep, cb::all_pairs_dirs_of(g));
        });
        REQUIRE(m.error == "");
        uint32_t total = 0;
        for (uint32_t c : calls) total += c;
        CHECK(total == mc_steps);  // chunks of 2 elements: one piece each
        const Outcome u = run_any<OrderedMix>(sh, 2);  // the IPCQ link has no multicast: lowered
        REQUIRE(u.error == "");
        CHECK(m.out == u.out);
        uint32_t cmp = 0;
        if (sh.op == Op::all_reduce) CHECK(differences(sh, host::collect(sh), m, 2, cmp) == "");
        std::vector<uint32_t> want;
        for (uint32_t r = 0; r < sh.ranks; ++r)  // broadcast: the root's input everywhere
            if (sh.op == Op::broadcast)
                for (uint32_t c = 0; c < sh.chunks; ++c) CHECK(m.out[r][c * 2] == host::leaf_hash(sh.root * sh.chunks + c));
    }
}
