// kccl/fabric/ops/all_reduce.hpp — tt-metal's all_reduce on the chip fabric, as tt-metal defines
// it: ReduceScatter followed by AllGather (make_reduce with all_reduce, run by run_reduce_sender
// and run_reduce_mux of reduce_scatter.hpp):
//   * the reduce_scatter with the final sums written into the output tensor at r * slice, then,
//     as a second program with its own start barrier (ReducePlan::phases() == 2), all_gather.hpp's
//     make_all_gather of that slice (multicast streams) from worker 0 of each direction (tt-metal's
//     all_gather_async here: one worker per direction, one mux buffer).
#pragma once

#include <fabric/ops/all_gather.hpp>
#include <fabric/ops/reduce_scatter.hpp>
