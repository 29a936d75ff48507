// kccl/emulation/wafer/wafer.hpp — the routed PE fabric (include/wafer/) emulated cycle-exactly
// on the timed fiber engine.
//
// WHAT IT MODELS (the performance model of the Cerebras WSE reduce/allreduce thesis, chapter 3)
//   * A PE issues one wavelet per cycle (T_send = 1) and stores one per cycle (T_store = 1); its
//     operations are sequential (send, recv and relay block).
//   * The on-ramp and the off-ramp take T_R cycles; router to neighbouring router takes 1 cycle.
//   * A color crosses a router at most one wavelet per cycle, and a link direction carries one
//     wavelet per cycle whatever its color: a stream meeting cycles taken by another color's
//     stream on a link moves to the next free ones. Streams are served in the order they are
//     walked, which is the order they start in (PEs run earliest clock first, PEs of one clock
//     in row-major order, in program mode and on the fiber engine alike): the stream first
//     emitted, ties to the source first in row-major order, as the reference simulator
//     arbitrates. A relay's stream starts when its first element is sent (its PE waits for
//     that cycle before walking it). A stream that will wait for a switch position (on a single
//     path, no delivery before it) parks there at once and takes no link cycles on its way: its
//     wavelets stall there without delaying other colors' streams, which the thesis's pre-order
//     trees need (a later child's stream crosses the links of the earlier children's subtrees).
//     The on-ramp carries one
//     per cycle since the processor is sequential; off-ramp deliveries of different colors are
//     not arbitrated (the thesis's model does not charge for it).
//   * A received wavelet waits at the processor (its input queue) until the PE consumes it.
//     Bounded buffering (program mode and fibers alike): a stream may have at most
//     router_queue_wavelets (the profile's; 1 in adversarial mode) per router it has reached in
//     the fabric, unconsumed; beyond that its sender blocks (after issuing it) until receives
//     drain it. Blocking costs no cycle (the model has no stalls): it orders the sender's next
//     step after that receive, so a pattern relying on more buffering deadlocks.
//   * `advance` costs nothing on the issuing PE and no link slot (the thesis's model charges none):
//     it acts at each router right after the route's last earlier wavelet has passed it, so a
//     stream waiting there passes one cycle after that wavelet.
//   So T_message(P, B) = 2 T_R + P + B, T_visit adds 2 T_R + 1 per relaying PE, and a relayed
//   chain reduce runs at 1 cycle per element plus 2 (P-1)(T_R+1) (tests/fabric/).
//
// HOW
//   Only PEs that run a kernel are fibers (the engine's timed policy: the earliest core runs
//   first). Every device call first lets every core and event behind its clock catch up
//   (Scheduler::sync), then acts at its clock. A stream (one send or relay output) walks its
//   route once, at the sender's clock, carrying per-wavelet times: at each router the times are
//   pushed back to keep one wavelet per cycle on the color, copies follow every tx direction
//   (multicast), and the RAMP delivers them into the PE's input queue for the color. A stream
//   arriving at a router whose current switch position does not accept its direction parks
//   there (in order) and resumes when an advance on the color reaches that router. Intermediate
//   routers run no code. Times are runs of consecutive cycles (TimeRun): a stream's times strictly
//   increase, so the work per router crossed is per run, not per wavelet.
//   Program mode: when every PE was launched with launch_program (a step program of
//   wafer/program.hpp), run() executes the programs without fibers, in the timed engine's order
//   (earliest ready PE first, ties by readiness; a running PE goes on unless a ready one is
//   strictly earlier; a waiting PE is readied by the delivery it needs, at the deliverer's clock):
//   the same cycles, streams, results and reports, at a PE's memory and a few words of state.
//
// ERRORS (WaferError; the run stops, every other PE is released)
//   * two inputs overlapping on one color at one router (rx sets of several directions): the
//     PE, the color, the cycle and both directions;
//   * a deadlock (no PE can run and no stream can move): every blocked PE with the color it
//     waits on and how many wavelets it has (a sender blocked by back-pressure: its color, how
//     much of its stream is in the fabric against what it holds, and where it waits), every parked stream with its router, color,
//     direction and the position that would accept it;
//   * at the end: wavelets delivered but never received, streams still parked;
//   * a kernel's own exception (bad memory offset, bad color), named with its PE.
//
// Under ThreadSanitizer every fiber is its own TSan context (races between PEs are reported);
// the fabric's own state (routers, queues, the error), shared by the PEs' fibers on one host
// thread, is accessed in TSan ignore regions that never span a fiber switch, as the engine's is.
//
// Host-only (C++20).
#pragma once

#include "../engine/scheduler.hpp"
#include "../timing.hpp"

#include <wafer/wafer.hpp>
#include <wafer/host/grid.hpp>
#include <wafer/program.hpp>

#include <algorithm>

#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace kccl::emu::wafer {

using kccl::wafer::Combine;
using kccl::wafer::Route;
using kccl::wafer::host::to_string;
using kccl::wafer::host::dir_word;
using kccl::wafer::host::DirSet;
using kccl::wafer::host::Grid;
using kccl::wafer::host::router_dirs;

struct WaferError : EmulationError {
    using EmulationError::EmulationError;
};

struct RunResult {
    vtime_t cycles = 0;        ///< when the last PE finished its kernel
    double wall_seconds = 0;   ///< host time of the run
    uint64_t streams = 0;      ///< streams walked (sends, relay outputs, advances)
    uint64_t blocked = 0;      ///< sends, relays and exchanges that blocked on a full fabric (back-pressure)
};

struct FabricOptions {
    uint64_t seed = 1;            ///< garbage in PE memory (hardware never zeroes it)
    size_t stack_size = 64 * 1024;
    size_t guarded_pes_max = 16384;  ///< up to this many PEs, every stack has a guard region (as RunOptions)
    /// Adversarial mode: router queues of one wavelet (instead of the profile's
    /// router_queue_wavelets), in program mode and for fibers; in program mode also PEs ready in
    /// the same cycle run in an order drawn from order_seed (fibers keep the timed engine's
    /// order), so a pattern relying on more buffering or on an order the promises do not give
    /// deadlocks or computes a wrong result.
    bool adversarial = false;
    uint64_t order_seed = 1;
};

class Fabric;

/// Times of consecutive wavelets as runs of consecutive cycles: {t0, n} is t0, t0 + 1, ...,
/// t0 + n - 1. Every stream's times strictly increase (one wavelet per cycle at most), so a
/// stream sent or relayed without stalls is one run whatever its length, and the fabric's work
/// per router crossed is per run, not per wavelet.
struct TimeRun {
    vtime_t t0 = 0;
    uint32_t n = 0;
};
struct Times {
    std::vector<TimeRun> r;
    size_t count() const {
        size_t c = 0;
        for (const auto& x : r) c += x.n;
        return c;
    }
    bool empty() const { return r.empty(); }
    vtime_t first() const { return r.front().t0; }
    vtime_t last() const { return r.back().t0 + r.back().n - 1; }
    void push(vtime_t t0, uint32_t n) {
        if (n == 0) return;
        if (!r.empty() && r.back().t0 + r.back().n == t0) r.back().n += n;
        else r.push_back(TimeRun{t0, n});
    }
    void shift(vtime_t d) {
        for (auto& x : r) x.t0 += d;
    }
    /// The times of a sequence that keeps one element per cycle and may not start before `lo`:
    /// s_k = max(t_k, s_{k-1} + 1), s_{-1} = lo - 1. Exact for any times (a queue may hold
    /// streams out of time order); per run, since within a run max(x, t0 + j) = max(x, t0) + j.
    void not_before(vtime_t lo) {
        if (!r.empty() && r.front().t0 >= lo) {  // the common case: nothing waits
            bool ordered = true;
            for (size_t i = 1; i < r.size() && ordered; ++i) ordered = r[i].t0 >= r[i - 1].t0 + r[i - 1].n;
            if (ordered) return;
        }
        Times out;
        vtime_t x = lo;
        for (const TimeRun& q : r) {
            const vtime_t s = std::max(x, q.t0);
            out.push(s, q.n);
            x = s + q.n;
        }
        r.swap(out.r);
    }
};

/// out[k] = combine(a[k], b[k]) for k < n, the operator's switch outside the loop; the element
/// loops are the collectives' (Reducer::combine: 16 bytes at a time where the host has SIMD, the
/// same result per element as wafer::combine_word). out may equal a or b, never overlap partly.
template <class T>
inline void combine_span_as(kccl::coll::RedOp op, uint32_t* out, const uint32_t* a, const uint32_t* b, uint32_t n) {
    T* o = reinterpret_cast<T*>(out);
    const T* x = reinterpret_cast<const T*>(a);
    const T* y = reinterpret_cast<const T*>(b);
    switch (op) {
        case kccl::coll::RedOp::sum: kccl::coll::Reducer<T, kccl::coll::RedOp::sum>::combine(o, x, y, n); return;
        case kccl::coll::RedOp::max: kccl::coll::Reducer<T, kccl::coll::RedOp::max>::combine(o, x, y, n); return;
        case kccl::coll::RedOp::min: kccl::coll::Reducer<T, kccl::coll::RedOp::min>::combine(o, x, y, n); return;
        default:  // kCopy
            if (n) std::memmove(out, b, size_t(n) * 4);  // n == 0 may come with null spans
            return;
    }
}
inline void combine_span(Combine c, uint32_t* out, const uint32_t* a, const uint32_t* b, uint32_t n) {
    switch (c.type) {
        case kccl::coll::DataType::f32: combine_span_as<float>(c.op, out, a, b, n); return;
        case kccl::coll::DataType::i32: combine_span_as<int32_t>(c.op, out, a, b, n); return;
        case kccl::coll::DataType::u32: combine_span_as<uint32_t>(c.op, out, a, b, n); return;
        default: return;  // the wafer combines 4-byte types only (wafer::supports)
    }
}

/// The device API's backend on one PE (kccl::wafer's F).
class Pe {
public:
    uint32_t x() const { return at_.x; }
    uint32_t y() const { return at_.y; }
    uint32_t arg(uint32_t i) const;
    uint8_t* mem(uint32_t offset, uint32_t bytes);
    template <class T>
    T* ptr(uint32_t offset, uint32_t n) {
        return reinterpret_cast<T*>(mem(offset, n * uint32_t(sizeof(T))));
    }
    void fabric_send(Route r, const uint32_t* src, uint32_t n);
    void fabric_recv(Route r, uint32_t* dst, uint32_t n, Combine c);
    void fabric_relay(Route in, Route out, const uint32_t* local, uint32_t n, Combine c);
    void fabric_advance(Route r);
    void fabric_exchange(Route out, const uint32_t* src, uint32_t n_out, Route in, uint32_t* dst, uint32_t n_in, Combine c);
    vtime_t now() const;

private:
    friend class Fabric;
    Fabric* f_ = nullptr;
    Coord at_;
    uint32_t index_ = 0;
    std::vector<uint32_t> args_;
    std::unique_ptr<uint8_t[]> mem_;  ///< not zeroed: launch fills it with garbage
    uint32_t mem_size_ = 0;
    std::function<void(Pe&)> body_;
    std::unique_ptr<detail::CoreState> st_;
    // Waiting state (for the deadlock report).
    int32_t wait_color = -1;
    uint32_t wait_need = 0;
    const char* wait_what = "";
    bool done = false;
    vtime_t finish = 0;
    // Program mode (launch_program, run without fibers): the step to run, the PE's clock, and
    // the state of a step that waits (stalled_; its start cycle; an exchange's send already issued).
    bool program_ = false;
    bool retry_ = false, exch_sent_ = false, stalled_ = false;
    int64_t blocked_sid_ = -1;  ///< blocked (back-pressure) until this stream drains
    int64_t exch_sid_ = -1;     ///< the running exchange's send stream (-1: none)
    uint32_t pc_ = 0;
    vtime_t clock_ = 0, step_c_ = 0;
};

class Fabric {
public:
    explicit Fabric(const Grid& g, FabricOptions o = {}) : g_(g), o_(o) { g_.validate(); }
    explicit Fabric(Grid&& g, FabricOptions o = {}) : g_(std::move(g)), o_(o) { g_.validate(); }
    Fabric(const Fabric&) = delete;
    Fabric& operator=(const Fabric&) = delete;

    const Grid& grid() const { return g_; }

    /// Runs `body` on `pe` with kernel arguments `args`; its local memory is grid().memory(pe)
    /// bytes (at least `min_mem`), filled with garbage. Returns the PE (for host access).
    Pe& launch(Coord pe, std::vector<uint32_t> args, std::function<void(Pe&)> body, uint32_t min_mem = 0) {
        if (!g_.contains(pe)) throw WaferError("fabric: launch on PE " + to_string(pe) + ", outside the grid");
        const size_t key = idx(pe);
        if (pe_of_.count(key)) throw WaferError("fabric: PE " + to_string(pe) + " already runs a kernel");
        auto p = std::make_unique<Pe>();
        p->f_ = this;
        p->at_ = pe;
        p->index_ = uint32_t(pes_.size());
        p->args_ = std::move(args);
        p->body_ = std::move(body);
        const uint32_t bytes = std::max(g_.memory(pe), min_mem);
        if (bytes > g_.profile().pe_mem_bytes)
            throw WaferError("fabric: PE " + to_string(pe) + " needs " + std::to_string(bytes) + " bytes of memory; " + g_.profile().name + " has " +
                              std::to_string(g_.profile().pe_mem_bytes) + " per PE");
        p->mem_.reset(new uint8_t[bytes]);
        p->mem_size_ = bytes;
        uint64_t s = o_.seed ^ (uint64_t(pe.x) << 32) ^ (uint64_t(pe.y) << 8) ^ 0x9E3779B97F4A7C15ull;
        // Garbage (hardware never zeroes PE memory): word k is a mix of the PE's seed and k, with
        // no dependency between words, so the fill runs at memory speed.
        uint8_t* const m = p->mem_.get();  // (a local: stores through uint8_t* could alias p's members)
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        size_t i = 0;
        for (; i + 8 <= bytes; i += 8) {
            uint64_t w = s + i * 0x9E3779B97F4A7C15ull;
            w ^= w >> 29;
            std::memcpy(m + i, &w, 8);
        }
        if (i < bytes) std::memcpy(m + i, &s, bytes - i);
        pe_of_[key] = uint32_t(pes_.size());
        pes_.push_back(std::move(p));
        return *pes_.back();
    }
    /// Runs the step program in `args` (include/wafer/program.hpp) on `pe`. When every PE runs
    /// a program, run() executes them without fibers (a PE then costs its memory and its state,
    /// not a stack), in the order the timed fiber engine would; otherwise as run_steps kernels.
    Pe& launch_program(Coord pe, std::vector<uint32_t> args, uint32_t min_mem = 0) {
        Pe& p = launch(pe, std::move(args), [](Pe& q) { kccl::wafer::run_steps(q); }, min_mem);
        p.program_ = true;
        return p;
    }
    Pe* pe(Coord c) {
        auto it = pe_of_.find(idx(c));
        return it == pe_of_.end() ? nullptr : pes_[it->second].get();
    }

    RunResult run() {
        const auto t0 = std::chrono::steady_clock::now();
        bool programs = !pes_.empty();
        for (auto& p : pes_) programs = programs && p->program_;
        if (programs) {
            run_programs();
            return finish_run(t0);
        }
        WaferModel model;  // the scheduler's timed policy needs a model; the fabric keeps its own times
        // Guarded stacks take two kernel mappings each (vm.max_map_count is 65530 by default):
        // beyond FabricOptions::guarded_pes_max PEs the stacks are carved from shared mappings.
        ScheduleOptions so;
        so.ties_by_index = true;  // PEs of one clock in row-major order, as in program mode
        detail::Scheduler sched(so, o_.stack_size, &model, pes_.size() <= o_.guarded_pes_max);
        sched_ = &sched;
        std::vector<Pe*> order;
        for (auto& p : pes_) order.push_back(p.get());
        std::sort(order.begin(), order.end(), [&](const Pe* a, const Pe* b) { return idx(a->at_) < idx(b->at_); });
        for (Pe* p : order) {
            p->st_ = std::make_unique<detail::CoreState>();
            p->st_->coord = CoreCoord{0, p->at_.x, p->at_.y};
            p->st_->mem = p->mem_.get();
            p->st_->mem_size = p->mem_size_;
            Pe* pp = p;
            sched.add(p->st_.get(), [this, pp] { body(*pp); });
        }
        sched.run([&] { return on_idle(); });
        sched_ = nullptr;
        return finish_run(t0);
    }

private:
    friend class Pe;
    struct Abort {};

    RunResult finish_run(std::chrono::steady_clock::time_point t0) {
        RunResult r;
        for (auto& p : pes_) r.cycles = std::max(r.cycles, p->finish);
        r.streams = streams_;
        r.blocked = blocked_;
        r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!error_.empty()) throw WaferError(error_);
        check_leftovers();
        return r;
    }

    // ---- program mode: every PE a step program, no fibers ---------------------------------
    // The timed fiber engine's order, reproduced: the ready PE with the earliest clock runs
    // (ties: the one readied first); a running PE goes on with its next step unless a ready PE
    // is strictly earlier; a PE that must wait is readied by the delivery that satisfies it,
    // its clock raised to the deliverer's.
    struct Ready {
        vtime_t clock;
        uint64_t pos;  ///< ties: the PE first in row-major order (adversarial: 0, the seeded seq decides)
        uint64_t seq;
        uint32_t index;
    };
    static bool later(const Ready& a, const Ready& b) {
        return a.clock != b.clock ? a.clock > b.clock : a.pos != b.pos ? a.pos > b.pos : a.seq > b.seq;
    }
    uint64_t tie_pos(const Pe& p) const { return o_.adversarial ? 0 : uint64_t(idx(p.at_)); }
    void make_ready(Pe& p) {
        uint64_t seq = ready_seq_++;
        if (o_.adversarial) {  // same-cycle PEs in a seeded order (the promises give none)
            uint64_t z = seq + o_.order_seed * 0x9E3779B97F4A7C15ull;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            seq = z ^ (z >> 31);
        }
        ready_.push_back(Ready{p.clock_, tie_pos(p), seq, p.index_});
        std::push_heap(ready_.begin(), ready_.end(), later);
    }
    void run_programs() {
        ready_.clear();
        for (auto& p : pes_) make_ready(*p);
        size_t live = pes_.size();
        while (live && error_.empty()) {
            if (ready_.empty()) {
                on_idle();
                break;
            }
            std::pop_heap(ready_.begin(), ready_.end(), later);
            Pe& p = *pes_[ready_.back().index];
            ready_.pop_back();
            cur_ = &p;
            for (;;) {
                bool ran = false;
                try {
                    if (p.pc_ == p.arg(1)) {
                        p.done = true;
                        p.finish = p.clock_;
                        --live;
                        break;
                    }
                    ran = program_step(p);
                } catch (std::exception& e) {
                    std::string what = e.what();
                    if (what.rfind("fabric: ", 0) == 0) what = what.substr(8);
                    fail("fabric: PE " + to_string(p.at_) + ": " + what);
                    break;
                }
                if (!ran) break;  // waits: readied by a delivery
                if (!ready_.empty() && (ready_.front().clock < p.clock_ || (ready_.front().clock == p.clock_ && ready_.front().pos < tie_pos(p)))) {
                    make_ready(p);
                    break;
                }
            }
            cur_ = nullptr;
        }
    }
    /// Runs p's current step with the device verbs (wafer/program.hpp run_step, the kernel's
    /// own interpreter); false if it must wait: for wavelets (readied by the delivery that brings
    /// them, it runs the step again from the cycle it started) or for back-pressure (readied by
    /// the receive that drains the stream; the step is done).
    bool program_step(Pe& p) {
        p.stalled_ = false;
        kccl::wafer::run_step(p, p.pc_);
        return !p.stalled_;
    }
    /// Program mode: p is about to walk a stream that starts in cycle s0 (its first element
    /// issued; a send starts at the PE's clock, a relay when its first element has arrived). If
    /// a ready PE is earlier than s0 (or as early and before p in row-major order), p's clock
    /// moves to s0 and p is readied behind it: true (p runs the step again from its start cycle).
    bool later_start(Pe& p, vtime_t s0) {
        if (s0 <= p.clock_ || ready_.empty()) return false;
        const Ready& f = ready_.front();
        if (!(f.clock < s0 || (f.clock == s0 && f.pos < tie_pos(p)))) return false;
        p.clock_ = s0;
        make_ready(p);
        return true;
    }
    vtime_t clock_of(const Pe& p) const { return sched_ ? sched_->clock_of(p.st_.get()) : p.clock_; }

    // A stream at a router: shared words, its own per-wavelet times (arrival at this router).
    struct Item {
        std::shared_ptr<const std::vector<uint32_t>> words;  ///< null: an advance marker
        Times t;                                             ///< per wavelet (marker: one time)
        Dir from = Dir::ramp;
        Coord src;                                           ///< the PE that sent it
        uint32_t sid = 0;                                    ///< the stream (Acct index; data only)
    };
    /// A data stream's wavelets still in the fabric (parked, queued at a router, or delivered
    /// and not yet received; a multicast counts each copy) and the routers it has reached.
    struct Acct {
        uint64_t pending = 0;
        uint64_t routers = 0;
        int64_t blocked = -1;  ///< the sending PE, blocked until pending fits
        uint32_t color = 0;
    };
    struct Interval {
        vtime_t first = 0, last = 0;
        bool used = false;
    };
    struct Router {
        uint32_t pos = 0;
        vtime_t min_pass = 0;                 ///< the current position accepts from this cycle on
        vtime_t last_pass[kccl::wafer::host::dir_count] = {};
        bool passed[kccl::wafer::host::dir_count] = {};
        Interval last[kccl::wafer::host::dir_count];
        std::vector<Item> parked;  ///< (a vector: most routers never park anything, and an empty one allocates nothing)
    };
    struct Queue {  // a PE's input queue for one color
        std::vector<uint32_t> w;
        std::vector<TimeRun> t;  ///< the times of w[head..] from t[th] on (t[th] partly consumed)
        size_t th = 0;
        size_t head = 0;
        std::vector<std::pair<uint32_t, uint32_t>> s;  ///< the streams of w[head..]: runs of (stream, count) from s[sh] on
        size_t sh = 0;
        size_t avail() const { return w.size() - head; }
        /// The times of the next n wavelets, removed from the queue's times (w is consumed by
        /// the caller, which advances head).
        Times take(uint32_t n) {
            Times out;
            while (n) {
                TimeRun& f = t[th];
                const uint32_t m = std::min(n, f.n);
                out.push(f.t0, m);
                f.t0 += m;
                f.n -= m;
                n -= m;
                if (f.n == 0) ++th;
            }
            return out;
        }
    };

    size_t idx(Coord c) const { return size_t(c.y) * g_.width() + c.x; }
    uint64_t rkey(Coord c, uint32_t color) const { return uint64_t(idx(c)) * g_.profile().colors + color; }

    void body(Pe& p) {
        try {
            p.body_(p);
        } catch (Abort&) {
        } catch (std::exception& e) {
            std::string what = e.what();
            if (what.rfind("fabric: ", 0) == 0) what = what.substr(8);
            fail("fabric: PE " + to_string(p.at_) + ": " + what);
        }
        [[maybe_unused]] detail::IgnoreScope ig;
        p.done = true;
        p.finish = clock_of(p);
    }
    void fail(const std::string& msg) {
        [[maybe_unused]] detail::IgnoreScope ig;
        if (error_.empty()) error_ = msg;
        if (sched_) sched_->wake_all();
    }
    bool on_idle() {
        [[maybe_unused]] detail::IgnoreScope ig;
        if (error_.empty()) {
            std::string s = "fabric: deadlock: no PE can run and no stream can move.";
            for (auto& p : pes_)
                if (!p->done && p->blocked_sid_ >= 0) {
                    const Acct& a = acct_[size_t(p->blocked_sid_)];
                    s += "\n  PE " + to_string(p->at_) + " blocked sending on color " + std::to_string(a.color) + " at cycle " + std::to_string(clock_of(*p)) +
                         ": " + std::to_string(a.pending) + " wavelets of its stream are in the fabric, which holds " + std::to_string(holds(a)) + " (" +
                         std::to_string(queue_bound()) + " per router queue, " + std::to_string(a.routers) + " routers); it waits for a receive of them" +
                         holders(uint32_t(p->blocked_sid_));
                } else if (!p->done)
                    s += "\n  PE " + to_string(p->at_) + " blocked in " + p->wait_what + " on color " + std::to_string(p->wait_color) + " at cycle " +
                         std::to_string(clock_of(*p)) + ": needs " + std::to_string(p->wait_need) + " wavelets, has " +
                         std::to_string(queue_avail(p->at_, uint32_t(p->wait_color)));
            describe_parked(s);
            error_ = s;
        }
        if (sched_) sched_->wake_all();
        return true;
    }
    /// Where stream sid's delivered wavelets wait to be received (for the deadlock report).
    std::string holders(uint32_t sid) {
        std::string s;
        for (auto& [k, q] : queues_) {
            uint64_t n = 0;
            for (size_t i = q.sh; i < q.s.size(); ++i) n += q.s[i].first == sid ? q.s[i].second : 0;
            if (!n) continue;
            const uint32_t color = uint32_t(k % g_.profile().colors);
            const Coord c{uint32_t(k / g_.profile().colors % g_.width()), uint32_t(k / g_.profile().colors / g_.width())};
            s += (s.empty() ? " (" : ", ") + std::to_string(n) + " at PE " + to_string(c) + " on color " + std::to_string(color);
        }
        return s.empty() ? s : s + ")";
    }
    size_t queue_avail(Coord c, uint32_t color) {
        auto it = queues_.find(rkey(c, color));
        return it == queues_.end() ? 0 : it->second.avail();
    }
    void describe_parked(std::string& s) {
        for (auto& [k, r] : routers_) {
            const uint32_t color = uint32_t(k % g_.profile().colors);
            const Coord c{uint32_t(k / g_.profile().colors % g_.width()), uint32_t(k / g_.profile().colors / g_.width())};
            for (auto& it : r.parked) {
                const auto* cc = g_.config(c, color);
                s += "\n  stream from PE " + to_string(it.src) + (it.words ? " (" + std::to_string(it.t.count()) + " wavelets)" : " (an advance)") +
                     " parked at router " + to_string(c) + " color " + std::to_string(color) + ": it arrives from " + dir_word(it.from) + ", position " +
                     std::to_string(r.pos) + " accepts " + (cc ? cc->pos[r.pos].rx.str() : std::string("nothing (no configuration)"));
            }
        }
    }
    void check_leftovers() {
        std::string s;
        for (auto& [k, q] : queues_)
            if (q.avail()) {
                const uint32_t color = uint32_t(k % g_.profile().colors);
                const Coord c{uint32_t(k / g_.profile().colors % g_.width()), uint32_t(k / g_.profile().colors / g_.width())};
                s += "\n  " + std::to_string(q.avail()) + " wavelets delivered to PE " + to_string(c) + " on color " + std::to_string(color) +
                     (pe_of_.count(idx(c)) ? " were never received" : ", which runs no kernel");
            }
        std::string parked;
        describe_parked(parked);
        s += parked;
        if (!s.empty()) throw WaferError("fabric: the run ended with data left in the fabric:" + s);
    }

    Router& router(Coord c, uint32_t color) { return routers_[rkey(c, color)]; }
    static bool accepts(const kccl::wafer::host::ColorConfig* cc, const Router& r, Dir d) { return cc && cc->pos[r.pos].rx.has(d); }

    /// Walks `it` (arriving at router `c` on `color`) and everything it releases.
    void walk(Coord c0, uint32_t color, Item it0) {
        [[maybe_unused]] detail::IgnoreScope ig;  // the fabric's state is shared by all PEs (one host thread)
        struct Work {
            Coord c;
            Item it;
            bool resume = false;  ///< re-examine c's parked queue (after an advance)
        };
        std::deque<Work> work;
        work.push_back({c0, std::move(it0)});
        const uint32_t t_r = g_.profile().t_r, hop = g_.profile().hop_cycles;
        while (!work.empty()) {
            Work wk = std::move(work.front());
            work.pop_front();
            const Coord c = wk.c;
            Router& r = router(c, color);
            const auto* cc = g_.config(c, color);
            if (wk.resume) {
                // Release, in order, parked items the current position accepts (an item waits
                // behind an earlier one from its own direction).
                uint8_t blocked = 0;
                for (size_t i = 0; i < r.parked.size();) {
                    Item& p = r.parked[i];
                    const uint8_t bit = uint8_t(1u << uint32_t(p.from));
                    if (!(blocked & bit) && accepts(cc, r, p.from)) {
                        Item x = std::move(p);
                        r.parked.erase(r.parked.begin() + long(i));
                        const bool marker = !x.words;
                        pass(c, color, r, cc, std::move(x), work, t_r, hop);
                        if (marker) {  // the position changed again: start over
                            work.push_front({c, Item{}, true});
                            break;
                        }
                        continue;
                    }
                    blocked = uint8_t(blocked | bit);
                    ++i;
                }
                continue;
            }
            Item& it = wk.it;
            if (it.words && park_ahead(c, color, it, hop)) continue;
            if (it.words) ++acct_[it.sid].routers;
            bool behind = false;
            for (auto& p : r.parked) behind = behind || p.from == it.from;
            if (behind || !accepts(cc, r, it.from)) {
                r.parked.push_back(std::move(it));
                continue;
            }
            const bool marker = !it.words;
            pass(c, color, r, cc, std::move(it), work, t_r, hop);
            if (marker && !r.parked.empty()) work.push_front({c, Item{}, true});
        }
    }

    /// A data stream arriving at router c that, along its single path (one link out of every
    /// router, no delivery on the way), reaches a router whose position does not accept it yet
    /// (or where an earlier stream from its direction waits) parks there at once: it takes no
    /// link cycles and leaves no trace in the routers before it, and reaches the parking router
    /// at its times plus the hops, pushed back only by each router's own position and color
    /// order. Its wavelets wait there for the advance (the thesis's "all other wavelets will
    /// stall"); on the way they yield every link to the streams of other colors that are not
    /// waiting, as the thesis's pre-order trees need (a later child's stream, which its parent
    /// takes only after the earlier children, crosses their subtrees' links; the reference
    /// simulator orders those streams by key, the earlier child's first). True if it parked.
    bool park_ahead(Coord c, uint32_t color, Item& it, uint32_t hop) {
        Coord at = c;
        Dir from = it.from;
        Times t = it.t;
        uint32_t hops = 0;
        for (;;) {
            Router& r = router(at, color);
            const auto* cc = g_.config(at, color);
            bool behind = false;
            for (auto& p : r.parked) behind = behind || p.from == from;
            if (behind || !accepts(cc, r, from)) break;
            const DirSet tx = cc->pos[r.pos].tx;
            if (tx.size() != 1 || tx.has(Dir::ramp)) return false;  // delivered or copied here: walked as usual
            Dir out = Dir::ramp;
            for (uint32_t k = 0; k < 4; ++k)
                if (tx.has(Dir(k))) out = Dir(k);
            const uint32_t d = uint32_t(from);
            t.not_before(r.passed[d] ? std::max(r.min_pass, r.last_pass[d] + 1) : r.min_pass);
            t.shift(hop);
            from = kccl::opposite(out);
            at = g_.neighbour(at, out);
            ++hops;
        }
        if (hops == 0) return false;  // parks where it is: walked as usual
        acct_[it.sid].routers += hops + 1;
        it.t = std::move(t);
        it.from = from;
        router(at, color).parked.push_back(std::move(it));
        return true;
    }

    /// `it` is accepted at router c: time it through, forward copies, deliver at the RAMP.
    template <class W>
    void pass(Coord c, uint32_t color, Router& r, const kccl::wafer::host::ColorConfig* cc, Item it, W& work, uint32_t t_r, uint32_t hop) {
        const uint32_t d = uint32_t(it.from);
        const DirSet tx = cc->pos[r.pos].tx;
        if (!it.words) {  // an advance: after the last earlier wavelet from its direction
            vtime_t m = it.t.first();
            if (r.passed[d]) m = std::max(m, r.last_pass[d]);
            if (cc->count > 1) {
                const uint32_t np = r.pos + 1;
                r.pos = np < cc->count ? np : (cc->ring ? 0 : r.pos);
                r.min_pass = m + 1;
            }
            for (uint32_t k = 0; k < 4; ++k)
                if (const Dir o = router_dirs[k]; tx.has(o)) {
                    Item f;
                    f.t.push(m + hop, 1);
                    f.from = kccl::opposite(o);
                    f.src = it.src;
                    work.push_back({g_.neighbour(c, o), std::move(f)});
                }
            return;
        }
        // Not before the position accepts, one wavelet per cycle behind the direction's last.
        it.t.not_before(r.passed[d] ? std::max(r.min_pass, r.last_pass[d] + 1) : r.min_pass);
        if (!it.t.empty()) {
            const vtime_t t_first = it.t.first(), t_last = it.t.last();
            r.passed[d] = true;
            r.last_pass[d] = t_last;
            // Two inputs on one color overlapping in time: undefined on hardware.
            for (const uint32_t o : router_dirs)
                if (o != d && r.last[o].used && r.last[o].last >= t_first && r.last[o].first <= t_last) {
                    const vtime_t at = std::max(t_first, r.last[o].first);
                    throw WaferError("fabric: two inputs overlap on color " + std::to_string(color) + " at PE " + to_string(c) + " at cycle " +
                                      std::to_string(at) + ": a stream from " + dir_word(Dir(d)) + " (sent by PE " + to_string(it.src) +
                                      ") and one from " + dir_word(Dir(o)) + " (undefined behaviour on hardware; the pattern must keep them apart in time)");
                }
            r.last[d] = Interval{t_first, t_last, true};
        }
        uint32_t copies = 0;
        for (const Dir k : router_dirs) copies += tx.has(k);
        if (copies > 1) acct_[it.sid].pending += uint64_t(it.words->size()) * (copies - 1);
        for (const Dir k : router_dirs) {
            if (!tx.has(k)) continue;
            Item f;
            f.words = it.words;
            f.src = it.src;
            f.sid = it.sid;
            f.t = --copies ? it.t : std::move(it.t);
            if (k != Dir::ramp) share(c, k, f.t);  // one wavelet per cycle on the link direction, all colors
            if (k == Dir::ramp) {
                f.t.shift(t_r);
                deliver(c, color, *f.words, f.t, f.sid);
            } else {
                f.t.shift(hop);
                f.from = kccl::opposite(k);
                work.push_back({g_.neighbour(c, k), std::move(f)});
            }
        }
    }

    /// A link direction (or the off-ramp) carries one wavelet per cycle whatever its color: the
    /// times `t` (leaving router c towards d) move to the first free cycles at or after them, in
    /// order, and take those cycles. Streams are served in the order they are walked (the earliest
    /// PE first).
    void share(Coord c, Dir d, Times& t) {
        auto& busy = links_[uint64_t(idx(c)) * kccl::wafer::host::dir_count + uint32_t(d)];  // [start, end) -> end
        Times out;
        vtime_t cur = 0;
        for (const TimeRun& q : t.r) {
            cur = std::max(cur, q.t0);
            uint32_t left = q.n;
            while (left) {
                auto it = busy.upper_bound(cur);  // the first busy interval starting after cur
                if (it != busy.begin()) {
                    auto pv = std::prev(it);
                    if (pv->second > cur) cur = pv->second;  // cur is busy: after that interval
                }
                it = busy.upper_bound(cur);
                const vtime_t room = it == busy.end() ? left : std::min<vtime_t>(left, it->first - cur);
                const uint32_t m = uint32_t(room);
                out.push(cur, m);
                // Mark [cur, cur + m) busy, merged with its neighbours.
                vtime_t a = cur, b = cur + m;
                auto lo = busy.upper_bound(a);
                if (lo != busy.begin() && std::prev(lo)->second == a) {
                    --lo;
                    a = lo->first;
                    lo = busy.erase(lo);
                }
                if (lo != busy.end() && lo->first == b) {
                    b = lo->second;
                    busy.erase(lo);
                }
                busy[a] = b;
                cur += m;
                left -= m;
            }
        }
        t.r.swap(out.r);
    }

    void deliver(Coord c, uint32_t color, const std::vector<uint32_t>& w, const Times& t, uint32_t sid) {
        Queue& q = queues_[rkey(c, color)];
        q.w.insert(q.w.end(), w.begin(), w.end());
        if (!w.empty()) {
            if (q.s.size() > q.sh && q.s.back().first == sid) q.s.back().second += uint32_t(w.size());
            else q.s.emplace_back(sid, uint32_t(w.size()));
        }
        for (const TimeRun& x : t.r) {
            if (q.t.size() > q.th && q.t.back().t0 + q.t.back().n == x.t0) q.t.back().n += x.n;
            else q.t.push_back(x);
        }
        auto it = pe_of_.find(idx(c));
        if (it != pe_of_.end()) {
            Pe& p = *pes_[it->second];
            if (!p.done && p.wait_color == int32_t(color) && q.avail() >= p.wait_need) {
                if (sched_) sched_->wake(p.st_.get());
                else if (p.retry_) {  // program mode: readied at the deliverer's clock
                    if (cur_ && p.clock_ < cur_->clock_) p.clock_ = cur_->clock_;
                    p.wait_color = -1;
                    make_ready(p);
                }
            }
        }
    }

    // ---- device calls ----------------------------------------------------------------------
    /// The wafer's PEs copy, or combine with sum, max or min, 32-bit elements: any other operator a
    /// kernel passes (coll::RedOp has more) fails the run by name instead of falling back to a copy.
    static void check_combine(Combine cb, const char* what) {
        if ((cb.op == kccl::wafer::kCopy || kccl::wafer::supports(cb.op)) && kccl::wafer::supports(cb.type)) return;
        throw WaferError(std::string(what) + ": combine " + kccl::wafer::op_name(cb.op) + " on " + kccl::coll::dtype_name(cb.type) +
                         " is not one the wafer's PEs do (allowed: copy, sum, max, min on float, int32, uint32)");
    }
    void check_route(Pe& p, Route r, const char* what) {
        if (r.color >= g_.profile().colors)
            throw WaferError(std::string(what) + ": route color " + std::to_string(r.color) + " is not routable (" + g_.profile().name + " has colors 0.." +
                              std::to_string(g_.profile().colors - 1) + ")");
        (void)p;
    }
    bool failed() {
        [[maybe_unused]] detail::IgnoreScope ig;
        return !error_.empty();
    }
    void enter(Pe&) {
        if (failed()) throw Abort{};
        sched_->sync();
        if (failed()) throw Abort{};
    }
    // Each verb is written once for both modes. Fibers: it blocks (parks) where it waits.
    // Program mode: where it must wait it stalls p and returns; p runs the step again from its
    // start cycle once readied (the start is kept in step_c_, an exchange's issued send in exch_*).
    /// The cycle a verb starts in.
    vtime_t start(Pe& p) {
        if (!sched_) return p.retry_ ? p.step_c_ : p.clock_;
        enter(p);
        return sched_->now();
    }
    /// The verb is done in cycle x.
    void finish(Pe& p, vtime_t x) {
        p.retry_ = p.exch_sent_ = false;
        if (sched_) return sched_->advance_to(x);
        p.clock_ = std::max(p.clock_, x);
        ++p.pc_;
    }
    /// Program mode: p waits in the step it started in cycle c.
    static void stall(Pe& p, vtime_t c) {
        p.stalled_ = p.retry_ = true;
        p.step_c_ = c;
    }
    /// p's queue for `color` once it holds `n` wavelets (program mode: null, p stalled, before).
    Queue* wait(Pe& p, vtime_t c, uint32_t color, uint32_t n, const char* what) {
        Queue* q;
        {
            [[maybe_unused]] detail::IgnoreScope ig;
            q = &queues_[rkey(p.at_, color)];
        }
        for (;;) {
            {
                [[maybe_unused]] detail::IgnoreScope ig;  // never across the park (a fiber switch)
                if (q->avail() >= n) {
                    p.wait_color = -1;
                    return q;
                }
                p.wait_color = int32_t(color);
                p.wait_need = n;
                p.wait_what = what;
            }
            if (!sched_) {
                stall(p, c);
                return nullptr;
            }
            sched_->park();
            if (failed()) throw Abort{};
        }
    }
    uint32_t launch_stream(Pe& p, uint32_t color, std::shared_ptr<const std::vector<uint32_t>> words, Times t) {
        [[maybe_unused]] detail::IgnoreScope ig;
        ++streams_;
        Item it;
        it.sid = uint32_t(acct_.size());
        acct_.push_back(Acct{words->size(), 0, -1, color});
        it.words = std::move(words);
        it.t = std::move(t);
        it.from = Dir::ramp;
        it.src = p.at_;
        const uint32_t sid = it.sid;
        walk(p.at_, color, std::move(it));
        return sid;
    }
    /// The wavelets a router's input queue holds per color (0: unbounded).
    uint32_t queue_bound() const { return o_.adversarial ? 1u : g_.profile().router_queue_wavelets; }
    /// What the fabric holds of stream a: a queue's worth at every router it has reached.
    uint64_t holds(const Acct& a) const { return uint64_t(queue_bound()) * std::max<uint64_t>(1, a.routers); }
    /// After p issued stream sid: with bounded buffering, p blocks (back-pressure)
    /// while more of the stream is in the fabric than the fabric holds; a receive that takes
    /// enough of it readies p. Blocking costs no cycle (the thesis's model has no stalls); it
    /// only orders p's next step after that receive.
    bool block_on(Pe& p, uint32_t sid) {
        Acct& a = acct_[sid];
        if (!queue_bound() || a.pending <= holds(a)) return false;
        a.blocked = int64_t(p.index_);
        p.blocked_sid_ = int64_t(sid);
        ++blocked_;
        return true;
    }
    /// After p issued stream sid, the rule of block_on: fibers park until a receive drains the
    /// stream enough (woken at their own clock: blocking costs no cycle); program mode stalls p
    /// after its step (readied by that receive).
    void back_pressure(Pe& p, uint32_t sid) {
        {
            [[maybe_unused]] detail::IgnoreScope ig;
            if (!block_on(p, sid)) return;
        }
        if (!sched_) {
            p.stalled_ = true;
            return;
        }
        for (;;) {
            sched_->park();
            if (failed()) throw Abort{};
            [[maybe_unused]] detail::IgnoreScope ig;
            if (p.blocked_sid_ < 0) return;
        }
    }
    /// Takes the next n wavelets' times from q and accounts them received.
    Times take(Queue& q, uint32_t n) {
        uint32_t k = n;
        while (k && q.sh < q.s.size()) {
            auto& run = q.s[q.sh];
            const uint32_t m = std::min(k, run.second);
            Acct& a = acct_[run.first];
            a.pending -= m;
            if (a.blocked >= 0 && a.pending <= holds(a)) {
                Pe& b = *pes_[size_t(a.blocked)];
                a.blocked = -1;
                b.blocked_sid_ = -1;
                if (sched_) sched_->wake_keep_clock(b.st_.get());  // fibers: at its own clock, as in program mode
                else make_ready(b);
            }
            run.second -= m;
            k -= m;
            if (!run.second) ++q.sh;
        }
        return q.take(n);
    }
    void send(Pe& p, Route r, const uint32_t* src, uint32_t n) {
        const vtime_t c = start(p);
        check_route(p, r, "send");
        Times t;
        t.push(c + 1 + g_.profile().t_r, n);  // element k issued in cycle c+k, at the router T_R later
        const uint32_t sid = launch_stream(p, r.color, std::make_shared<const std::vector<uint32_t>>(src, src + n), std::move(t));
        finish(p, c + n);
        back_pressure(p, sid);
    }
    void recv(Pe& p, Route r, uint32_t* dst, uint32_t n, Combine cb) {
        const vtime_t c = start(p);
        check_route(p, r, "recv");
        check_combine(cb, "recv");
        Queue* q = wait(p, c, r.color, n, "recv");
        if (!q) return;
        finish(p, take_into(*q, c, dst, n, cb));
    }
    void relay(Pe& p, Route in, Route out, const uint32_t* local, uint32_t n, Combine cb) {
        const vtime_t c = start(p);
        check_route(p, in, "relay");
        check_combine(cb, "relay");
        check_route(p, out, "relay");
        Queue* q = wait(p, c, in.color, n, "relay");
        if (!q) return;
        if (n) {
            // The relay's stream starts in cycle max(c, its first element's arrival): every PE
            // earlier than that runs first (streams are walked in the order they start, share()).
            vtime_t s0 = c;
            {
                [[maybe_unused]] detail::IgnoreScope ig;
                s0 = std::max(c, q->t[q->th].t0);
            }
            if (!sched_ && later_start(p, s0)) return stall(p, c);  // readied at s0 by later_start
            if (sched_ && s0 > sched_->now()) {
                sched_->advance_to(s0);
                sched_->sync();
                if (failed()) throw Abort{};
            }
        }
        auto words = std::make_shared<std::vector<uint32_t>>(n);
        Times t;
        vtime_t x = c;
        {
            [[maybe_unused]] detail::IgnoreScope ig;
            // Element k is combined and sent in cycle s_k = max(c + k, arrival_k).
            t = take(*q, n);
            t.not_before(c);
            if (n) x = t.last() + 1;
            t.shift(1 + g_.profile().t_r);
            combine_span(cb, words->data(), local, q->w.data() + q->head, n);
            q->head += n;
            compact(*q);
        }
        const uint32_t sid = launch_stream(p, out.color, std::move(words), std::move(t));
        finish(p, x);
        back_pressure(p, sid);
    }
    /// Send and receive at once: the sends issue one per cycle from now, the receives are stored
    /// one per cycle as they arrive (the processor sends one and receives one wavelet per cycle).
    void exchange(Pe& p, Route out, const uint32_t* src, uint32_t n_out, Route in, uint32_t* dst, uint32_t n_in, Combine cb) {
        const vtime_t c = start(p);
        check_route(p, out, "exchange");
        check_combine(cb, "exchange");
        check_route(p, in, "exchange");
        if (!p.exch_sent_) {  // program mode: issued once, before the receive may stall
            Times t;
            t.push(c + 1 + g_.profile().t_r, n_out);
            p.exch_sid_ = n_out ? int64_t(launch_stream(p, out.color, std::make_shared<const std::vector<uint32_t>>(src, src + n_out), std::move(t))) : -1;
            p.exch_sent_ = true;
        }
        Queue* q = wait(p, c, in.color, n_in, "exchange");
        if (!q) return;
        const int64_t sid = p.exch_sid_;
        finish(p, std::max<vtime_t>(take_into(*q, c, dst, n_in, cb), c + n_out));
        if (sid >= 0) back_pressure(p, uint32_t(sid));
    }
    void advance(Pe& p, Route r) {
        const vtime_t c = start(p);
        check_route(p, r, "advance");
        {
            [[maybe_unused]] detail::IgnoreScope ig;
            ++streams_;
            Item it;
            it.t.push(c + g_.profile().t_r, 1);  // behind the last wavelet this PE sent before now
            it.from = Dir::ramp;
            it.src = p.at_;
            walk(p.at_, r.color, std::move(it));
        }
        finish(p, c);
    }
    /// Receives n wavelets of q into dst (combined), stored one per cycle from cycle c on: the
    /// cycle after the last is stored.
    vtime_t take_into(Queue& q, vtime_t c, uint32_t* dst, uint32_t n, Combine cb) {
        [[maybe_unused]] detail::IgnoreScope ig;  // the queue was filled by the senders' fibers
        const vtime_t x = stored_until(c, take(q, n));
        combine_span(cb, dst, dst, q.w.data() + q.head, n);
        q.head += n;
        compact(q);
        return x;
    }
    static void compact(Queue& q) {
        if (q.head == q.w.size()) {  // release the memory (a PE's queue is often used once)
            std::vector<uint32_t>().swap(q.w);
            std::vector<TimeRun>().swap(q.t);
            std::vector<std::pair<uint32_t, uint32_t>>().swap(q.s);
            q.head = q.th = q.sh = 0;
        }
    }
    /// A processor storing wavelets that arrive at `t`, one per cycle from cycle x on: the cycle
    /// after the last is stored (x_{k+1} = max(x_k, t_k) + 1).
    static vtime_t stored_until(vtime_t x, const Times& t) {
        for (const TimeRun& r : t.r) x = std::max(x, r.t0) + r.n;  // within a run: max(x, t0 + j) + 1, j < n
        return x;
    }

    Grid g_;
    FabricOptions o_;
    std::vector<std::unique_ptr<Pe>> pes_;
    std::unordered_map<size_t, uint32_t> pe_of_;
    std::unordered_map<uint64_t, Router> routers_;
    std::unordered_map<uint64_t, Queue> queues_;
    detail::Scheduler* sched_ = nullptr;
    Pe* cur_ = nullptr;           ///< program mode: the PE running
    std::vector<Ready> ready_;    ///< program mode: ready PEs, earliest first
    uint64_t ready_seq_ = 0;
    std::string error_;
    uint64_t streams_ = 0;
    std::vector<Acct> acct_;
    std::unordered_map<uint64_t, std::map<vtime_t, vtime_t>> links_;  ///< busy cycles per (router, output), all colors
    uint64_t blocked_ = 0;   ///< every data stream's wavelets in the fabric (bounded buffering)
};

inline uint32_t Pe::arg(uint32_t i) const {
    if (i >= args_.size())
        throw WaferError("kernel argument " + std::to_string(i) + " does not exist; this PE has " + std::to_string(args_.size()));
    return args_[i];
}
inline uint8_t* Pe::mem(uint32_t offset, uint32_t bytes) {
    if (uint64_t(offset) + bytes > mem_size_)
        throw WaferError("memory [" + std::to_string(offset) + ", " + std::to_string(uint64_t(offset) + bytes) + ") is outside this PE's " +
                          std::to_string(mem_size_) + " bytes");
    return mem_.get() + offset;
}
inline void Pe::fabric_send(Route r, const uint32_t* src, uint32_t n) { f_->send(*this, r, src, n); }
inline void Pe::fabric_recv(Route r, uint32_t* dst, uint32_t n, Combine c) { f_->recv(*this, r, dst, n, c); }
inline void Pe::fabric_relay(Route in, Route out, const uint32_t* local, uint32_t n, Combine c) { f_->relay(*this, in, out, local, n, c); }
inline void Pe::fabric_advance(Route r) { f_->advance(*this, r); }
inline void Pe::fabric_exchange(Route out, const uint32_t* src, uint32_t n_out, Route in, uint32_t* dst, uint32_t n_in, Combine c) {
    f_->exchange(*this, out, src, n_out, in, dst, n_in, c);
}
inline vtime_t Pe::now() const { return f_->sched_ ? f_->sched_->now() : 0; }

}  // namespace kccl::emu::wafer
