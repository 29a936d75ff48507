// benchmarks/compile_check.cpp — linked into kccl_bench and kccl_coll_vs_mpi only when they are
// built for a compile check (KCCL_BENCH_COMPILE_CHECK=ON, CI's scripts/test.sh: -O0, compiled and
// never timed). Such a binary refuses to run: figures from an unoptimised build mean nothing.
#include <cstdio>
#include <cstdlib>

namespace {

const int refuse_to_run = [] {
    std::fputs("this benchmark binary was built for a compile check only (KCCL_BENCH_COMPILE_CHECK=ON, -O0): "
               "its figures would mean nothing. Build the benchmarks with scripts/bench.sh (or "
               "scripts/coll_vs_mpi.sh) and run that build.\n",
               stderr);
    std::_Exit(2);
    return 0;
}();

}  // namespace
