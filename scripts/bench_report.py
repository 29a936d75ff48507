#!/usr/bin/env python3
"""Summarise a kccl_bench JSON result: medians and the ratios kccl's performance goals name.

    scripts/bench_report.py build/bench/foundation.json [--markdown]

Reads the median aggregates (or, without aggregates, the median of the repetitions) and prints
  * the medians of every benchmark (latency in ns, bandwidth in GB/s = 1e9 bytes/s);
  * the goal ratios, all from the one JSON file, i.e. one run on one machine state:
      (a) emulated NoC handoff one-way / raw atomic ping-pong one-way      goal <= 2x
      (b) emulated one-flit Ethernet one-way / raw atomic ping-pong one-way (reported)
      (c) emulated Ethernet 16 KiB send bandwidth / memcpy 16 KiB           goal >= 0.5x
      and the Ethernet bandwidth at every packet size against memcpy of the same size, and
      against memcpy through the same ring of buffers (baseline/memcpy_ring: the ceiling).
  and the EDM figures of scripts/bench_report_edm.py: (d) worker-to-worker 16 KiB through an
  EDM pair / memcpy 16 KiB (goal >= 0.30x), (e) ring ping per hop / raw one-way (goal <= 4x),
  and the EDM bidirectional bandwidth grid.
  Next to each ratio of medians, the median of the PAIRED ratio (vs_raw / vs_memcpy: each run of
  an emulated benchmark measures its baseline again right after itself, see
  benchmarks/harness.hpp); on a machine whose handoff time drifts, that one is the steadier.
Component reports plug in as scripts/bench_report_<component>.py modules beside this one (found
by name, e.g. bench_report_edm.py): a module's `ratio_rows(med, raw, value, ratio_row)` adds rows
to the ratio table, and its `bandwidth_table(med, value, size_label, fmt, table, markdown)`
prints after it; both optional.
Standard library only.
"""
import argparse
import glob
import importlib
import json
import os
import statistics
import sys


RAW = "baseline/atomic_ping_pong/spin"
NOC = "emulation/noc_ping_pong"
ETH_FLIT = ["emulation/eth_ping_pong/sem_wait_min", "emulation/eth_ping_pong/poll"]
ETH_BW = "emulation/eth_bandwidth"
MEMCPY = "baseline/memcpy"
MEMCPY_RING = "baseline/memcpy_ring"
GOAL_NOC = 2.0
GOAL_ETH_BW = 0.5
GOAL_ETH_BW_SIZE = 16384


def base_name(run_name):
    """'emulation/eth_bandwidth/1024/min_time:0.300/manual_time' -> 'emulation/eth_bandwidth/1024'."""
    parts = [p for p in run_name.split("/") if ":" not in p and p not in ("manual_time", "real_time")]
    return "/".join(parts)


def load(path):
    with open(path) as f:
        doc = json.load(f)
    medians, samples = {}, {}
    for b in doc.get("benchmarks", []):
        if b.get("error_occurred"):
            medians[base_name(b.get("run_name", b["name"]))] = {"error": b.get("error_message", "error")}
            continue
        name = base_name(b.get("run_name", b["name"]))
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = b
        else:
            samples.setdefault(name, []).append(b)
    for name, runs in samples.items():  # no aggregates: take the median of the repetitions
        if name in medians:
            continue
        keys = {k for r in runs for k, v in r.items() if isinstance(v, (int, float))}
        medians[name] = {k: statistics.median(r[k] for r in runs if k in r) for k in keys}
    return doc.get("context", {}), medians


def value(medians, name, key):
    b = medians.get(name)
    if not b or "error" in b or key not in b:
        return None
    return float(b[key])


def size_label(n):
    n = int(n)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def fmt(x, digits=1):
    return "n/a" if x is None else f"{x:.{digits}f}"


def table(rows, header, markdown):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    out = []
    if markdown:
        out.append("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
        out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for r in rows:
            out.append("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")
    else:
        out.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        out.append("  ".join("-" * w for w in widths))
        for r in rows:
            out.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    return "\n".join(out)


def component_reports():
    """The scripts/bench_report_<component>.py modules beside this file, by name."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    sys.dont_write_bytecode = True  # no scripts/__pycache__ in the work tree
    modules = []
    for path in sorted(glob.glob(os.path.join(here, "bench_report_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            modules.append(importlib.import_module(name))
        except Exception as e:  # a broken extension must not hide the foundation's figures
            print(f"warning: {name}: {e}", file=sys.stderr)
    return modules


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="kccl_bench --benchmark_out file")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = ap.parse_args()
    ctx, med = load(args.json)

    print(f"date: {ctx.get('date', '?')}   host: {ctx.get('host_name', '?')}   "
          f"cpus: {ctx.get('num_cpus', '?')} x {ctx.get('mhz_per_cpu', '?')} MHz   "
          f"load average: {', '.join(fmt(x, 2) for x in ctx.get('load_avg', [])) or '?'}")
    print()

    # --- medians ---------------------------------------------------------------------------
    rows = []
    for name in sorted(med):
        b = med[name]
        if "error" in b:
            rows.append([name, "FAILED: " + b["error"].splitlines()[0][:60], "", ""])
            continue
        cores = fmt(b.get("cpu_cores"), 2) if "cpu_cores" in b else ""
        if "one_way_ns" in b:
            rows.append([name, fmt(b["one_way_ns"]), "ns one-way", cores])
        elif "bytes_per_second" in b:
            rows.append([name, fmt(b["bytes_per_second"] / 1e9, 2), "GB/s", cores])
    print(table(rows, ["benchmark (median of repetitions)", "value", "unit", "cpu_cores"], args.markdown))
    print()

    # --- ratios ----------------------------------------------------------------------------
    raw = value(med, RAW, "one_way_ns")
    rows = []

    def verdict(r, goal, higher_is_better):
        if goal is None or r is None:
            return ""
        ok = r >= goal if higher_is_better else r <= goal
        return ("met" if ok else "MISSED") + f" ({'>=' if higher_is_better else '<='} {goal}x)"

    def ratio_row(what, num, den, paired, goal=None, higher_is_better=False):
        r = None if num is None or den is None or den == 0 else num / den
        digits = lambda x: 2 if abs(x) >= 0.1 else 4  # noqa: E731 (EDM ratios are far below 0.1)
        rows.append([what, fmt(num), fmt(den), fmt(r, digits(r)) + "x" if r is not None else "n/a",
                     verdict(r, goal, higher_is_better),
                     fmt(paired, digits(paired)) + "x" if paired is not None else "n/a",
                     verdict(paired, goal, higher_is_better)])

    ratio_row("(a) NoC handoff one-way / raw one-way [ns]", value(med, NOC, "one_way_ns"), raw,
              value(med, NOC, "vs_raw"), GOAL_NOC)
    for name in ETH_FLIT:
        ratio_row(f"(b) eth flit one-way ({name.rsplit('/', 1)[1]}) / raw one-way [ns]",
                  value(med, name, "one_way_ns"), raw, value(med, name, "vs_raw"))
    eth_sizes = sorted(int(n.rsplit("/", 1)[1]) for n in med if n.startswith(ETH_BW + "/"))
    for size in eth_sizes:
        eth = value(med, f"{ETH_BW}/{size}", "bytes_per_second")
        mem = value(med, f"{MEMCPY}/{size}", "bytes_per_second")
        tag = "(c)" if size == GOAL_ETH_BW_SIZE else "   "
        ratio_row(f"{tag} eth send {size_label(size)} / memcpy {size_label(size)} [GB/s]",
                  None if eth is None else eth / 1e9, None if mem is None else mem / 1e9,
                  value(med, f"{ETH_BW}/{size}", "vs_memcpy"),
                  GOAL_ETH_BW if size == GOAL_ETH_BW_SIZE else None, higher_is_better=True)
    for size in eth_sizes:
        eth = value(med, f"{ETH_BW}/{size}", "bytes_per_second")
        ring = value(med, f"{MEMCPY_RING}/{size}", "bytes_per_second")
        ratio_row(f"    eth send {size_label(size)} / memcpy_ring {size_label(size)} [GB/s]",
                  None if eth is None else eth / 1e9, None if ring is None else ring / 1e9, None)
    extensions = component_reports()
    for module in extensions:
        if hasattr(module, "ratio_rows"):
            module.ratio_rows(med, raw, value, ratio_row)
    print(table(rows, ["ratio (medians of this one run)", "emulated", "baseline", "ratio", "goal",
                       "paired ratio", "goal (paired)"], args.markdown))
    for module in extensions:
        if hasattr(module, "bandwidth_table"):
            text = module.bandwidth_table(med, value, size_label, fmt, table, args.markdown)
            if text:
                print()
                print(text)

    low = [n for n, b in med.items() if "error" not in b and "cpu_cores" in b and float(b["cpu_cores"]) < 1.5]
    if low:
        print()
        print("warning: cpu_cores < 1.5 for " + ", ".join(sorted(low)) +
              ": the two threads did not each have a core (something else was running); "
              "handoff latencies from this run are not comparable.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
