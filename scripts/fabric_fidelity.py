#!/usr/bin/env python3
"""The chip fabric's fidelity table: tt-metal's published Wormhole CCL grid on the timed engine.

    scripts/fabric_fidelity.py [--tool build/default/examples/coll_perf] [--min 64K] [--max 256M]
                               [--ops all_gather,...] [--mem-gib 4] [--csv out.csv] [--svg out.svg]
                               [--generic | --executor-reductions] [--update-csv FILE]
    scripts/fabric_fidelity.py --from-csv docs/data/fabric_fidelity.csv --svg docs/fabric_fidelity.svg

For every point of tt-metal's measured grid (docs/data/ttmetal_wormhole_b0_bfloat16_6144.csv: op,
device count n, ring or line, size) between --min and --max it runs

    coll_perf --transport fabric --topology ring|line --ranks n --coll OP --method M -b SIZE -e SIZE
              -n 1 -w 0 -d bfloat16 --message 6144 --slots 8 --timing wormhole

(the Wormhole model, 6144-byte packet payloads as tt-metal's benchmark ran; every output verified)
and prints our modelled time, our line rate in tt-metal's definition (bottleneck bytes / (time x
directions) / 12.5 GB/s; directions 2 on a ring, 1 on a line), tt-metal's measured time and the
error (ours / theirs - 1). Every op runs tt-metal's op structure (`--structure ttm`: DRAM tensors,
packets written into the destination tensor): all_gather relayed hop by hop by worker cores per
direction behind a mux and all_to_all from one core (include/fabric/ops/all_gather.hpp, all_to_all.hpp);
reduce_scatter and all_reduce by include/fabric/ops/reduce_scatter.hpp and all_reduce.hpp (partial sums passed chip
to chip by tt-metal's 2 to 8 worker cores per direction behind the mux, each its share of every
slice, summed on the Tensix compute engine; the ring's one-shot algorithm up to 512 KiB;
all_reduce = reduce_scatter + all_gather, two programs).
--generic runs every op on the collectives executor instead (ring ring_bidir, line `line`;
all_to_all pairwise; reductions on the RISC-V); --executor-reductions runs reduce_scatter and
all_reduce on the executor with the combine on the compute engine (`--structure ttm_executor`;
docs/fabric.md, "Reductions on the compute engine"). --update-csv FILE runs --ops and replaces
their rows in FILE (those within --min..--max), keeping the others.

A point is emulated whole or not at all: one whose emulated memory (executor: n ranks x 3 L1
buffers of the size; ttm: n x the DRAM tensors) exceeds --mem-gib is printed as "not emulated"
with the reason, never extrapolated. The summary counts the emulated points in 64 KiB..256 MiB.
Every cost is the Wormhole model's (docs/emulation-timing.md); the one fitted constant is
coll_perf's per-op overhead of the ttm rows (`OpOverhead`, fitted to tt-metal's smallest
all_gather / all_to_all sizes, below this table's range; docs/fabric.md). Standard library only.
"""
import argparse
import csv
import math
import os
import re
import statistics
import subprocess
import sys
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "docs", "data", "ttmetal_wormhole_b0_bfloat16_6144.csv")
LINE_RATE = 12.5e9


def size_arg(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s)
    if not m:
        raise argparse.ArgumentTypeError("'%s' is not a size (N, NK, NM or NG)" % s)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


TTM_OPS = {"all_gather", "all_to_all", "reduce_scatter", "all_reduce"}  # tt-metal's op kernels (--structure ttm)
TTM_REDUCE_OPS = {"reduce_scatter", "all_reduce"}
GENERIC = False
EXECUTOR_REDUCTIONS = False  # reduce_scatter / all_reduce on the executor, combine on the compute engine


def method_for(op, topo):
    if op in TTM_OPS and not GENERIC and not (EXECUTOR_REDUCTIONS and op in TTM_REDUCE_OPS):
        return "ttm"
    if op == "all_to_all":
        return "pairwise"
    return "ring_bidir" if topo == "ring" else "line"


def bottleneck(op, n, size):
    if op == "all_reduce":
        return 2 * (n - 1) / n * size
    if op == "all_to_all":
        return (n // 2) * ((n + 1) // 2) / n * size
    return (n - 1) / n * size


def line_rate_pct(op, n, topo, size, time_us):
    dirs = 2 if topo == "ring" else 1
    return 100.0 * bottleneck(op, n, size) / (time_us * 1e-6 * dirs) / LINE_RATE


def load_grid(lo, hi, ops):
    rows = []
    with open(DATA) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            size = int(r["size_bytes"])
            if lo <= size <= hi and (not ops or r["op"] in ops):
                rows.append({"op": r["op"], "n": int(r["n"]), "topology": r["topology"], "size": size,
                             "theirs_us": float(r["time_us"])})
    rows.sort(key=lambda r: (r["op"], r["topology"], r["n"], r["size"]))
    return rows


def emulated_gib(p):
    """Host memory of a point's emulated tensors: L1 buffers (generic) or DRAM input + output (ttm)."""
    n, size = p["n"], p["size"]
    if method_for(p["op"], p["topology"]) == "ttm":
        if p["op"] in TTM_REDUCE_OPS:  # input, output, the intermediate (n + 1 slices)
            out = size if p["op"] == "all_reduce" else size // n
            return n * (size + out + (n + 1) * (size // n)) / 2 ** 30
        return n * ((size // n if p["op"] == "all_gather" else size) + size) / 2 ** 30
    return n * 3 * size / 2 ** 30


def run_point(tool, p, timeout):
    m = method_for(p["op"], p["topology"])
    how = ["--structure", "ttm"] if m == "ttm" else ["--method", m, "--slots", "8"]
    if p["op"] in TTM_REDUCE_OPS and EXECUTOR_REDUCTIONS and not GENERIC:
        how += ["--structure", "ttm_executor"]  # the executor, the combine on the Tensix compute engine
    cmd = [tool, "--transport", "fabric", "--topology", p["topology"], "--ranks", str(p["n"]), "--coll", p["op"]] + how + [
           "-b", str(p["size"]), "-e", str(p["size"]), "-n", "1",
           "-w", "0", "-d", "bfloat16", "--message", "6144", "--timing", "wormhole"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "not emulated: over the %d s time limit" % timeout
    for line in out.stdout.splitlines():
        if line.startswith("#") or "|" not in line:
            continue
        left, right = line.split("|", 1)
        f = left.split()
        wrong = f[8]
        if wrong != "0":
            return None, "wrong elements: " + wrong
        return float(right.split()[0]), ""
    return None, "failed (exit %d): %s" % (out.returncode, (out.stderr or out.stdout).strip().splitlines()[-1:])


def summarize(rows, out=sys.stdout):
    errs = [abs(r["err"]) for r in rows if r.get("ours_us") and 65536 <= r["size"] <= 256 << 20]
    if not errs:
        print("# no emulated points", file=out)
        return
    within = sum(1 for e in errs if e <= 0.10)
    print("# emulated points in 64 KiB..256 MiB: %d; median |error| %.1f%%; within 10%%: %d; worst %.1f%%"
          % (len(errs), 100 * statistics.median(errs), within, 100 * max(errs)), file=out)
    for op in sorted({r["op"] for r in rows}):
        e = [abs(r["err"]) for r in rows if r["op"] == op and r.get("ours_us") and 65536 <= r["size"] <= 256 << 20]
        if e:
            print("#   %-15s %3d points, median |error| %6.1f%%, within 10%%: %d" % (op, len(e), 100 * statistics.median(e),
                                                                              sum(1 for x in e if x <= 0.10)), file=out)


def header(out=sys.stdout):
    print("# %-15s %3s %-5s %11s %12s %7s %12s %7s %8s  %s" % ("op", "n", "topo", "size(B)", "ours(us)", "ours%",
                                                              "tt-metal(us)", "theirs%", "error", "method / note"), file=out)


def print_row(r, out=sys.stdout):
    theirs_pct = line_rate_pct(r["op"], r["n"], r["topology"], r["size"], r["theirs_us"])
    if r.get("ours_us"):
        ours_pct = line_rate_pct(r["op"], r["n"], r["topology"], r["size"], r["ours_us"])
        print("  %-15s %3d %-5s %11d %12.2f %6.1f%% %12.2f %6.1f%% %+7.1f%%  %s" % (
            r["op"], r["n"], r["topology"], r["size"], r["ours_us"], ours_pct, r["theirs_us"], theirs_pct,
            100 * r["err"], r.get("method") or method_for(r["op"], r["topology"])), file=out)
    else:
        print("  %-15s %3d %-5s %11d %12s %7s %12.2f %6.1f%% %8s  %s" % (
            r["op"], r["n"], r["topology"], r["size"], "-", "-", r["theirs_us"], theirs_pct, "-", r["note"]), file=out)
    out.flush()


def svg(rows, path):
    """Four panels (one per op): time against size, tt-metal's measured (solid) and ours (dashed)."""
    ops = ["all_gather", "reduce_scatter", "all_reduce", "all_to_all"]
    colors = {("ring", 8): "#d62728", ("line", 2): "#1f77b4", ("line", 4): "#2ca02c", ("line", 8): "#ff7f0e"}
    PW, PH, L, T, GAP = 420, 300, 70, 40, 60
    W, H = L + 2 * (PW + GAP), T + 2 * (PH + GAP) + 40
    pts = [r for r in rows]
    xs = [r["size"] for r in pts]
    ys = [r["theirs_us"] for r in pts] + [r["ours_us"] for r in pts if r.get("ours_us")]
    if not xs:
        return
    x0, x1 = math.log2(min(xs)), math.log2(max(xs))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="20" font-size="14">Chip fabric on the Wormhole model (dashed) against tt-metal\'s measured '
         'times (solid); bfloat16, 6144 B packets</text>' % L]
    for k, op in enumerate(ops):
        px, py = L + (k % 2) * (PW + GAP), T + (k // 2) * (PH + GAP)
        fx = lambda s: px + (math.log2(s) - x0) / max(1e-9, x1 - x0) * PW
        fy = lambda t: py + PH - (math.log10(t) - y0) / max(1e-9, y1 - y0) * PH
        o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>' % (px, py, PW, PH))
        o.append('<text x="%d" y="%d" font-size="13">%s</text>' % (px + 5, py - 6, op))
        for e in range(y0, y1 + 1):
            o.append('<text x="%d" y="%.1f" text-anchor="end">1e%d us</text>' % (px - 4, fy(10 ** e) + 4, e))
        for b in range(int(math.ceil(x0)), int(x1) + 1, 4):
            lab = "%dK" % (2 ** b >> 10) if b < 20 else "%dM" % (2 ** b >> 20) if b < 30 else "%dG" % (2 ** b >> 30)
            o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (fx(2 ** b), py + PH + 14, lab))
        for (topo, n), c in colors.items():
            s = [r for r in rows if r["op"] == op and r["topology"] == topo and r["n"] == n]
            if not s:
                continue
            t = " ".join("%.1f,%.1f" % (fx(r["size"]), fy(r["theirs_us"])) for r in s)
            o.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>' % (t, c))
            m = [r for r in s if r.get("ours_us")]
            if m:
                t = " ".join("%.1f,%.1f" % (fx(r["size"]), fy(r["ours_us"])) for r in m)
                o.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5" stroke-dasharray="5,3"/>' % (t, c))
    lx = L
    for (topo, n), c in colors.items():
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>' % (lx, H - 20, lx + 20, H - 20, c))
        o.append('<text x="%d" y="%d">%s</text>' % (lx + 25, H - 16, escape("%s n=%d" % (topo, n))))
        lx += 110
    o.append('<text x="%d" y="%d">size: all_gather the gathered output, the others each device\'s input</text>' % (lx + 10, H - 16))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "default", "examples", "coll_perf"))
    ap.add_argument("--min", type=size_arg, default=64 << 10)
    ap.add_argument("--max", type=size_arg, default=256 << 20)
    ap.add_argument("--ops", default="", help="comma list (default: every op of the grid)")
    ap.add_argument("--mem-gib", type=float, default=4.0, help="largest emulated L1 of a point, GiB (default 4)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per point (default 900)")
    ap.add_argument("--csv", help="write the table as CSV")
    ap.add_argument("--svg", help="write the plot")
    ap.add_argument("--from-csv", help="print (and plot) a table written by --csv instead of running")
    ap.add_argument("--update-csv", help="run --ops and replace their rows within --min..--max in this CSV (the other rows kept)")
    ap.add_argument("--generic", action="store_true",
                    help="every op on the collectives executor, reductions on the RISC-V (no --structure ttm)")
    ap.add_argument("--executor-reductions", action="store_true",
                    help="reduce_scatter / all_reduce on the collectives executor, combine on the compute engine")
    a = ap.parse_args()
    global GENERIC, EXECUTOR_REDUCTIONS
    GENERIC = a.generic
    EXECUTOR_REDUCTIONS = a.executor_reductions
    if a.from_csv:
        with open(a.from_csv) as f:
            rows = []
            for r in csv.DictReader(f):
                rows.append({"op": r["op"], "n": int(r["n"]), "topology": r["topology"], "size": int(r["size"]),
                             "theirs_us": float(r["theirs_us"]), "ours_us": float(r["ours_us"]) if r["ours_us"] else None,
                             "err": float(r["err"]) if r["err"] else None, "note": r["note"], "method": r.get("method")})
        header()
        for r in rows:
            print_row(r)
        summarize(rows)
        if a.svg:
            svg(rows, a.svg)
        return 0
    if not os.access(a.tool, os.X_OK):
        print("fabric_fidelity: %s is not built (cmake --build --preset default --target coll_perf)" % a.tool, file=sys.stderr)
        return 2
    ops = [s for s in a.ops.split(",") if s]
    rows = load_grid(a.min, a.max, ops)
    kept = []
    if a.update_csv:
        if not ops:
            print("fabric_fidelity: --update-csv needs --ops (the ops whose rows are replaced)", file=sys.stderr)
            return 2
        a.csv = a.update_csv
        with open(a.update_csv) as f:
            for r in csv.DictReader(f):
                if r["op"] not in ops or not a.min <= int(r["size"]) <= a.max:
                    kept.append({"op": r["op"], "n": int(r["n"]), "topology": r["topology"], "size": int(r["size"]),
                                 "theirs_us": float(r["theirs_us"]), "ours_us": float(r["ours_us"]) if r["ours_us"] else None,
                                 "err": float(r["err"]) if r["err"] else None, "note": r["note"],
                                 "method": r.get("method") or method_for(r["op"], r["topology"])})
    print("# chip fabric (coll_perf --transport fabric) on the Wormhole model against tt-metal's measured times")
    print("# (FULL_wormhole_b0_bfloat16_6144: DRAM tensors, 1 link per direction); ours: bfloat16, 6144 B packet")
    print("# payload; ttm rows: tt-metal's op structure (DRAM tensors, packet streams, worker cores per direction behind a")
    print("# mux; reductions on the compute engine); executor rows (line, ring_bidir, pairwise): L1 buffers, 8 message")
    print("# slots per peer, one worker per chip. % = tt-metal's line rate:")
    print("# bottleneck bytes / (time x directions) / 12.5 GB/s. error = ours / theirs - 1.")
    if a.executor_reductions and not a.generic:
        print("# reduce_scatter and all_reduce: the executor with the combine on the Tensix compute engine (--structure ttm_executor).")
    header()
    for r in rows:
        mem = emulated_gib(r)
        r["method"] = method_for(r["op"], r["topology"])
        if mem > a.mem_gib:
            what = "DRAM" if r["method"] == "ttm" else "L1"
            r["ours_us"], r["err"], r["note"] = None, None, "not emulated: %.1f GiB of emulated %s > --mem-gib %.1f" % (mem, what, a.mem_gib)
        else:
            us, note = run_point(a.tool, r, a.timeout)
            r["ours_us"], r["note"] = us, note
            r["err"] = us / r["theirs_us"] - 1 if us else None
        print_row(r)
    if kept:
        rows = sorted(kept + rows, key=lambda r: (r["op"], r["topology"], r["n"], r["size"]))
    summarize(rows)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["op", "n", "topology", "size", "theirs_us", "ours_us", "err", "note", "method"])
            for r in rows:
                w.writerow([r["op"], r["n"], r["topology"], r["size"], r["theirs_us"],
                            "%.3f" % r["ours_us"] if r["ours_us"] else "", "%.5f" % r["err"] if r["err"] is not None else "",
                            r["note"], r.get("method") or method_for(r["op"], r["topology"])])
    if a.svg:
        svg(rows, a.svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
