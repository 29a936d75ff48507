// coll_perf_type.cpp — the benchmark tool's runner for one element type (tools/coll_perf.hpp).
//
// Compiled once per type, with KCCL_COLL_PERF_T (the C++ type) and KCCL_COLL_PERF_FN (the runner's
// name, run_bf16 ...) defined, so the eight types compile as eight translation units in parallel.
// With KCCL_COLL_PERF_DEMO=1 it is the demo's runner: bfloat16 sum over EDM, lanes in series —
// one reducer and one link type instead of every operator on three link types, so the demo
// compiles in a fraction of the full tool's time (its main rejects anything else up front).
// Several types may share one translation unit (CMake's KCCL_COLL_PERF_TYPES_PER_TU: a generated
// file defines the two macros, includes this file, undefines them, and again): the helpers below
// are compiled once per translation unit, the runner once per type.
#include "tools/coll_perf.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#if !defined(KCCL_COLL_PERF_T) || !defined(KCCL_COLL_PERF_FN)
#error "define KCCL_COLL_PERF_T (an element type) and KCCL_COLL_PERF_FN (run_f32, run_bf16, ...)"
#endif
#ifndef KCCL_COLL_PERF_DEMO
#define KCCL_COLL_PERF_DEMO 0
#endif

#ifndef KCCL_COLL_PERF_TYPE_HELPERS
#define KCCL_COLL_PERF_TYPE_HELPERS
namespace kccl::coll_perf {
namespace {

using namespace kccl::coll;
namespace cb = kccl::emu::collective;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::unique_ptr<emu::TimingModel> make_model(const std::string& t) {
    if (t == "wormhole") return emu::wormhole_model();
    if (t == "wafer") return emu::wafer_model();
    return nullptr;
}

template <class Red, unsigned Links, bool Interleave>
Result run_one(const Options& o, RedOp redop, Op op, Method method, uint64_t count, emu::Trace* trace) {
    using T = typename Red::value_type;
    constexpr uint32_t eb = sizeof(T);
    Result res;
    cb::GroupOptions bo = bed_options(o);
    if (count > 0x7FFFFFFFull) { res.error = "count too large"; return res; }
    const cb::Layout L = cb::make_layout(row_shape(o, op, method), uint32_t(count), cb::max_chunk_elems(bo, eb));
    if (const char* err = validate(L.shape)) { res.error = err; return res; }
    bo.buffer_bytes = cb::buffer_bytes_for(L, eb);
    const bool prep = Red::has_prepare && op_reduces(op);
    bo.extra_bytes = prep ? bo.buffer_bytes : 0;
    const uint64_t seed = 1;
    const bool cpu = o.cpu_clock;

    // One run of `warmup` + `iters` collectives on a fresh group; `check` counts wrong outputs.
    struct Once {
        emu::RunReport report;
        double wall_us = 0;
        uint64_t wrong = 0;
        std::string first_wrong;
    };
    auto run_once = [&](uint32_t iters, uint32_t warmup, emu::TimingModel* model, uint64_t adv_seed, bool check,
                        emu::Trace* tr) {
        Once out;
        cb::Group bed(bo);
        std::vector<uint32_t> extra(o.ranks);
        for (uint32_t r = 0; r < o.ranks; ++r) extra[r] = bed.extra(r);
        std::vector<double> start(o.ranks), end(o.ranks);
        bed.add<Links>([&, L, seed, redop, iters, warmup, prep, cpu](auto& hal, auto& link, const GroupArgs& g) -> uint64_t {
            T* in = reinterpret_cast<T*>(hal.l1_ptr(g.input_l1, std::max(L.in_elems, 1u) * eb));
            const bool reduces = op_reduces(L.shape.op);
            for (uint32_t i = 0; i < L.count; ++i) in[i] = kccl::testing::input_value<T>(seed, redop, reduces, g.rank, i);
            ExecParams ep;
            ep.shape = L.shape;
            ep.rank = g.rank;
            ep.chunk_elems = L.chunk_elems;
            ep.buf = {g.input_l1, g.output_l1, g.scratch_l1, prep ? extra[g.rank] : g.input_l1};
            ep.count = L.count;
            const cb::GroupDirs dirs = cb::group_dirs_of(g);
            auto exec = [&] {
                if constexpr (Interleave) {
                    if (o.interleave) {
                        execute_any_interleaved<Red>(link, ep, dirs);
                        return;
                    }
                }
                execute_any<Red>(link, ep, dirs);
            };
            for (uint32_t i = 0; i < warmup; ++i) exec();
            start[g.rank] = now_s(cpu);
            for (uint32_t i = 0; i < iters; ++i) exec();
            end[g.rank] = now_s(cpu);
            link.quiesce();
            return 0;
        });
        emu::RunOptions ro;
        ro.watchdog = std::chrono::milliseconds(60000);
        ro.dirty_l1 = emu::RunOptions::DirtyL1::off;
        ro.engine = o.engine;
        ro.timing = model;
        ro.trace = tr;
        if (o.adversarial) {
            ro.adversary.enabled = true;
            ro.adversary.seed = adv_seed;
            ro.dirty_l1 = emu::RunOptions::DirtyL1::on;
        }
        out.report = bed.run(ro);
        if (!out.report.ok()) return out;
        const auto t0 = *std::min_element(start.begin(), start.end());
        const auto t1 = *std::max_element(end.begin(), end.end());
        out.wall_us = (t1 - t0) * 1e6 / std::max(1u, iters);
        if (check) {
            const auto [nbad, text] = kccl::testing::check_outputs<T>(L, redop, seed, [&](uint32_t r) { return bed.output(r); });
            out.wrong = nbad;
            out.first_wrong = text;
        }
        return out;
    };

    const std::unique_ptr<emu::TimingModel> model = make_model(o.timing);
    std::vector<double> times;
    for (uint32_t rep = 0; rep < o.repeat; ++rep) {
        const Once r = run_once(o.iters, o.warmup, model.get(), o.adv_seed + rep, o.check && rep == 0, rep == 0 ? trace : nullptr);
        if (!r.report.ok()) { res.error = "run failed: " + r.report.summary(); return res; }
        times.push_back(r.wall_us);
        if (rep == 0) {
            res.wrong = r.wrong;
            res.first_wrong = r.first_wrong;
        }
        if (model && rep == 0) {
            // Modelled time is deterministic: once. The same group with the warmup only; the
            // difference of the makespans is the n timed iterations (set-up, EDM handshakes and
            // teardown cancel out).
            const Once b = run_once(0, o.warmup, model.get(), 0, false, nullptr);
            if (!b.report.ok()) { res.error = "run failed (modelled baseline): " + b.report.summary(); return res; }
            const emu::vtime_t m1 = r.report.makespan, m0 = std::min(b.report.makespan, m1);
            res.model_ticks = double(m1 - m0) / std::max(1u, o.iters);
            res.model_us = res.model_ticks / r.report.ticks_per_second * 1e6;
        }
    }
    res.time_us = median(times);
    return res;
}

}  // namespace
}  // namespace kccl::coll_perf
#endif  // KCCL_COLL_PERF_TYPE_HELPERS

namespace kccl::coll_perf {
namespace {
using namespace kccl::coll;
namespace cb = kccl::emu::collective;
}  // namespace

Result KCCL_COLL_PERF_FN(const Options& o, RedOp redop, Op op, Method method, uint64_t count, emu::Trace* trace) {
    using T = KCCL_COLL_PERF_T;
    Result r;
    try {
#if KCCL_COLL_PERF_DEMO
        static_assert(std::is_same_v<T, bfloat16>, "The demo's runner is the bfloat16 one.");
        if (redop != RedOp::sum || o.transport != Transport::edm || o.interleave) {
            r.error = "the demo's build runs bfloat16 sum over EDM with lanes in series only";
            return r;
        }
        r = run_one<Reducer<T, RedOp::sum>, cb::link_edm, false>(o, redop, op, method, count, trace);
#else
        if (!cb::with_reducer_of<T>(redop, [&](auto red) {
                r = run_one<decltype(red), cb::link_all, true>(o, redop, op, method, count, trace);
            }))
            r.error = std::string("operator ") + redop_name(redop) + " is not defined on " + dtype_name(dtype_of<T>::value);
#endif
    } catch (const std::exception& e) {
        r = Result{};
        r.error = e.what();
    } catch (...) {
        r = Result{};
        r.error = "unknown exception";
    }
    return r;
}

}  // namespace kccl::coll_perf
