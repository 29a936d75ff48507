// Step programs written by hand for the wafer fabric tests: the argument words a PE running a
// step program reads (data type, step count, then three words per step).
#pragma once

#include <wafer/program.hpp>

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace kccl::test::wafer {

/// The argument words of a u32 step program made of `steps`.
inline std::vector<uint32_t> program(std::initializer_list<::kccl::wafer::Step> steps) {
    std::vector<uint32_t> a{uint32_t(kccl::coll::DataType::u32), uint32_t(steps.size())};
    for (const ::kccl::wafer::Step& s : steps) {
        a.push_back(::kccl::wafer::encode_step_word0(s));
        a.push_back(s.offset);
        a.push_back(s.n);
    }
    return a;
}

/// One step of kind k on `color` over n elements at `offset`.
inline ::kccl::wafer::Step step(::kccl::wafer::StepKind k, uint32_t color, uint32_t n, uint32_t offset = 0) {
    ::kccl::wafer::Step s;
    s.kind = k;
    s.color_a = color;
    s.n = n;
    s.offset = offset;
    return s;
}

}  // namespace kccl::test::wafer
