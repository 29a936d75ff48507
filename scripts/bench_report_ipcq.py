#!/usr/bin/env python3
"""IPCQ figures from a kccl_bench JSON result, all from that one run.

    scripts/bench_report_ipcq.py build/bench/foundation.json [--markdown]

Prints, from the median aggregates (or the median of the repetitions):
  (f) 64 B message rate between two cores / the cached-index SPSC ring     goal >= 0.8x
      - ratio of medians: ipcq/rate/64B/n8/poll/l1 vs baseline/spsc_ring/64B/n8
      - paired: median of vs_spsc (each run of the IPCQ benchmark re-measures the SPSC ring
        at the same size and depth right after itself)
  (g) 64 B round trip / raw ping-pong round trip                            goal <= 2x
      - vs the raw spin ping-pong (baseline/atomic_ping_pong/spin; paired: vs_raw)
      - vs the raw emulated NoC ping-pong at the same 64 B (ipcq/raw_noc_ping_pong/64B):
        what IPCQ adds on top of the emulated NoC it runs on
  and a table of every ipcq/ row (rate in M msg/s and GB/s, round trip in ns, cpu_cores).
Standard library only.
"""
import argparse
import os
import sys

RATE = "ipcq/rate/64B/n8/poll/l1"
SPSC = "baseline/spsc_ring/64B/n8"
RT = "ipcq/round_trip/64B/n8/poll/l1"
RAW_NOC = "ipcq/raw_noc_ping_pong/64B"
RAW = "baseline/atomic_ping_pong/spin"
GOAL_RATE = 0.8
GOAL_RT = 2.0


def load(path):
    """Median per benchmark, parsed by bench_report.load (the one JSON reader of the reports)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_report

    return bench_report.load(path)[1]


def get(m, name, key):
    b = m.get(name)
    if not b or "error" in b or key not in b:
        return None
    return float(b[key])


def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    m = load(a.json)

    rows = []
    for name in sorted(n for n in m if n.startswith("ipcq/")):
        b = m[name]
        if "error" in b:
            rows.append((name, "ERROR: " + b["error"][:60], "", "", ""))
            continue
        rate = get(m, name, "items_per_second")
        bw = get(m, name, "bytes_per_second")
        rt = get(m, name, "round_trip_ns")
        rows.append((name,
                     fmt(rate / 1e6 if rate else None, ".3f") if rate else "",
                     fmt(bw / 1e9 if bw else None, ".3f") if rate else "",
                     fmt(rt, ".0f") if rt else "",
                     fmt(get(m, name, "cpu_cores"), ".2f")))
    hdr = ("benchmark", "M msg/s", "GB/s", "round trip ns", "cpu_cores")
    if a.markdown:
        print("| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = max([len(r[0]) for r in rows] + [10])
        print(f"{hdr[0]:<{w}}  {hdr[1]:>9}  {hdr[2]:>7}  {hdr[3]:>13}  {hdr[4]:>9}")
        for r in rows:
            print(f"{r[0]:<{w}}  {r[1]:>9}  {r[2]:>7}  {r[3]:>13}  {r[4]:>9}")
    print()

    rate, spsc = get(m, RATE, "items_per_second"), get(m, SPSC, "items_per_second")
    paired = get(m, RATE, "vs_spsc")
    print(f"(f) 64 B message rate: IPCQ {fmt(rate and rate / 1e6, '.3f')} M/s, SPSC ring "
          f"{fmt(spsc and spsc / 1e6, '.3f')} M/s -> ratio of medians "
          f"{fmt(rate / spsc if rate and spsc else None, '.3f')}x, paired median {fmt(paired, '.3f')}x "
          f"(goal >= {GOAL_RATE}x)")
    rt, raw_noc = get(m, RT, "round_trip_ns"), get(m, RAW_NOC, "round_trip_ns")
    raw = get(m, RAW, "round_trip_ns")
    print(f"(g) 64 B round trip: IPCQ {fmt(rt, '.0f')} ns; raw spin ping-pong {fmt(raw, '.0f')} ns -> "
          f"{fmt(rt / raw if rt and raw else None, '.2f')}x (paired median {fmt(get(m, RT, 'vs_raw'), '.2f')}x); "
          f"raw emulated NoC ping-pong 64 B {fmt(raw_noc, '.0f')} ns -> {fmt(rt / raw_noc if rt and raw_noc else None, '.2f')}x "
          f"(goal <= {GOAL_RT}x)")
    low = [n for n in m if (n.startswith("ipcq/") or n == SPSC) and (get(m, n, "cpu_cores") or 2) < 1.5]
    if low:
        print("\nwarning: cpu_cores < 1.5 (the two threads shared one core; not comparable): " + ", ".join(sorted(low)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
