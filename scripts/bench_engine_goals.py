#!/usr/bin/env python3
"""The emulation's target table for one engine (docs/performance.md), from one kccl_bench JSON (one run, one machine state).

    KCCL_BENCH_ENGINE=fibers build/default/benchmarks/kccl_bench --benchmark_filter="$F" \\
        --benchmark_repetitions=5 --benchmark_out=fibers.json --benchmark_out_format=json
    scripts/bench_engine_goals.py fibers.json [--markdown]
  with F='^(baseline/(memcpy/16384|memcpy_edm_path/16384/buffers/2|atomic_ping_pong/spin/|spsc_ring)|'
         'edm/(stream_16k/buffers/2|ring_ping)|ipcq/rate/64B/n8/poll/l1/iter|emulation/mesh/64x64)'

Prints the load average of the run, then per goal the emulated figure over its baseline as
medians of the repetitions, and for the fiber engine the same over the one host thread's CPU
time (what other processes' preemption does not distort; the two-thread baselines still run on
wall time, so on a loaded machine read the row "against the best baseline repetition" too):
  IPCQ 64 B / 8 slots message rate / cached-index SPSC ring           goal >= 1.0x
  64x64 IPCQ mesh, four neighbours: messages/s on one host thread    goal >= 2 M/s
  EDM worker-to-worker 16 KiB stream / memcpy 16 KiB                  goal >= 0.30x
      and the ceiling: the stream's three copies alone (baseline/memcpy_edm_path) / memcpy
  8-chip EDM ring ping per hop / raw atomic one-way                   goal <= 4x
With every repetition in the file (not --benchmark_report_aggregates_only) the best baseline
repetition (fastest SPSC ring, fastest raw one-way) is used for the strict rows.
Standard library only.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_report import base_name, fmt, load, table, value  # noqa: E402

SPSC = "baseline/spsc_ring/64B/n8"
IPCQ = "ipcq/rate/64B/n8/poll/l1"
MESH = "emulation/mesh/64x64"
STREAM = "edm/stream_16k/buffers/2"
MEMCPY = "baseline/memcpy/16384"
PATH = "baseline/memcpy_edm_path/16384/buffers/2"
RING = "edm/ring_ping/8chips"
RAW = "baseline/atomic_ping_pong/spin"


def repetitions(path):
    """name -> list of the non-aggregate runs (empty if only aggregates were written)."""
    with open(path) as f:
        doc = json.load(f)
    reps = {}
    for b in doc.get("benchmarks", []):
        if b.get("run_type") != "aggregate" and not b.get("error_occurred"):
            reps.setdefault(base_name(b.get("run_name", b["name"])), []).append(b)
    return reps


def best(reps, name, key, higher_is_better):
    vals = [float(r[key]) for r in reps.get(name, []) if key in r]
    if not vals:
        return None
    return max(vals) if higher_is_better else min(vals)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    ctx, med = load(args.json)
    reps = repetitions(args.json)
    load_avg = ", ".join(fmt(x, 2) for x in ctx.get("load_avg", [])) or "?"
    print(f"date: {ctx.get('date', '?')}   load average: {load_avg}   "
          f"engine: {os.environ.get('KCCL_BENCH_ENGINE', '(as run; default fibers)')}")
    rows = []

    def row(what, num, den, goal, higher, unit=""):
        r = None if num is None or den in (None, 0) else num / den
        ok = "" if r is None else ("met" if (r >= goal if higher else r <= goal) else "MISSED")
        rows.append([what, fmt(num, 2) + unit if num is not None else "n/a",
                     fmt(den, 2) + unit if den is not None else "n/a",
                     (fmt(r, 3) + "x") if r is not None else "n/a",
                     f"{'>=' if higher else '<='} {goal}x: {ok}" if ok else ""])

    m = lambda x: None if x is None else x / 1e6  # noqa: E731
    g = lambda x: None if x is None else x / 1e9  # noqa: E731
    spsc = value(med, SPSC, "items_per_second")
    row("IPCQ 64B n8 rate, wall / SPSC ring median [M msg/s]", m(value(med, IPCQ, "items_per_second")), m(spsc), 1.0, True)
    row("IPCQ 64B n8 rate, per CPU-second / SPSC ring median", m(value(med, IPCQ, "msgs_per_cpu_second")), m(spsc), 1.0, True)
    row("IPCQ 64B n8 rate, per CPU-second / best SPSC repetition", m(value(med, IPCQ, "msgs_per_cpu_second")),
        m(best(reps, SPSC, "items_per_second", True)), 1.0, True)
    row("64x64 mesh, wall [M msg/s] / goal 2 M", m(value(med, MESH, "msgs_per_second")), 2.0, 1.0, True)
    row("64x64 mesh, per CPU-second [M msg/s] / goal 2 M", m(value(med, MESH, "msgs_per_cpu_second")), 2.0, 1.0, True)
    mem = value(med, MEMCPY, "bytes_per_second")
    row("EDM 16 KiB stream, wall / memcpy 16 KiB [GB/s]", g(value(med, STREAM, "bytes_per_second")), g(mem), 0.30, True)
    row("EDM 16 KiB stream, per CPU-second / memcpy 16 KiB", g(value(med, STREAM, "bytes_per_cpu_second")), g(mem), 0.30, True)
    row("ceiling: the stream's 3 copies alone / memcpy 16 KiB", g(value(med, PATH, "bytes_per_second")), g(mem), 0.30, True)
    raw = value(med, RAW, "one_way_ns")
    row("8-chip ring ping per hop / raw one-way median [ns]", value(med, RING, "ns_per_hop"), raw, 4.0, False)
    row("8-chip ring ping per hop / fastest raw repetition", value(med, RING, "ns_per_hop"),
        best(reps, RAW, "one_way_ns", False), 4.0, False)
    print(table(rows, ["goal (medians of this run)", "emulated", "baseline", "ratio", "goal"], args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
