// expect: The bitwise operators bit_and, bit_or and bit_xor are defined only on integer types
#include <collectives/ops.hpp>
using namespace kccl::coll;
template struct kccl::coll::Reducer<bool, RedOp::bit_and>;
