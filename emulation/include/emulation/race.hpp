// kccl/emulation/race.hpp — the emulation's data-race detector (docs/race-detector.md).
//
// WHAT IT REPORTS (RunReport::races; any report fails the run)
//   * a read of bytes whose last write is not ordered before the read by the contract's rules;
//   * a write over bytes whose last read is not ordered before the write (the read may see the
//     new bytes in another schedule);
//   * a write over a buffer that a NoC write of the same core may still be reading (N3: before
//     the next noc_writes_flushed() or noc_write_barrier());
//   * a use of garbage: a sem_wait satisfied by, or an annotated read (note_read) of, bytes that
//     nothing has written since the memory was made dirty (dirty L1): no store the detector sees,
//     no NoC write, inline write, increment or Ethernet send into them, and not the host. (A copy
//     defines its destination: plain stores into a copy's source are invisible.)
// Each report names both cores, the byte range, both operations and their source locations.
// Because it compares logical clocks, not the order the accesses happened to run in, a race is
// reported on the first run in which both accesses happen, in any schedule.
//
// WHAT IT SEES
//   The contract's operations: the source read and destination write of noc_write, noc_read and
//   eth_send, inline writes, semaphore increments and sets (writes), sem_read / sem_wait (reads of
//   a synchronisation word: acquires, checked for garbage only). Plain loads and stores through
//   l1_ptr pointers cannot be seen; a kernel declares them with hal::note_read / hal::note_write
//   (include/hal/contract.hpp: no-ops on hardware).
//
// HOW (happens-before with vector clocks)
//   Every core has a vector clock. Asynchronous operations run on "lanes" with clocks of their
//   own: one lane per (issuing core, destination core) for NoC writes, inline writes and
//   increments (N1: same destination, issue order), one per core for NoC reads, one per
//   (Ethernet core, tx queue) for sends (E2). Issuing an operation joins the core's clock into the
//   lane's and ticks the lane: the operation is ordered after everything before it in the core
//   and after every earlier operation on the same lane, and nothing else.
//     release  sem_inc / noc_inline_write32 carry their lane's clock to the destination word
//              (increments accumulate, an inline write replaces); sem_set carries the core's own;
//              an eth_send carries its lane's clock to each word of its last 16 bytes (E3).
//     acquire  sem_wait / sem_wait_min returning, and sem_read, join the word's clock.
//     barrier  noc_write_barrier joins the core's NoC write lanes into the core (N2);
//              noc_read_barrier its read lane (N4).
//     programs a core entering program p+1 joins every core of its chip that finished program p.
//   Strict ordering profile (hal/ordering_strict.hpp): increments and inline writes to a core run
//   on a lane of their own beside the NoC write lane to that core; a write is ordered after the
//   earlier increments (the write lane joins theirs), an increment after the earlier writes only
//   once noc_writes_flushed() or noc_write_barrier() joined the write lane into it. Also N7: a
//   NoC write, a noc_write_mcast or a sem_set_mcast reading as its source bytes the core stored
//   (note_write) without an l1_store_fence() since is reported.
//   Shadow memory: per core, an interval map from byte ranges to the last write (lane or core,
//   clock, operation, source location) and the reads since it.
#pragma once

#include "cluster.hpp"
#include "platform.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kccl::emu {

/// What a detected race names about one access.
enum class RaceOp : uint8_t {
    host, garbage, local_store, local_load, noc_write, noc_write_source, noc_read, noc_read_source, inline_write,
    sem_inc, sem_set, sem_read, sem_wait, eth_send, eth_send_source, noc_write_mcast, noc_write_mcast_source,
    sem_set_mcast, sem_inc_mcast
};
inline const char* to_string(RaceOp o) {
    switch (o) {
        case RaceOp::host: return "the host";
        case RaceOp::garbage: return "dirty L1 (nothing wrote it)";
        case RaceOp::local_store: return "note_write (a store through l1_ptr)";
        case RaceOp::local_load: return "note_read (a load through l1_ptr)";
        case RaceOp::noc_write: return "noc_write";
        case RaceOp::noc_write_source: return "noc_write reading its source";
        case RaceOp::noc_read: return "noc_read landing";
        case RaceOp::noc_read_source: return "noc_read reading its source";
        case RaceOp::inline_write: return "noc_inline_write32";
        case RaceOp::sem_inc: return "sem_inc";
        case RaceOp::sem_set: return "sem_set";
        case RaceOp::sem_read: return "sem_read";
        case RaceOp::sem_wait: return "sem_wait";
        case RaceOp::eth_send: return "eth_send";
        case RaceOp::eth_send_source: return "eth_send reading its source";
        case RaceOp::noc_write_mcast: return "noc_write_mcast";
        case RaceOp::noc_write_mcast_source: return "noc_write_mcast reading its source";
        case RaceOp::sem_set_mcast: return "sem_set_mcast";
        case RaceOp::sem_inc_mcast: return "sem_inc_mcast";
    }
    return "?";
}

namespace detail {

/// A sparse vector clock: (component, clock) pairs sorted by component.
class VClock {
public:
    uint32_t get(uint32_t c) const {
        auto it = std::lower_bound(e_.begin(), e_.end(), c, [](const auto& p, uint32_t k) { return p.first < k; });
        return it != e_.end() && it->first == c ? it->second : 0;
    }
    void set(uint32_t c, uint32_t t) {
        auto it = std::lower_bound(e_.begin(), e_.end(), c, [](const auto& p, uint32_t k) { return p.first < k; });
        if (it != e_.end() && it->first == c) it->second = t;
        else e_.insert(it, {c, t});
    }
    uint32_t tick(uint32_t c) {
        const uint32_t t = get(c) + 1;
        set(c, t);
        return t;
    }
    void join(const VClock& o) {
        // In place while every component of `o` is already here (the common case once a run has
        // warmed up: no allocation); otherwise merge into a new vector.
        size_t k = 0;
        bool fresh = false;
        for (const auto& [c, t] : o.e_) {
            while (k < e_.size() && e_[k].first < c) ++k;
            if (k == e_.size() || e_[k].first != c) {
                fresh = true;
                break;
            }
            if (t > e_[k].second) e_[k].second = t;
        }
        if (!fresh) return;
        std::vector<std::pair<uint32_t, uint32_t>> r;
        r.reserve(e_.size() + o.e_.size());
        size_t i = 0, j = 0;
        while (i < e_.size() || j < o.e_.size()) {
            if (j == o.e_.size() || (i < e_.size() && e_[i].first < o.e_[j].first)) r.push_back(e_[i++]);
            else if (i == e_.size() || o.e_[j].first < e_[i].first) r.push_back(o.e_[j++]);
            else {
                r.push_back({e_[i].first, std::max(e_[i].second, o.e_[j].second)});
                ++i, ++j;
            }
        }
        e_.swap(r);
    }

private:
    std::vector<std::pair<uint32_t, uint32_t>> e_;
};

/// One access in the shadow: who (core), on which clock component (the core's or a lane's), at
/// which clock, by which operation, from where.
struct Access {
    static constexpr uint32_t kOrdered = UINT32_MAX;  ///< host / before the run: ordered before all
    uint32_t comp = kOrdered;
    uint32_t clock = 0;
    uint32_t core = UINT32_MAX;  ///< index of the core that issued it
    RaceOp op = RaceOp::host;
    bool garbage = false;  ///< the bytes hold garbage (dirty L1 nothing has overwritten)
    const char* file = nullptr;
    uint32_t line = 0;
    bool ordered_before(const VClock& v) const { return comp == kOrdered || v.get(comp) >= clock; }
};

class RaceDetector {
public:
    /// Where an operation was called (the contract entry points take __builtin_FILE/LINE).
    struct Loc {
        const char* file;
        uint32_t ln;
        const char* file_name() const { return file; }
        uint32_t line() const { return ln; }
    };
    static constexpr size_t kMaxReports = 16;
    static constexpr size_t kMaxReads = 4;  ///< reads kept per byte range since its last write
    static constexpr size_t kMaxSources = 32;  ///< NoC write sources kept per core until a flush

    /// `cores`: every core of the run (index = detector id). `garbage`: for each core, the byte
    /// ranges that hold dirty-L1 garbage at the start of the run.
    RaceDetector(std::vector<CoreState*> cores, bool threads, bool strict = false)
        : cores_(std::move(cores)), threads_(threads), strict_(strict) {
        core_.resize(cores_.size());
        for (uint32_t i = 0; i < cores_.size(); ++i) {
            index_[cores_[i]] = i;
            core_[i].vc.set(i, 1);
            core_[i].shadow[0] = Seg{cores_[i]->mem_size, Access{}, {}};
        }
    }
    /// Marks [b, e) of core `c` as garbage (dirty L1 nothing has written).
    void garbage(const CoreState* c, uint32_t b, uint32_t e) {
        Lock l(*this);
        Access a;
        a.garbage = true;
        a.op = RaceOp::garbage;
        stamp(id(c), b, e, a);
    }

    /// The host wrote [off, off + bytes) of `c` before a program (Launcher::init_word): ordered
    /// before everything of that program, and no longer garbage.
    void host_write(const CoreState* c, uint32_t off, uint32_t bytes) {
        Lock l(*this);
        stamp(id(c), off, off + bytes, Access{});
    }

    // ---- the contract's operations (called by Hal) -------------------------------------------------
    void local_write(const CoreState* me, uint32_t off, uint32_t bytes, RaceOp op, const Loc& loc) {
        Lock l(*this);
        const uint32_t i = id(me);
        check_source_overwrite(i, off, bytes, op, loc);
        write(i, i, off, bytes, core_[i].vc, i, op, loc, nullptr);
        if (strict_ && op == RaceOp::local_store) {
            auto& u = core_[i].unfenced;
            if (u.size() == kMaxSources) u.erase(u.begin());
            u.push_back({off, off + bytes, 0, 0, loc.file_name(), loc.line()});
        }
    }
    /// l1_store_fence (N7): the core's stores to [off, off + bytes) are in L1.
    void store_fence(const CoreState* me, uint32_t off, uint32_t bytes) {
        Lock l(*this);
        std::erase_if(core_[id(me)].unfenced, [&](const Source& s) { return s.b < off + bytes && off < s.e; });
    }
    void local_read(const CoreState* me, uint32_t off, uint32_t bytes, RaceOp op, const Loc& loc, bool use) {
        Lock l(*this);
        const uint32_t i = id(me);
        read(i, i, off, bytes, core_[i].vc, i, op, loc, use);
    }
    void noc_write(const CoreState* me, uint32_t src, const CoreState* dst, uint32_t off, uint32_t bytes, const Loc& loc) {
        Lock l(*this);
        const uint32_t i = id(me), d = id(dst);
        read(i, i, src, bytes, core_[i].vc, i, RaceOp::noc_write_source, loc, false);
        if (strict_) check_unfenced_store(i, src, bytes, loc);
        auto& srcs = core_[i].sources;
        if (srcs.size() == kMaxSources) srcs.erase(srcs.begin());  // a core that never flushes: keep the latest
        srcs.push_back({src, src + bytes, d, off, loc.file_name(), loc.line()});
        const uint32_t ln = lane(i, 0, d);
        VClock& lv = issue(i, ln);
        if (strict_) {  // ordered after the earlier increments / inline writes to d
            auto it = lane_id_.find(lane_key(i, kAtomicLane, d));
            if (it != lane_id_.end()) lv.join(lanes_[it->second - base()].vc);
        }
        write(d, ln, off, bytes, lv, i, RaceOp::noc_write, loc, nullptr);
    }
    void noc_word(const CoreState* me, const CoreState* dst, uint32_t off, bool inc, const Loc& loc) {
        Lock l(*this);
        const uint32_t i = id(me), d = id(dst);
        const uint32_t ln = lane(i, strict_ ? kAtomicLane : 0, d);
        VClock& lv = issue(i, ln);
        const RaceOp op = inc ? RaceOp::sem_inc : RaceOp::inline_write;
        write(d, ln, off, 4, lv, i, op, loc, nullptr, /*war=*/false);
        VClock& s = sync_[key(d, off)];
        if (inc) s.join(lv);
        else s = lv;
    }
    void sem_set(const CoreState* me, uint32_t off, const Loc& loc) {
        Lock l(*this);
        const uint32_t i = id(me);
        check_source_overwrite(i, off, 4, RaceOp::sem_set, loc);
        write(i, i, off, 4, core_[i].vc, i, RaceOp::sem_set, loc, nullptr, /*war=*/false);
        sync_[key(i, off)] = core_[i].vc;
        core_[i].vc.tick(i);
    }
    /// A sem_read / sem_wait of `off` observed a value: acquire what produced it. `satisfied`: a
    /// wait returned (a use of the value: garbage is reported).
    void acquire(const CoreState* me, uint32_t off, bool satisfied, const Loc& loc) {
        Lock l(*this);
        const uint32_t i = id(me);
        auto it = sync_.find(key(i, off));
        if (it != sync_.end()) core_[i].vc.join(it->second);
        if (satisfied) read(i, i, off, 4, core_[i].vc, i, RaceOp::sem_wait, loc, true, /*sync=*/true);
    }
    void noc_read(const CoreState* me, const CoreState* src, uint32_t off, uint32_t dst, uint32_t bytes, const Loc& loc) {
        Lock l(*this);
        const uint32_t i = id(me), s = id(src);
        read(i, s, off, bytes, core_[i].vc, i, RaceOp::noc_read_source, loc, false);
        const uint32_t ln = lane(i, 1, 0);
        VClock& lv = issue(i, ln);
        check_source_overwrite(i, dst, bytes, RaceOp::noc_read, loc);
        write(i, ln, dst, bytes, lv, i, RaceOp::noc_read, loc, nullptr);
    }
    void eth_send(const CoreState* me, uint32_t q, uint32_t src, const CoreState* peer, uint32_t dst, uint32_t bytes,
                  const Loc& loc) {
        Lock l(*this);
        const uint32_t i = id(me), p = id(peer);
        read(i, i, src, bytes, core_[i].vc, i, RaceOp::eth_send_source, loc, false);
        const uint32_t ln = lane(i, 2 + q, 0);
        VClock& lv = issue(i, ln);
        write(p, ln, dst, bytes, lv, i, RaceOp::eth_send, loc, nullptr);
        for (uint32_t w = dst + bytes - 16; w < dst + bytes; w += 4) sync_[key(p, w)] = lv;
    }
    /// A multicast write (contract M1-M2): the source read once, a write at every destination on
    /// the multicast data lane of (me, destination), unordered with the core's other lanes to it
    /// until a flush or barrier joins them (writes_flushed).
    void mcast_write(const CoreState* me, uint32_t src, const std::vector<CoreState*>& dsts, uint32_t off,
                     uint32_t bytes, const Loc& loc) {
        Lock l(*this);
        const uint32_t i = id(me);
        read(i, i, src, bytes, core_[i].vc, i, RaceOp::noc_write_mcast_source, loc, false);
        if (strict_) check_unfenced_store(i, src, bytes, loc, RaceOp::noc_write_mcast);
        auto& srcs = core_[i].sources;
        for (const CoreState* dc : dsts) {
            const uint32_t d = id(dc);
            if (srcs.size() == kMaxSources) srcs.erase(srcs.begin());
            srcs.push_back({src, src + bytes, d, off, loc.file_name(), loc.line(), RaceOp::noc_write_mcast});
            const uint32_t ln = lane(i, kMcastData, d);
            VClock& lv = issue(i, ln);
            write(d, ln, off, bytes, lv, i, RaceOp::noc_write_mcast, loc, nullptr);
        }
    }
    /// A semaphore multicast (set or increment) at every destination, on the multicast word lane.
    /// A set sends the local word at `src`, which the NoC may read until the next flush (N3).
    void mcast_word(const CoreState* me, uint32_t src, const std::vector<CoreState*>& dsts, uint32_t off, bool inc,
                    const Loc& loc) {
        Lock l(*this);
        const uint32_t i = id(me);
        const RaceOp op = inc ? RaceOp::sem_inc_mcast : RaceOp::sem_set_mcast;
        if (strict_ && !inc) check_unfenced_store(i, src, 4, loc, op);  // the NoC reads the word at src (N7)
        for (const CoreState* dc : dsts) {
            const uint32_t d = id(dc);
            if (!inc) {
                auto& srcs = core_[i].sources;
                if (srcs.size() == kMaxSources) srcs.erase(srcs.begin());
                srcs.push_back({src, src + 4, d, off, loc.file_name(), loc.line(), RaceOp::sem_set_mcast});
            }
            const uint32_t ln = lane(i, kMcastWord, d);
            VClock& lv = issue(i, ln);
            write(d, ln, off, 4, lv, i, op, loc, nullptr, /*war=*/false);
            VClock& sv = sync_[key(d, off)];
            if (inc) sv.join(lv);
            else sv = lv;
        }
    }
    void write_barrier(const CoreState* me) {
        Lock l(*this);
        const uint32_t i = id(me);
        for (uint32_t ln : core_[i].write_lanes) core_[i].vc.join(lanes_[ln - base()].vc);
        core_[i].sources.clear();
    }
    void writes_flushed(const CoreState* me) {
        Lock l(*this);
        const uint32_t i = id(me);
        core_[i].sources.clear();
        join_lanes_per_destination(i);
        if (!strict_) return;
        // Strict: the writes issued so far are ordered before the later increments / inline
        // writes to the same core.
        const std::vector<uint32_t> lanes = core_[i].write_lanes;  // lane() may add to it
        for (uint32_t ln : lanes) {
            const Lane w = lanes_[ln - base()];
            if (w.kind != 0) continue;
            const uint32_t a = lane(i, kAtomicLane, w.dst);
            lanes_[a - base()].vc.join(w.vc);
        }
    }
    void read_barrier(const CoreState* me) {
        Lock l(*this);
        const uint32_t i = id(me);
        auto it = lane_id_.find(lane_key(i, 1, 0));
        if (it != lane_id_.end()) core_[i].vc.join(lanes_[it->second - base()].vc);
    }
    /// Program boundaries (the launcher): a core finished its kernel of `program`; a core starts
    /// its kernel of `program` (after every kernel of program - 1 on its chip has returned).
    void finished(const CoreState* me, uint32_t program) {
        Lock l(*this);
        chip_done_[(uint64_t(me->coord.chip) << 32) | program].join(core_[id(me)].vc);
    }
    void entering(const CoreState* me, uint32_t program) {
        Lock l(*this);
        const uint32_t i = id(me);
        if (program > 0) {
            auto it = chip_done_.find((uint64_t(me->coord.chip) << 32) | (program - 1));
            if (it != chip_done_.end()) core_[i].vc.join(it->second);
        }
        core_[i].vc.tick(i);
    }

    /// The reports so far (at most kMaxReports; `dropped()` more were found).
    std::vector<std::string> reports() const {
        Lock l(*this);
        return reports_;
    }
    size_t dropped() const {
        Lock l(*this);
        return dropped_;
    }

private:
    struct Read {
        uint32_t comp, clock, core;
        RaceOp op;
        const char* file;
        uint32_t line;
    };
    struct Seg {
        uint32_t end;
        Access w;
        std::vector<Read> reads;
    };
    struct Source {  ///< a NoC write's source range that it may still be reading (N3)
        uint32_t b, e, dst, dst_off;
        const char* file;
        uint32_t line;
        RaceOp op = RaceOp::noc_write;  ///< the operation reading it
    };
    struct Core {
        VClock vc;
        std::map<uint32_t, Seg> shadow;  ///< begin -> segment; the segments tile [0, mem_size)
        std::vector<uint32_t> write_lanes;
        std::vector<Source> sources;
        std::vector<Source> unfenced;  ///< strict, N7: stores (note_write) not yet fenced (l1_store_fence)
        bool has_mcast = false;        ///< the core has multicast lanes (writes_flushed joins them)
    };
    struct Lane {
        VClock vc;
        uint32_t kind = 0, dst = 0;  ///< the lane's kind (lane()) and destination core
    };
    /// Strict profile: the lane kind of increments and inline writes to one core.
    static constexpr uint32_t kAtomicLane = 0xff;
    /// Thread engine: a mutex. Fiber engine: one host thread, and the detector is engine
    /// bookkeeping every fiber touches (a fiber switch is not a happens-before edge for
    /// ThreadSanitizer): an ignore region, as the scheduler's own state. Never spans a switch.
    struct Lock {
        const RaceDetector& d;
        IgnoreScope ig;
        explicit Lock(const RaceDetector& r) : d(r) {
            if (d.threads_) d.mu_.lock();
        }
        ~Lock() {
            if (d.threads_) d.mu_.unlock();
        }
    };

    uint32_t id(const CoreState* c) const { return index_.at(c); }
    uint32_t base() const { return uint32_t(cores_.size()); }
    static uint64_t key(uint32_t core, uint32_t off) { return (uint64_t(core) << 32) | off; }
    static uint64_t lane_key(uint32_t core, uint32_t kind, uint32_t dst) {
        return (uint64_t(core) << 40) | (uint64_t(kind) << 32) | dst;
    }
    /// Lane kinds of multicast operations to one destination: data writes, semaphore words.
    static constexpr uint32_t kMcastData = 4, kMcastWord = 5;
    /// The lane of (core, kind, dst): kind 0 NoC writes to dst, 1 NoC reads, 2 + q tx queue q,
    /// kMcastData / kMcastWord multicasts to dst.
    uint32_t lane(uint32_t core, uint32_t kind, uint32_t dst) {
        auto [it, fresh] = lane_id_.try_emplace(lane_key(core, kind, dst), base() + uint32_t(lanes_.size()));
        if (fresh) {
            lanes_.push_back({VClock{}, kind, dst});
            if (kind == 0 || kind == kAtomicLane || kind == kMcastData || kind == kMcastWord)
                core_[core].write_lanes.push_back(it->second);
            if (kind == kMcastData || kind == kMcastWord) core_[core].has_mcast = true;
        }
        return it->second;
    }
    /// A flush (or barrier) orders every earlier write-like operation of core i before every later
    /// one to the same destination (M1): join the core's write lanes per destination. Nothing to
    /// do for a core that never multicast (its lane 0 per destination already orders them, N1).
    void join_lanes_per_destination(uint32_t i) {
        if (!core_[i].has_mcast) return;
        // Every destination gets all three lanes, so that an operation issued after the flush on
        // a lane that did not exist yet is ordered after what went before it too.
        std::vector<uint32_t> dsts;
        for (uint32_t ln : core_[i].write_lanes) dsts.push_back(lanes_[ln - base()].dst);
        std::sort(dsts.begin(), dsts.end());
        dsts.erase(std::unique(dsts.begin(), dsts.end()), dsts.end());
        for (uint32_t d : dsts)
            for (uint32_t kind : {0u, kMcastData, kMcastWord}) lane(i, kind, d);
        std::unordered_map<uint32_t, VClock> per_dst;
        for (uint32_t ln : core_[i].write_lanes) per_dst[lanes_[ln - base()].dst].join(lanes_[ln - base()].vc);
        for (uint32_t ln : core_[i].write_lanes) lanes_[ln - base()].vc = per_dst[lanes_[ln - base()].dst];
    }
    /// An asynchronous operation of core i on lane ln: ordered after everything before it in the
    /// core and on the lane.
    VClock& issue(uint32_t i, uint32_t ln) {
        VClock& lv = lanes_[ln - base()].vc;
        lv.join(core_[i].vc);
        lv.tick(ln);
        return lv;
    }

    /// Splits core c's shadow so that a segment starts at `at`.
    void split(Core& c, uint32_t at) {
        if (at >= cores_[&c - core_.data()]->mem_size) return;
        auto it = c.shadow.upper_bound(at);
        --it;
        if (it->first == at) return;
        Seg tail = it->second;
        it->second.end = at;
        c.shadow.emplace(at, std::move(tail));
    }
    void stamp(uint32_t c, uint32_t b, uint32_t e, const Access& a) {
        if (b >= e) return;
        Core& k = core_[c];
        split(k, b);
        split(k, e);
        auto first = k.shadow.find(b);
        auto last = k.shadow.lower_bound(e);
        k.shadow.erase(first, last);
        k.shadow.emplace(b, Seg{e, a, {}});
    }
    /// A write of [off, off + bytes) of core c by core `by`, on component `comp` with clock `v`.
    /// Every read since the last write must be ordered before it (`war`). The bytes are no longer
    /// garbage: a copy defines its destination, because the detector cannot tell whether its
    /// source was written by plain stores it does not see.
    void write(uint32_t c, uint32_t comp, uint32_t off, uint32_t bytes, const VClock& v, uint32_t by, RaceOp op,
               const Loc& loc, const void* /*unused*/, bool war = true) {
        if (bytes == 0) return;
        Core& k = core_[c];
        const uint32_t end = off + bytes;
        auto it = --k.shadow.upper_bound(off);
        for (; war && it != k.shadow.end() && it->first < end; ++it) {
            for (const Read& r : it->second.reads) {
                if (v.get(r.comp) >= r.clock) continue;
                const uint32_t rb = std::max(off, it->first), re = std::min(end, it->second.end);
                report("data race: " + name(by) + " " + to_string(op) + " at " + where(loc.file_name(), loc.line()) +
                       " writes " + range(c, rb, re) + ", which " + name(r.core) + " read (" + to_string(r.op) + " at " +
                       where(r.file, r.line) + ") with nothing ordering that read before this write: in another "
                       "schedule the read sees the new bytes");
                break;
            }
        }
        Access a;
        a.comp = comp;
        a.clock = v.get(comp);
        a.core = by;
        a.op = op;
        a.file = loc.file_name();
        a.line = loc.line();
        stamp(c, off, end, a);
    }
    /// A read of [off, off + bytes) of core c by core `by` with clock `v`. `use`: the value is
    /// used (garbage is reported). `sync`: a synchronisation word read atomically (sem_wait):
    /// checked for garbage only, not recorded.
    void read(uint32_t by, uint32_t c, uint32_t off, uint32_t bytes, const VClock& v, uint32_t comp_core, RaceOp op,
              const Loc& loc, bool use, bool sync = false) {
        if (bytes == 0) return;
        Core& k = core_[c];
        const uint32_t end = off + bytes;
        split(k, off);
        split(k, end);
        for (auto it = k.shadow.find(off); it != k.shadow.end() && it->first < end; ++it) {
            Seg& s = it->second;
            if (!sync && !s.w.ordered_before(v)) {
                report("data race: " + name(by) + " " + to_string(op) + " at " + where(loc.file_name(), loc.line()) +
                       " reads " + range(c, it->first, s.end) + ", last written by " + name(s.w.core) + " (" +
                       to_string(s.w.op) + " at " + where(s.w.file, s.w.line) + "), which the contract does not order "
                       "before this read" + hint(s.w));
            }
            if (use && s.w.garbage) {
                report("garbage used as data: " + name(by) + " " + to_string(op) + " at " + where(loc.file_name(), loc.line()) +
                       " uses " + range(c, it->first, s.end) + ", which nothing has written since the memory was made "
                       "dirty (hardware never zeroes L1: initialise it, or have the host write it)");
            }
            if (!sync && s.reads.size() < kMaxReads) s.reads.push_back({comp_core, v.get(comp_core), by, op, loc.file_name(), loc.line()});
        }
    }
    /// A write into core i's [off, off + bytes) while one of its NoC writes may still be reading
    /// it as its source (N3).
    void check_source_overwrite(uint32_t i, uint32_t off, uint32_t bytes, RaceOp op, const Loc& loc) {
        for (const Source& s : core_[i].sources) {
            if (off >= s.e || off + bytes <= s.b) continue;
            report("source overwritten in flight: " + name(i) + " " + to_string(op) + " at " + where(loc.file_name(), loc.line()) +
                   " writes " + range(i, std::max(off, s.b), std::min(off + bytes, s.e)) + ", the source of its " + to_string(s.op) + " at " +
                   where(s.file, s.line) + " to " + name(s.dst) + " " + hexs(s.dst_off) +
                   ", which may still be reading it (N3: call noc_writes_flushed() or noc_write_barrier() first)");
            return;
        }
    }
    /// N7 (strict): a NoC write (noc_write, noc_write_mcast, or sem_set_mcast's word: `op`) of
    /// core i reads as its source bytes the core stored without a fence.
    void check_unfenced_store(uint32_t i, uint32_t src, uint32_t bytes, const Loc& loc, RaceOp op = RaceOp::noc_write) {
        for (const Source& s : core_[i].unfenced) {
            if (src >= s.e || src + bytes <= s.b) continue;
            report("store not fenced: " + name(i) + " " + to_string(op) + " at " + where(loc.file_name(), loc.line()) + " reads as its source " +
                   range(i, std::max(src, s.b), std::min(src + bytes, s.e)) + ", which it stored (note_write at " +
                   where(s.file, s.line) + ") with no l1_store_fence() since: the NoC may read the value from before "
                   "the store (N7, strict profile)");
            return;
        }
    }
    std::string hint(const Access& w) const {
        switch (w.op) {
            case RaceOp::noc_write:
                return strict_ ? " (a NoC write is ordered only before later writes of its core to the same destination, "
                                 "before later increments and inline writes to it only across a noc_writes_flushed() "
                                 "(N1, strict profile), or after a noc_write_barrier() (N2))"
                               : " (a NoC write is ordered only before later operations of its core to the same destination "
                                 "(N1), or after a noc_write_barrier() (N2))";
            case RaceOp::noc_read: return " (a noc_read's data is valid only after noc_read_barrier(), N4)";
            case RaceOp::noc_write_mcast:
            case RaceOp::sem_set_mcast:
            case RaceOp::sem_inc_mcast:
                return " (a multicast is ordered with nothing else its core issues, not even with a semaphore "
                       "multicast to the same cores, unless a noc_writes_flushed() or noc_write_barrier() separates "
                       "them (M1))";
            case RaceOp::eth_send:
                return " (an eth_send's bytes are ordered before a reader that polled the last 16-byte word of that "
                       "send, E3)";
            default: return {};
        }
    }
    std::string name(uint32_t i) const { return i < cores_.size() ? cores_[i]->name() : std::string("the host"); }
    static std::string hexs(uint64_t v) {
        char b[24];
        std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
        return b;
    }
    std::string range(uint32_t c, uint32_t b, uint32_t e) const {
        return "L1 [" + hexs(b) + ", " + hexs(e) + ") of " + name(c);
    }
    static std::string where(const char* file, uint32_t line) {
        if (!file) return "?";
        std::string f = file;
        const size_t p = f.rfind('/');
        return (p == std::string::npos ? f : f.substr(p + 1)) + ":" + std::to_string(line);
    }
    void report(std::string s) {
        for (const auto& r : reports_)
            if (r == s) return;
        if (reports_.size() >= kMaxReports) {
            ++dropped_;
            return;
        }
        reports_.push_back(std::move(s));
    }

    std::vector<CoreState*> cores_;
    bool threads_;
    bool strict_;
    mutable std::mutex mu_;
    std::unordered_map<const CoreState*, uint32_t> index_;
    std::vector<Core> core_;
    std::vector<Lane> lanes_;
    std::unordered_map<uint64_t, uint32_t> lane_id_;
    std::unordered_map<uint64_t, VClock> sync_;
    std::unordered_map<uint64_t, VClock> chip_done_;  ///< (chip, program) -> join of its finished cores
    std::vector<std::string> reports_;
    size_t dropped_ = 0;
};

}  // namespace detail
}  // namespace kccl::emu
