// expect: 
#include <collectives/ops.hpp>
using namespace kccl::coll;
template struct kccl::coll::Reducer<half, RedOp::mean>;
template struct kccl::coll::Reducer<bool, RedOp::logical_or>;
template struct kccl::coll::Reducer<uint64_t, RedOp::bit_xor>;
template struct kccl::coll::Reducer<bfloat16, RedOp::square_add>;
int main() { return 0; }
