#!/usr/bin/env python3
"""Render a kccl trace (Chrome / Perfetto trace-event JSON, as kccl::emu::Trace writes it) to SVG.

    scripts/trace_svg.py run.json docs/trace.svg [--width 1100] [--from-us A --to-us B]

One row per track (thread_name), slices as boxes coloured by name, flow arrows from each "s" to
its "f" event, a time axis in microseconds. No dependencies beyond the Python standard library.
"""
import argparse
import html
import json
import sys

# Fixed colours for the slices the engine records, so pictures stay comparable; others cycle.
FIXED = {"sem_wait": "#f28e2b", "sem_wait_min": "#f28e2b", "idle": "#bab0ac", "eth_send": "#59a14f",
         "noc_write": "#4e79a7", "noc_inline_write": "#4e79a7", "sem_inc": "#76b7b2", "noc_read": "#b07aa1"}
PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac"]


def nice_step(span, target_ticks=8):
    raw = span / max(target_ticks, 1)
    mag = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1.0
    if raw < 1:
        mag = 1.0
        while mag > raw:
            mag /= 10
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("svg")
    ap.add_argument("--width", type=int, default=1100)
    ap.add_argument("--from-us", type=float, default=None)
    ap.add_argument("--to-us", type=float, default=None)
    ap.add_argument("--title", default=None)
    a = ap.parse_args()

    with open(a.trace) as f:
        events = json.load(f)["traceEvents"]

    tracks = {}  # (pid, tid) -> name
    order = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            tracks[(e["pid"], e["tid"])] = e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "thread_sort_index":
            order[(e["pid"], e["tid"])] = e["args"]["sort_index"]
    rows = sorted(tracks, key=lambda k: (order.get(k, 1 << 30), k))
    row_of = {k: i for i, k in enumerate(rows)}

    slices = [e for e in events if e.get("ph") == "X" and (e["pid"], e["tid"]) in row_of]
    flows_s = {e["id"]: e for e in events if e.get("ph") == "s"}
    flows_f = {e["id"]: e for e in events if e.get("ph") == "f"}
    if not slices:
        sys.exit("trace_svg: no slices on named tracks in " + a.trace)

    t0 = min(e["ts"] for e in slices) if a.from_us is None else a.from_us
    t1 = max(e["ts"] + e["dur"] for e in slices) if a.to_us is None else a.to_us
    span = max(t1 - t0, 1e-9)

    label_w, row_h, top, bottom = 190, 22, 52, 36
    plot_w = a.width - label_w - 20
    height = top + row_h * len(rows) + bottom

    def x(ts):
        return label_w + (ts - t0) / span * plot_w

    colours = {}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{a.width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           '<defs><marker id="arr" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#333"/></marker></defs>',
           f'<rect width="{a.width}" height="{height}" fill="white"/>']
    title = a.title or a.trace
    out.append(f'<text x="8" y="18" font-size="13" font-weight="bold">{html.escape(title)}</text>')
    for i, k in enumerate(rows):
        y = top + i * row_h
        if i % 2 == 0:
            out.append(f'<rect x="0" y="{y}" width="{a.width}" height="{row_h}" fill="#f4f4f4"/>')
        out.append(f'<text x="6" y="{y + row_h * 0.7:.1f}">{html.escape(tracks[k])}</text>')
    for e in slices:
        if e["ts"] + e["dur"] < t0 or e["ts"] > t1:
            continue
        name = e["name"]
        if name not in colours:
            colours[name] = FIXED.get(name, PALETTE[len(colours) % len(PALETTE)])
        y = top + row_of[(e["pid"], e["tid"])] * row_h + 3
        x0, x1 = max(x(e["ts"]), label_w), min(x(e["ts"] + e["dur"]), label_w + plot_w)
        w = max(x1 - x0, 0.8)
        tip = f'{name} {e["ts"]:.4f} us +{e["dur"] * 1000:.1f} ns'
        out.append(f'<rect x="{x0:.2f}" y="{y}" width="{w:.2f}" height="{row_h - 6}" fill="{colours[name]}" '
                   f'opacity="0.85"><title>{html.escape(tip)}</title></rect>')
    for fid, s in flows_s.items():
        f = flows_f.get(fid)
        if not f or (s["pid"], s["tid"]) not in row_of or (f["pid"], f["tid"]) not in row_of:
            continue
        if f["ts"] < t0 or s["ts"] > t1:
            continue
        ys = top + row_of[(s["pid"], s["tid"])] * row_h + row_h / 2
        yf = top + row_of[(f["pid"], f["tid"])] * row_h + row_h / 2
        out.append(f'<line x1="{x(s["ts"]):.2f}" y1="{ys:.1f}" x2="{x(f["ts"]):.2f}" y2="{yf:.1f}" '
                   'stroke="#333" stroke-width="0.8" marker-end="url(#arr)"/>')
    # time axis
    ya = top + row_h * len(rows) + 4
    out.append(f'<line x1="{label_w}" y1="{ya}" x2="{label_w + plot_w}" y2="{ya}" stroke="#000"/>')
    step = nice_step(span)
    t = (int(t0 / step) + (1 if t0 % step else 0)) * step
    while t <= t1 + 1e-12:
        out.append(f'<line x1="{x(t):.2f}" y1="{ya}" x2="{x(t):.2f}" y2="{ya + 4}" stroke="#000"/>')
        out.append(f'<text x="{x(t):.2f}" y="{ya + 15}" text-anchor="middle">{t:g}</text>')
        t += step
    out.append(f'<text x="{label_w + plot_w}" y="{ya + 28}" text-anchor="end">time (us, modelled)</text>')
    # legend
    lx = label_w
    for name, c in colours.items():
        out.append(f'<rect x="{lx}" y="{top - 20}" width="10" height="10" fill="{c}"/>')
        out.append(f'<text x="{lx + 14}" y="{top - 11}">{html.escape(name)}</text>')
        lx += 24 + 7 * len(name)
    out.append("</svg>")
    with open(a.svg, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
