#!/usr/bin/env bash
# Builds kccl_bench (Release), runs every benchmark with repetitions and prints the medians and
# the goal ratios (scripts/bench_report.py), all from this one run.
#
#   scripts/bench.sh                         # every component: several minutes on 2 cores
#   scripts/bench.sh --benchmark_filter='^(baseline/(memcpy|memcpy_ring|atomic_ping_pong)|emulation)/'
#                                            # the foundation figures alone, ~1 minute
# Extra arguments go to kccl_bench.
#
# Environment: BUILD_DIR (default build/bench), OUT (default $BUILD_DIR/foundation.json),
# REPETITIONS (default 5), KCCL_BENCH_SPIN_POLLS / KCCL_BENCH_YIELD_POLLS (see benchmarks/harness.hpp).
#
# The machine should be otherwise idle: the handoff benchmarks need both cores (each result
# carries cpu_cores; the report warns when it was below 1.5).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build/bench}
out=${OUT:-$build/foundation.json}
reps=${REPETITIONS:-5}

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
      -DKCCL_BUILD_TESTS=OFF -DKCCL_BUILD_EXAMPLES=OFF -DKCCL_BUILD_BENCHMARKS=ON >/dev/null
cmake --build "$build" --target kccl_bench -j "$(nproc)"

# Idle share of all CPUs over one second: the handoff benchmarks need both cores to themselves.
idle_percent() {
    local a b
    a=($(awk '/^cpu /{print $5+$6, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)); sleep 1
    b=($(awk '/^cpu /{print $5+$6, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat))
    echo $(( (b[0] - a[0]) * 100 / (b[1] - a[1]) ))
}
idle=$(idle_percent)
echo "CPU idle before the run: ${idle}%   load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$idle" -lt 90 ]; then
    echo "warning: something else is using the CPUs; handoff results will not be comparable (see cpu_cores)" >&2
fi
mkdir -p "$(dirname "$out")"
# Repetitions run in random order across benchmarks, so a slow spell of this shared machine
# hits all of them alike instead of one benchmark's five repetitions.
"$build/benchmarks/kccl_bench" \
    --benchmark_repetitions="$reps" \
    --benchmark_enable_random_interleaving=true \
    --benchmark_report_aggregates_only=true \
    --benchmark_out="$out" --benchmark_out_format=json \
    "$@"
echo
echo "results: $out"
python3 "$root/scripts/bench_report.py" "$out"
