// benchmarks/wafer/wafer_patterns.cpp — host time of the thesis's patterns on the emulated wafer
// fabric (run_pattern: layout, launch, run, check), with the modelled cycles and the number of
// wrong result elements as counters (cycles are exact model values; wrong must be 0).
//
//   ./build/bench/benchmarks/kccl_bench --benchmark_filter=fabric/
#include <emulation/wafer/run.hpp>
#include <wafer/auto.hpp>

#include <benchmark/benchmark.h>

namespace {

namespace fh = kccl::wafer::host;

void run(benchmark::State& state, fh::PatternSpec s) {
    kccl::emu::wafer::PatternRun r;
    for (auto _ : state) {
        r = kccl::emu::wafer::run_pattern(s);
        benchmark::DoNotOptimize(r.cycles);
    }
    state.counters["cycles"] = double(r.cycles);
    state.counters["wrong"] = double(r.wrong);
    state.counters["colors"] = double(r.colors);
    state.counters["emulated_s"] = r.wall_seconds;
}

fh::PatternSpec one_d(const char* name, uint32_t P, uint32_t B) {
    fh::PatternSpec s;
    s.name = name;
    s.P = P;
    s.B = B;
    return s;
}
fh::PatternSpec two_d(const char* name, uint32_t M, uint32_t B) {
    fh::PatternSpec s;
    s.name = name;
    s.M = M;
    s.B = B;
    return s;
}

/// The run "auto" chooses for an allreduce on M x M PEs of B elements (the cost model's cheapest).
fh::PatternSpec auto_allreduce_2d(uint32_t M, uint32_t B) {
    kccl::wafer::AutoRequest q;
    q.collective = kccl::coll::Op::all_reduce;
    q.rows = q.cols = M;
    q.B = B;
    return kccl::emu::wafer::spec_of(kccl::wafer::choose(q).args, M, M, B);
}

void BM_chain_512_4096(benchmark::State& st) { run(st, one_d("chain", 512, 4096)); }
void BM_two_phase_512_4096(benchmark::State& st) { run(st, one_d("two_phase", 512, 4096)); }
void BM_tree_512_64(benchmark::State& st) { run(st, one_d("tree", 512, 64)); }
void BM_optimal_512_512(benchmark::State& st) { run(st, one_d("optimal", 512, 512)); }
void BM_reduce_2d_64_1028(benchmark::State& st) { run(st, two_d("reduce_2d", 64, 1028)); }
void BM_allreduce_2d_64_1028(benchmark::State& st) { run(st, two_d("allreduce_2d", 64, 1028)); }
// The scale points of docs/wafer.md: auto's 2D allreduce at 64 x 64 and 256 x 256, and the 2D
// reduce at 256 x 256 (the full WSE-2 wafer, 750 x 994, is scripts/wafer_scale.sh: a minute).
void BM_auto_allreduce_2d_64_1028(benchmark::State& st) { run(st, auto_allreduce_2d(64, 1028)); }
void BM_auto_allreduce_2d_256_1028(benchmark::State& st) { run(st, auto_allreduce_2d(256, 1028)); }
void BM_reduce_2d_256_1024(benchmark::State& st) { run(st, two_d("reduce_2d", 256, 1024)); }

}  // namespace

BENCHMARK(BM_chain_512_4096)->Name("fabric/chain/P512/B4096")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_two_phase_512_4096)->Name("fabric/two_phase/P512/B4096")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_tree_512_64)->Name("fabric/tree/P512/B64")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_optimal_512_512)->Name("fabric/optimal/P512/B512")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_reduce_2d_64_1028)->Name("fabric/reduce_2d/64x64/B1028")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_allreduce_2d_64_1028)->Name("fabric/allreduce_2d/64x64/B1028")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_auto_allreduce_2d_64_1028)->Name("fabric/auto_allreduce_2d/64x64/B1028")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_auto_allreduce_2d_256_1028)
    ->Name("fabric/auto_allreduce_2d/256x256/B1028")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK(BM_reduce_2d_256_1024)->Name("fabric/reduce_2d/256x256/B1024")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
