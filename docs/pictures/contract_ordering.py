#!/usr/bin/env python3
"""Draws docs/contract_ordering.svg: the device contract's NoC ordering rules as timelines.

    python3 docs/pictures/contract_ordering.py > docs/contract_ordering.svg

What it draws is what docs/contract.md and the ORDERING GUARANTEES of include/hal/contract.hpp
state, rule by rule; one panel per rule set, each a function below (add a panel for a further
rule set by writing another function and listing it in PANELS):

  same_destination     N1: writes, inline writes and increments from one core to ONE
                       destination land in issue order, each completely before the next; the
                       bytes of one write land in any order until it has landed.
  other_destinations   N1/N6: nothing orders operations to DIFFERENT destinations;
                       N2: noc_write_barrier() returns when every earlier operation has landed;
                       N3: noc_writes_flushed() only frees the source, nothing has landed.
  semaphore            N5: sem_inc is an atomic add (concurrent increments are never lost); a
                       sem_wait* that returns, or a sem_read that sees the value, makes visible
                       every write ordered before the increment (a release / acquire pair).

Time runs downwards; a vertical line is one core; an arrow is one NoC operation from the cycle it
is issued (on the sender's line) to the cycle it has landed (on the destination's line).
Standard library only.
"""

W, H = 1170, 600
PANEL_W = 380
TOP = 78

INK, GREY, OK, BAD, DATA, SEM = "#222", "#888", "#2e7d32", "#c62828", "#4e79a7", "#f28e2b"


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Panel:
    def __init__(self, out, x0, title, rule):
        self.out, self.x0 = out, x0
        out.append(f'<rect x="{x0 + 4}" y="{TOP - 26}" width="{PANEL_W - 8}" height="{H - TOP + 16}" rx="8" '
                   f'fill="#fafafa" stroke="#ddd"/>')
        self.text(14, TOP - 6, title, size=14, bold=True)
        self.text(14, TOP + 12, rule, size=11, color=GREY)

    def text(self, x, y, s, size=11, color=INK, bold=False, anchor="start"):
        w = ' font-weight="bold"' if bold else ""
        self.out.append(f'<text x="{self.x0 + x}" y="{y}" font-size="{size}" fill="{color}" text-anchor="{anchor}"{w}>'
                        f'{esc(s)}</text>')

    def lane(self, x, name, y0, y1):
        self.text(x, y0 - 8, name, size=12, bold=True, anchor="middle")
        self.out.append(f'<line x1="{self.x0 + x}" y1="{y0}" x2="{self.x0 + x}" y2="{y1}" stroke="{GREY}" '
                        f'stroke-width="2"/>')

    def arrow(self, xa, ya, xb, yb, color, label=None, dashed=False, lx=None, ly=None, anchor="middle"):
        d = ' stroke-dasharray="5,4"' if dashed else ""
        self.out.append(f'<line x1="{self.x0 + xa}" y1="{ya}" x2="{self.x0 + xb}" y2="{yb}" stroke="{color}" '
                        f'stroke-width="2" marker-end="url(#arrow)"{d}/>')
        if label:
            self.text(lx if lx is not None else (xa + xb) / 2, ly if ly is not None else (ya + yb) / 2 - 5, label,
                      size=11, color=color, anchor=anchor)

    def dot(self, x, y, color):
        self.out.append(f'<circle cx="{self.x0 + x}" cy="{y}" r="4" fill="{color}"/>')

    def box(self, x, y, w, h, color, label):
        self.out.append(f'<rect x="{self.x0 + x}" y="{y}" width="{w}" height="{h}" rx="4" fill="white" '
                        f'stroke="{color}" stroke-width="1.5"/>')
        self.text(x + w / 2, y + h / 2 + 4, label, size=11, color=color, anchor="middle")

    def note(self, y, lines, color=INK):
        for i, s in enumerate(lines):
            self.text(14, y + 15 * i, s, size=11, color=color)


def same_destination(out, x0):
    p = Panel(out, x0, "One core to ONE destination: issue order",
              "N1 (include/hal/contract.hpp; docs/contract.md)")
    A, B = 150, 250
    p.lane(A, "core A", 130, 400)
    p.lane(B, "core B", 130, 400)
    p.dot(A, 150, DATA)
    p.arrow(A, 150, B, 240, DATA, "1. noc_write(data -> B)", lx=A - 8, ly=154, anchor="end")
    p.dot(A, 190, SEM)
    p.arrow(A, 190, B, 300, SEM, "2. sem_inc(B's sem)", lx=A - 8, ly=194, anchor="end")
    p.box(B + 8, 229, 112, 22, DATA, "1 landed, all of it")
    p.box(B + 8, 289, 112, 22, SEM, "then 2 lands")
    p.text(B + 8, 340, "B sees 2 =>", color=OK, bold=True)
    p.text(B + 8, 355, "B sees all of 1", color=OK, bold=True)
    p.note(430, ["No barrier needed between 1 and 2: they go to the",
                 "same core, so each lands completely before the next",
                 "starts. The same holds for noc_inline_write32.",
                 "",
                 "Until a write has landed, its bytes appear in any",
                 "order (any subset, a later byte first): only sem_inc",
                 "and noc_inline_write32 land as one 32-bit word.",
                 "Poll those, never a word inside the data."])


def other_destinations(out, x0):
    p = Panel(out, x0, "To DIFFERENT destinations: no order",
              "N1, N6; the write barrier N2; the flush N3")
    A, B, C = 60, 200, 320
    p.lane(A, "core A", 130, 520)
    p.lane(B, "core B", 130, 520)
    p.lane(C, "core C", 130, 520)
    # without a barrier
    p.arrow(A, 150, B, 250, DATA, "noc_write(-> B)", lx=A + 6, ly=146, anchor="start")
    p.arrow(A, 170, C, 200, SEM, "sem_inc(-> C)", lx=C - 6, ly=176, anchor="end")
    p.text(C - 6, 218, "landed on C first", color=BAD, anchor="end")
    p.text(B + 6, 262, "B's data later", color=BAD, anchor="start")
    p.note(290, ["Seeing C's semaphore says nothing about B's data;",
                 "sem_inc(B); sem_inc(C) may land on C first too."], color=BAD)
    # with a barrier
    p.arrow(A, 345, B, 395, DATA, "noc_write(-> B)", lx=A + 6, ly=341, anchor="start")
    p.box(A - 50, 365, 100, 42, OK, "")
    p.text(A, 382, "noc_write_", color=OK, anchor="middle")
    p.text(A, 397, "barrier()", color=OK, anchor="middle")
    p.out.append(f'<line x1="{x0 + A + 50}" y1="{398}" x2="{x0 + B}" y2="{398}" stroke="{OK}" stroke-dasharray="2,3"/>')
    p.arrow(A, 425, C, 465, SEM, "sem_inc(-> C)", lx=A + 6, ly=441, anchor="start")
    p.text(C - 6, 485, "lands after B's data", color=OK, anchor="end")
    p.note(540, ["noc_write_barrier(): returns when every earlier",
                 "write, inline write and increment of A has landed (N2).",
                 "noc_writes_flushed(): A may reuse the writes' source",
                 "L1 (N3); it does NOT mean they have landed."], color=INK)


def semaphore(out, x0):
    p = Panel(out, x0, "Semaphore: release and acquire", "N5 (and the emulation's memory orders)")
    A, B, D = 70, 300, 185
    p.lane(A, "producer A", 130, 400)
    p.lane(D, "producer D", 130, 400)
    p.lane(B, "consumer B", 130, 400)
    p.arrow(A, 150, B, 205, DATA, "noc_write(data)", lx=A + 6, ly=146, anchor="start")
    p.arrow(A, 178, B, 262, SEM, "sem_inc +1", lx=A + 6, ly=196, anchor="start")
    p.arrow(D, 215, B, 280, SEM, "sem_inc +1", lx=D + 6, ly=211, anchor="start")
    p.box(B - 72, 300, 144, 40, OK, "")
    p.text(B, 316, "sem_wait_min(sem, 2)", color=OK, anchor="middle")
    p.text(B, 331, "returns (acquire)", color=OK, anchor="middle")
    p.text(B, 360, "then A's data is visible:", color=OK, anchor="middle")
    p.text(B, 375, "it was ordered before A's", color=OK, anchor="middle")
    p.text(B, 390, "increment (N1)", color=OK, anchor="middle")
    p.note(430, ["sem_inc is an atomic add at the destination:",
                 "concurrent increments are never lost (2 above).",
                 "A sem_wait* that returns, or a sem_read that sees",
                 "a value, makes visible every write ordered (N1,",
                 "N2, E3) before the operation that produced it.",
                 "Emulation: sem_inc is fetch_add(release), sem_set",
                 "a release store, sem_read an acquire load."])


PANELS = [same_destination, other_destinations, semaphore]


def main():
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H + 10}" font-family="sans-serif">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>',
           f'<rect width="{W}" height="{H + 10}" fill="white"/>',
           '<text x="10" y="22" font-size="16" font-weight="bold">The device contract\'s NoC ordering rules</text>',
           '<text x="10" y="40" font-size="11">Time runs down; a vertical line is a core; an arrow goes from where an '
           'operation is issued to where it has landed. Blue: data; orange: semaphore increments.</text>']
    for i, panel in enumerate(PANELS):
        panel(out, 6 + i * (PANEL_W + 6))
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
