#!/usr/bin/env python3
"""Plot EDM bidirectional bandwidth against packet size from a kccl_bench JSON result, as SVG.

    scripts/plot_edm.py build/bench/foundation.json [-o docs/edm_bandwidth.svg]

One line per channel count (edm/bidir_bandwidth/<bytes>/<channels>, both directions summed), the
EDM-only variant (edm/bidir_bandwidth_signal_only, dashed), and two references from the same
run: the foundation's raw emulated Ethernet stream (emulation/eth_bandwidth, one direction, two
threads, no EDM) and memcpy of the packet size (baseline/memcpy). Medians of the repetitions
(scripts/bench_report.py's reading). Logarithmic axes: the figures span four decades.
Standard library only.
"""
import argparse
import math
import os
import sys
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report  # noqa: E402  (load(), the medians)

W, H = 810, 470
LEFT, RIGHT, TOP, BOTTOM = 70, 240, 40, 60
COLORS = {1: "#1f77b4", 2: "#2ca02c", 4: "#ff7f0e", 8: "#d62728"}


def series(med):
    """[(label, colour, dash, [(bytes, GB/s)])]"""
    out = []
    grid, signal = {}, {}
    for name, b in med.items():
        if "error" in b or "bytes_per_second" not in b:
            continue
        parts = name.split("/")
        if name.startswith("edm/bidir_bandwidth/") and len(parts) == 4:
            grid.setdefault(int(parts[3]), []).append((int(parts[2]), float(b["bytes_per_second"]) / 1e9))
        elif name.startswith("edm/bidir_bandwidth_signal_only/") and len(parts) == 4:
            signal.setdefault(int(parts[3]), []).append((int(parts[2]), float(b["bytes_per_second"]) / 1e9))
    for ch in sorted(grid):
        label = f"EDM, {ch} channel{'s' if ch > 1 else ''}" + (" (one way)" if ch == 1 else "")
        out.append((label, COLORS.get(ch, "#555"), "", sorted(grid[ch])))
    for ch in sorted(signal):
        out.append((f"EDM only, {ch} ch (no payload copy)", COLORS.get(ch, "#555"), "6,4", sorted(signal[ch])))
    sizes = sorted({s for _, _, _, pts in out for s, _ in pts})
    eth = [(s, float(med[f"emulation/eth_bandwidth/{s}"]["bytes_per_second"]) / 1e9) for s in sizes
           if "bytes_per_second" in med.get(f"emulation/eth_bandwidth/{s}", {})]
    if eth:
        out.append(("raw eth, one way, 2 threads", "#7f7f7f", "2,3", eth))
    mem = [(s, float(med[f"baseline/memcpy/{s}"]["bytes_per_second"]) / 1e9) for s in sizes
           if "bytes_per_second" in med.get(f"baseline/memcpy/{s}", {})]
    if mem:
        out.append(("memcpy (same size)", "#000000", "1,3", mem))
    return out


def svg(data, title, subtitle):
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    xs = [s for _, _, _, pts in data for s, _ in pts]
    ys = [v for _, _, _, pts in data for _, v in pts if v > 0]
    x0, x1 = math.log2(min(xs)), math.log2(max(xs))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y1 = y0 + 1
    px = lambda s: LEFT + (math.log2(s) - x0) / (x1 - x0) * pw  # noqa: E731
    py = lambda v: TOP + ph - (math.log10(v) - y0) / (y1 - y0) * ph  # noqa: E731
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
         'font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{LEFT}" y="18" font-size="14" font-weight="bold">{escape(title)}</text>',
         f'<text x="{LEFT}" y="33" font-size="11" fill="#444">{escape(subtitle)}</text>']
    for d in range(y0, y1 + 1):  # decades, with 2x and 5x minor lines
        for m in (1, 2, 5):
            v = m * 10.0 ** d
            if d == y1 and m > 1:
                break
            y = py(v)
            o.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" '
                     f'stroke="{"#ccc" if m == 1 else "#eee"}"/>')
            if m == 1:
                o.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>')
    for s in sorted(set(xs)):
        x = px(s)
        o.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + ph}" stroke="#eee"/>')
        o.append(f'<text x="{x:.1f}" y="{TOP + ph + 16}" text-anchor="middle">{s // 1024} KiB</text>')
    o.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    o.append(f'<text x="{LEFT + pw / 2:.1f}" y="{H - 22}" text-anchor="middle">packet size</text>')
    o.append(f'<text transform="translate(18,{TOP + ph / 2:.1f}) rotate(-90)" text-anchor="middle">'
             'bandwidth, GB/s (log scale)</text>')
    for i, (label, colour, dash, pts) in enumerate(data):
        path = " ".join(f"{px(s):.1f},{py(v):.1f}" for s, v in pts if v > 0)
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        o.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{extra}/>')
        for s, v in pts:
            if v > 0:
                o.append(f'<circle cx="{px(s):.1f}" cy="{py(v):.1f}" r="2.5" fill="{colour}"/>')
        ly = TOP + 10 + 20 * i
        lx = LEFT + pw + 14
        o.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 24}" y2="{ly}" stroke="{colour}" stroke-width="2"{extra}/>')
        o.append(f'<text x="{lx + 30}" y="{ly + 4}" font-size="11">{escape(label)}</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="kccl_bench --benchmark_out file")
    ap.add_argument("-o", "--out", default="docs/edm_bandwidth.svg")
    args = ap.parse_args()
    ctx, med = bench_report.load(args.json)
    data = series(med)
    if not any(label.startswith("EDM") for label, _, _, _ in data):
        print("no edm/bidir_bandwidth results in " + args.json, file=sys.stderr)
        return 1
    subtitle = (f"kccl_bench medians, {ctx.get('date', '?')[:10]}, {ctx.get('num_cpus', '?')} CPUs "
                f"(emulation: one thread per core); 2 buffers per channel")
    with open(args.out, "w") as f:
        f.write(svg(data, "EDM bidirectional bandwidth over one emulated link", subtitle))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
