#!/usr/bin/env bash
# scripts/demo.sh [coll_perf options] — builds and runs the main demo: an emulated T3000 (8 chips,
# a 2x4 mesh of Wormholes, used as a ring 0 1 2 3 7 6 5 4) running all_gather, reduce_scatter and
# all_reduce of a bfloat16 tensor over EDM, every result verified against a host reference, printed
# as an nccl-tests table (tools/coll_perf.cpp; --help lists its options, extra ones are appended).
#   scripts/demo.sh ring_ping [ring_ping options]   runs the earlier demo, a ring round-trip ping
#                                                   (examples/ring_ping).
# Every mode of the tool runs: the collectives (the default, over EDM or IPCQ), --transport fabric
# (the chip fabric) and --grid (the wafer-scale PE fabric); the demo's defaults fill in only what the
# options leave out. Without options (or with options the demo's build takes) it builds coll_demo,
# the tool with only bfloat16 sum over EDM compiled in (the quickest build); -d, -o, --transport or
# --lanes build coll_perf_only_<type>, the tool with that one element type (a few minutes on 2 cores
# the first time). Prints each step; the compiler's output goes to build/demo/build.log (shown on
# failure).
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

# Builds a target, printing the compiler's progress lines and a heartbeat every 15 s. The heartbeat's
# sleep keeps none of the script's output open, so a reader of a pipe (`scripts/demo.sh | tail -1`)
# sees the end as soon as the tool exits.
build() {
  local target=$1 log=build/demo/build.log rc=0
  : >"$log"
  ( while sleep 15 </dev/null >/dev/null 2>&1; do step "  ... still compiling $target"; done ) &
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

# The mode the options select (as coll_perf does): --grid the wafer-scale PE fabric, --transport
# fabric the chip fabric, otherwise the collectives over EDM or IPCQ.
mode=collectives
given=" "
prev=
for a in "$@"; do
  [[ $a == --grid ]] && mode=grid
  [[ $prev == --transport && $a == fabric ]] && mode=fabric
  [[ $a == -* ]] && given+="$a "
  prev=$a
done
has() { [[ $given == *" $1 "* ]]; }
for h in -h --help; do has $h && [[ $mode == collectives ]] && mode=help; done

# The build: coll_demo (bfloat16 sum over EDM, lanes in series, and --grid) when the options allow it,
# else coll_perf_only_<type>: one element type, every mode.
tool=coll_demo
if [[ $mode == fabric ]] || has -o || has --transport || has --lanes || has -d; then
  dtype=bfloat16
  prev=
  for a in "$@"; do [[ $prev == -d ]] && dtype=$a; prev=$a; done
  case $dtype in
    float) t=f32 ;; bfloat16) t=bf16 ;; half) t=f16 ;; int32) t=i32 ;; uint32) t=u32 ;;
    int64) t=i64 ;; uint64) t=u64 ;; bool) t=bool ;;
    *) t=f32 ;;  # the tool names what -d allows
  esac
  tool=coll_perf_only_$t
fi
if [[ $tool == coll_demo ]]; then
  step "compiling the benchmark tool's demo build, coll_demo (3 files; about a minute on 2 cores the first time)"
else
  step "compiling $tool, the benchmark tool with one element type (4 files; a few minutes on 2 cores the first time)"
fi
build $tool

# The demo's defaults, for what the options leave out: in the collectives mode an emulated T3000
# over EDM (a ring of 8 chips) unless another transport, topology or rank count is asked for.
args=()
if [[ $mode == collectives ]]; then
  if ! has --transport && ! has --topology && ! has --ranks; then args+=(--topology t3000 --transport edm --ranks 8)
  elif ! has --transport; then args+=(--transport edm); fi
  has -d || args+=(-d bfloat16)
  has -o || args+=(-o sum)
  has --coll || args+=(--coll all_gather,reduce_scatter,all_reduce)
  has -b || has -e || args+=(-b 8K -e 8M)
  has -f || args+=(-f 8)
  has -n || args+=(-n 5)
  has -w || args+=(-w 1)
fi
args+=("$@")
step "running build/demo/examples/$tool ${args[*]}"
exec ./build/demo/examples/$tool "${args[@]}"
