// kccl/emulation/fabric/run.hpp — one entry point that runs a thesis pattern by name on the
// emulated fabric and checks its result: what the benchmark tool and the figure scripts call.
//
//   PatternRun r = kccl::emu::fabric::run_pattern(spec);   // spec: fabric::host::PatternSpec
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
// Host-only (C++20).
#pragma once

#include "fabric.hpp"

#include <fabric/host/collectives.hpp>
#include <fabric/program.hpp>

#include <chrono>
#include <cstring>
#include <string>

namespace kccl::emu::fabric {

struct PatternRun {
    std::string pattern;
    vtime_t cycles = 0;
    double wall_seconds = 0;
    uint64_t wrong = 0;
    uint32_t colors = 0;   ///< colors the layout used
    uint64_t streams = 0;  ///< streams the run walked
};

inline uint32_t input_word(kccl::fabric::DType t, uint64_t seed, size_t pe, uint32_t k) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + pe * 0xBF58476D1CE4E5B9ull + k * 0x94D049BB133111EBull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    if (t == kccl::fabric::DType::f32) {
        const float f = float(int(z % 17) - 8);
        uint32_t w;
        std::memcpy(&w, &f, 4);
        return w;
    }
    return uint32_t(z);
}

inline PatternRun run_pattern(const kccl::fabric::host::PatternSpec& spec, const kccl::fabric::host::Profile& profile = kccl::fabric::host::wse2(),
                              uint64_t seed = 1) {
    namespace fh = kccl::fabric::host;
    fh::Built b = fh::build(spec, profile.t_r);
    fh::Layout::Result lr = b.layout.finalize(profile, spec.type);
    FabricOptions fo;
    fo.seed = seed;
    Fabric f(lr.grid, fo);
    for (auto& p : lr.programs) f.launch(p.pe, p.args, [](Pe& pe) { kccl::fabric::run_steps(pe); }, 4 * spec.B);
    const auto& e = b.expect;
    const uint32_t B = spec.B;
    const kccl::fabric::Combine cb{spec.op, spec.type};
    std::vector<uint32_t> ref(B);
    for (size_t i = 0; i < e.pes.size(); ++i) {
        Pe* pe = f.pe(e.pes[i]);
        if (!pe) throw FabricError("fabric pattern " + spec.name + ": PE " + fh::to_string(e.pes[i]) + " takes part but runs no kernel");
        const bool write = e.kind != fh::Expect::broadcast || e.pes[i] == e.root;
        if (!write) continue;
        uint32_t* v = pe->ptr<uint32_t>(0, B);
        for (uint32_t k = 0; k < B; ++k) {
            v[k] = input_word(spec.type, seed, i, k);
            ref[k] = (i == 0 || e.kind == fh::Expect::broadcast) ? v[k] : kccl::fabric::combine_word(cb, ref[k], v[k]);
        }
    }
    const RunResult r = f.run();
    PatternRun out;
    out.pattern = spec.name;
    out.cycles = r.cycles;
    out.wall_seconds = r.wall_seconds;
    out.colors = lr.colors_used;
    out.streams = r.streams;
    auto check = [&](fh::Coord c) {
        const uint32_t* v = f.pe(c)->ptr<uint32_t>(0, B);
        for (uint32_t k = 0; k < B; ++k) out.wrong += v[k] != ref[k];
    };
    if (e.kind == fh::Expect::reduce) check(e.root);
    else
        for (const auto& c : e.pes) check(c);
    return out;
}

}  // namespace kccl::emu::fabric
