#!/usr/bin/env python3
"""The EDM part of scripts/bench_report.py: goal ratios and the bandwidth grid.

    scripts/bench_report_edm.py build/bench/foundation.json [--markdown]   # these figures alone

Called by bench_report.py (so scripts/bench.sh prints it) with the medians of one kccl_bench
JSON file, so every figure comes from one run on one machine state:
  (d) worker-to-worker streaming through one EDM pair at 16 KiB packets / memcpy 16 KiB
      (edm/stream_16k/buffers/<n> against baseline/memcpy/16384)            goal >= 0.30x
      for every buffer count, and the best of 2-4 buffers as the headline;
  (e) ring ping latency per hop on 8 chips / raw atomic ping-pong one-way
      (edm/ring_ping/8chips against baseline/atomic_ping_pong/spin)         goal <= 4x
  and, reported without a goal, the one-flit round trip through the EDM pair (one-way = round
  trip / 2) against the raw one-way, and the bidirectional bandwidth grid by packet size x
  channel count (edm/bidir_bandwidth/<bytes>/<channels>, both directions summed, and per
  direction), beside the EDM-only variant (edm/bidir_bandwidth_signal_only) and memcpy.
Standard library only.
"""

STREAM = "edm/stream_16k/buffers"
RING = "edm/ring_ping/8chips"
FLIT = "edm/flit_round_trip"
BIDIR = "edm/bidir_bandwidth"
SIGNAL_ONLY = "edm/bidir_bandwidth_signal_only"
MEMCPY_16K = "baseline/memcpy/16384"
GOAL_W2W = 0.30
GOAL_W2W_BUFFERS = (2, 3, 4)
GOAL_RING = 4.0


def _grid(med, prefix):
    """{(bytes, channels): median entry} for names '<prefix>/<bytes>/<channels>'."""
    out = {}
    for name, b in med.items():
        parts = name.split("/")
        if name.startswith(prefix + "/") and len(parts) == len(prefix.split("/")) + 2 and "error" not in b:
            out[(int(parts[-2]), int(parts[-1]))] = b
    return out


def ratio_rows(med, raw, value, ratio_row):
    """Adds the (d) and (e) rows through bench_report's ratio_row."""
    mem = value(med, MEMCPY_16K, "bytes_per_second")
    mb = lambda x: None if x is None else x / 1e6  # noqa: E731 (MB/s: the EDM figures are small)
    buffers = sorted(int(n.rsplit("/", 1)[1]) for n in med if n.startswith(STREAM + "/"))
    for n in buffers:
        name = f"{STREAM}/{n}"
        ratio_row(f"    EDM worker->worker 16 KiB, {n} buffer(s) / memcpy 16 KiB [MB/s]",
                  mb(value(med, name, "bytes_per_second")), mb(mem), value(med, name, "vs_memcpy"),
                  GOAL_W2W if n in GOAL_W2W_BUFFERS else None, higher_is_better=True)
    best = [n for n in buffers if n in GOAL_W2W_BUFFERS and value(med, f"{STREAM}/{n}", "bytes_per_second")]
    if best:
        n = max(best, key=lambda k: value(med, f"{STREAM}/{k}", "bytes_per_second"))
        name = f"{STREAM}/{n}"
        ratio_row(f"(d) EDM worker->worker 16 KiB (best of 2-4 buffers: {n}) / memcpy 16 KiB [MB/s]",
                  mb(value(med, name, "bytes_per_second")), mb(mem), value(med, name, "vs_memcpy"),
                  GOAL_W2W, higher_is_better=True)
    else:
        ratio_row("(d) EDM worker->worker 16 KiB / memcpy 16 KiB [MB/s]", None, mb(mem), None, GOAL_W2W, True)
    ratio_row("(e) EDM ring ping per hop, 8 chips / raw one-way [ns]", value(med, RING, "ns_per_hop"), raw,
              value(med, RING, "vs_raw"), GOAL_RING)
    ratio_row("    EDM flit worker->worker one-way (round trip / 2) / raw one-way [ns]",
              value(med, FLIT, "one_way_ns"), raw, value(med, FLIT, "vs_raw"))


def bandwidth_table(med, value, size_label, fmt, table, markdown):
    """Packet size x channel count grid of bidirectional bandwidth, in GB/s."""
    grid = _grid(med, BIDIR)
    if not grid:
        return None
    signal = _grid(med, SIGNAL_ONLY)
    sizes = sorted({s for s, _ in grid})
    channels = sorted({c for _, c in grid})
    signal_channels = sorted({c for _, c in signal})

    def cell(b):
        if b is None:
            return "n/a"
        tot = b.get("bytes_per_second")
        ab, ba = b.get("a_to_b_bytes_per_second"), b.get("b_to_a_bytes_per_second")
        s = fmt(None if tot is None else float(tot) / 1e9, 2)
        if ab is not None and ba is not None:
            s += f" ({fmt(float(ab) / 1e9, 2)} + {fmt(float(ba) / 1e9, 2)})"
        if float(b.get("fits_wormhole_l1", 1)) == 0:
            s += " *"
        return s

    rows = []
    for size in sizes:
        row = [size_label(size)]
        row += [cell(grid.get((size, c))) for c in channels]
        row += [cell(signal.get((size, c))) for c in signal_channels]
        mem = value(med, f"baseline/memcpy/{size}", "bytes_per_second")
        row.append(fmt(None if mem is None else mem / 1e9, 1))
        rows.append(row)
    header = ["packet"] + [f"{c} ch" for c in channels] + [f"{c} ch, EDM only" for c in signal_channels] + \
             ["memcpy"]
    return ("EDM bidirectional bandwidth, GB/s (medians): both directions summed "
            "(chip 0->1 + chip 1->0); 1 ch runs one way only; \"EDM only\": workers move no payload;\n"
            "* = the layout would not fit Wormhole's 256 KiB ERISC L1 (2 buffers per channel)\n" +
            table(rows, header, markdown))


def main():
    import argparse
    import os
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_report as br

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="kccl_bench --benchmark_out file")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = ap.parse_args()
    _, med = br.load(args.json)
    raw = br.value(med, "baseline/atomic_ping_pong/spin", "one_way_ns")
    rows = []

    def ratio_row(what, num, den, paired, goal=None, higher_is_better=False):
        r = None if num is None or den is None or den == 0 else num / den
        verdict = lambda x: "" if goal is None or x is None else (  # noqa: E731
            ("met" if (x >= goal if higher_is_better else x <= goal) else "MISSED") +
            f" ({'>=' if higher_is_better else '<='} {goal}x)")
        digits = lambda x: 2 if abs(x) >= 0.1 else 4  # noqa: E731
        rows.append([what, br.fmt(num), br.fmt(den), "n/a" if r is None else br.fmt(r, digits(r)) + "x", verdict(r),
                     "n/a" if paired is None else br.fmt(paired, digits(paired)) + "x", verdict(paired)])

    ratio_rows(med, raw, br.value, ratio_row)
    print(br.table(rows, ["ratio (medians of this one run)", "emulated", "baseline", "ratio", "goal",
                          "paired ratio", "goal (paired)"], args.markdown))
    grid = bandwidth_table(med, br.value, br.size_label, br.fmt, br.table, args.markdown)
    if grid:
        print()
        print(grid)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
