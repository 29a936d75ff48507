// examples/collectives/collectives_kernels.hpp — a device kernel that runs one collective of a
// uint32 tensor with sum on its group's link (IPCQ or EDM, read from the group arguments), as
// tools/coll_perf.cpp and the demo do on the emulation. Compiled for the tt-metal Tensix cores by
// scripts/shim_gate.sh (kccl_gate_instantiate below): proof that the executor, the algorithms,
// both link models and the reducers build as freestanding RISC-V kernel code.
//
// Why uint32 and not bfloat16: the data-movement cores (BRISC/NCRISC) are rv32im, without an FPU.
// A floating combine (bfloat16/half/float sum, prod, min, max, ...) compiles to libgcc's soft-float
// calls (__addsf3 for bfloat16 sum), which the gate does not accept as a kernel's undefined symbols.
// Conversions bfloat16/half <-> float are bit operations and build; moving ops (all_gather, ...)
// of any type need no arithmetic, but the executor instantiates every verb, reductions included.
//
// Runtime args: the group block (coll::host::GroupPlan::worker_args), the link's block, then this
// kernel's own six words: op, method, topology, chunks (Shape::chunks), chunk_elems, count; the
// root is rank 0. Buffers: the plan's input / output / scratch (prepare runs in place).
#pragma once

#include <collectives/collectives.hpp>
#include <collectives/tensor_sliced.hpp>

#include <stdint.h>

namespace coll_example {

template <class H>
void run_collective(H& hal) {
    namespace kc = kccl::coll;
    const kc::GroupArgs g = kc::load_group_args(hal, 0);
    auto body = [&](auto& link, uint32_t own) {
        kc::ExecParams p;
        p.shape.op = kc::Op(hal.arg(own + 0));
        p.shape.method = kc::Method(hal.arg(own + 1));
        p.shape.topo = kc::Topology(hal.arg(own + 2));
        p.shape.ranks = g.ranks;
        p.shape.chunks = hal.arg(own + 3);
        p.rank = g.rank;
        p.chunk_elems = hal.arg(own + 4);
        p.count = hal.arg(own + 5);
        p.buf = {g.input_l1, g.output_l1, g.scratch_l1, g.input_l1};
        using R = kc::Reducer<uint32_t, kc::RedOp::sum>;
        kc::execute_any<R>(link, p, kc::RingDirs{g.rank, g.ranks, g.next_dir, g.prev_dir});
        link.quiesce();
    };
    if (g.transport == kc::Transport::ipcq) {
        kc::IpcqLink<H> link(hal, g.link_args);
        body(link, g.link_args + kc::ipcq_link_args);
    } else {
        kc::EdmLink<H> link(hal, g.link_args);
        body(link, g.link_args + kc::edm_link_args(hal.arg(g.link_args)));
    }
}

/// A tensor all_gather along W of a width-sharded tiled uint32 tensor into an interleaved output
/// (tensor_sliced.hpp), one worker per rank; built by the gate only, to prove the tensor path is
/// freestanding RISC-V code. Buffers: input_l1 holds the small tensor's units, output_l1 the big
/// one's, scratch_l1 the work area (runtime sizes are the host's business).
template <class H>
void run_tensor_gather(H& hal) {
    namespace kc = kccl::coll;
    const kc::GroupArgs g = kc::load_group_args(hal, 0);
    kc::TensorSliceParams tp;
    tp.shape.op = kc::Op::all_gather;
    tp.shape.ranks = g.ranks;
    tp.split.small.shape[2] = 32;
    tp.split.small.shape[3] = 64;
    tp.split.small.elem_bytes = 4;
    tp.split.small.layout = kc::TensorLayout::tile;
    tp.split.small.memory = kc::MemoryLayout::width_sharded;
    tp.split.small.shard = {2, 1, 32, 32, kc::ShardOrientation::row_major};
    tp.split.big = tp.split.small;
    tp.split.big.shape[3] = 64 * g.ranks;
    tp.split.big.memory = kc::MemoryLayout::interleaved;
    tp.split.big.banks = 4;
    tp.split.dim = 3;
    tp.split.parts = g.ranks;
    tp.rank = g.rank;
    tp.small = {g.input_l1, kc::geometry(tp.split.small).unit_bytes};
    tp.big = {g.output_l1, kc::geometry(tp.split.big).unit_bytes};
    tp.work = g.scratch_l1;
    using R = kc::Reducer<uint32_t, kc::RedOp::sum>;
    if (g.transport == kc::Transport::ipcq) {
        kc::IpcqLink<H> link(hal, g.link_args);
        kc::execute_tensor_slice<R>(link, tp, kc::RingDirs{g.rank, g.ranks, g.next_dir, g.prev_dir});
        link.quiesce();
    } else {
        kc::EdmLink<H> link(hal, g.link_args);
        kc::execute_tensor_slice<R>(link, tp, kc::RingDirs{g.rank, g.ranks, g.next_dir, g.prev_dir});
        link.quiesce();
    }
}

}  // namespace coll_example

template <class H>
void kccl_gate_instantiate(H& hal) {
    coll_example::run_collective(hal);
    coll_example::run_tensor_gather(hal);
}
