// The rank kernel the chip-fabric collective tests run on every chip: writes the seeded input
// (testing/inputs.hpp's input_value), runs the collective with the executor over the fabric
// link (every rank reachable: AllPairsDirs) and drains the link.
#pragma once

#include <collectives/collectives.hpp>
#include <emulation/fabric/fabric.hpp>
#include <emulation/collective.hpp>
#include <testing/inputs.hpp>

#include <algorithm>
#include <cstdint>

namespace kccl::coll::test {

/// A kernel for emu::fabric::Bed::add: layout L, inputs from (seed, redop, reduces), reducer Red.
template <class Red>
auto seeded_fabric_kernel(const emu::collective::Layout& L, uint64_t seed, RedOp redop, bool reduces) {
    using T = typename Red::value_type;
    return [L, seed, redop, reduces](auto& hal, auto& link, const emu::fabric::RankBuffers& b) -> uint64_t {
        T* in = reinterpret_cast<T*>(hal.l1_ptr(b.input_l1, std::max(L.in_elems, 1u) * uint32_t(sizeof(T))));
        for (uint32_t i = 0; i < L.count; ++i) in[i] = kccl::testing::input_value<T>(seed, redop, reduces, b.rank, i);
        ExecParams ep;
        ep.shape = L.shape;
        ep.rank = b.rank;
        ep.chunk_elems = L.chunk_elems;
        ep.buf = {b.input_l1, b.output_l1, b.scratch_l1, b.input_l1};
        ep.count = L.count;
        execute_any<Red>(link, ep, AllPairsDirs{b.rank, b.ranks});
        link.quiesce();
        return 0;
    };
}

}  // namespace kccl::coll::test
