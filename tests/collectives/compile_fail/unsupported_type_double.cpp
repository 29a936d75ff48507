// expect: Collectives reduce only float, bfloat16, half
#include <collectives/ops.hpp>
using namespace kccl::coll;
template struct kccl::coll::Reducer<double, RedOp::sum>;
