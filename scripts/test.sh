#!/usr/bin/env bash
# scripts/test.sh — installs what the tests need (apt, when missing) and runs every test:
#   1. default preset (RelWithDebInfo; unity batches; CI's compile options, docs/testing.md): build
#      everything, ctest (the heavy test files and the end-to-end sweeps, the rv32 shim gate,
#      header-alone compiles, find_package/add_subdirectory consumers, the demo); the benchmarks
#      are compiled at -O0 (binaries that refuse to run), not run;
#   2. asan preset (ASan+UBSan): the quick test files (tests/CMakeLists.txt: not in
#      KCCL_TESTS_RUN_HEAVY), but the end-to-end sweeps, at -O0; tsan preset: the quick files that
#      run the thread engine (docs/testing.md says what each leaves out and why); ctest runs them
#      one test file per process. With --no-sanitizers step 1 builds and runs every test file.
# Options: --no-sanitizers (step 1 only), --full-sanitizers (every test file and the demos under
# both sanitizers; ~1 hour on 2 cores), --long (also the [long] stress tests).
# CI (.ci/run) runs exactly this, without options (docs/testing.md has its time).
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=1
full=0
long=0
for a in "$@"; do
  case $a in
    --no-sanitizers) sanitizers=0 ;;
    --full-sanitizers) full=1 ;;
    --long) long=1 ;;
    *) echo "usage: scripts/test.sh [--no-sanitizers | --full-sanitizers] [--long]" >&2; exit 2 ;;
  esac
done

bash scripts/deps.sh test
jobs=$(nproc 2>/dev/null || echo 2)

start=$SECONDS
step() { printf '\n=== [%4ds] %s ===\n' $((SECONDS - start)) "$*"; }

# The [long] sweeps' extra instantiations of the end-to-end bed only when they are run (tests/CMakeLists.txt).
matrix=OFF
if (( long )); then matrix=ON; fi

# With the sanitizer runs below, the default build's kccl_tests holds the heavy test files (and the
# end-to-end sweeps asan leaves out) and the asan run the quick ones, each compiled once: every case
# runs in CI, the quick ones under ASan + UBSan at the -O0 they would have here (tests/CMakeLists.txt,
# KCCL_TESTS_ONLY_HEAVY). Without them (--no-sanitizers) the default build holds every file.
e2e_sweeps="run_standard|with_case_reducer"
only_heavy=OFF
if (( sanitizers && !long )); then only_heavy=ON; fi

step "default: configure, build"
# The benchmarks are compiled, not timed, here: in unity batches (benchmarks/CMakeLists.txt).
cmake --preset default -DKCCL_TESTS_LONG_MATRIX=$matrix -DKCCL_BENCH_UNITY=ON -DKCCL_BENCH_COMPILE_CHECK=ON \
      -DKCCL_TOOLS_OPTIMIZE=-O0 -DKCCL_COLL_PERF_TYPES_PER_TU=4 -DKCCL_COLL_DEMO_SHARES_OBJECTS=ON -DKCCL_TESTS_QUICK_OPTIONS=-O0 \
      -DKCCL_TESTS_UNITY_ACROSS_FOLDERS=ON -DKCCL_TESTS_UNITY_BATCH=64 \
      -DKCCL_TESTS_ONLY_HEAVY=$only_heavy "-DKCCL_TESTS_ONLY_HEAVY_ALSO=$e2e_sweeps" >/dev/null
cmake --build --preset default -j"$jobs"

# The bounded sanitizer builds compile beside the default ctest: its gates have serial steps
# (configure, install, link) that leave a core idle. Their output goes to build/<preset>-build.log,
# printed here if they fail.
declare -A san_pid=()
if (( sanitizers && !full )); then
  for p in asan tsan; do
    # Batches from every folder, sized so that the two cores each compile one (asan: ~55 quick
    # files, tsan: ~9).
    skip="" batch=5
    if [[ $p == asan ]]; then skip=$e2e_sweeps batch=30; fi
    # The clean-over-N-seeds sweeps over N/5 seeds (tests/sweep.hpp); the default run takes every seed.
    cmake --preset "$p" -DKCCL_BUILD_BENCHMARKS=OFF "-DKCCL_TESTS_SKIP_REGEX=$skip" -DKCCL_TESTS_SKIP_HEAVY=ON \
      -DKCCL_TESTS_UNITY_ACROSS_FOLDERS=ON -DKCCL_TESTS_UNITY_BATCH=$batch -DKCCL_TESTS_SWEEP_DIVISOR=5 >/dev/null
  done
  step "asan, tsan: build the bounded sanitizer runs' kccl_tests (in the background, logs: build/{asan,tsan}-build.log)"
  # Two builds side by side: tsan's (three small units) is done during the default ctest, so its run
  # starts right after it, beside the end of asan's build, whose run comes last.
  for p in tsan asan; do
    cmake --build --preset "$p" -j"$jobs" --target kccl_tests >"build/$p-build.log" 2>&1 &
    san_pid[$p]=$!
  done
  kill_tree() { local c; for c in $(pgrep -P "$1"); do kill_tree "$c"; done; kill "$1" 2>/dev/null || true; }
  trap 'for p in "${!san_pid[@]}"; do kill_tree "${san_pid[$p]}"; done' EXIT
fi

step "default: test"
ctest --preset default -j"$jobs"
if (( long )); then
  step "default: long stress tests"
  ./build/default/tests/kccl_tests "[long]"
fi

if (( sanitizers )); then
  for p in tsan asan; do
    if (( full )); then
      step "$p: build every test file and the demos, run them"
      cmake --preset "$p" -DKCCL_BUILD_BENCHMARKS=OFF -DKCCL_TESTS_SKIP_REGEX= -DKCCL_TESTS_ONLY_REGEX= -DKCCL_TESTS_SKIP_HEAVY=OFF -DKCCL_TESTS_UNITY_ACROSS_FOLDERS=OFF -DKCCL_TESTS_UNITY_BATCH=8 -DKCCL_TESTS_SWEEP_DIVISOR=1 \
        -DKCCL_TESTS_LONG_MATRIX=$matrix >/dev/null
      cmake --build --preset "$p" -j"$jobs" --target kccl_tests ring_ping coll_perf wafer_model
      ctest --preset "$p" -j"$jobs"
    else
      step "$p: waiting for its build"
      if ! wait "${san_pid[$p]}"; then
        unset "san_pid[$p]"
        cat "build/$p-build.log"
        echo "test.sh: the $p build failed (its output is above and in build/$p-build.log)" >&2
        exit 1
      fi
      unset "san_pid[$p]"
      step "$p: run the unit tests (bounded form)"
      ctest --preset "$p" -j"$jobs" -L unit
    fi
  done
fi
step "all tests passed"
