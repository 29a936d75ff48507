// kccl/collectives/host/tensor_plan.hpp — the tensor slicer on the host: for an all_gather or
// reduce_scatter of an N-D tensor along a fracture dim, each worker's slice shape and the pages
// (tiles) it moves, with every page's place in both tensors (tensor.hpp's address math).
//
//   auto split = kccl::coll::host::fracture(input, /*dim=*/3, /*cluster=*/8, output_memory);
//   auto plan  = kccl::coll::host::plan_tensor(Op::all_gather, split, /*workers=*/4);
//   plan.workers[w].slice_rows / slice_cols  -> worker w's slice of each rank's tensor (2-D view)
//   plan.workers[w].pages                    -> its small-tensor pages, in the order it sends them
//   plan.workers[w].runs[r]                  -> where those pages go in (come from) block r of the big tensor
//
// Contract
//   * fracture(small, dim, cluster, big_memory) builds the TensorSplit: the big tensor is `small`
//     with shape[dim] * cluster, its memory layout (interleaved banks, or the sharding) taken from
//     big_memory (its shape, layout and element size are ignored).
//   * plan_tensor checks both tensors and the split and throws TensorPlanError (std::invalid_argument)
//     naming what is wrong and what is allowed (tensor_error_text / split_error_text), prefixed
//     with which tensor. It computes exactly what execute_tensor_slice (tensor_sliced.hpp) does on
//     the device, so tools and tests can show or check it without running anything.
//   * Host only (C++17, may allocate and throw).
#pragma once

#include <collectives/schedule.hpp>
#include <collectives/tensor.hpp>
#include <common/host/error.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace kccl::coll::host {

struct TensorPlanError : ErrorOf<Errc::plan> {
    using ErrorOf::ErrorOf;
};

/// One page of a worker's list and where its runs land in one block of the big tensor.
struct PageMove {
    uint32_t page = 0;      ///< small-tensor page id (row * page_cols + column)
    TensorLoc small{};      ///< where it lives in the small tensor
    std::vector<PageRun> runs;  ///< its runs in the big tensor's block (one per big page it touches)
};

struct WorkerPlan {
    PageRect rect{};
    uint32_t slice_rows = 0, slice_cols = 0;  ///< elements of the 2-D view each rank's slice spans
    std::vector<uint32_t> pages;              ///< small-tensor page ids, in send order
    std::vector<std::vector<PageMove>> runs;  ///< runs[block][k]: page k of the list in block `block`
};

struct TensorPlan {
    Op op = Op::all_gather;
    TensorSplit split{};
    TensorGeom small{}, big{};
    std::vector<WorkerPlan> workers;
};

inline std::string tensor_spec_text(const TensorSpec& s) {
    static const char* mem[] = {"interleaved", "height-sharded", "width-sharded", "block-sharded"};
    std::string r = "[" + std::to_string(s.shape[0]) + "," + std::to_string(s.shape[1]) + "," +
                    std::to_string(s.shape[2]) + "," + std::to_string(s.shape[3]) + "] " +
                    (s.layout == TensorLayout::tile ? "tile" : "row-major") + " " + mem[unsigned(s.memory) & 3];
    if (s.memory == MemoryLayout::interleaved) r += " over " + std::to_string(s.banks) + " banks";
    else
        r += " " + std::to_string(s.shard.shard_h) + "x" + std::to_string(s.shard.shard_w) + " shards on " +
             std::to_string(s.shard.grid_x) + "x" + std::to_string(s.shard.grid_y) + " cores";
    return r;
}

/// The split of an all_gather (small = input) / reduce_scatter (small = output) along `dim`.
inline TensorSplit fracture(const TensorSpec& small, uint32_t dim, uint32_t cluster, const TensorSpec& big_memory) {
    TensorSplit t;
    t.small = small;
    t.big = small;
    if (dim < kTensorDims) t.big.shape[dim] = small.shape[dim] * cluster;
    t.big.memory = big_memory.memory;
    t.big.banks = big_memory.banks;
    t.big.shard = big_memory.shard;
    t.dim = dim;
    t.parts = cluster;
    return t;
}

inline TensorPlan plan_tensor(Op op, const TensorSplit& t, uint32_t workers) {
    if (op != Op::all_gather && op != Op::reduce_scatter)
        throw TensorPlanError(std::string("tensor plan: op ") + op_name(op) +
                              " does not cut a tensor along a dim; allowed: all_gather, reduce_scatter");
    if (workers == 0) throw TensorPlanError("tensor plan: 0 workers; allowed: at least 1 worker per rank");
    const char* small_role = op == Op::all_gather ? "input" : "output";
    const char* big_role = op == Op::all_gather ? "output" : "input";
    if (const TensorError e = check(t.small); e != TensorError::ok)
        throw TensorPlanError(std::string("tensor plan: the per-rank ") + small_role + " " + tensor_spec_text(t.small) +
                              ": " + tensor_error_text(e));
    if (const TensorError e = check(t.big); e != TensorError::ok)
        throw TensorPlanError(std::string("tensor plan: the gathered ") + big_role + " " + tensor_spec_text(t.big) +
                              ": " + tensor_error_text(e));
    if (const SplitError e = check(t); e != SplitError::ok)
        throw TensorPlanError("tensor plan: " + tensor_spec_text(t.small) + " along dim " + std::to_string(t.dim) +
                              " over " + std::to_string(t.parts) + " ranks into " + tensor_spec_text(t.big) + ": " +
                              split_error_text(e));
    TensorPlan p;
    p.op = op;
    p.split = t;
    p.small = geometry(t.small);
    p.big = geometry(t.big);
    for (uint32_t w = 0; w < workers; ++w) {
        WorkerPlan wp;
        wp.rect = worker_rect(p.small, workers, w);
        wp.slice_rows = wp.rect.rows * p.small.ph;
        wp.slice_cols = wp.rect.cols * p.small.pw;
        wp.runs.resize(t.parts);
        for (uint32_t k = 0; k < wp.rect.pages(); ++k) {
            const uint32_t pr = wp.rect.row_at(k), pc = wp.rect.col_at(k);
            wp.pages.push_back(pr * p.small.page_cols + pc);
            for (uint32_t b = 0; b < t.parts; ++b) {
                PageMove m;
                m.page = wp.pages.back();
                m.small = locate_page(t.small, p.small, pr, pc);
                for_each_run(t, p.small, p.big, pr, pc, b, [&](const PageRun& r) { m.runs.push_back(r); });
                wp.runs[b].push_back(std::move(m));
            }
        }
        p.workers.push_back(std::move(wp));
    }
    return p;
}

}  // namespace kccl::coll::host
