// IPCQ fuzzers: random topologies and queue configs. Valid ones must deliver every byte (every
// message once, in order per link, intact, with its descriptor); invalid ones (one mutation of a
// valid case) must fail with the named error that mutation calls for — never a crash or a hang.
// CI runs a bounded number of cases (a few seconds); the [long] variants run many more.
// Every failure prints the case's seed: rerun that one case by its seed to reproduce.
#include "ipcq_util.hpp"

#include <functional>
#include <map>
#include <random>
#include <sstream>

using namespace kccl::test;
using namespace kccl::test::ipcq;
using iq::Nsew;

namespace {

constexpr uint32_t kSrc = kScratch;
constexpr uint32_t kDst = kScratch + 0x4000;
constexpr uint32_t kAcc = kScratch + 0x8000;

struct FuzzCase {
    ih::Topology<Nsew> topo;
    std::vector<ih::QueueConfig> configs;
    std::vector<ih::CoreXY> cores;
    ih::MemoryConfig mem;
    uint32_t rounds = 1;
    bool adversarial = false;

    std::string describe() const {
        std::ostringstream o;
        o << "world " << topo.world << ", " << configs[0].n_slots << " x " << configs[0].slot_size << " B, "
          << (configs[0].placement == iq::Placement::dram ? "dram" : "l1") << ", initial counter " << configs[0].initial_counter
          << ", rounds " << rounds << (adversarial ? ", adversarial" : "") << "; links:";
        for (uint32_t r = 0; r < topo.world; ++r)
            for (uint32_t d = 0; d < 4; ++d) {
                const auto& l = topo.links[r][d];
                if (!l.installed()) continue;
                o << " " << r << Nsew::name(d) << "->" << l.peer << Nsew::name(l.peer_dir)
                  << (l.roles == ih::both ? "" : l.roles == ih::tx ? "(tx)" : "(rx)");
            }
        o << "; per rank (mode strict batch txring):";
        for (const auto& c : configs)
            o << " " << (c.mode == iq::Backpressure::sleep ? "S" : "P") << c.strict << c.credit_batch << c.tx_ring;
        return o.str();
    }
};

uint32_t mix(uint32_t a, uint32_t b, uint32_t c) { return pattern(a, b, c, 0x51ed); }

/// Payload words of message m sent by (rank, dir): 0..slot_size/4.
uint32_t words_of(uint32_t rank, uint32_t dir, uint32_t m, uint32_t slot_size) {
    return mix(rank, dir, m) % (slot_size / 4 + 1);
}
iq::MsgInfo info_of(uint32_t rank, uint32_t dir, uint32_t m, uint32_t slot_size) {
    iq::MsgInfo i;
    i.nbytes = 4 * words_of(rank, dir, m, slot_size);
    i.dtype = uint16_t(mix(dir, rank, m) & 7);
    i.rank = 1;
    i.dims[0] = uint16_t(i.nbytes / 4);
    return i;
}

FuzzCase random_valid(uint64_t seed, const Cluster& cl) {
    std::mt19937_64 rng(seed);
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    FuzzCase fc;
    const uint32_t world = 2 + pick(5);  // 2..6
    fc.topo = ih::Topology<Nsew>(world, "fuzz");
    const uint32_t attempts = pick(4 * world + 1);
    const uint32_t roles[] = {ih::tx, ih::rx, ih::both};
    for (uint32_t i = 0; i < attempts; ++i) {
        const uint32_t r = pick(world), d = pick(4), p = pick(world), pd = pick(4);
        if (p == r || fc.topo.links[r][d].installed() || fc.topo.links[p][pd].installed()) continue;
        fc.topo.connect(r, d, p, pd, roles[pick(3)]);
    }
    ih::QueueConfig base;
    base.n_slots = 1 + pick(5);
    base.slot_size = 16 * (1 + pick(8));
    base.placement = pick(3) == 0 ? iq::Placement::dram : iq::Placement::l1;
    for (uint32_t r = 0; r < world; ++r) {
        auto c = base;
        c.mode = pick(2) ? iq::Backpressure::sleep : iq::Backpressure::poll;
        c.strict = pick(2);
        c.credit_batch = 1 + pick(c.n_slots);
        c.tx_ring = pick(3) == 0;
        fc.configs.push_back(c);
    }
    fc.cores = cores_for(world);
    fc.mem = memory_for(cl);
    fc.rounds = 1 + pick(6);
    // Half of the cases start just below 2^32, so that most of those streams cross the wrap.
    const uint32_t initial = pick(2) ? 0u : 0u - pick(2 * fc.rounds * base.n_slots);
    for (auto& c : fc.configs) c.initial_counter = initial;
    fc.adversarial = pick(2);
    return fc;
}

struct Outcome {
    bool ok = false;
    std::string summary;
    uint64_t bytes = 0, expected_bytes = 0, bad = 0;
};

/// Runs a valid case: every tx endpoint sends rounds x n_slots messages, every rx endpoint
/// receives them with a random mix of the receive variants. Round r's sends need only round
/// r - 1's messages consumed, so no topology can deadlock.
Outcome run_valid(const FuzzCase& fc, uint64_t seed) {
    ErrorsThrow errors;
    Cluster cl(kccl::emu::topology::single_chip(ipcq_chip()));
    const auto plan = ih::build_plan(fc.topo, fc.cores, fc.configs, memory_for(cl));
    ih::install_on(cl, 0, plan);
    Launcher launch(cl);
    const uint32_t n = fc.configs[0].n_slots, size = fc.configs[0].slot_size, init = fc.configs[0].initial_counter;
    const uint32_t total = fc.rounds * n;
    Outcome out;
    for (uint32_t r = 0; r < fc.topo.world; ++r)
        for (uint32_t d = 0; d < 4; ++d) {
            const auto& l = fc.topo.links[r][d];
            if (l.installed() && (l.roles & ih::tx))
                for (uint32_t m = 0; m < total; ++m) out.expected_bytes += 4 * words_of(r, d, m, size);
        }
    for (uint32_t r = 0; r < fc.topo.world; ++r) {
        const auto links = fc.topo.links[r];
        launch.add(cl.chip(0).worker(fc.cores[r].x, fc.cores[r].y), [=, &fc](auto& hal) -> uint64_t {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            uint64_t bad = 0, bytes = 0;
            uint32_t got[4] = {0, 0, 0, 0};
            uint32_t step = 0;
            auto check = [&](uint32_t d, const iq::Slot& s, const uint8_t* payload) {
                const uint32_t p = uint32_t(links[d].peer), pd = links[d].peer_dir, m = got[d]++;
                const iq::MsgInfo e = info_of(p, pd, m, size);
                bad += s.seq != init + m;
                bad += std::memcmp(&s.info, &e, sizeof e) != 0;
                if (e.nbytes) bad += mismatches(payload, e.nbytes / 4, p, pd, m);
                bytes += s.info.nbytes;
            };
            for (uint32_t round = 0; round < fc.rounds; ++round) {
                for (uint32_t d = 0; d < 4; ++d) {
                    if (!links[d].installed() || !(links[d].roles & ih::tx)) continue;
                    for (uint32_t i = 0; i < n; ++i) {
                        const uint32_t m = round * n + i;
                        const iq::MsgInfo info = info_of(r, d, m, size);
                        const uint32_t src = fc.configs[r].tx_ring ? q.tx_slot(d) : kSrc;
                        if (info.nbytes) fill(hal, src, info.nbytes / 4, r, d, m);
                        q.send(d, src, info.nbytes, info);
                    }
                }
                const uint32_t quota = (round + 1) * n;
                for (;;) {
                    uint32_t d = 4;
                    for (uint32_t k = 0; k < 4 && d == 4; ++k)
                        if (links[k].installed() && (links[k].roles & ih::rx) && got[k] < quota) d = k;
                    if (d == 4) break;
                    const uint32_t p = uint32_t(links[d].peer), pd = links[d].peer_dir;
                    const iq::MsgInfo e = info_of(p, pd, got[d], size);
                    iq::Slot s;
                    switch (mix(r, uint32_t(seed), step++) % 6) {
                        case 0: s = q.recv(d); break;
                        case 1: {
                            const uint32_t nb = q.recv(d, kDst, size, e);
                            s.dir = d, s.seq = init + got[d], s.info = e, s.info.nbytes = nb;
                            check(d, s, hal.l1_ptr(kDst, size));
                            continue;
                        }
                        case 2:
                            while (!q.try_recv(d, s, e)) hal.idle();
                            break;
                        case 3: s = q.recv_any(); break;  // may serve another direction (even one at quota)
                        case 4: {
                            auto f = q.recv_async(d, e);
                            while (!q.ready(f)) hal.idle();
                            s = q.wait(f);
                            break;
                        }
                        default: s = q.recv(d, e);
                    }
                    check(s.dir, s, q.data(s));
                    q.release(s);
                }
            }
            q.quiesce();
            put(hal, kAcc, bad);
            return bytes;
        }, plan.runtime_args(r));
    }
    ih::attach_pointer_dumps(launch, cl, 0, plan);
    const auto opt = fc.adversarial ? adversarial(seed, std::chrono::milliseconds(10000)) : normal(std::chrono::milliseconds(10000));
    auto rep = launch.run(opt);
    out.ok = rep.ok();
    out.summary = rep.summary();
    if (out.ok)
        for (uint32_t r = 0; r < fc.topo.world; ++r) {
            const auto core = cl.chip(0).worker(fc.cores[r].x, fc.cores[r].y);
            out.bytes += rep.at(core).value;
            out.bad += cl.read32(core, kAcc);
        }
    return out;
}

void fuzz_valid(uint64_t first_seed, uint32_t cases) {
    Cluster cl(kccl::emu::topology::single_chip(ipcq_chip()));
    for (uint64_t seed = first_seed; seed < first_seed + cases; ++seed) {
        const FuzzCase fc = random_valid(seed, cl);
        INFO("seed " << seed << ": " << fc.describe());
        const Outcome o = run_valid(fc, seed);
        INFO(o.summary);
        REQUIRE(o.ok);
        REQUIRE(o.bad == 0);
        REQUIRE(o.bytes == o.expected_bytes);
    }
}

/// One mutation of a valid case and the error text it must produce.
struct Invalid {
    std::string what, expect;
    std::function<void()> build;
};

Invalid random_invalid(uint64_t seed, const Cluster& cl) {
    std::mt19937_64 rng(seed ^ 0x1badull);
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    FuzzCase fc = random_valid(seed, cl);
    const uint32_t w = fc.topo.world;
    // The link end that validate() visits first: (rank, dir) smaller than its peer's.
    int32_t lr = -1;
    uint32_t ld = 0;
    {
        std::vector<std::pair<uint32_t, uint32_t>> ends;
        for (uint32_t r = 0; r < w; ++r)
            for (uint32_t d = 0; d < 4; ++d) {
                const auto& l = fc.topo.links[r][d];
                if (l.installed() && std::make_pair(r, d) < std::make_pair(uint32_t(l.peer), l.peer_dir)) ends.emplace_back(r, d);
            }
        if (!ends.empty()) {
            const auto e = ends[pick(uint32_t(ends.size()))];
            lr = int32_t(e.first), ld = e.second;
        }
    }
    const std::string topo_pfx = "ipcq topology 'fuzz': ";
    const std::string plan_pfx = "ipcq plan ('fuzz'): ";
    auto me = [&](uint32_t r, uint32_t d) { return "rank " + std::to_string(r) + " direction " + Nsew::name(d); };
    uint32_t kind = pick(20);
    if (lr < 0 && (kind <= 4 || kind == 8 || kind == 9)) kind = 12;  // needs a link
    if (kind == 0 && w < 3) kind = 1;
    Invalid inv;
    auto& t = fc.topo;
    auto& cfg = fc.configs;
    switch (kind) {
        case 0: {  // I3: the end points elsewhere
            const uint32_t p = uint32_t(t.links[lr][ld].peer);
            uint32_t q = pick(w);
            while (q == uint32_t(lr) || q == p) q = (q + 1) % w;
            t.links[lr][ld].peer = int32_t(q);
            inv.what = "I3";
            inv.expect = topo_pfx + me(lr, ld) + " points to " + me(q, t.links[lr][ld].peer_dir) + ", but that ";
            break;
        }
        case 1:
            t.links[lr][ld].peer = lr;
            inv.what = "self link";
            inv.expect = topo_pfx + me(lr, ld) + " points to its own rank; a queue pair joins two different ranks";
            break;
        case 2: {
            const uint32_t p = w + pick(5);
            t.links[lr][ld].peer = int32_t(p);
            inv.what = "peer out of range";
            inv.expect = topo_pfx + me(lr, ld) + " names peer rank " + std::to_string(p) + "; ranks are 0.." + std::to_string(w - 1);
            break;
        }
        case 3: {
            const uint32_t pd = 4 + pick(4);
            t.links[lr][ld].peer_dir = pd;
            inv.what = "peer direction out of range";
            inv.expect = topo_pfx + me(lr, ld) + " names peer direction " + std::to_string(pd) + "; the direction set has 4";
            break;
        }
        case 4: {
            auto& l = t.links[lr][ld];
            l.roles = l.roles == ih::both ? (pick(2) ? ih::tx : ih::rx) : ih::both;
            inv.what = "roles";
            inv.expect = topo_pfx + me(lr, ld) + " and its peer " + me(uint32_t(l.peer), l.peer_dir) + " disagree on roles";
            break;
        }
        case 5: {
            const uint32_t s = pick(2) ? 0 : 16 * pick(8) + 1 + pick(15);
            for (auto& c : cfg) c.slot_size = s;
            inv.what = "slot size";
            inv.expect = plan_pfx + "rank 0: slot_size " + std::to_string(s) + " must be a positive multiple of 16 bytes";
            break;
        }
        case 6: {
            const uint32_t s = pick(2) ? 0 : 65536 + pick(1000);
            for (auto& c : cfg) c.n_slots = s;
            inv.what = "n_slots";
            inv.expect = plan_pfx + "rank 0: n_slots " + std::to_string(s) + " is out of range (allowed 1..65535)";
            break;
        }
        case 7: {
            const uint32_t r = pick(w), b = pick(2) ? 0 : cfg[r].n_slots + 1 + pick(3);
            cfg[r].credit_batch = b;
            inv.what = "credit batch";
            inv.expect = plan_pfx + "rank " + std::to_string(r) + ": credit_batch " + std::to_string(b) +
                         " is out of range (allowed 1..n_slots = " + std::to_string(cfg[r].n_slots) + ")";
            break;
        }
        case 8:
            cfg[uint32_t(t.links[lr][ld].peer)].n_slots += 1;
            inv.what = "n_slots differ across a link";
            inv.expect = "(both ends of a link must agree)";
            break;
        case 9:
            cfg[uint32_t(t.links[lr][ld].peer)].initial_counter += 1;
            inv.what = "initial_counter differs across a link";
            inv.expect = "(both ends of a link must agree on initial_counter)";
            break;
        case 10: {
            const uint32_t r = 1 + pick(w - 1);
            const auto p = cfg[0].placement == iq::Placement::dram ? iq::Placement::l1 : iq::Placement::dram;
            cfg[r].placement = p;
            inv.what = "mixed placement";
            inv.expect = plan_pfx + "rank " + std::to_string(r) + " uses placement " + (p == iq::Placement::dram ? "dram" : "l1") +
                         " but rank 0 uses " + (p == iq::Placement::dram ? "l1" : "dram") + " (I4";
            break;
        }
        case 11:
            fc.mem.l1_bytes = fc.mem.block_l1 + 64 * (1 + pick(20));
            inv.what = "L1 too small";
            inv.expect = plan_pfx + "rank 0 needs L1 up to ";
            break;
        case 12:
            fc.mem.l1_bytes = 0;
            inv.what = "no L1 size";
            inv.expect = plan_pfx + "MemoryConfig::l1_bytes is 0";
            break;
        case 13: {
            const uint32_t a = pick(w - 1), b = a + 1 + pick(w - 1 - a);
            fc.cores[b] = fc.cores[a];
            inv.what = "core twice";
            inv.expect = plan_pfx + "ranks " + std::to_string(a) + " and " + std::to_string(b) + " are both on core";
            break;
        }
        case 14:
            fc.cores.pop_back();
            inv.what = "too few cores";
            inv.expect = plan_pfx + "got " + std::to_string(w - 1) + " cores for " + std::to_string(w) + " ranks";
            break;
        case 15:
            for (auto& c : cfg) c.placement = iq::Placement::dram;
            fc.mem.dram_bytes = 0;
            inv.what = "DRAM without a region";
            inv.expect = plan_pfx + "DRAM placement needs a DRAM region";
            break;
        case 16:
            for (auto& c : cfg) c.placement = iq::Placement::dram;
            fc.mem.dram_base = 0xFFFFFF00u - 16 * pick(16);
            fc.mem.dram_bytes = 0x1000;
            inv.what = "DRAM above 2^32";
            inv.expect = ") ends above 2^32; NoC addresses of the contract carry 32-bit offsets";
            break;
        case 17:
            fc.mem.block_l1 += 16 * (1 + pick(3));
            inv.what = "block unaligned";
            inv.expect = plan_pfx + "block_l1 " + std::to_string(fc.mem.block_l1) + " must be 64-byte aligned";
            break;
        case 18:
            cfg.pop_back();
            inv.what = "too few configs";
            inv.expect = plan_pfx + "got " + std::to_string(w - 1) + " queue configs for " + std::to_string(w) + " ranks";
            break;
        default:
            inv.what = "empty world";
            inv.expect = "ipcq topology 'fuzz': world size must be at least 1";
            inv.build = [] { ih::Topology<Nsew>(0, "fuzz"); };
            return inv;
    }
    inv.build = [fc] { (void)ih::build_plan(fc.topo, fc.cores, fc.configs, fc.mem); };
    return inv;
}

void fuzz_invalid(uint64_t first_seed, uint32_t cases) {
    Cluster cl(kccl::emu::topology::single_chip(ipcq_chip()));
    std::map<std::string, uint32_t> seen;
    for (uint64_t seed = first_seed; seed < first_seed + cases; ++seed) {
        const Invalid inv = random_invalid(seed, cl);
        INFO("seed " << seed << ": " << inv.what << "; expected: " << inv.expect);
        std::string got = "<no error>";
        try {
            inv.build();
        } catch (const std::invalid_argument& e) {  // TopologyError and PlanError
            got = e.what();
        }
        REQUIRE_THAT(got, Catch::Contains(inv.expect));
        ++seen[inv.what];
    }
    if (cases >= 200) REQUIRE(seen.size() == 20);  // every mutation kind was drawn
}

/// Device-side misuse on a random valid plan: the core that misbehaves fails with a message
/// naming its rank, core and direction; a send that can never complete (its receiver is not
/// running) is reported by the watchdog with the queue's pointers — nothing hangs.
void fuzz_misuse(uint64_t first_seed, uint32_t cases) {
    for (uint64_t seed = first_seed; seed < first_seed + cases; ++seed) {
        ErrorsThrow errors;
        Cluster cl(kccl::emu::topology::single_chip(ipcq_chip()));
        const FuzzCase fc = random_valid(seed, cl);
        std::mt19937_64 rng(seed * 31 + 7);
        const uint32_t r = uint32_t(rng() % fc.topo.world);
        const auto& links = fc.topo.links[r];
        // What to misuse: an uninstalled direction, a receive-only one, an oversized message, or
        // a direction outside the set (whichever this rank allows, in that order of preference).
        uint32_t op = 3, dir = 9;
        for (uint32_t d = 0; d < 4 && op == 3; ++d)
            if (!links[d].installed()) op = 0, dir = d;
        for (uint32_t d = 0; d < 4 && (op == 3 || rng() % 2); ++d)
            if (links[d].installed() && links[d].roles == ih::rx) op = 1, dir = d;
        for (uint32_t d = 0; d < 4 && (op == 3 || rng() % 2); ++d)
            if (links[d].installed() && (links[d].roles & ih::tx)) op = rng() % 3 ? 2 : 4, dir = d;
        const uint32_t size = fc.configs[0].slot_size, n = fc.configs[0].n_slots, init = fc.configs[0].initial_counter;
        if (op == 4) {  // n_slots + 1 sends to a receiver that never runs: blocked on a full ring
            const auto& l = links[dir];
            auto u = [](uint32_t v) { return std::to_string(v); };
            const std::string expect = std::string(Nsew::name(dir)) + ((l.roles & ih::rx) ? "" : " (tx only)") + " <-> rank " +
                                       u(uint32_t(l.peer)) + " " + Nsew::name(l.peer_dir) + ": my_head=" + u(init + n) +
                                       " my_tail=" + u(init) + " peer_head_cache=" + u(init) + " peer_tail_cache=" + u(init) +
                                       " | head mailbox=" + u(init) + " credit mailbox=" + u(init) + " taken=" + u(init) +
                                       " TX FULL (peer has not consumed)";
            INFO("seed " << seed << ": " << fc.describe() << "; expected in the dump: " << expect);
            const auto plan = ih::build_plan(fc.topo, fc.cores, fc.configs, memory_for(cl));
            ih::install_on(cl, 0, plan);
            Launcher launch(cl);
            const auto core = cl.chip(0).worker(fc.cores[r].x, fc.cores[r].y);
            launch.add(core, [dir, n](auto& hal) {
                Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
                for (uint32_t m = 0; m <= n; ++m) q.send(dir, kSrc, 4);
            }, plan.runtime_args(r));
            launch.on_dump(core, [&plan, &cl, core, r] { return ih::pointer_dump(plan, r, cl.l1(core).data()); });
            auto rep = launch.run(normal(std::chrono::milliseconds(250)));
            REQUIRE(rep.watchdog_fired);
            INFO(rep.watchdog_dump);
            REQUIRE_THAT(rep.watchdog_dump, Catch::Contains(expect));
            continue;
        }
        std::string where = "ipcq: rank " + std::to_string(r) + " core (" + std::to_string(fc.cores[r].x) + "," +
                            std::to_string(fc.cores[r].y) + "): send on direction " + Nsew::name(dir) + " (" + std::to_string(dir) + "): ";
        const std::string expect = where + (op == 0   ? "not installed on this core; installed for send: "
                                            : op == 1 ? "installed receive-only; installed for send: "
                                            : op == 2 ? "message of " + std::to_string(size + 16) + " bytes does not fit a slot of " +
                                                            std::to_string(size) + " bytes (allowed: nbytes <= slot_size)"
                                                      : "no such direction (the direction set has 4)");
        INFO("seed " << seed << ": " << fc.describe() << "; expected: " << expect);
        const auto plan = ih::build_plan(fc.topo, fc.cores, fc.configs, memory_for(cl));
        ih::install_on(cl, 0, plan);
        Launcher launch(cl);
        launch.add(cl.chip(0).worker(fc.cores[r].x, fc.cores[r].y), [dir, op, size](auto& hal) {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            q.send(dir, kSrc, op == 2 ? size + 16 : 4);
        }, plan.runtime_args(r));
        auto rep = launch.run(normal(std::chrono::milliseconds(5000)));
        REQUIRE_FALSE(rep.watchdog_fired);
        REQUIRE_THAT(rep.first_error(), Catch::Contains(expect));
    }
}

}  // namespace

TEST_CASE("ipcq fuzz: random valid topologies deliver every byte", "[ipcq][fuzz]") { fuzz_valid(1000, 150); }
TEST_CASE("ipcq fuzz: random invalid plans fail with the named error of their mutation", "[ipcq][fuzz]") {
    fuzz_invalid(5000, 2000);
}
TEST_CASE("ipcq fuzz: device-side misuse on random plans is a named error", "[ipcq][fuzz]") { fuzz_misuse(9000, 20); }

TEST_CASE("ipcq fuzz (long): random valid topologies deliver every byte", "[ipcq][fuzz][long]") { fuzz_valid(100000, 5000); }
TEST_CASE("ipcq fuzz (long): random invalid plans", "[ipcq][fuzz][long]") { fuzz_invalid(200000, 100000); }
TEST_CASE("ipcq fuzz (long): device-side misuse", "[ipcq][fuzz][long]") { fuzz_misuse(300000, 500); }
