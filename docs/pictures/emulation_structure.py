#!/usr/bin/env python3
"""Draws docs/emulation_structure.svg: how the emulation's parts fit together.

    python3 docs/pictures/emulation_structure.py > docs/emulation_structure.svg

Standard library only. The picture is hand-laid-out; edit the boxes below and regenerate.
"""

W, H = 960, 600
out = []


def box(x, y, w, h, title, lines=(), fill="#eef3fb", stroke="#4a6fa5", bold=True, size=13):
    out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{fill}" stroke="{stroke}"/>')
    weight = ' font-weight="bold"' if bold else ""
    out.append(f'<text x="{x + 8}" y="{y + 18}" font-size="{size}"{weight}>{title}</text>')
    for i, line in enumerate(lines):
        out.append(f'<text x="{x + 8}" y="{y + 36 + 15 * i}" font-size="11">{line}</text>')


def arrow(x1, y1, x2, y2, label="", dx=4, dy=-4, dash=False):
    d = ' stroke-dasharray="5,3"' if dash else ""
    out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#333" stroke-width="1.3"{d} marker-end="url(#a)"/>')
    if label:
        out.append(f'<text x="{(x1 + x2) / 2 + dx}" y="{(y1 + y2) / 2 + dy}" font-size="11" fill="#333">{label}</text>')


def chip(x, y, name):
    out.append(f'<rect x="{x}" y="{y}" width="190" height="150" rx="6" fill="#ffffff" stroke="#777"/>')
    out.append(f'<text x="{x + 8}" y="{y + 16}" font-size="12" font-weight="bold">{name}</text>')
    for r in range(3):
        for c in range(4):
            out.append(f'<rect x="{x + 12 + 34 * c}" y="{y + 26 + 24 * r}" width="28" height="18" fill="#dbe8d4" stroke="#6a8f5a"/>')
    out.append(f'<text x="{x + 152}" y="{y + 52}" font-size="10">worker</text>')
    out.append(f'<text x="{x + 152}" y="{y + 64}" font-size="10">cores,</text>')
    out.append(f'<text x="{x + 152}" y="{y + 76}" font-size="10">each L1</text>')
    for c in range(4):
        out.append(f'<rect x="{x + 12 + 34 * c}" y="{y + 102}" width="28" height="16" fill="#f6dcc0" stroke="#b07a3a"/>')
    out.append(f'<text x="{x + 152}" y="{y + 114}" font-size="10">Ethernet</text>')
    out.append(f'<rect x="{x + 12}" y="{y + 124}" width="28" height="16" fill="#e4dcef" stroke="#7a6a9a"/>')
    out.append(f'<text x="{x + 46}" y="{y + 136}" font-size="10">DRAM endpoint</text>')


out.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif">')
out.append('<defs><marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#333"/></marker></defs>')
out.append(f'<rect width="{W}" height="{H}" fill="white"/>')
out.append('<text x="12" y="24" font-size="16" font-weight="bold">The emulation: what runs a kernel on a host</text>')

# Host side: spec -> cluster
box(12, 44, 250, 74, "ClusterSpec / topology::*", ["n300(), t3000(), galaxy(), ring(n),",
                                                    "line(n), mesh(r, c), custom(n) + connect"])
arrow(137, 118, 137, 150, "builds")

# The cluster with two chips and a link
out.append('<rect x="12" y="150" width="470" height="240" rx="8" fill="#fafafa" stroke="#4a6fa5"/>')
out.append('<text x="20" y="170" font-size="13" font-weight="bold">Cluster: every core\'s memory (mapped lazily,'
           ' kept across runs)</text>')
chip(24, 190, "chip 0")
chip(280, 190, "chip 1")
out.append('<path d="M 152 308 V 352 H 306 V 308" fill="none" stroke="#b07a3a" stroke-width="3"/>')
out.append('<text x="160" y="368" font-size="11" fill="#8a5a2a">Ethernet link between chips (eth_send)</text>')
out.append('<text x="24" y="384" font-size="10" fill="#555">inside a chip every core reaches every other over the NoC</text>')

# Launcher
box(520, 44, 428, 92, "Launcher", ["add(core, kernel, {args}) · init_word(core, addr, value)",
                                   "on_dump(core, text) · next_program() (programs back to back per chip)",
                                   "run(RunOptions) -> RunReport"])
arrow(520, 110, 482, 200, "kernels", dx=-40, dy=30)

# Engines
box(520, 160, 206, 160, "Engine::fibers (default)", ["every core a fiber on the calling", "thread; a blocking operation parks",
                                                     "it; policy: fifo (handoff),", "random, pct, timed; same seed =",
                                                     "same run; deadlock found at once", "", "sanitizer-aware (ASan, TSan)"],
    fill="#e9f5e9", stroke="#4a8a4a")
box(742, 160, 206, 160, "Engine::threads", ["one OS thread per core;", "waits spin, yield, then sleep", "(WaitPolicy); real parallelism;",
                                            "the host's memory model;", "wall-clock watchdog"], fill="#f5efe3", stroke="#9a7a3a")
arrow(634, 136, 623, 160)
arrow(834, 136, 845, 160)

# Hal
box(520, 344, 428, 74, "kccl::emu::Hal&amp; — the device contract, per core", [
    "noc_write / noc_read / sem_inc / sem_wait_min / eth_send / idle() ...",
    "checks addresses and sizes; the same kernel code compiles for hardware"], fill="#fff8e0", stroke="#b09a30")
arrow(623, 320, 660, 344)
arrow(845, 320, 810, 344)
arrow(520, 370, 482, 340, "", dx=-30, dy=36)

# Options that change how operations land
box(12, 404, 230, 116, "RunOptions::adversary", ["delays and splits deliveries as far", "as the contract allows; dirty L1",
                                                 "(garbage in memory never written);", "start skew; seeded: replayable",
                                                 "(KCCL_EMU_REPLAY)"], fill="#fbeaea", stroke="#a54a4a")
box(256, 404, 226, 116, "RunOptions::timing", ["a TimingModel gives each core a", "virtual clock (fiber engine only):",
                                               "wormhole_model() — ps, Ethernet,", "NoC, DRAM; wafer_model() — PE", "cycles of a wafer-scale mesh"],
    fill="#eef3fb", stroke="#4a6fa5")
out.append('<text x="12" y="542" font-size="11">Both act on every operation the Hal performs: the adversary decides when</text>')
out.append('<text x="12" y="557" font-size="11">and in what pieces it lands, the timing model at what modelled time.</text>')

# Outputs
box(520, 442, 206, 120, "RunReport", ["per core: ok / failed / aborted,", "message, value; watchdog or", "deadlock dump of who waits",
                                      "for what; replay string;", "makespan (timed)"], fill="#f2f2f2", stroke="#666")
box(742, 442, 206, 120, "Trace (optional)", ["RunOptions::trace: a Perfetto", "JSON track per core, slices", "for waits and sends, flows",
                                             "send -> delivery", "(docs/trace_ring8.svg)"], fill="#f2f2f2", stroke="#666")
arrow(660, 418, 623, 442)
arrow(810, 418, 845, 442)

out.append('</svg>')
print("\n".join(out))
