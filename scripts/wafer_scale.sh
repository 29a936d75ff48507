#!/usr/bin/env bash
# wafer_scale.sh — the wafer fabric's scale points, measured: auto's 2D allreduce on 64 x 64 and
# 256 x 256 PEs (B = 1028), and a 2D reduce over a full WSE-2 wafer (750 x 994 PEs, B = 1024),
# each verified (#wrong 0) and timed with /usr/bin/time -v (wall, CPU, peak resident memory),
# with the machine's load average before each run (the host time depends on it; the cycles do not).
#
#   scripts/wafer_scale.sh [all|small|wafer]     (default all; builds coll_perf in build/default)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
case "$what" in all|small|wafer) ;; *) echo "usage: scripts/wafer_scale.sh [all|small|wafer]" >&2; exit 2 ;; esac
[[ -x /usr/bin/time ]] || { echo "wafer_scale.sh: needs /usr/bin/time (GNU time)" >&2; exit 2; }
if [[ ! -d build/default ]]; then cmake --preset default >/dev/null; fi
cmake --build --preset default -j2 --target coll_perf >/dev/null
tool=build/default/examples/coll_perf

run() {
  echo "== coll_perf $*"
  echo "   load: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) on $(nproc) cores"
  local log
  log=$(mktemp)
  if ! /usr/bin/time -v "$tool" "$@" >"$log" 2>&1; then cat "$log"; rm -f "$log"; return 1; fi
  grep -E '^#  +size|^ +[0-9]' "$log"
  awk -F': ' '/Elapsed \(wall clock\)/ {w=$2} /User time/ {u=$2} /System time/ {s=$2}
              /Maximum resident set size/ {m=$2}
              END {printf "   wall %s, CPU %.2f s (user %s + sys %s), peak RSS %.2f GiB\n", w, u + s, u, s, m / 1048576}' "$log"
  rm -f "$log"
}

if [[ "$what" != wafer ]]; then
  run --grid 64x64 --timing wafer -b 4112 -e 4112
  run --grid 256x256 --timing wafer -b 4112 -e 4112
fi
if [[ "$what" != small ]]; then
  run --grid 750x994 --timing wafer --method reduce_2d -b 4096 -e 4096
fi
