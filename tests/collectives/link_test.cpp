// The link concept over both transports: the same generic kernels run on IPCQ queues and on EDM
// channels (emulation, normal and adversarial with dirty L1). Every payload byte and length is
// checked against link_util.hpp's pattern, computed independently of the code under test.
#include "collectives/link_util.hpp"

#include <collectives/link.hpp>

#include <string>

using namespace kccl::test;
using namespace kccl::test::coll_link;
using kccl::coll::GroupArgs;
using kccl::coll::GroupShape;
using kccl::coll::Transport;
using kccl::coll::View;

// ---- the concept --------------------------------------------------------------------------------

static_assert(kccl::coll::check_link<kccl::coll::IpcqLink<kccl::emu::Hal>>());
static_assert(kccl::coll::check_link<kccl::coll::EdmLink<kccl::emu::Hal>>());
namespace {
struct NotALink {
    using hal_type = kccl::emu::Hal;
    uint32_t directions() const { return 0; }
};
struct AlmostALink {  // everything but quiesce
    using hal_type = kccl::emu::Hal;
    static constexpr uint32_t max_held_views = 1;
    kccl::emu::Hal& hal();
    uint32_t directions() const;
    bool can_send(uint32_t) const;
    bool can_recv(uint32_t) const;
    uint32_t max_message_bytes() const;
    uint32_t slots(uint32_t) const;
    void send(uint32_t, uint32_t, uint32_t);
    bool try_send(uint32_t, uint32_t, uint32_t);
    View recv(uint32_t);
    bool try_recv(uint32_t, View&);
    void release(const View&);
    uint32_t recv_into(uint32_t, uint32_t, uint32_t);
};
}  // namespace
static_assert(!kccl::coll::is_link_v<NotALink>);
static_assert(!kccl::coll::is_link_v<AlmostALink>);
static_assert(!kccl::coll::detail::has_quiesce<AlmostALink>::value && kccl::coll::detail::has_recv_into<AlmostALink>::value);

namespace {

/// Fills `n` bytes at `addr` with message m's pattern.
template <class H>
void compose(H& hal, uint32_t addr, uint32_t n, uint32_t from, uint32_t lane, uint32_t m, uint32_t prog) {
    uint8_t* p = hal.l1_ptr(addr, n ? n : 1);
    for (uint32_t i = 0; i < n; ++i) p[i] = pattern(from, lane, m, i, prog);
}
/// Wrong bytes of a received message (a wrong length counts as one more).
template <class H>
uint64_t verify(H& hal, uint32_t addr, uint32_t got, uint32_t want, uint32_t from, uint32_t lane, uint32_t m,
                uint32_t prog) {
    uint64_t bad = got != want;
    const uint32_t n = got < want ? got : want;
    const uint8_t* p = hal.l1_ptr(addr, n ? n : 1);
    for (uint32_t i = 0; i < n; ++i) bad += p[i] != pattern(from, lane, m, i, prog);
    return bad;
}

/// Every rank streams `msgs` messages on each of its directions that has a peer and receives as
/// many on each, with the non-blocking forms only, interleaved. A message's pattern is keyed by
/// the sender and the direction it was sent on (the receiver's direction reversed: N<->S, E<->W).
/// Returns errors << 32 | messages received.
struct Stream {
    uint32_t msgs;
    uint32_t prog = 0;
    template <class L>
    uint64_t operator()(L& link, const GroupArgs& g) const {
        auto& hal = link.hal();
        const uint32_t max = link.max_message_bytes();
        constexpr uint32_t D = 4;
        uint32_t sent[D] = {}, got[D] = {}, composed[D] = {~0u, ~0u, ~0u, ~0u};
        uint64_t errors = 0, received = 0;
        if (g.max_message_bytes != max) ++errors;
        for (uint32_t d = 0; d < D; ++d) errors += (g.peer_of_dir[d] != kccl::coll::no_dir) != link.can_send(d);
        for (;;) {
            bool progress = false, done = true;
            for (uint32_t d = 0; d < D; ++d) {
                if (g.peer_of_dir[d] == kccl::coll::no_dir) continue;
                const uint32_t stage = g.scratch_l1 + d * max;
                if (sent[d] < msgs) {
                    done = false;
                    const uint32_t len = length(sent[d], max);
                    if (composed[d] != sent[d]) compose(hal, stage, len, g.rank, d, sent[d], prog), composed[d] = sent[d];
                    if (link.try_send(d, stage, len)) ++sent[d], progress = true;
                }
                if (got[d] < msgs) {
                    done = false;
                    View v;
                    if (link.try_recv(d, v)) {
                        errors += v.dir != d;
                        errors += verify(hal, v.l1, v.bytes, length(got[d], max), g.peer_of_dir[d], d ^ 1u, got[d], prog);
                        link.release(v);
                        ++got[d], ++received, progress = true;
                    }
                }
            }
            if (done) break;
            if (!progress) hal.idle();
        }
        link.quiesce();
        return errors << 32 | received;
    }
};

/// A chain: rank 0 sends `msgs` messages with the blocking send; each middle rank receives a view,
/// checks it, forwards it from the view and releases it; the last rank receives into L1.
struct Relay {
    uint32_t msgs;
    template <class L>
    uint64_t operator()(L& link, const GroupArgs& g) const {
        auto& hal = link.hal();
        const uint32_t max = link.max_message_bytes();
        uint64_t errors = 0, received = 0;
        for (uint32_t m = 0; m < msgs; ++m) {
            const uint32_t len = length(m, max);
            if (g.rank == 0) {
                compose(hal, g.input_l1, len, 0, 0, m, 0);
                link.send(g.next_dir, g.input_l1, len);
            } else if (g.rank + 1 < g.ranks) {
                const View v = link.recv(g.prev_dir);
                errors += verify(hal, v.l1, v.bytes, len, 0, 0, m, 0);
                link.send(g.next_dir, v.l1, v.bytes);
                link.release(v);
                ++received;
            } else {
                const uint32_t got = link.recv_into(g.prev_dir, g.output_l1, g.buffer_bytes);
                errors += verify(hal, g.output_l1, got, len, 0, 0, m, 0);
                ++received;
            }
        }
        link.quiesce();
        return errors << 32 | received;
    }
};

void check_stream(Bed& bed, const RunReport& rep, uint32_t msgs, uint32_t programs = 1) {
    INFO(bed.describe());
    KCCL_REQUIRE_OK(rep);
    for (uint32_t p = 0; p < programs; ++p)
        for (uint32_t r = 0; r < bed.n; ++r) {
            INFO("rank " << r << " program " << p);
            const uint64_t v = rep.at(bed.worker(r), p).value;
            uint32_t sides = 0;
            for (uint32_t peer : bed.plan.ranks[r].peer_of_dir) sides += peer != kccl::coll::no_dir;
            CHECK((v >> 32) == 0);
            CHECK((v & 0xffffffffu) == uint64_t(sides) * msgs);
        }
}

}  // namespace

TEST_CASE("link: non-blocking streams both ways, every length, on rings and lines of both transports", "[collectives][link]") {
    for (Transport t : {Transport::ipcq, Transport::edm})
        for (GroupShape s : {GroupShape::ring, GroupShape::line})
            for (uint32_t n : {2u, 3u, 4u}) {
                for (bool adv : {false, true}) {
                    Bed bed(t, s, n, 256, 2);
                    const uint32_t msgs = 40;
                    bed.add([&](auto& hal) { return with_link(hal, Stream{msgs}); });
                    const RunReport rep = bed.run(adv ? adversarial(n * 31 + uint32_t(t) * 7 + uint32_t(s)) : normal());
                    INFO((adv ? "adversarial, dirty L1" : "normal"));
                    check_stream(bed, rep, msgs);
                }
            }
}

TEST_CASE("link: non-blocking streams on every direction of 2D meshes, both transports", "[collectives][link]") {
    struct M {
        Transport t;
        uint32_t rows, cols;
        bool wrap;
    };
    for (const M m : {M{Transport::ipcq, 2, 3, false}, M{Transport::ipcq, 3, 3, true}, M{Transport::edm, 2, 2, false},
                      M{Transport::edm, 2, 3, false}})
        for (bool adv : {false, true}) {
            Bed bed(m.t, GroupShape::mesh, m.rows * m.cols, 128, 2, 4096, m.cols, m.wrap);
            bed.add([](auto& hal) { return with_link(hal, Stream{20}); });
            const RunReport rep = bed.run(adv ? adversarial(m.rows * 10 + m.cols + uint32_t(m.t)) : normal());
            INFO(bed.describe() << " " << m.rows << " x " << m.cols << (m.wrap ? " torus" : "") << (adv ? " adversarial" : ""));
            check_stream(bed, rep, 20);
        }
}

TEST_CASE("link: blocking relay through a chain: views forwarded in place, the last rank receives into L1", "[collectives][link]") {
    for (Transport t : {Transport::ipcq, Transport::edm})
        for (uint32_t n : {2u, 3u, 4u})
            for (bool adv : {false, true}) {
                Bed bed(t, GroupShape::line, n, 512, 3);
                const uint32_t msgs = 50;
                bed.add([&](auto& hal) { return with_link(hal, Relay{msgs}); });
                const RunReport rep = bed.run(adv ? adversarial(n * 17 + uint32_t(t)) : normal());
                INFO(bed.describe() << (adv ? " adversarial" : " normal"));
                KCCL_REQUIRE_OK(rep);
                for (uint32_t r = 0; r < n; ++r) {
                    const uint64_t v = rep.at(bed.worker(r), 0).value;
                    CHECK((v >> 32) == 0);
                    CHECK((v & 0xffffffffu) == (r == 0 ? 0u : msgs));
                }
            }
}

TEST_CASE("link: quiesce leaves the link reusable: three programs back to back", "[collectives][link]") {
    for (Transport t : {Transport::ipcq, Transport::edm}) {
        Bed bed(t, GroupShape::ring, 3, 128, 2);
        for (uint32_t p = 0; p < 3; ++p) {
            if (p) bed.next_program();
            bed.add([p](auto& hal) { return with_link(hal, Stream{25, p}); });
        }
        check_stream(bed, bed.run(adversarial(99 + uint32_t(t))), 25, 3);
    }
}

TEST_CASE("link: a single rank has no directions and quiesces at once", "[collectives][link]") {
    for (Transport t : {Transport::ipcq, Transport::edm}) {
        Bed bed(t, GroupShape::ring, 1, 128, 2);
        bed.add([](auto& hal) {
            return with_link(hal, [](auto& link, const GroupArgs& g) {
                uint64_t bad = g.ranks != 1 || g.next_dir != kccl::coll::no_dir || g.prev_dir != kccl::coll::no_dir;
                for (uint32_t d = 0; d < link.directions(); ++d) bad += link.can_send(d) || link.can_recv(d);
                link.quiesce();
                return bad;
            });
        });
        const RunReport rep = bed.run(normal());
        KCCL_REQUIRE_OK(rep);
        CHECK(rep.at(bed.worker(0), 0).value == 0);
    }
}

TEST_CASE("link: a failed try_send does nothing; try_recv is false on an empty or quiesced link", "[collectives][link]") {
    // Ring of 3. Rank 0 streams `msgs` messages to rank 1 with try_send only; rank 1 takes none of
    // them until rank 0 has seen try_send fail and said so over the other way round (0 -> 2 -> 1).
    // A failed try_send that sent anything would duplicate or shift a message of the checked stream.
    const uint32_t msgs = 20;
    for (Transport t : {Transport::ipcq, Transport::edm})
        for (bool adv : {false, true}) {
            Bed bed(t, GroupShape::ring, 3, 64, 2);
            bed.add([&](auto& hal) {
                return with_link(hal, [&hal, msgs](auto& link, const GroupArgs& g) -> uint64_t {
                    uint64_t result = 0;
                    const uint32_t max = link.max_message_bytes();
                    if (g.rank == 0) {
                        uint64_t fails = 0;
                        for (uint32_t m = 0; m < msgs; ++m) {
                            const uint32_t len = length(m, max);
                            compose(hal, g.input_l1, len, 0, 0, m, 0);
                            while (!link.try_send(g.next_dir, g.input_l1, len)) {
                                if (fails++ == 0) link.send(g.prev_dir, g.input_l1, 4);  // "I saw it full"
                                hal.idle();
                            }
                        }
                        result = fails;
                    } else if (g.rank == 2) {
                        const View v = link.recv(g.next_dir);
                        link.send(g.prev_dir, v.l1, v.bytes);
                        link.release(v);
                    } else {
                        const View flag = link.recv(g.next_dir);
                        uint64_t errors = flag.bytes != 4;
                        link.release(flag);
                        for (uint32_t m = 0; m < msgs; ++m) {
                            const View v = link.recv(g.prev_dir);
                            errors += verify(hal, v.l1, v.bytes, length(m, max), 0, 0, m, 0);
                            link.release(v);
                        }
                        View none;
                        errors += link.try_recv(g.prev_dir, none) ? 1000 : 0;
                        errors += link.try_recv(g.next_dir, none) ? 1000 : 0;
                        result = errors;
                    }
                    link.quiesce();
                    return result;
                });
            });
            const RunReport rep = bed.run(adv ? adversarial(7 + uint32_t(t)) : normal());
            INFO(bed.describe() << (adv ? " adversarial" : " normal"));
            KCCL_REQUIRE_OK(rep);
            CHECK(rep.at(bed.worker(0), 0).value >= 1);  // rank 0 saw the link full
            CHECK(rep.at(bed.worker(1), 0).value == 0);  // rank 1 got every message once, in order
        }
}

TEST_CASE("link: device errors name the direction and the sizes", "[collectives][link]") {
    for (Transport t : {Transport::ipcq, Transport::edm}) {
        INFO(name(t));
        {
            Bed bed(t, GroupShape::line, 2, 64, 2);
            bed.add([](auto& hal) {
                return with_link(hal, [](auto& link, const GroupArgs& g) -> uint64_t {
                    if (g.rank == 0) link.send(g.next_dir, g.input_l1, 65);
                    link.quiesce();
                    return 0;
                });
            });
            const RunReport rep = bed.run(normal(2000ms));
            REQUIRE_FALSE(rep.ok());
            CHECK_THAT(rep.first_error(), Catch::Contains("message of 65 bytes does not fit"));
        }
        {
            Bed bed(t, GroupShape::line, 2, 64, 2);
            bed.add([](auto& hal) {
                return with_link(hal, [](auto& link, const GroupArgs& g) -> uint64_t {
                    if (g.rank == 0) {
                        link.send(g.next_dir, g.input_l1, 8);
                        link.send(g.next_dir, g.input_l1, 8);
                    } else {
                        const View a = link.recv(g.prev_dir);
                        link.release(a);
                        link.release(a);  // twice
                    }
                    link.quiesce();
                    return 0;
                });
            });
            const RunReport rep = bed.run(normal(2000ms));
            REQUIRE_FALSE(rep.ok());
            CHECK_THAT(rep.first_error(), Catch::Contains("release"));
            CHECK_THAT(rep.first_error(), Catch::Contains("message 0"));
        }
    }
}

// ---- the host plan ------------------------------------------------------------------------------

namespace {
ch::GroupSpec spec(Transport t, uint32_t n, GroupShape s = GroupShape::ring) {
    ch::GroupSpec g;
    g.transport = t;
    g.shape = s;
    g.message_bytes = 256;
    g.slots = 2;
    g.buffer_bytes = 1024;
    g.worker_l1 = {0x10000, 0x40000, 0};
    g.eth_l1 = {0x1000, 0x10000, 0x800};
    for (uint32_t r = 0; r < n; ++r) g.workers.push_back(t == Transport::ipcq ? ch::Core{0, r, 0} : ch::Core{r, 0, 0});
    if (t == Transport::edm) {
        const uint32_t hops = n < 2 ? 0 : s == GroupShape::ring ? n : n - 1;
        for (uint32_t h = 0; h < hops; ++h) g.hops.push_back({{h, 0, 1}, {(h + 1) % n, 1, 1}});
    }
    return g;
}
}  // namespace

TEST_CASE("plan: worker arguments name rank, ring neighbours and directions of both transports", "[collectives][plan]") {
    namespace a = kccl::coll::group_args;
    {
        const auto p = ch::build_group(spec(Transport::ipcq, 4));
        const auto v = p.worker_args(0);
        CHECK(v[a::magic] == kccl::coll::group_magic);
        CHECK(v[a::transport] == 0);
        CHECK(v[a::rank] == 0);
        CHECK(v[a::ranks] == 4);
        CHECK(v[a::next_dir] == 2);  // Nsew::E
        CHECK(v[a::prev_dir] == 3);  // Nsew::W
        CHECK(v[a::peer_of_dir + 2] == 1);
        CHECK(v[a::peer_of_dir + 3] == 3);
        CHECK(v[a::peer_of_dir + 0] == kccl::coll::no_dir);
        CHECK(v[a::link_args] == a::count);
        CHECK(v.size() == a::count + kccl::coll::ipcq_link_args);
        CHECK(v[a::count] == 0x10000);  // the IPCQ block
        CHECK(v[a::input_l1] >= p.ranks[0].l1_end - 3 * 1024);
        CHECK(v[a::output_l1] == v[a::input_l1] + 1024);
        CHECK(v[a::scratch_l1] == v[a::output_l1] + 1024);
        CHECK(v[a::pipeline_messages] == 2);
    }
    {
        const auto p = ch::build_group(spec(Transport::edm, 3, GroupShape::line));
        CHECK(p.edm_kernels().size() == 4);  // 2 hops x 2 ends
        const auto v0 = p.worker_args(0), v2 = p.worker_args(2);
        CHECK(v0[a::transport] == 1);
        CHECK(v0[a::next_dir] == 2);  // E
        CHECK(v0[a::prev_dir] == kccl::coll::no_dir);
        CHECK(v2[a::next_dir] == kccl::coll::no_dir);
        CHECK(v2[a::prev_dir] == 3);  // W
        CHECK(v2[a::peer_of_dir + 3] == 1);
        CHECK(v2[a::peer_of_dir + 2] == kccl::coll::no_dir);
        CHECK(v0.size() == a::count + kccl::coll::edm_link_args(4));
        CHECK(p.zero_words.size() == 2 * 4);  // each hop: a tx and an rx semaphore on each of its two workers
    }
    {
        auto g = spec(Transport::ipcq, 6);
        g.shape = GroupShape::mesh;
        g.mesh_cols = 3;
        const auto p = ch::build_group(g);
        // 2 x 3 grid, no wrap: rank 4 = (row 1, col 1): N -> 1, S none, E -> 5, W -> 3.
        const auto v = p.worker_args(4);
        CHECK(v[a::shape] == 2);
        CHECK(v[a::mesh_cols] == 3);
        CHECK(v[a::peer_of_dir + 0] == 1);
        CHECK(v[a::peer_of_dir + 1] == kccl::coll::no_dir);
        CHECK(v[a::peer_of_dir + 2] == 5);
        CHECK(v[a::peer_of_dir + 3] == 3);
        g.mesh_wrap = true;  // columns (3) wrap, rows (2) do not
        const auto w = ch::build_group(g).worker_args(5);
        CHECK(w[a::peer_of_dir + 2] == 3);
        CHECK(w[a::peer_of_dir + 1] == kccl::coll::no_dir);
        CHECK(ch::group_edges(g).size() == 6 + 3);
    }
}

TEST_CASE("plan: bad groups are named errors", "[collectives][plan]") {
    using Catch::Contains;
    auto g = spec(Transport::ipcq, 3);
    g.workers[2].chip = 1;
    CHECK_THROWS_WITH(ch::build_group(g), Contains("IPCQ joins cores of one chip, but rank 2 is on chip 1"));
    g = spec(Transport::ipcq, 3);
    g.workers[2] = g.workers[0];
    CHECK_THROWS_WITH(ch::build_group(g), Contains("ranks 0 and 2 are both on chip 0 (0,0); one rank per worker core"));
    g = spec(Transport::ipcq, 3);
    g.message_bytes = 100;
    CHECK_THROWS_WITH(ch::build_group(g), Contains("message_bytes 100 must be a positive multiple of 16"));
    g = spec(Transport::ipcq, 3);
    g.buffer_bytes = 0x40000;
    CHECK_THROWS_WITH(ch::build_group(g), Contains("then 3 buffers of 262144 bytes) but worker_l1 ends at 262144"));
    g = spec(Transport::ipcq, 0);
    CHECK_THROWS_WITH(ch::build_group(g), Contains("the group has no ranks"));
    g = spec(Transport::edm, 4);
    g.hops.pop_back();
    CHECK_THROWS_WITH(ch::build_group(g), Contains("an EDM ring of 4 ranks needs 4 hops (one Ethernet link per neighbour pair, in group_edges order), got 3"));
    g = spec(Transport::edm, 3);
    g.hops[1].a = g.hops[0].b;
    CHECK_THROWS_WITH(ch::build_group(g), Contains("hops 0 and 1 both use the Ethernet core chip 1 (1,1)"));
    g = spec(Transport::edm, 3);
    g.hops[1].b.chip = 0;
    CHECK_THROWS_WITH(ch::build_group(g), Contains("hop 1 joins chip 1 (0,1) and chip 0 (1,1), but rank 1 is on chip 1 and rank 2 on chip 2"));
    g = spec(Transport::edm, 3);
    g.eth_l1.end = 0x1100;
    CHECK_THROWS_WITH(ch::build_group(g), Contains("EDM of hop 0: EDM layout needs"));
    g = spec(Transport::ipcq, 6);
    g.shape = GroupShape::mesh;
    g.mesh_cols = 4;
    CHECK_THROWS_WITH(ch::build_group(g), Contains("a mesh of 6 ranks with 4 columns is not rectangular"));
    g = spec(Transport::edm, 3);
    const auto p = ch::build_group(g);
    CHECK_THROWS_WITH(p.worker_args(3), Contains("rank 3 is out of range (the group has 3 ranks)"));
}
