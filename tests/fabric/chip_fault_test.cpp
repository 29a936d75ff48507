// The chip fabric's host builder errors, its NoC command kinds through the raw worker API
// (connection, reserve, write), and its faults: an uninitialised header, a credit leak (worker and
// link level) and a router that never starts each end in a named report — which router or worker,
// which channel, what it waits for — never in a hang; so do the 2D routers' routing-table checks
// and a packet in a sender channel that no router feeds.
#include <catch2/catch.hpp>

#include <emulation/fabric/fabric.hpp>

#include <cstring>
#include <string>

namespace cf = kccl::emu::fabric;
namespace fc = kccl::fabric;
namespace fh = kccl::fabric::host;
namespace emu = kccl::emu;
using Catch::Matchers::Contains;

namespace {

void throw_handler(const char*, const char* msg, const char*, int) { throw emu::EmulationError(msg); }

fh::FabricSpec spec_of(const emu::ClusterSpec& cs, fh::FabricKind kind, uint32_t cols = 0) {
    emu::Cluster c(cs);
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < cs.num_chips; ++i) order.push_back(i);
    fh::FabricSpec s = cf::spec_for(c, kind, order, cols);
    if (kind == fh::FabricKind::mesh_2d) s.header_bytes = 64;
    return s;
}

std::string build_error(const fh::FabricSpec& s) {
    try {
        fh::build_fabric(s);
    } catch (const fh::FabricError& e) {
        return e.what();
    }
    return "";
}

/// Each rank sends `msgs` messages of `bytes` to the next rank and receives from the previous one.
template <class LinkConfig = fc::FabricLinkConfig, class RConfig = fc::RouterConfig>
emu::RunReport ring_traffic(cf::Bed& bed, uint32_t msgs, uint32_t bytes) {
    kccl::set_assert_handler(&throw_handler);
    bed.add<LinkConfig, RConfig>([msgs, bytes](auto& hal, auto& link, const cf::RankBuffers& b) -> uint64_t {
        (void)hal;
        const uint32_t p = link.ranks(), me = link.rank();
        const uint32_t next = (me + 1) % p, prev = (me + p - 1) % p;
        const uint32_t dn = next < me ? next : next - 1, dp = prev < me ? prev : prev - 1;
        for (uint32_t i = 0; i < msgs; ++i) {  // blocking: send one, receive one
            link.send(dn, b.input_l1, bytes);
            link.release(link.recv(dp));
        }
        link.quiesce();
        return 0;
    });
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(5000);
    ro.adversary.enabled = true;
    ro.adversary.seed = 5;
    return bed.run(ro);
}

}  // namespace

TEST_CASE("chip fabric builder: named errors", "[fabric][builder]") {
    SECTION("a route beyond the mesh: a destination outside the fabric") {
        const fh::FabricSpec s = spec_of(emu::topology::line(4), fh::FabricKind::line_1d);
        CHECK_THROWS_WITH(fh::unicast_route(s, 0, 9), Contains("outside the fabric of 4 chips") && Contains("route beyond the mesh"));
    }
    SECTION("a route beyond the mesh: a hop without a link") {
        fh::FabricSpec s = spec_of(emu::topology::line(4), fh::FabricKind::line_1d);
        std::erase_if(s.links, [](const fh::LinkSite& l) { return l.pos == 1 && l.dir == uint32_t(kccl::Dir::E); });
        CHECK_THAT(build_error(s), Contains("at position 1 (chip 1) going E: no link there (route beyond the mesh)"));
    }
    SECTION("a header too small for the hops (2D: one command per hop)") {
        fh::FabricSpec s = spec_of(emu::topology::mesh(2, 32, 1, false, [] { emu::ChipSpec c; c.eth_cores = 4; return c; }()),
                                   fh::FabricKind::mesh_2d, 32);
        CHECK_THAT(build_error(s), Contains("from chip 0 to chip 12 needs 13 route commands") && Contains("64-byte header holds 12") &&
                                       Contains("header too small for the hops"));
        s.header_bytes = 48;
        CHECK_THAT(build_error(s), Contains("header_bytes = 48") && Contains("header too small for the hops"));
        s.header_bytes = 96;
        CHECK(build_error(s) == "");
    }
    SECTION("a channel without credits") {
        fh::FabricSpec s = spec_of(emu::topology::ring(4), fh::FabricKind::ring_1d);
        s.tx_slots = 0;
        CHECK_THAT(build_error(s), Contains("a sender channel without credits: tx_slots = 0"));
        s.tx_slots = 8;
        s.rx_slots = 1;
        CHECK_THAT(build_error(s), Contains("a receiver channel without credits: rx_slots = 1") && Contains("2 free slots"));
        s.rx_slots = 16;
        s.peer_slots = 0;
        CHECK_THAT(build_error(s), Contains("a worker channel without credits: peer_slots = 0"));
    }
    SECTION("a ring without its deadlock rule") {
        fh::FabricSpec s = spec_of(emu::topology::ring(4), fh::FabricKind::ring_1d);
        s.bubble_flow_control = false;
        CHECK_THAT(build_error(s), Contains("a ring without its deadlock rule: bubble_flow_control is off"));
        s.kind = fh::FabricKind::line_1d;  // a line has no cycle: allowed
        s.links.clear();
        s = spec_of(emu::topology::line(4), fh::FabricKind::line_1d);
        s.bubble_flow_control = false;
        CHECK(build_error(s) == "");
    }
    SECTION("the plan: bubble flow control on ring routers only, last-packet counts per link") {
        const fh::FabricPlan ring = fh::build_fabric(spec_of(emu::topology::ring(6), fh::FabricKind::ring_1d));
        const fh::FabricPlan line = fh::build_fabric(spec_of(emu::topology::line(6), fh::FabricKind::line_1d));
        for (const auto& r : ring.routers) CHECK(r.args[fc::rargs::bubble] == 1);
        for (const auto& r : line.routers) CHECK(r.args[fc::rargs::bubble] == 0);
        // line of 6: the link 2 -> 3 carries the routes from {0,1,2} to {3,4,5}: 9 last packets
        const fh::RouterPlan* r = line.router_at(2, uint32_t(kccl::Dir::E));
        REQUIRE(r);
        CHECK(r->args[fc::rargs::out_last] == 9);
        CHECK(r->args[fc::rargs::in_last] == 9);
        // ring of 6, shortest way (ties E): every E link carries routes of 1, 2 and 3 hops (1 + 2 + 3 = 6)
        CHECK(ring.router_at(0, uint32_t(kccl::Dir::E))->args[fc::rargs::out_last] == 6);
        CHECK(ring.router_at(0, uint32_t(kccl::Dir::W))->args[fc::rargs::out_last] == 3);
    }
}

TEST_CASE("chip fabric raw API: inline write, atomic increment, scatter write, NoC multicast, 1D multicast, 2D write-and-forward",
          "[fabric][chip]") {
    kccl::set_assert_handler(&throw_handler);
    for (fh::FabricKind kind : {fh::FabricKind::line_1d, fh::FabricKind::mesh_2d}) {
        INFO(fh::kind_name(kind));
        cf::BedOptions o;
        o.topology = kind == fh::FabricKind::mesh_2d ? "mesh" : "line";
        o.kind = kind;
        o.ranks = 4;
        o.rows = 1;
        o.cols = 4;
        o.message_bytes = 256;
        cf::Bed bed(o);
        // Rank 0 sends to the others; each receiver's scratch: [0] counter (host-initialised), [16] inline word,
        // [32..] the multicast payload (64 B), [128..] scatter chunks, [176..] the NoC multicast payload (64 B).
        for (uint32_t r = 0; r < 4; ++r) bed.launch->init_word(bed.worker(r), bed.buffers(r).scratch_l1, 0);
        fh::Route mc = kind == fh::FabricKind::line_1d ? fh::multicast_route_1d(bed.plan.spec, 0, uint32_t(kccl::Dir::E), 1, 3)
                                                       : fh::path_route_2d(bed.plan.spec, 0, {2, 2, 2}, 1);
        const uint32_t hb = bed.plan.spec.header_bytes;
        const std::vector<uint32_t> chips = bed.plan.spec.chips;
        bed.add([mc, hb, chips](auto& hal, auto& link, const cf::RankBuffers& b) -> uint64_t {
            const uint32_t ctr = b.scratch_l1;
            if (link.rank() == 0) {
                uint8_t* src = hal.l1_ptr(b.input_l1, 256);
                for (uint32_t i = 0; i < 256; ++i) src[i] = uint8_t(i * 7 + 1);
                const uint32_t stage = b.output_l1;
                auto send = [&](uint32_t dir, fc::HeaderFields f, const std::vector<uint8_t>& cmds) {
                    volatile uint32_t* h = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(stage, hb));
                    hal.noc_writes_flushed();
                    fc::write_header(h, f, uint32_t(cmds.size()), [&](uint32_t i) { return cmds[i]; });
                    fc::Connection& c = link.connection(dir);
                    c.reserve(hal);
                    c.write(hal, stage, hb, b.input_l1, f.payload);
                    hal.noc_writes_flushed();
                };
                // multicast: 64 payload bytes to ranks 1..3, then per rank inline + scatter + increment
                fc::HeaderFields m;
                m.cmd = fc::NocCmd::unicast_write;
                m.routing = mc.routing;
                m.route = mc.route;
                m.payload = 64;
                m.dst_xy = link.peer_xy(1);
                m.dst_l1 = ctr + 32;
                send(mc.first_dir, m, mc.cmds);
                // the same chip-level multicast carrying a NoC multicast write (a 1-core rectangle: the worker)
                m.cmd = fc::NocCmd::multicast_write;
                m.dst_xy = m.sem_xy = fc::xy(0, 0);
                m.dst_l1 = ctr + 176;
                send(mc.first_dir, m, mc.cmds);
                for (uint32_t q = 1; q < 4; ++q) {
                    fc::HeaderFields f;
                    const uint32_t dir = link.route_dir(q);
                    std::vector<uint8_t> cmds;
                    if (hal.arg(cf::bed_args + fc::wargs::first_peer + q * hal.arg(cf::bed_args + fc::wargs::peer_stride) + fc::wargs::p_routing) ==
                        uint32_t(fc::Routing::path_2d)) {
                        f.routing = fc::Routing::path_2d;
                        const uint32_t dest = fc::route_dest(chips[q], fc::fabric_mesh_id);
                        for (uint32_t k = 0; k < fc::route_dest_bytes; ++k) cmds.push_back(uint8_t(dest >> (8 * k)));
                        for (uint32_t k = 0; k < q; ++k) cmds.push_back(fc::route_forward(2));
                        cmds.push_back(fc::route_deliver());
                        f.route = (fc::route_dest_bytes + 1u) | (uint32_t(cmds.size()) << 16);
                    } else {
                        f.routing = fc::Routing::unicast_1d;
                        f.route = q;
                    }
                    f.dst_xy = f.sem_xy = link.peer_xy(q);
                    f.cmd = fc::NocCmd::inline_write;
                    f.dst_l1 = ctr + 16;
                    f.value = 0xC0DE0000u + q;
                    send(dir, f, cmds);
                    f.cmd = fc::NocCmd::scatter_write;
                    f.payload = 100;
                    f.dst_l1 = ctr + 128;  // chunk 0: 40 B, chunk 1: 20 B, chunk 2: the other 40 B
                    f.sem_xy = ctr + 256;
                    f.sem_l1 = ctr + 384;
                    f.scatter01 = 40u | (20u << 16);
                    f.scatter2n = 0u | (3u << 16);
                    send(dir, f, cmds);
                    f = fc::HeaderFields{f.cmd, f.routing, 0, f.route, link.peer_xy(q), 0, link.peer_xy(q), ctr, 1};
                    f.cmd = fc::NocCmd::atomic_inc;
                    send(dir, f, cmds);
                }
            } else {
                hal.sem_wait(ctr, 1);
            }
            link.quiesce();
            return 0;
        });
        emu::RunOptions ro;
        ro.adversary.enabled = true;
        ro.adversary.seed = 3;
        const emu::RunReport rep = bed.run(ro);
        REQUIRE(rep.ok());
        for (uint32_t q = 1; q < 4; ++q) {
            INFO("rank " << q);
            const uint8_t* s = bed.cluster->l1(bed.worker(q)).data() + bed.buffers(q).scratch_l1;
            uint32_t inl;
            std::memcpy(&inl, s + 16, 4);
            CHECK(inl == 0xC0DE0000u + q);
            bool mc_ok = true, sc_ok = true;
            for (uint32_t i = 0; i < 64; ++i) mc_ok = mc_ok && s[32 + i] == uint8_t(i * 7 + 1);
            for (uint32_t i = 0; i < 64; ++i) mc_ok = mc_ok && s[176 + i] == uint8_t(i * 7 + 1);
            for (uint32_t i = 0; i < 40; ++i) sc_ok = sc_ok && s[128 + i] == uint8_t(i * 7 + 1);
            for (uint32_t i = 0; i < 20; ++i) sc_ok = sc_ok && s[256 + i] == uint8_t((40 + i) * 7 + 1);
            for (uint32_t i = 0; i < 40; ++i) sc_ok = sc_ok && s[384 + i] == uint8_t((60 + i) * 7 + 1);
            CHECK(mc_ok);
            CHECK(sc_ok);
        }
    }
}

namespace {
struct SkipHeader : fc::FabricLinkConfig {
    static constexpr bool mutation_skip_header = true;
};
struct LeakCredit : fc::FabricLinkConfig {
    static constexpr bool mutation_leak_credit = true;
};
struct LeakLinkCredit : fc::RouterConfig {
    static constexpr bool mutation_leak_link_credit = true;
};
struct NoBubble : fc::RouterConfig {
    static constexpr bool mutation_no_bubble = true;
};

/// Every rank streams `msgs` messages to every other rank at once (non-blocking), on a ring of
/// small channels: the heaviest load a ring's channels see.
template <class RConfig>
emu::RunReport ring_flood(uint32_t n, uint32_t msgs, uint64_t seed) {
    kccl::set_assert_handler(&throw_handler);
    cf::BedOptions o;
    o.topology = "ring";
    o.kind = fh::FabricKind::ring_1d;
    o.ranks = n;
    o.message_bytes = 64;
    o.rx_slots = 2;
    o.tx_slots = 1;
    o.peer_slots = 8;
    cf::Bed bed(o);
    bed.add<fc::FabricLinkConfig, RConfig>([msgs](auto& hal, auto& link, const cf::RankBuffers& b) -> uint64_t {
        uint32_t sent[64] = {}, got[64] = {};
        for (bool busy = true; busy;) {
            busy = false;
            bool moved = false;
            for (uint32_t d = 0; d < link.directions(); ++d) {
                if (sent[d] < msgs) {
                    busy = true;
                    if (link.try_send(d, b.input_l1, 64)) ++sent[d], moved = true;
                }
                kccl::coll::View v;
                if (got[d] < msgs) {
                    busy = true;
                    if (link.try_recv(d, v)) link.release(v), ++got[d], moved = true;
                }
            }
            if (busy && !moved) hal.idle();
        }
        link.quiesce();
        return 0;
    });
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(5000);
    ro.adversary.enabled = true;
    ro.adversary.seed = seed;
    return bed.run(ro);
}
}  // namespace

TEST_CASE("chip fabric deadlock rule: a flooded ring of 2-slot receivers runs with bubble flow control",
          "[fabric][fault]") {
    for (uint64_t seed : {1u, 2u, 3u}) {
        const emu::RunReport r = ring_flood<fc::RouterConfig>(6, 12, seed);
        INFO(r.summary());
        CHECK(r.ok());
    }
}

TEST_CASE("chip fabric deadlock rule: without bubble flow control the flooded ring deadlocks",
          "[fabric][fault][mutation]") {
    uint32_t deadlocks = 0;
    for (uint64_t seed : {1u, 2u, 3u}) {
        const emu::RunReport r = ring_flood<NoBubble>(6, 12, seed);
        deadlocks += r.deadlock;
        if (r.deadlock) CHECK_THAT(r.summary(), Contains("WAITS for the router facing E to give back a slot of its pass-through channel") ||
                                                    Contains("WAITS for the router facing W to give back a slot of its pass-through channel"));
    }
    CHECK(deadlocks > 0);
}

TEST_CASE("chip fabric faults: each ends in a named report, never a hang", "[fabric][fault][mutation]") {
    cf::BedOptions o;
    o.topology = "ring";
    o.kind = fh::FabricKind::ring_1d;
    o.ranks = 4;
    o.message_bytes = 128;
    SECTION("an uninitialised header: the first router that reads it names its channel and slot") {
        cf::Bed bed(o);
        const emu::RunReport r = ring_traffic<SkipHeader>(bed, 3, 64);
        REQUIRE_FALSE(r.ok());
        CHECK_THAT(r.summary(), Contains("fabric router chip") && Contains("sender channel 0 (local worker) slot 0, packet 0: invalid header"));
    }
    SECTION("a worker credit never returned: the sender names the peer and the counts") {
        cf::Bed bed(o);
        const emu::RunReport r = ring_traffic<LeakCredit>(bed, 6, 64);
        REQUIRE_FALSE(r.ok());
        CHECK(r.deadlock);
        CHECK_THAT(r.summary(), Contains("fabric worker rank 0 chip 0: WAITS for a credit from rank 1 (chip 1)") &&
                                    Contains("4 slots for us and not all released"));
    }
    SECTION("a link credit never returned: the router names its channel and the free slots") {
        cf::Bed bed(o);
        const emu::RunReport r = ring_traffic<fc::FabricLinkConfig, LeakLinkCredit>(bed, 20, 64);
        REQUIRE_FALSE(r.ok());
        CHECK(r.deadlock);
        CHECK_THAT(r.summary(), Contains("facing E (link to chip 1)") &&
                                    Contains("WAITS for the peer to free packets: every slot of sender channel 0 holds a packet sent but not freed (freed 0 of 8 sent"));
    }
    SECTION("a router that never starts: its worker and its link peer name it") {
        cf::Bed bed(o);
        const fh::RouterPlan* dead = bed.plan.router_at(0, uint32_t(kccl::Dir::E));
        REQUIRE(dead);
        bed.skip_routers.push_back(dead->core);
        const emu::RunReport r = ring_traffic(bed, 12, 64);
        REQUIRE_FALSE(r.ok());
        CHECK(r.deadlock);
        CHECK_THAT(r.summary(), Contains("fabric worker rank 0 chip 0: [fabric router chip 0 (0,1) facing E (link to chip 1): has not started") &&
                                    Contains("facing E (link to chip 1): has not started") &&
                                    Contains("facing W (link to chip 0): handshaking with its link peer"));
    }
}

namespace {
constexpr uint32_t kMeshRawWord = 0x5EED1234u;  // the raw packet's inline word (mesh_raw)

/// On a 1 x 3 mesh, rank 0 sends one raw 2D packet along E, E to rank 2 whose destination word
/// names (`chip`, `mesh`); or (`fill_unfed`) rank 1 increments the fill semaphore of its E
/// router's sender channel from N, which no router feeds. `wait_delivery`: rank 2 waits until the
/// packet's inline word has landed in its scratch. Returns the run's report.
emu::RunReport mesh_raw(uint32_t chip_of_rank, uint32_t mesh, bool fill_unfed, bool wait_delivery = false) {
    cf::BedOptions o;
    o.topology = "mesh";
    o.kind = fh::FabricKind::mesh_2d;
    o.rows = 1;
    o.cols = 3;
    o.message_bytes = 64;
    cf::Bed bed(o);
    const uint32_t hb = bed.plan.spec.header_bytes;
    const uint32_t dest = fc::route_dest(bed.plan.spec.chips[chip_of_rank], mesh);
    const fc::RouterLayout rl = bed.plan.router;
    bed.add([hb, dest, rl, fill_unfed, wait_delivery](auto& hal, auto& link, const cf::RankBuffers& b) -> uint64_t {
        if (link.rank() == 0 && !fill_unfed) {
            std::vector<uint8_t> cmds;  // the destination word, then E, E, deliver
            for (uint32_t k = 0; k < fc::route_dest_bytes; ++k) cmds.push_back(uint8_t(dest >> (8 * k)));
            for (uint8_t c : {fc::route_forward(2), fc::route_forward(2), fc::route_deliver()}) cmds.push_back(c);
            fc::HeaderFields f;
            f.cmd = fc::NocCmd::inline_write;
            f.routing = fc::Routing::path_2d;
            f.route = (fc::route_dest_bytes + 1u) | (uint32_t(cmds.size()) << 16);
            f.dst_xy = link.peer_xy(1);
            f.dst_l1 = b.scratch_l1;
            f.value = kMeshRawWord;
            volatile uint32_t* h = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(b.output_l1, hb));
            fc::write_header(h, f, uint32_t(cmds.size()), [&](uint32_t i) { return cmds[i]; });
            fc::Connection& c = link.connection(link.route_dir(2));
            c.reserve(hal);
            c.write(hal, b.output_l1, hb, 0, 0);
        }
        if (link.rank() == 2 && wait_delivery)
            while (hal.sem_read(b.scratch_l1) != kMeshRawWord) hal.idle();
        if (link.rank() == 1 && fill_unfed) {
            const uint32_t e = hal.arg(cf::bed_args + fc::wargs::router_xy + uint32_t(kccl::Dir::E));
            hal.sem_inc(hal.noc_addr(e & 0xFFFFu, e >> 16, rl.fill_sem(1 + uint32_t(kccl::Dir::N))), 1);
        }
        link.quiesce();
        return 0;
    });
    return bed.run(emu::RunOptions{});
}
}  // namespace

TEST_CASE("chip fabric 2D: the routing-table check and the polled sender channels name what is wrong", "[fabric][fault]") {
    SECTION("a well-formed raw 2D packet is delivered (the cases below differ from it in one field)") {
        CHECK(mesh_raw(2, fc::fabric_mesh_id, false, true).ok());
    }
    SECTION("a destination on another mesh: the first router's routing-table check") {
        const emu::RunReport r = mesh_raw(2, fc::fabric_mesh_id + 1, false);
        REQUIRE_FALSE(r.ok());
        CHECK_THAT(r.summary(), Contains("fabric router chip 1") && Contains("a 2D packet for another mesh") &&
                                    Contains("packet from chip 0"));
    }
    SECTION("a route that ends on another chip than its destination") {
        const emu::RunReport r = mesh_raw(1, fc::fabric_mesh_id, false);
        REQUIRE_FALSE(r.ok());
        CHECK_THAT(r.summary(), Contains("fabric router chip 2") &&
                                    Contains("a 2D route that ends on another chip than the header's destination"));
    }
    SECTION("a polled sender channel that no router feeds") {
        const emu::RunReport r = mesh_raw(2, fc::fabric_mesh_id, true);
        REQUIRE_FALSE(r.ok());
        CHECK_THAT(r.summary(), Contains("fabric router chip 1") && Contains("facing E") &&
                                    Contains("sender channel 1 (from direction N) was filled, but this chip has no router facing that direction"));
    }
}

TEST_CASE("chip fabric header: a 2D header needs its destination word and a route command", "[fabric][builder]") {
    alignas(16) uint32_t w[fc::header_max_bytes / 4] = {};
    fc::HeaderFields f;
    f.routing = fc::Routing::path_2d;
    const uint8_t cmds[5] = {0, 0, 0, 0, fc::route_deliver()};
    for (const uint32_t n : {0u, 1u, 4u}) {
        INFO(n << " route bytes");
        f.route = (fc::route_dest_bytes + 1u) | (n << 16);
        fc::write_header(w, f, n, [&](uint32_t i) { return cmds[i]; });
        CHECK(fc::validate_header(w, 80, 64) == fc::HeaderFault::no_dest);
        w[fc::hw::check] ^= 1u;  // a torn or stale header is named as one, whatever its fields say
        CHECK(fc::validate_header(w, 80, 64) == fc::HeaderFault::check);
    }
    f.route = (fc::route_dest_bytes + 1u) | (5u << 16);
    fc::write_header(w, f, 5, [&](uint32_t i) { return cmds[i]; });
    CHECK(fc::validate_header(w, 80, 64) == fc::HeaderFault::none);
    CHECK_THAT(fc::fault_text(fc::HeaderFault::no_dest), Contains("without its destination word"));
}
