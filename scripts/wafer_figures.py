#!/usr/bin/env python3
"""Regenerate the Cerebras WSE reduce/allreduce thesis's figures and headline numbers, as SVG
plots and a Markdown page, from a cycle runner.

    scripts/wafer_figures.py [--out docs/wafer] [--runner "CMD"] [--source model|sim] [--quick]

Every number comes from the runner; nothing is copied from the thesis (its own numbers appear
only in the claims column of the headline table, as text).

The runner boundary: a command that reads request lines on stdin and answers one line each,
`<cycles> <description>` or `error: <message>` (the protocol of tools/wafer_model.cpp, see its
header). Requests are `key=value` words: pattern=NAME|auto, collective=, base=A,B,C, rows=,
cols=, B=, root=, root_y=, s=, g=. By default the script builds tools/wafer_model.cpp into
build/wafer/ and runs it with `--source model` (the cost model, include/wafer/cost.hpp);
`--source sim` uses the per-wavelet reference simulator instead (slow at 512 PEs); `--runner`
runs any other command that speaks the protocol, for example the routed-fabric emulation.

Standard library only (no matplotlib); the SVG is written directly.
"""
import argparse
import math
import os
import shlex
import subprocess
import sys
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


class Runner:
    """Sends request lines to the runner command, caches the answers."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.cache = {}
        self.requests = 0

    def cycles(self, reqs):
        todo = [r for r in dict.fromkeys(reqs) if r not in self.cache]
        if todo:
            out = subprocess.run(self.cmd, input="\n".join(todo) + "\n", capture_output=True, text=True, check=True)
            lines = out.stdout.splitlines()
            if len(lines) != len(todo):
                sys.exit(f"wafer_figures: the runner answered {len(lines)} lines to {len(todo)} requests\n{out.stderr}")
            for r, a in zip(todo, lines):
                if a.startswith("error:"):
                    sys.exit(f"wafer_figures: runner error for '{r}': {a}")
                n, _, desc = a.partition(" ")
                self.cache[r] = (int(n), desc)
            self.requests += len(todo)
        return [self.cache[r][0] for r in reqs]

    def one(self, req):
        return self.cycles([req])[0]

    def desc(self, req):
        self.cycles([req])
        return self.cache[req][1]


def req(pattern, P=None, B=1, rows=1, cols=None, **kw):
    parts = [f"pattern={pattern}", f"rows={rows}", f"cols={cols if cols is not None else P}", f"B={B}"]
    for k, v in kw.items():
        parts.append(f"{k}={v}")
    return " ".join(parts)


def build_default_runner(source):
    exe = os.path.join(ROOT, "build", "wafer", "wafer_model")
    srcs = [os.path.join(ROOT, "tools", "wafer_model.cpp")] + [
        os.path.join(d, f) for top in ("wafer", "common") for d, _, fs in os.walk(os.path.join(ROOT, "include", top)) for f in fs]
    if not os.path.exists(exe) or os.path.getmtime(exe) < max(os.path.getmtime(s) for s in srcs):
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        cxx = os.environ.get("CXX", "c++")
        subprocess.run([cxx, "-std=c++20", "-O2", "-I", os.path.join(ROOT, "include"), srcs[0], "-o", exe], check=True)
    return [exe, "--source", source]


# ------------------------------------------------------------------------------------------ SVG
def nice_ticks(lo, hi, log):
    if log:
        a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        return [10 ** e for e in range(a, b + 1)]
    span = hi - lo if hi > lo else 1
    step = 10 ** math.floor(math.log10(span / 5))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 8:
            step *= m
            break
    t = math.floor(lo / step) * step
    out = []
    while t <= hi + step * 0.01:
        out.append(t)
        t += step
    return out


def fmt(v):
    if v >= 10000 and v == int(v):
        return f"{int(v) // 1000}k" if v % 1000 == 0 else f"{v:g}"
    return f"{v:g}"


def svg_plot(path, title, xlabel, ylabel, series, logx=False, logy=False, note=None):
    W, H, L, R, T, Bm = 820, 480, 80, 230, 44, 62
    xs = [x for _, pts, _ in series for x, _ in pts]
    ys = [y for _, pts, _ in series for _, y in pts]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    if not logy:
        y0 = 0
    xt, yt = nice_ticks(x0, x1, logx), nice_ticks(y0 if y0 > 0 else 1, y1, logy) if logy else nice_ticks(y0, y1, False)
    x0, x1 = (min(x0, xt[0]), max(x1, xt[-1]))
    y0, y1 = (min(y0, yt[0]), max(y1, yt[-1]))

    def X(x):
        f = (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) if logx else (x - x0) / ((x1 - x0) or 1)
        return L + f * (W - L - R)

    def Y(y):
        f = (math.log10(y) - math.log10(y0)) / (math.log10(y1) - math.log10(y0)) if logy else (y - y0) / ((y1 - y0) or 1)
        return H - Bm - f * (H - T - Bm)

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2 - R / 2}" y="22" text-anchor="middle" font-size="14">{escape(title)}</text>']
    for t in xt:
        if x0 <= t <= x1:
            o.append(f'<line x1="{X(t):.1f}" y1="{T}" x2="{X(t):.1f}" y2="{H - Bm}" stroke="#eee"/>')
            o.append(f'<text x="{X(t):.1f}" y="{H - Bm + 16}" text-anchor="middle">{fmt(t)}</text>')
    for t in yt:
        if y0 <= t <= y1:
            o.append(f'<line x1="{L}" y1="{Y(t):.1f}" x2="{W - R}" y2="{Y(t):.1f}" stroke="#eee"/>')
            o.append(f'<text x="{L - 6}" y="{Y(t) + 4:.1f}" text-anchor="end">{fmt(t)}</text>')
    o.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - Bm}" fill="none" stroke="#333"/>')
    o.append(f'<text x="{(L + W - R) / 2}" y="{H - 18}" text-anchor="middle">{escape(xlabel)}</text>')
    o.append(f'<text transform="translate(18,{(T + H - Bm) / 2}) rotate(-90)" text-anchor="middle">{escape(ylabel)}</text>')
    for i, (label, pts, dash) in enumerate(series):
        c = COLORS[i % len(COLORS)]
        d = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in sorted(pts))
        extra = ' stroke-dasharray="6,4"' if dash else ""
        o.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="1.8"{extra}/>')
        ly = T + 14 + 18 * i
        o.append(f'<line x1="{W - R + 12}" y1="{ly}" x2="{W - R + 36}" y2="{ly}" stroke="{c}" stroke-width="2"{extra}/>')
        o.append(f'<text x="{W - R + 42}" y="{ly + 4}">{escape(label)}</text>')
    if note:
        o.append(f'<text x="{L}" y="{H - 4}" font-size="10" fill="#555">{escape(note)}</text>')
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


# ------------------------------------------------------------------------------------------ data
def b_values(quick):
    if quick:
        return [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    out = set()
    b = 1.0
    while b <= 4096:
        out.add(int(round(b)))
        b *= 1.15
    return sorted(out | {1, 4096})


def figures(run, out, quick, md):
    P = 512
    S = math.ceil(math.sqrt(P))
    Bs = b_values(quick)

    def series(label, make, xs, dash=False):
        reqs = [make(x) for x in xs]
        return (label, list(zip(xs, run.cycles(reqs))), dash)

    def table(rows, header):
        md.append("| " + " | ".join(header) + " |")
        md.append("|" + "---|" * len(header))
        for r in rows:
            md.append("| " + " | ".join(str(c) for c in r) + " |")
        md.append("")

    def figure(name, title, xlabel, ylabel, ss, logx, logy, caption, pick):
        svg_plot(os.path.join(out, name + ".svg"), title, xlabel, ylabel, ss, logx, logy)
        md.append(f"### {title}\n")
        md.append(f"![{title}]({name}.svg)\n")
        md.append(caption + "\n")
        picked = [x for x in pick if any(x == p[0] for p in ss[0][1])]
        table([[x] + [dict(s[1]).get(x, "") for s in ss] for x in picked], [xlabel] + [s[0] for s in ss])

    # 5.8 / 5.9: reduce to PE 0 on 512 PEs
    chain = series("chain", lambda b: req("chain", P, b), Bs)
    figure("fig5_8_chain", "Figure 5.8: chain reduce, 512 PEs", "B (elements)", "cycles", [chain], True, True,
           "The chain by the model (Lemma 5.2, 2(P-1)(T_R+1) + B, T_R = 2). The thesis's simulator ran about "
           "50 cycles above the model; the model has no term for loading DSDs into DSRs.", [1, 64, 512, 4096])
    ss59 = [chain,
            series("tree", lambda b: req("tree", P, b), Bs),
            series(f"two_phase S={S}", lambda b: req("two_phase", P, b, s=S), Bs),
            series("optimal pre-order", lambda b: req("optimal", P, b), Bs, True)]
    figure("fig5_9_reduce", "Figure 5.9: reduce patterns, 512 PEs", "B (elements)", "cycles", ss59, True, True,
           "Chain, tree, two-phase (S = ceil(sqrt P)) and the optimal pre-order reduce (Lemma 5.9).",
           [1, 16, 64, 512, 1024, 4096])

    # 6.5: left-right (chain) vs root, B = 1
    roots = list(range(0, 256, 1 if not quick else 15)) + [255]
    figure("fig6_5_root", "Figure 6.5: left-right (chain) by root, 512 PEs, B = 1", "root", "cycles",
           [series("left_right(chain)", lambda r: req("left_right", P, 1, root=r, base="chain"), sorted(set(roots)))],
           False, False, "Reducing to the middle is about twice as fast as reducing to an end.", [0, 64, 128, 255])

    mid = 255
    figure("fig6_6_ring_lr", "Figure 6.6: ring vs left-right (chain), 512 PEs, root 255", "B (elements)", "cycles",
           [series("ring", lambda b: req("ring", P, b, root=mid), Bs),
            series("left_right(chain)", lambda b: req("left_right", P, b, root=mid, base="chain"), Bs)],
           True, True, "Left-right wins for short vectors (two half-length chains); the root's double "
           "receive makes ring better for long ones.", [1, 64, 512, 1024, 4096])
    figure("fig6_7_any_root", "Figure 6.7: reduce to PE 255 of 512", "B (elements)", "cycles",
           [series("left_right(two_phase)", lambda b: req("left_right", P, b, root=mid, base="two_phase"), Bs),
            series("jump(two_phase)", lambda b: req("jump", P, b, root=mid, base="two_phase"), Bs),
            series("left_right(chain)", lambda b: req("left_right", P, b, root=mid, base="chain"), Bs),
            series("ring", lambda b: req("ring", P, b, root=mid), Bs),
            series("jump(chain)", lambda b: req("jump", P, b, root=mid, base="chain"), Bs, True)],
           True, True, "Two-phase bases take the default S = ceil(sqrt(group size)).", [1, 64, 512, 1024, 4096])

    Ms = list(range(2, 65)) if not quick else [2, 4, 8, 16, 32, 64]
    figure("fig6_8_reduce_2d", "Figure 6.8: 2D reduce to p(0,0), M x M, B = 1028", "M", "cycles",
           [series("reduce_2d(chain)", lambda m: req("reduce_2d", rows=m, cols=m, B=1028, base="chain"), Ms),
            series("reduce_2d(two_phase)", lambda m: req("reduce_2d", rows=m, cols=m, B=1028, base="two_phase"), Ms),
            series("auto", lambda m: req("auto", rows=m, cols=m, B=1028, collective="reduce"), Ms, True)],
           False, False, "Columns to row 0, then row 0 to column 0: T_p(M) + T_p(M).", [2, 8, 16, 32, 64])

    Ps = list(range(2, 65)) if not quick else [2, 3, 4, 8, 16, 32, 64]
    figure("fig7_4_allreduce_p", "Figure 7.4: allreduce by P, B = 1028", "P", "cycles",
           [series("naive(chain)", lambda p: req("allreduce_naive", p, 1028, base="chain"), Ps),
            series("ring allreduce", lambda p: req("allreduce_ring", p, 1028), Ps),
            series("auto", lambda p: req("auto", p, 1028, collective="allreduce"), Ps, True)],
           False, False, "Naive = reduce to PE 0 then broadcast. Ring allreduce: 2(P-1) rounds of B/P.", [2, 3, 4, 8, 16, 64])

    P75 = 729
    figure("fig7_5_allreduce_b", "Figure 7.5: allreduce by B, 729 PEs (3^6)", "B (elements)", "cycles",
           [series("naive(chain)", lambda b: req("allreduce_naive", P75, b, base="chain"), Bs),
            series("naive(tree)", lambda b: req("allreduce_naive", P75, b, base="tree"), Bs),
            series("naive(two_phase)", lambda b: req("allreduce_naive", P75, b, base="two_phase"), Bs),
            series("ring allreduce", lambda b: req("allreduce_ring", P75, b), Bs),
            series("butterfly G=3 (no link sharing)", lambda b: req("butterfly", P75, b, g=3), Bs, True)],
           True, True, "729 = 3^6 PEs so that the butterfly with G = 3 applies (the thesis plots P = 512). "
           "The butterfly curve ignores link sharing between groups and is a lower bound; the simulator "
           "is slower still.", [1, 64, 512, 1024, 4096])

    figure("fig7_6_allreduce_2d", "Figure 7.6: 2D allreduce, M x M, B = 1028", "M", "cycles",
           [series("allreduce_2d(naive(chain))", lambda m: req("allreduce_2d", rows=m, cols=m, B=1028,
                                                                base="allreduce_naive,chain"), Ms),
            series("auto", lambda m: req("auto", rows=m, cols=m, B=1028, collective="allreduce"), Ms, True)],
           False, False, "Columns, then rows, each a chain reduce to PE 0 and a broadcast.", [2, 8, 16, 32, 64])


def headlines(run, quick, md):
    P = 512
    S = math.ceil(math.sqrt(P))
    rows = []
    ch1, tr1 = run.one(req("chain", P, 1)), run.one(req("tree", P, 1))
    rows.append(["tree vs chain, B = 1, 512 PEs", "tree 5.1x faster (simulator)",
                 f"{ch1 / tr1:.2f}x ({ch1} / {tr1} cycles); with the simulator's ~50-cycle DSD overhead on "
                 f"both: {(ch1 + 50) / (tr1 + 50):.2f}x",
                 "the thesis measured on the Cerebras simulator, which adds ~50 cycles (loading DSDs into DSRs) "
                 "to every pattern; the model has no such term"])
    chP, tpP = run.one(req("chain", P, P)), run.one(req("two_phase", P, P, s=S))
    rows.append(["two-phase vs chain, B = P = 512", "2x", f"{chP / tpP:.2f}x ({chP} / {tpP})", "agrees"])
    allB = list(range(1, 4097)) if not quick else list(range(1, 4097, 7))
    ch = run.cycles([req("chain", P, b) for b in allB])
    tr = run.cycles([req("tree", P, b) for b in allB])
    tp = run.cycles([req("two_phase", P, b, s=S) for b in allB])
    first = None
    for i in range(len(allB)):
        if all(ch[j] <= min(tr[j], tp[j]) for j in range(i, len(allB))):
            first = allB[i]
            break
    rows.append(["chain best from (512 PEs, vs tree and two-phase S = 23)", "about B = 6P",
                 f"B = {first} = {first / P:.2f} P" if first else "never",
                 "the thesis read the crossover off its simulated curves at sampled B; by the model, two-phase "
                 "with S = ceil(sqrt P) loses to the chain from this B on"])
    opt = run.cycles([req("optimal", P, b) for b in allB])
    ratios = [min(a, b, c) / o for a, b, c, o in zip(ch, tr, tp, opt)]
    worst = max(range(len(allB)), key=lambda i: ratios[i])
    sim_ratios = [(min(a, b, c) + 50) / o for a, b, c, o in zip(ch, tr, tp, opt)]
    sw = max(range(len(allB)), key=lambda i: sim_ratios[i])
    rows.append(["best of chain/tree/two-phase vs optimal pre-order, 512 PEs, B in 1..4096", "at most 1.38x",
                 f"at most {ratios[worst]:.2f}x (at B = {allB[worst]}); with ~50 simulator cycles added to the "
                 f"patterns only: {sim_ratios[sw]:.2f}x (at B = {allB[sw]})",
                 "the thesis set simulated patterns against the predicted optimum; model against model the gap "
                 "is smaller"])
    Ps = list(range(2, 513))
    nv = run.cycles([req("allreduce_naive", p, 1028, base="chain") for p in Ps])
    rg = run.cycles([req("allreduce_ring", p, 1028) for p in Ps])
    best = max(range(len(Ps)), key=lambda i: nv[i] / rg[i])
    best3 = max(range(1, len(Ps)), key=lambda i: nv[i] / rg[i])
    faster = [p for p, a, b in zip(Ps, nv, rg) if b < a]
    rows.append(["ring allreduce vs naive chain, B = 1028, P in 2..512", "up to 1.5x, for small P",
                 f"up to {nv[best] / rg[best]:.2f}x at P = {Ps[best]} (our naive does not pipeline the P = 2 "
                 f"case); for P >= 3 up to {nv[best3] / rg[best3]:.2f}x at P = {Ps[best3]}; ring is faster for "
                 f"P in {faster[0]}..{faster[-1]} only" if faster else "never faster",
                 "agrees for P >= 3; at P = 2 the thesis broadcasts straight from the reduction (a pipelined "
                 "special case), our naive allreduce reduces, then broadcasts"])
    wins, total = 0, 0
    Bb = list(range(1, 4097)) if not quick else list(range(1, 4097, 31))
    for P3 in [3 ** k for k in range(2, 8)]:
        bf = run.cycles([req("butterfly", P3, b, g=3) for b in Bb])
        naive = [run.cycles([req("allreduce_naive", P3, b, base=base) for b in Bb]) for base in ("chain", "tree", "two_phase")]
        for i in range(len(Bb)):
            total += 1
            if bf[i] < min(n[i] for n in naive):
                wins += 1
    rows.append(["butterfly G = 3 fastest, P in {9..2187}, B in 1..4096", "never (vs the naive allreduces)",
                 f"{'never' if wins == 0 else f'{wins} times'} in {total} (P, B) points, even with the "
                 f"butterfly costed without link sharing (a lower bound)", "agrees"])
    md.append("## Headline numbers\n")
    md.append("| claim | the thesis | ours (model) | why they differ |")
    md.append("|---|---|---|---|")
    for r in rows:
        md.append("| " + " | ".join(r) + " |")
    md.append("")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "wafer"))
    ap.add_argument("--runner", help="command speaking the request-line protocol (default: build tools/wafer_model)")
    ap.add_argument("--source", default="model", choices=["model", "sim"], help="default runner's source")
    ap.add_argument("--quick", action="store_true", help="fewer points (a smoke run)")
    a = ap.parse_args()
    cmd = shlex.split(a.runner) if a.runner else build_default_runner(a.source)
    run = Runner(cmd)
    os.makedirs(a.out, exist_ok=True)
    md = ["# The thesis's figures, regenerated",
          "",
          "Generated by `scripts/wafer_figures.py` (runner: `" + " ".join(os.path.relpath(c, ROOT) if os.path.isabs(c) else c for c in cmd) +
          "`); do not edit by hand. T_R = 2. Model and simulator agree exactly for every pattern but the "
          "butterfly (see docs/wafer_model.md); figure numbers are the thesis's.",
          ""]
    headlines(run, a.quick, md)
    md.append("## Figures\n")
    figures(run, a.out, a.quick, md)
    with open(os.path.join(a.out, "figures.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"wafer_figures: {run.requests} runs, wrote {a.out}/figures.md and the SVGs")


if __name__ == "__main__":
    main()
