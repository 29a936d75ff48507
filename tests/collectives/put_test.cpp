// Puts in the executor (link.hpp PUTS): an all_gather over IPCQ writes every piece straight into
// the receiver's output — counted here through a wrapping link — on every ring method and a
// line, with the ranks' outputs at different L1 addresses, back to back with the outputs read
// and the inputs changed between collectives, under the race detector and the strict adversary.
// The mutation that puts without waiting for the receiver's window is caught by the detector.
#include <emulation/collective.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

namespace kc = kccl::emu::collective;
using namespace kccl::coll;
using SumF = Reducer<float, RedOp::sum>;

/// A link that forwards to another and counts what goes through it.
template <class L>
struct CountingLink {
    using hal_type = typename L::hal_type;
    static constexpr uint32_t max_held_views = L::max_held_views;
    L& l;
    uint64_t sent_bytes = 0, put_bytes = 0;

    hal_type& hal() { return l.hal(); }
    uint32_t directions() const { return l.directions(); }
    bool can_send(uint32_t d) const { return l.can_send(d); }
    bool can_recv(uint32_t d) const { return l.can_recv(d); }
    uint32_t max_message_bytes() const { return l.max_message_bytes(); }
    uint32_t slots(uint32_t d) const { return l.slots(d); }
    void send(uint32_t d, uint32_t s, uint32_t n) {
        sent_bytes += n;
        l.send(d, s, n);
    }
    bool try_send(uint32_t d, uint32_t s, uint32_t n) {
        const bool ok = l.try_send(d, s, n);
        sent_bytes += ok ? n : 0;
        return ok;
    }
    View recv(uint32_t d) { return l.recv(d); }
    bool try_recv(uint32_t d, View& v) { return l.try_recv(d, v); }
    void release(const View& v) { l.release(v); }
    uint32_t recv_into(uint32_t d, uint32_t dst, uint32_t cap) { return l.recv_into(d, dst, cap); }
    void quiesce() { l.quiesce(); }
    void open_window(uint32_t base) { l.open_window(base); }
    uint32_t peer_window(uint32_t d) { return l.peer_window(d); }
    bool try_peer_window(uint32_t d, uint32_t& b) { return l.try_peer_window(d, b); }
    void put(uint32_t d, uint32_t s, uint32_t n, uint32_t at) {
        put_bytes += n;
        l.put(d, s, n, at);
    }
    bool try_put(uint32_t d, uint32_t s, uint32_t n, uint32_t at) {
        const bool ok = l.try_put(d, s, n, at);
        put_bytes += ok ? n : 0;
        return ok;
    }
};

float value(uint32_t round, uint32_t rank, uint32_t i) { return float(int((round * 5 + rank * 7 + i * 3) % 23) - 11); }

struct Outcome {
    kccl::emu::RunReport report;
    std::vector<uint64_t> sent, put, wrong;  ///< per rank
    /// The first wrong output element seen: rank, round, fragment, index, value.
    struct Bad {
        uint32_t rank = 0, round = 0, frag = 0, i = 0;
        float got = 0;
    };
    std::vector<Bad> first_bad;  ///< at most one per rank
};

/// `rounds` all_gathers of `count` floats per rank over IPCQ, back to back in one kernel: round k's
/// inputs are value(k, rank, i); after each, the rank checks its whole output (counted in `wrong`)
/// and only then writes the next round's input. Rank r's output sits `r * shift` bytes into the
/// plan's output buffer (so the receivers' windows differ). `Policy` is the IPCQ policy.
template <class Policy = kccl::ipcq::DefaultPolicy>
Outcome run_gathers(Method m, GroupShape shape, uint32_t p, uint32_t count, uint32_t rounds, uint32_t shift,
                    const kccl::emu::RunOptions& ro, bool interleaved = false) {
    kc::GroupOptions g;
    g.transport = Transport::ipcq;
    g.shape = shape;
    g.ranks = p;
    g.message_bytes = 256;
    kc::Collective c;
    c.op = Op::all_gather;
    c.count = count;
    c.method = m;
    const kc::Layout L = kc::plan_collective(g, c, sizeof(float));
    g.buffer_bytes = kc::buffer_bytes_for(L, sizeof(float)) + p * shift;
    kc::Group grp(g);
    std::vector<uint64_t> sent(p), put(p), wrong(p);
    std::vector<Outcome::Bad> bad;
    grp.add<kc::link_ipcq>([&, L](auto& hal, auto&, const GroupArgs& ga) -> uint64_t {
        using H = std::remove_reference_t<decltype(hal)>;
        IpcqLink<H, kccl::ipcq::Nsew, Policy> base(hal, ga.link_args);
        CountingLink<decltype(base)> link{base};
        ExecParams ep = kc::exec_params(L, ga);
        ep.buf.output += ga.rank * shift;
        const uint32_t frag = L.out_elems / p;
        for (uint32_t k = 0; k < rounds; ++k) {
            float* in = reinterpret_cast<float*>(hal.l1_ptr(ga.input_l1, L.in_elems * 4));
            for (uint32_t i = 0; i < count; ++i) in[i] = value(k, ga.rank, i);
            kccl::hal::l1_store_fence(hal, ga.input_l1, L.in_elems * 4);
            if (interleaved) execute_any_interleaved<SumF>(link, ep, kc::group_dirs_of(ga));
            else execute_any<SumF>(link, ep, kc::group_dirs_of(ga));
            const float* out = reinterpret_cast<const float*>(hal.l1_ptr(ep.buf.output, L.out_elems * 4));
            kccl::hal::note_read(hal, ep.buf.output, L.out_elems * 4);  // the kernel uses its output (race detector)
            for (uint32_t f = 0; f < p; ++f)
                for (uint32_t i = 0; i < count; ++i)
                    if (out[f * frag + i] != value(k, f, i) && wrong[ga.rank]++ == 0)
                        bad.push_back({ga.rank, k, f, i, out[f * frag + i]});
        }
        link.quiesce();
        sent[ga.rank] = link.sent_bytes;
        put[ga.rank] = link.put_bytes;
        return 0;
    });
    Outcome o;
    o.report = grp.run(ro);
    o.sent = sent;
    o.put = put;
    o.wrong = wrong;
    o.first_bad = bad;
    return o;
}

}  // namespace

TEST_CASE("all_gather over IPCQ puts every piece straight into the receivers' outputs, on every ring method and a line",
          "[collectives][put]") {
    const uint32_t p = 5, count = 150;  // 600 B per rank: three pieces of 256 B at most
    struct Case {
        Method m;
        GroupShape shape;
    };
    for (const Case cs : {Case{Method::ring_cw, GroupShape::ring}, Case{Method::ring_ccw, GroupShape::ring},
                          Case{Method::ring_bidir, GroupShape::ring}, Case{Method::ring_meet_middle, GroupShape::ring},
                          Case{Method::line, GroupShape::line}})
        for (bool interleaved : {false, true})
            for (uint32_t shift : {0u, 48u}) {
                INFO(method_name(cs.m) << (interleaved ? " interleaved" : "") << ", outputs " << shift << " B apart");
                const Outcome o = run_gathers(cs.m, cs.shape, p, count, 2, shift, kc::default_run_options(), interleaved);
                INFO(o.report.summary());
                REQUIRE(o.report.ok());
                uint64_t put = 0;
                for (uint32_t r = 0; r < p; ++r) {
                    REQUIRE(o.wrong[r] == 0);
                    REQUIRE(o.sent[r] == 0);  // nothing through a slot
                    put += o.put[r];
                }
                // every rank receives the p - 1 other fragments, each put once, in both rounds
                REQUIRE(put == 2ull * p * (p - 1) * count * sizeof(float));
            }
}

TEST_CASE("all_gather puts back to back: outputs read and inputs changed between collectives, race-free on every seed",
          "[collectives][put][race]") {
    for (uint64_t seed = 1; seed <= 12; ++seed) {
        auto ro = kc::default_run_options();
        ro.race = kccl::emu::RunOptions::RaceCheck::on;
        ro.ordering = kccl::emu::OrderingProfile::strict;
        ro.adversary.enabled = true;
        ro.adversary.seed = seed;
        const Outcome o = run_gathers(seed % 2 ? Method::ring_bidir : Method::ring_cw, GroupShape::ring, 4, 100, 4,
                                      seed % 3 == 0 ? 32u : 0u, ro);
        INFO("seed " << seed << ": " << o.report.summary());
        REQUIRE(o.report.ok());
        REQUIRE(o.report.races.empty());
        for (uint32_t r = 0; r < 4; ++r) REQUIRE(o.wrong[r] == 0);
    }
}

namespace {
struct PutWithoutWindow : kccl::ipcq::DefaultPolicy {
    static constexpr bool put_without_window = true;
};
}  // namespace

TEST_CASE("mutation: a put that does not wait for the receiver's window overwrites an output still in use",
          "[collectives][put][mutation]") {
    // Without the window (the sender reuses the base of the receiver's first window), a sender's
    // next collective writes into its receiver's output while the receiver's kernel still checks
    // the previous result there: that check sees the NEXT round's value of a fragment.
    auto ro = kc::default_run_options();
    ro.race = kccl::emu::RunOptions::RaceCheck::off;  // the outputs show it
    const Outcome o = run_gathers<PutWithoutWindow>(Method::ring_cw, GroupShape::ring, 4, 100, 3, 0, ro);
    INFO(o.report.summary());
    REQUIRE(o.report.ok());
    REQUIRE_FALSE(o.first_bad.empty());
    for (const Outcome::Bad& b : o.first_bad) {
        INFO("rank " << b.rank << " round " << b.round << " fragment " << b.frag << " element " << b.i << ": " << b.got);
        REQUIRE(b.frag != b.rank);                          // a fragment another rank put there
        REQUIRE(b.got == value(b.round + 1, b.frag, b.i));  // already the next round's value
    }
    // the protocol itself, same run: every check right
    const Outcome good = run_gathers(Method::ring_cw, GroupShape::ring, 4, 100, 3, 0, ro);
    REQUIRE(good.report.ok());
    for (uint32_t r = 0; r < 4; ++r) REQUIRE(good.wrong[r] == 0);
}

TEST_CASE("puts: a rank whose output overlaps its input takes none, and a rank that would put to it says why",
          "[collectives][put]") {
    // Rank 1 runs the all_gather in place (input at its output), the others do not: rank 0, its
    // sender on a ring_cw, finds rank 1's window closed to puts.
    const uint32_t p = 3, count = 64;
    kc::GroupOptions g;
    g.transport = Transport::ipcq;
    g.ranks = p;
    g.message_bytes = 256;
    kc::Collective c;
    c.op = Op::all_gather;
    c.count = count;
    c.method = Method::ring_cw;
    const kc::Layout L = kc::plan_collective(g, c, sizeof(float));
    g.buffer_bytes = kc::buffer_bytes_for(L, sizeof(float));
    kc::Group grp(g);
    grp.add<kc::link_ipcq>([L](auto&, auto& link, const GroupArgs& ga) -> uint64_t {
        ExecParams ep = kc::exec_params(L, ga);
        if (ga.rank == 1) ep.buf.input = ep.buf.output;
        execute_any<SumF>(link, ep, kc::group_dirs_of(ga));
        link.quiesce();
        return 0;
    });
    const auto rep = grp.run(kc::default_run_options());
    INFO(rep.summary());
    REQUIRE_FALSE(rep.ok());
    REQUIRE_THAT(rep.summary(), Catch::Contains("collectives: executor: rank 0 puts on direction 2 to a rank whose output overlaps "
                                                "its input (in place), which takes no puts: every rank of a group runs all_gather "
                                                "in place, or none"));
}
