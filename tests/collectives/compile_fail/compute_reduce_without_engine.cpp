// expect: this backend has no compute-engine call
// A backend without compute_l1 / compute_charge (the tt-metal shim: a data-movement kernel cannot
// drive the FPU) refuses hal::compute_reduce at compile time, naming why.
#include <collectives/ops.hpp>
#include <hal/contract.hpp>

struct NoComputeEngine {
    unsigned char* l1_ptr(uint32_t, uint32_t) { return nullptr; }
};

void reduce(NoComputeEngine& h) {
    kccl::hal::compute_reduce<kccl::coll::Reducer<float, kccl::coll::RedOp::sum>>(h, 0, 0, 0, 4);
}
