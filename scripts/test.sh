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
      -DKCCL_TOOLS_OPTIMIZE=-O0 -DKCCL_COLL_PERF_TYPES_PER_TU=4 -DKCCL_TESTS_QUICK_OPTIONS=-O0 \
      -DKCCL_TESTS_UNITY_ACROSS_FOLDERS=ON -DKCCL_TESTS_UNITY_BATCH=64 \
      -DKCCL_TESTS_ONLY_HEAVY=$only_heavy "-DKCCL_TESTS_ONLY_HEAVY_ALSO=$e2e_sweeps" >/dev/null
cmake --build --preset default -j"$jobs"

# The bounded sanitizer builds compile beside the default ctest: its gates have serial steps
# (configure, install, link) that leave a core idle. Their output goes to build/sanitizers-build.log,
# printed here when they are done (or fail).
san_pid=""
san_log=build/sanitizers-build.log
if (( sanitizers && !full )); then
  for p in asan tsan; do
    # Batches from every folder, sized so that the two cores each compile one (asan: ~55 quick
    # files, tsan: ~9).
    skip="" batch=5
    if [[ $p == asan ]]; then skip=$e2e_sweeps batch=30; fi
    cmake --preset "$p" -DKCCL_BUILD_BENCHMARKS=OFF "-DKCCL_TESTS_SKIP_REGEX=$skip" -DKCCL_TESTS_SKIP_HEAVY=ON \
      -DKCCL_TESTS_UNITY_ACROSS_FOLDERS=ON -DKCCL_TESTS_UNITY_BATCH=$batch >/dev/null
  done
  step "asan, tsan: build the bounded sanitizer runs' kccl_tests (in the background, log: $san_log)"
  ( cmake --build --preset asan -j"$jobs" --target kccl_tests &&
      cmake --build --preset tsan -j"$jobs" --target kccl_tests ) >"$san_log" 2>&1 &
  san_pid=$!
  kill_tree() { local c; for c in $(pgrep -P "$1"); do kill_tree "$c"; done; kill "$1" 2>/dev/null || true; }
  trap '[[ -n $san_pid ]] && kill_tree "$san_pid"' EXIT
fi

step "default: test"
ctest --preset default -j"$jobs"
if (( long )); then
  step "default: long stress tests"
  ./build/default/tests/kccl_tests "[long]"
fi

if (( sanitizers )); then
  if [[ -n $san_pid ]]; then
    step "asan, tsan: waiting for their builds"
    if ! wait "$san_pid"; then
      san_pid=""
      cat "$san_log"
      echo "test.sh: the sanitizer builds failed (their output is above and in $san_log)" >&2
      exit 1
    fi
    san_pid=""
  fi
  for p in asan tsan; do
    if (( full )); then
      step "$p: build every test file and the demos, run them"
      cmake --preset "$p" -DKCCL_BUILD_BENCHMARKS=OFF -DKCCL_TESTS_SKIP_REGEX= -DKCCL_TESTS_ONLY_REGEX= -DKCCL_TESTS_SKIP_HEAVY=OFF -DKCCL_TESTS_UNITY_ACROSS_FOLDERS=OFF -DKCCL_TESTS_UNITY_BATCH=8 \
        -DKCCL_TESTS_LONG_MATRIX=$matrix >/dev/null
      cmake --build --preset "$p" -j"$jobs" --target kccl_tests ring_ping coll_perf wafer_model
      ctest --preset "$p" -j"$jobs"
    else
      step "$p: run the unit tests (bounded form)"
      ctest --preset "$p" -j"$jobs" -L unit
    fi
  done
fi
step "all tests passed"
