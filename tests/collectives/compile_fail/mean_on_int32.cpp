// expect: The mean operator is defined only on floating types
#include <collectives/ops.hpp>
using namespace kccl::coll;
template struct kccl::coll::Reducer<int32_t, RedOp::mean>;
