// expect: The logical_and and logical_or operators are defined only on bool
#include <collectives/ops.hpp>
using namespace kccl::coll;
template struct kccl::coll::Reducer<int32_t, RedOp::logical_and>;
