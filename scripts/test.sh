#!/usr/bin/env bash
# scripts/test.sh — installs what the tests need (apt, when missing) and runs every test:
#   1. default preset (RelWithDebInfo): build everything, ctest (unit + end-to-end tests, the
#      rv32 shim gate, header-alone compiles, find_package/add_subdirectory consumers, the demo
#      and a benchmark smoke run);
#   2. asan preset (ASan+UBSan) and tsan preset: the emulation tests again, sanitized.
# Options: --no-sanitizers (step 1 only), --long (also the [long] stress tests, label `long`).
# CI (.ci/run) runs exactly this: ~23 minutes with the demo on a 2-core machine, cold (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=1
long=0
for a in "$@"; do
  case $a in
    --no-sanitizers) sanitizers=0 ;;
    --long) long=1 ;;
    *) echo "usage: scripts/test.sh [--no-sanitizers] [--long]" >&2; exit 2 ;;
  esac
done

bash scripts/deps.sh test
jobs=$(nproc 2>/dev/null || echo 2)

step() { printf '\n=== %s ===\n' "$*"; }

step "default: configure, build, test"
cmake --preset default >/dev/null
cmake --build --preset default -j"$jobs"
ctest --preset default -j"$jobs"
if (( long )); then
  step "default: long stress tests"
  ./build/default/tests/kccl_tests "[long]"
fi

if (( sanitizers )); then
  for p in asan tsan; do
    step "$p: build and run the emulation tests"
    cmake --preset "$p" -DKCCL_BUILD_BENCHMARKS=OFF >/dev/null
    cmake --build --preset "$p" -j"$jobs" --target kccl_tests ring_ping coll_perf wafer_model
    ctest --preset "$p" -j"$jobs"
  done
fi
step "all tests passed"
