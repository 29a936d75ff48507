#!/usr/bin/env bash
# scripts/demo.sh [coll_perf options] — builds and runs the main demo: an emulated T3000 (8 chips,
# a 2x4 mesh of Wormholes, used as a ring 0 1 2 3 7 6 5 4) running all_gather, reduce_scatter and
# all_reduce of a bfloat16 tensor over EDM, every result verified against a host reference, printed
# as an nccl-tests table (tools/coll_perf.cpp; --help lists its options, extra ones are appended).
#   scripts/demo.sh ring_ping [ring_ping options]   runs the earlier demo, a ring round-trip ping
#                                                   (examples/ring_ping).
# Installs cmake/g++ if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh demo
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=Release -DKCCL_BUILD_TESTS=OFF -DKCCL_BUILD_BENCHMARKS=OFF >/dev/null
if [[ "${1:-}" == "ring_ping" ]]; then
  shift
  cmake --build build/demo --target ring_ping -j2 >/dev/null
  exec ./build/demo/examples/ring_ping "$@"
fi
cmake --build build/demo --target coll_perf -j2 >/dev/null
exec ./build/demo/examples/coll_perf --topology t3000 --transport edm --ranks 8 -d bfloat16 -o sum \
  --coll all_gather,reduce_scatter,all_reduce -b 8K -e 8M -f 8 -n 5 -w 1 "$@"
