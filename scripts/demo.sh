#!/usr/bin/env bash
# scripts/demo.sh [coll_perf options] — builds and runs the main demo: an emulated T3000 (8 chips,
# a 2x4 mesh of Wormholes, used as a ring 0 1 2 3 7 6 5 4) running all_gather, reduce_scatter and
# all_reduce of a bfloat16 tensor over EDM, every result verified against a host reference, printed
# as an nccl-tests table (tools/coll_perf.cpp; --help lists its options, extra ones are appended).
#   scripts/demo.sh ring_ping [ring_ping options]   runs the earlier demo, a ring round-trip ping
#                                                   (examples/ring_ping).
# Without options (or with options the demo's build takes) it builds coll_demo, the tool with only
# bfloat16 sum over EDM compiled in (two files, the quickest build); -d, -o, --transport or --lanes
# build the full tool, coll_perf (a file per element type, a few minutes on 2 cores the first
# time). Prints each step; the compiler's output goes to build/demo/build.log (shown on failure).
# Installs cmake/g++ if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
step() { printf 'demo [%3ds]: %s\n' $((SECONDS - start)) "$*"; }

step "checking for cmake and a C++20 compiler (scripts/deps.sh demo)"
bash scripts/deps.sh demo
step "configuring build/demo (Release, examples only)"
mkdir -p build
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=Release -DKCCL_BUILD_TESTS=OFF -DKCCL_BUILD_BENCHMARKS=OFF >build/demo.configure.log 2>&1 \
  || { cat build/demo.configure.log; exit 1; }

# Builds a target, printing the compiler's progress lines and a heartbeat every 15 s.
build() {
  local target=$1 log=build/demo/build.log rc=0
  : >"$log"
  ( while sleep 15; do step "  ... still compiling $target"; done ) &
  local beat=$!
  cmake --build build/demo --target "$target" -j2 >"$log" 2>&1 &
  local pid=$!
  tail -n +1 -f "$log" --pid=$pid 2>/dev/null | grep --line-buffered -E '^\[ *[0-9]+%\] (Building|Linking)' \
    | sed -u -E 's/^\[ *([0-9]+%)\] /  [\1] /; s#(Building CXX object |Linking CXX executable ).*/#\1#' || true
  wait $pid || rc=$?
  kill $beat 2>/dev/null || true
  wait $beat 2>/dev/null || true
  if ((rc != 0)); then
    step "building $target failed; the compiler's output:"
    cat "$log"
    exit $rc
  fi
}

if [[ "${1:-}" == "ring_ping" ]]; then
  shift
  step "compiling ring_ping (one file)"
  build ring_ping
  step "running build/demo/examples/ring_ping $*"
  exec ./build/demo/examples/ring_ping "$@"
fi

tool=coll_demo
for a in "$@"; do
  case $a in -d|-o|--transport|--lanes) tool=coll_perf ;; esac
done
if [[ $tool == coll_demo ]]; then
  step "compiling the benchmark tool's demo build, coll_demo (2 files; about a minute on 2 cores the first time)"
else
  step "compiling the full benchmark tool, coll_perf (9 files, a runner per element type; a few minutes on 2 cores the first time)"
fi
build $tool
args=(--topology t3000 --transport edm --ranks 8 -d bfloat16 -o sum
      --coll all_gather,reduce_scatter,all_reduce -b 8K -e 8M -f 8 -n 5 -w 1 "$@")
step "running build/demo/examples/$tool ${args[*]}"
exec ./build/demo/examples/$tool "${args[@]}"
