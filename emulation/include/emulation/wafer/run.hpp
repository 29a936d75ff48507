// kccl/emulation/wafer/run.hpp — one entry point that runs a thesis pattern by name on the
// emulated fabric and checks its result: what the benchmark tool and the figure scripts call.
//
//   PatternRun r = kccl::emu::wafer::run_pattern(spec);   // spec: wafer::host::PatternSpec
//   r.cycles        modelled cycles (the thesis's model: when the last PE finished)
//   r.wall_seconds  host time of the emulated run (setup and check excluded)
//   r.wrong         result elements that differ from the host reference (0 = correct)
//
// Inputs: every participating PE's vector (offset 0 of its memory) is filled from `seed`; the
// rest of its memory is garbage (hardware never zeroes it). For a broadcast only the root's
// vector is written. f32 inputs are small integers (-8..8), so that every summation order gives
// the same bits and the reference needs no knowledge of the pattern's order; i32 / u32 inputs are
// any 32-bit values (their addition wraps and is associative). The reference folds the operator
// over all inputs on the host; the check is bit for bit.
//
// `spec_of(args, rows, cols, B)` turns a run description of wafer/patterns.hpp (what the cost
// model and "auto" speak) into the PatternSpec the layout builder takes; it refuses, with an
// kccl::Error naming the problem, what the builder would run differently from the
// description (an end pattern with its root inside a line, which the builder would run as
// left_right) or cannot build (allreduce_2d over butterfly).
//
// Host-only (C++20).
#pragma once

#include "wafer.hpp"

#include <common/host/error.hpp>
#include <wafer/host/collectives.hpp>
#include <wafer/patterns.hpp>
#include <wafer/program.hpp>


#include <chrono>
#include <cstring>
#include <memory>
#include <string>

namespace kccl::emu::wafer {

struct PatternRun {
    std::string pattern;
    vtime_t cycles = 0;
    double wall_seconds = 0;
    uint64_t wrong = 0;
    uint32_t colors = 0;   ///< colors the layout used
    uint64_t streams = 0;  ///< streams the run walked
    uint64_t blocked = 0;  ///< sends that blocked on a full fabric (bounded buffering)
};

/// Input word k of participating PE `pe` (see the file comment).
inline uint32_t input_word(kccl::coll::DataType t, uint64_t seed, size_t pe, uint32_t k) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + pe * 0xBF58476D1CE4E5B9ull + k * 0x94D049BB133111EBull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    if (t != kccl::coll::DataType::f32) return uint32_t(z);
    const float f = float(int(z % 17) - 8);
    uint32_t w;
    std::memcpy(&w, &f, 4);
    return w;
}

/// input_word(t, seed, pe, k) for k < B into v.
inline void fill_inputs(kccl::coll::DataType t, uint64_t seed, size_t pe, uint32_t* v, uint32_t B) {
    for (uint32_t k = 0; k < B; ++k) v[k] = input_word(t, seed, pe, k);
}

/// The PatternSpec of run `a` on `rows` x `cols` PEs (rows == 1: a row of cols PEs), B elements.
inline kccl::wafer::host::PatternSpec spec_of(const kccl::wafer::PatternArgs& a, uint32_t rows, uint32_t cols, uint32_t B,
                                              kccl::coll::DataType type = kccl::coll::DataType::f32, kccl::coll::RedOp op = kccl::coll::RedOp::sum) {
    namespace kf = kccl::wafer;
    if (const kf::ArgsError e = kf::check_args(a, rows, cols); e != kf::ArgsError::ok)
        throw kccl::Error(kccl::Errc::usage, std::string("fabric run ") + kf::pattern_name(a.pattern) + ": " + kf::args_error_text(e));
    const kf::PatternInfo& pi = kf::pattern_info(a.pattern);
    kccl::wafer::host::PatternSpec s;
    s.name = pi.name;
    if (pi.dim == kf::Dim::one_d) s.P = cols;
    else s.M = rows, s.N = cols;
    s.B = B;
    s.root = s.root_x = a.root;
    s.root_y = a.root_y;
    s.S = a.s;
    s.G = a.g == 0 ? 3 : a.g;
    s.type = type;
    s.op = op;
    // The reduce that runs on a line of n PEs to `root`, at depth d of the base chain.
    auto reduce_at = [&](uint32_t d, uint32_t n, uint32_t root, const char* line) {
        const kf::Pattern p = a.base[d];
        const bool end = kf::pattern_info(p).base == kf::BaseKind::none && !kf::pattern_info(p).takes(kf::param_root);
        if (end && n > 1 && root != 0 && root + 1 != n)
            throw kccl::Error(kccl::Errc::usage, std::string("fabric run ") + pi.name + ": base " + kf::pattern_name(p) + " reduces to an end of a line, but the root is inside the " +
                                        line + " (" + std::to_string(root) + " of 0.." + std::to_string(n - 1) + "); use left_right, jump or ring as the base, over " +
                                        kf::pattern_name(p));
    };
    switch (a.pattern) {
        case kf::Pattern::left_right:
        case kf::Pattern::jump: s.base = kf::pattern_name(a.base[0]); break;
        case kf::Pattern::reduce_2d:
        case kf::Pattern::allreduce_naive:
            s.base = kf::pattern_name(a.base[0]);
            s.base2 = kf::pattern_name(a.base[1]);
            if (pi.dim == kf::Dim::one_d) reduce_at(0, cols, a.root, "row");
            else {
                reduce_at(0, rows, a.root_y, "columns");
                reduce_at(0, cols, a.root, "root's row");
            }
            break;
        case kf::Pattern::allreduce_2d:
            if (a.base[0] == kf::Pattern::allreduce_ring) s.base = "allreduce_ring";
            else if (a.base[0] == kf::Pattern::allreduce_naive) {
                s.base = kf::pattern_name(a.base[1]);
                s.base2 = kf::pattern_name(a.base[2]);
                const kf::Pattern p = a.base[1];
                const bool end = kf::pattern_info(p).base == kf::BaseKind::none && !kf::pattern_info(p).takes(kf::param_root);
                const bool inside = (rows > 1 && a.root_y != 0 && a.root_y + 1 != rows) || (cols > 1 && a.root != 0 && a.root + 1 != cols);
                if (end && inside)
                    throw kccl::Error(kccl::Errc::usage, std::string("fabric run allreduce_2d: base ") + kf::pattern_name(p) +
                                                " reduces to an end of a line, but the root (" + std::to_string(a.root) + "," + std::to_string(a.root_y) +
                                                ") is inside a row or column; use left_right, jump or ring over " + kf::pattern_name(p));
            } else
                throw kccl::Error(kccl::Errc::usage, std::string("fabric run allreduce_2d over ") + kf::pattern_name(a.base[0]) +
                                            ": the emulated fabric builds allreduce_2d over allreduce_naive or allreduce_ring only");
            break;
        default: break;
    }
    return s;
}

/// A layout's run: the fabric after it (every PE's memory), its result and the colors it used.
struct LayoutRun {
    std::unique_ptr<Fabric> fabric;
    RunResult result;
    uint32_t colors = 0;
};

/// Runs layout `b` (spec gives B and the type) on a fabric with options `fo`, after `in(i, v)`
/// wrote the input of participating PE i (b.expect.pes[i]; a broadcast's root only) at v (B words).
template <class In>
LayoutRun run_layout(const kccl::wafer::host::Built& b, const kccl::wafer::host::PatternSpec& spec, const kccl::wafer::host::Profile& profile,
                     const FabricOptions& fo, In&& in) {
    namespace fh = kccl::wafer::host;
    fh::Layout::Result lr = b.layout.finalize(profile, spec.type);
    LayoutRun out{std::make_unique<Fabric>(std::move(lr.grid), fo), {}, lr.colors_used};
    for (auto& p : lr.programs) out.fabric->launch_program(p.pe, std::move(p.args), 4 * spec.B);
    const auto& e = b.expect;
    for (size_t i = 0; i < e.pes.size(); ++i) {
        Pe* pe = out.fabric->pe(e.pes[i]);
        if (!pe) throw WaferError("fabric pattern " + spec.name + ": PE " + fh::to_string(e.pes[i]) + " takes part but runs no kernel");
        if (e.kind != kccl::coll::Op::broadcast || e.pes[i] == e.root) in(i, pe->ptr<uint32_t>(0, spec.B));
    }
    out.result = out.fabric->run();
    return out;
}

/// Runs layout `b` (spec gives B, the type, the operator and the name) and checks its result.
inline PatternRun run_built(const kccl::wafer::host::Built& b, const kccl::wafer::host::PatternSpec& spec,
                            const kccl::wafer::host::Profile& profile = kccl::wafer::host::wse2(), uint64_t seed = 1, bool adversarial = false,
                            uint64_t order_seed = 1) {
    namespace fh = kccl::wafer::host;
    FabricOptions fo;
    fo.seed = seed;
    fo.adversarial = adversarial;
    fo.order_seed = order_seed;
    const auto& e = b.expect;
    const uint32_t B = spec.B;
    const kccl::wafer::Combine cb{spec.op, spec.type};
    std::vector<uint32_t> ref(B);
    const LayoutRun lr = run_layout(b, spec, profile, fo, [&](size_t i, uint32_t* v) {
        fill_inputs(spec.type, seed, i, v, B);
        if (i == 0 || e.kind == kccl::coll::Op::broadcast) std::memcpy(ref.data(), v, size_t(B) * 4);
        else combine_span(cb, ref.data(), ref.data(), v, B);
    });
    PatternRun out;
    out.pattern = spec.name;
    out.cycles = lr.result.cycles;
    out.wall_seconds = lr.result.wall_seconds;
    out.colors = lr.colors;
    out.streams = lr.result.streams;
    out.blocked = lr.result.blocked;
    auto check = [&](fh::Coord c) {
        const uint32_t* v = lr.fabric->pe(c)->ptr<uint32_t>(0, B);
        for (uint32_t k = 0; k < B; ++k) out.wrong += v[k] != ref[k];
    };
    if (e.kind == kccl::coll::Op::reduce) check(e.root);
    else
        for (const auto& c : e.pes) check(c);
    return out;
}

inline PatternRun run_pattern(const kccl::wafer::host::PatternSpec& spec, const kccl::wafer::host::Profile& profile = kccl::wafer::host::wse2(),
                              uint64_t seed = 1, bool adversarial = false, uint64_t order_seed = 1) {
    return run_built(kccl::wafer::host::build(spec, profile.t_r), spec, profile, seed, adversarial, order_seed);
}

}  // namespace kccl::emu::wafer
