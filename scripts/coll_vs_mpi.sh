#!/usr/bin/env bash
# kccl's collectives on the emulation beside MPI's on this machine, same inputs, ratios per size:
# builds kccl_coll_vs_mpi and kccl_mpi_coll (Release; they exist only where CMake finds MPI for C),
# runs every row with repetitions (each kccl run paired with an MPI run of the same op and size,
# benchmarks/mpi/coll_vs_mpi.cpp) and prints the medians: the emulation's busbw, MPI's, the ratio.
#
#   scripts/coll_vs_mpi.sh                                   # 2 ops x 2 transports x 2 engines x 1..64 MiB
#   scripts/coll_vs_mpi.sh --benchmark_filter='all_reduce/edm/fibers'
# Extra arguments go to kccl_coll_vs_mpi. Environment: BUILD_DIR (default build/bench),
# REPETITIONS (default 3), OUT (default $BUILD_DIR/coll_vs_mpi.json), KCCL_MPIRUN,
# KCCL_MPIRUN_ARGS (default --oversubscribe), KCCL_BENCH_SPIN_POLLS / KCCL_BENCH_YIELD_POLLS.
# As root, Open MPI refuses to start unless OMPI_ALLOW_RUN_AS_ROOT=1 and
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set: this script sets them when run as root.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build/bench}
out=${OUT:-$build/coll_vs_mpi.json}
reps=${REPETITIONS:-3}

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
      -DKCCL_BUILD_TESTS=OFF -DKCCL_BUILD_EXAMPLES=OFF -DKCCL_BUILD_BENCHMARKS=ON >/dev/null
if ! cmake --build "$build" --target kccl_coll_vs_mpi -j "${JOBS:-1}"; then
    echo "coll_vs_mpi: kccl_coll_vs_mpi did not build (is MPI for C installed? e.g. apt-get install libopenmpi-dev openmpi-bin)" >&2
    exit 1
fi
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)  ($(nproc) CPUs)"
"$build/benchmarks/kccl_coll_vs_mpi" \
    --benchmark_repetitions="$reps" \
    --benchmark_report_aggregates_only=true \
    --benchmark_out="$out" --benchmark_out_format=json \
    "$@" >/dev/null
python3 - "$out" <<'PY'
import json, sys
rows = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") != "median" or "error_occurred" in b:
        continue
    name = b["run_name"].split("/iterations")[0].removeprefix("coll_vs_mpi/")
    rows[name] = (b["busGBps"], b["mpi_busGBps"], b["vs_mpi"], b["floor_busGBps"], b["ceiling_vs_mpi"],
                  b.get("path_ceiling_vs_mpi", b["ceiling_vs_mpi"]))
print(f"{'op/transport/engine/size':40s} {'kccl busGB/s':>12s} {'MPI busGB/s':>12s} {'ratio':>7s} {'floor busGB/s':>13s} {'floor/MPI':>9s} {'path/MPI':>9s}  2x MPI   (medians)")
for name, (k, m, r, f, c, pc) in rows.items():
    verdict = "met" if r >= 2 else "out of reach" if pc < 2 else "SHORT"
    print(f"{name:40s} {k:12.3f} {m:12.3f} {r:7.2f} {f:13.3f} {c:9.2f} {pc:9.2f}  {verdict}")
print("floor: the op's data movement alone, in plain loops on the engine's host threads (fibers 1,"
      " threads every CPU); floor/MPI below 2 means twice MPI's busbw is out of reach on that engine")
print("path: the same with each received byte copied as often as the transport's data path must"
      " (EDM: 3, worker -> EDM, Ethernet, EDM -> worker; IPCQ: 1); path/MPI below 2: out of reach over that transport")
groups = {}
for name, (_, _, r, _, c, pc) in rows.items():
    groups.setdefault("/".join(name.split("/")[:3]), []).append((r, pc))
def gmean(xs):
    g = 1.0
    for x in xs:
        g *= x
    return g ** (1.0 / len(xs))
print("\ngeometric mean of the ratios per op/transport/engine, and the smallest; the data path's ceiling too:")
for g, rc in groups.items():
    rs = [r for r, _ in rc]
    cs = [c for _, c in rc]
    print(f"  {g:30s} geomean {gmean(rs):5.2f}   min {min(rs):5.2f}   path/MPI geomean {gmean(cs):5.2f}   min {min(cs):5.2f}")
PY
