// expect: bool supports only logical_and and logical_or
#include <collectives/ops.hpp>
using namespace kccl::coll;
template struct kccl::coll::Reducer<bool, RedOp::max>;
