#!/usr/bin/env python3
"""Draws docs/ring_all_gather.svg: the steps of all_gather ring_cw on 4 ranks.

    python3 docs/pictures/ring_all_gather.py > docs/ring_all_gather.svg

The schedule is the one of RingAllGather (include/collectives/algorithms/ring.hpp) with one chunk
per rank, as its Mermaid picture in docs/collectives-algorithms.md shows it ("all_gather ring_cw,
4 ranks"): each rank first copies its input into its own fragment of the output; at step t every
rank r sends fragment (r - t) mod p to rank r + 1, which stores it (and forwards it at step t + 1,
except at the last step). Standard library only.
"""

P = 4
COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"]
W, H = 1010, 330
CELL = 250
out = []

out.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif">')
out.append('<defs><marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#333"/></marker></defs>')
out.append(f'<rect width="{W}" height="{H}" fill="white"/>')
out.append('<text x="10" y="22" font-size="15" font-weight="bold">all_gather, method ring_cw, 4 ranks: '
           'what each rank\'s output holds after each step</text>')
out.append('<text x="10" y="40" font-size="11">Fragment f (colour) is rank f\'s input. An arrow is one message '
           'to the next rank clockwise, labelled with the fragment it carries; p - 1 = 3 steps.</text>')

# rank positions inside a cell: a square, clockwise 0 (top left), 1 (top right), 2, 3
POS = [(40, 40), (160, 40), (160, 170), (40, 170)]


def held_after(step):
    """held[r] = set of fragments rank r's output holds after `step` (-1 = after the local copy)."""
    held = [{r} for r in range(P)]
    for t in range(step + 1):
        for r in range(P):
            held[(r + 1) % P].add((r - t) % P)
    return held


def cell(cx, title, step):
    out.append(f'<text x="{cx + 10}" y="68" font-size="13" font-weight="bold">{title}</text>')
    held = held_after(step)
    for r, (x, y) in enumerate(POS):
        X, Y = cx + x, 60 + y
        out.append(f'<rect x="{X - 28}" y="{Y - 14}" width="56" height="28" rx="5" fill="#f4f4f4" stroke="#555"/>')
        out.append(f'<text x="{X - 22}" y="{Y + 5}" font-size="12">rank {r}</text>')
        # the output buffer: P slots, slot f filled when fragment f is held
        for f in range(P):
            fill = COLORS[f] if f in held[r] else "white"
            out.append(f'<rect x="{X - 28 + 14 * f}" y="{Y + 17}" width="14" height="12" fill="{fill}" stroke="#555"/>')
    if step >= 0:
        for r in range(P):
            (x1, y1), (x2, y2) = POS[r], POS[(r + 1) % P]
            X1, Y1, X2, Y2 = cx + x1, 60 + y1, cx + x2, 60 + y2
            # shorten to the box edges
            if y1 == y2:
                X1 += 30 if x2 > x1 else -30
                X2 += -30 if x2 > x1 else 30
                ly = Y1 - 8 if r == 0 else Y1 + 48
                lx = (X1 + X2) / 2 - 8
            else:
                Y1 += 32 if y2 > y1 else -16
                Y2 += -16 if y2 > y1 else 32
                lx = X1 + 8 if r == 1 else X1 - 30
                ly = (Y1 + Y2) / 2 + 4
            f = (r - step) % P
            out.append(f'<line x1="{X1}" y1="{Y1}" x2="{X2}" y2="{Y2}" stroke="{COLORS[f]}" stroke-width="2.5" marker-end="url(#a)"/>')
            out.append(f'<text x="{lx}" y="{ly}" font-size="12" fill="{COLORS[f]}" font-weight="bold">f{f}</text>')


cell(0, "start: own input copied", -1)
for t in range(P - 1):
    cell(CELL * (t + 1), f"step t{t}", t)

out.append(f'<text x="10" y="{H - 12}" font-size="11">Rank r sends fragment (r - t) mod 4 at step t: its own input '
           'at t0, then what it received the step before (recv_copy_send). Cost (p-1) alpha + (p-1)/p n beta.</text>')
out.append('</svg>')
print("\n".join(out))
