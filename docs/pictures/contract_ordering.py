#!/usr/bin/env python3
"""Draws the device contract's NoC ordering rules as timelines, two pictures:

    python3 docs/pictures/contract_ordering.py > docs/contract_ordering.svg
    python3 docs/pictures/contract_ordering.py profiles > docs/contract_ordering_profiles.svg

What it draws is what docs/contract.md and the ORDERING GUARANTEES of include/hal/contract.hpp
state, rule by rule; one panel per rule set, each a function below (add a panel for a further
rule set by writing another function and listing it in PANELS or PROFILE_PANELS):

contract_ordering.svg (PANELS), the unicast rules:

  same_destination     N1: writes, inline writes and increments from one core to ONE
                       destination land in issue order, each completely before the next; the
                       bytes of one write land in any order until it has landed.
  other_destinations   N1/N6: nothing orders operations to DIFFERENT destinations;
                       N2: noc_write_barrier() returns when every earlier operation has landed;
                       N3: noc_writes_flushed() only frees the source, nothing has landed.
  semaphore            N5: sem_inc is an atomic add (concurrent increments are never lost); a
                       sem_wait* that returns, or a sem_read that sees the value, makes visible
                       every write ordered before the increment (a release / acquire pair).

contract_ordering_profiles.svg (PROFILE_PANELS), multicast and the strict profile:
  multicast_flush      M1: a multicast is ordered with no other operation of its core unless a
                       flush or barrier separates them: data multicast, flush, flag multicast;
                       without the flush the flag may land on a core before the data.
  strict_increment     strict profile, N1's write -> increment half: a noc_write then a sem_inc
                       to the SAME core are ordered only across noc_writes_flushed() or
                       noc_write_barrier() (the observed profile keeps issue order).
  store_fence          N7 (strict profile): a store through l1_ptr may reach L1 after a later
                       NoC write has read those bytes; l1_store_fence between the two.

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


def multicast_flush(out, x0):
    p = Panel(out, x0, "Multicast: data, flush, flag", "M1 (every ordering profile)")
    R, C1, C2 = 145, 245, 335
    p.lane(R, "root", 130, 520)
    p.lane(C1, "core 1", 130, 520)
    p.lane(C2, "core 2", 130, 520)
    # without the flush
    p.arrow(R, 150, C1, 250, DATA, "noc_write_mcast(data)", lx=R - 8, ly=154, anchor="end")
    p.arrow(R, 150, C2, 230, DATA)
    p.arrow(R, 175, C1, 200, SEM, "sem_set_mcast(flag)", lx=R - 8, ly=179, anchor="end")
    p.arrow(R, 175, C2, 190, SEM)
    p.text(C1 - 6, 214, "flag first", color=BAD, anchor="end")
    p.text(C1 - 6, 262, "data later", color=BAD, anchor="end")
    p.note(290, ["No flush: the flag multicast may land on a core before",
                 "the data multicast (Blackhole did, in tt-metal's kernels)."], color=BAD)
    # with the flush
    p.arrow(R, 335, C1, 385, DATA, "noc_write_mcast(data)", lx=R - 8, ly=339, anchor="end")
    p.arrow(R, 335, C2, 375, DATA)
    p.box(R - 110, 355, 100, 42, OK, "")
    p.text(R - 60, 372, "noc_writes_", color=OK, anchor="middle")
    p.text(R - 60, 387, "flushed()", color=OK, anchor="middle")
    p.out.append(f'<line x1="{x0 + R - 10}" y1="376" x2="{x0 + R}" y2="376" stroke="{OK}" stroke-width="2"/>')
    p.arrow(R, 415, C1, 445, SEM, "sem_set_mcast(flag)", lx=R - 8, ly=419, anchor="end")
    p.arrow(R, 415, C2, 430, SEM)
    p.text(C2 - 6, 470, "each core: data, then flag", color=OK, anchor="end")
    p.note(540, ["After the flush, at every core both reach, the data",
                 "lands completely before the flag. The cores still",
                 "receive in any order relative to each other (M2)."])


def strict_increment(out, x0):
    p = Panel(out, x0, "Strict: write, then increment", "N1's write -> increment half, strict profile")
    A, B = 135, 250
    p.lane(A, "core A", 130, 520)
    p.lane(B, "core B", 130, 520)
    # without the flush: strict lets the increment overtake
    p.arrow(A, 150, B, 250, DATA, "noc_write(data -> B)", lx=A - 6, ly=146, anchor="end")
    p.arrow(A, 170, B, 200, SEM, "sem_inc(B's sem)", lx=A - 6, ly=174, anchor="end")
    p.text(B + 6, 204, "increment first", color=BAD, anchor="start")
    p.text(B + 6, 254, "data later", color=BAD, anchor="start")
    p.note(290, ["Strict: tt-metal does not document that an atomic",
                 "lands after a write to the same core (observed keeps",
                 "issue order, as tt-metal's EDM relies on)."], color=BAD)
    # with the flush
    p.arrow(A, 345, B, 385, DATA, "noc_write(data -> B)", lx=A - 6, ly=341, anchor="end")
    p.box(A - 50, 362, 100, 42, OK, "")
    p.text(A, 379, "noc_writes_", color=OK, anchor="middle")
    p.text(A, 394, "flushed()", color=OK, anchor="middle")
    p.arrow(A, 415, B, 455, SEM, "sem_inc(B's sem)", lx=A - 6, ly=436, anchor="end")
    p.text(B + 6, 390, "data", color=OK, anchor="start")
    p.text(B + 6, 460, "then the increment", color=OK, anchor="start")
    p.note(540, ["Both profiles: a flush (or the write barrier)",
                 "between the write and the increment to the same",
                 "core orders them. Every protocol of the library",
                 "has it, so it holds under strict."])


def store_fence(out, x0):
    p = Panel(out, x0, "Store, fence, NoC write", "N7 (modelled by the strict profile)")
    A, L, B = 120, 220, 320
    p.lane(A, "A's RISC-V", 130, 520)
    p.lane(L, "A's L1", 130, 520)
    p.lane(B, "core B", 130, 520)
    # without the fence
    p.arrow(A, 150, L, 235, DATA, "store x = 7", lx=A - 8, ly=154, anchor="end", dashed=True)
    p.dot(A, 175, DATA)
    p.text(A - 8, 179, "noc_write(x -> B)", color=DATA, anchor="end")
    p.arrow(L, 195, B, 250, DATA, "reads old x", lx=L + 6, ly=190, anchor="start")
    p.text(B - 6, 268, "B gets the old value", color=BAD, anchor="end")
    p.note(290, ["The store retired but had not reached L1 when the",
                 "NoC read the source: the write sent the old bytes."], color=BAD)
    # with the fence
    p.arrow(A, 335, L, 365, DATA, "store x = 7", lx=A - 8, ly=339, anchor="end", dashed=True)
    p.box(A - 110, 375, 120, 26, OK, "l1_store_fence(x)")
    p.dot(A, 420, DATA)
    p.text(A - 8, 424, "noc_write(x -> B)", color=DATA, anchor="end")
    p.arrow(L, 430, B, 480, DATA, "reads 7", lx=L + 6, ly=425, anchor="start")
    p.text(B - 6, 498, "B gets 7", color=OK, anchor="end")
    p.note(540, ["l1_store_fence: the stores to the range have reached",
                 "L1 before any later NoC operation reads it (on",
                 "tt-metal: a load-back of every word). The emulation",
                 "checks stores a kernel declares with note_write."])


PANELS = [same_destination, other_destinations, semaphore]
PROFILE_PANELS = [multicast_flush, strict_increment, store_fence]


def main():
    import sys
    profiles = sys.argv[1:] == ["profiles"]
    if sys.argv[1:] and not profiles:
        sys.exit("usage: contract_ordering.py [profiles]  (no argument: the N-rules; profiles: M1, strict, N7)")
    title = ("Multicast (M1) and the strict ordering profile (write then increment, N7)" if profiles
             else "The device contract\'s NoC ordering rules")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H + 10}" font-family="sans-serif">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>',
           f'<rect width="{W}" height="{H + 10}" fill="white"/>',
           f'<text x="10" y="22" font-size="16" font-weight="bold">{title}</text>',
           '<text x="10" y="40" font-size="11">Time runs down; a vertical line is a core; an arrow goes from where an '
           'operation is issued to where it has landed. Blue: data; orange: semaphore increments.</text>']
    for i, panel in enumerate(PROFILE_PANELS if profiles else PANELS):
        panel(out, 6 + i * (PANEL_W + 6))
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
