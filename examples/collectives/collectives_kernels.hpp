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

}  // namespace coll_example

template <class H>
void kccl_gate_instantiate(H& hal) {
    coll_example::run_collective(hal);
}
