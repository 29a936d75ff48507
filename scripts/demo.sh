#!/usr/bin/env bash
# scripts/demo.sh [ring_ping options] — builds and runs the main demo: a ring round-trip ping (after
# tt-metal's tech_reports/EthernetMultichip/BasicEthernetGuide.md) on an emulated ring of 8 chips
# (see examples/ring_ping; --help explains it). Installs cmake/g++ if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh demo
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=Release -DKCCL_BUILD_TESTS=OFF -DKCCL_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build/demo --target ring_ping -j2 >/dev/null
exec ./build/demo/examples/ring_ping "$@"
