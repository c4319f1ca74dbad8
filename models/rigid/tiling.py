r"""Exact strip packing at a fixed height: bottom-left branching on the skyline.

The decision problem: given rectangles ``(w_i, h_i)`` (job ``i`` of size
``w_i`` and run time ``h_i``) and a strip ``[0, W) x [0, H)``, is there a
placement with integer corners, no two rectangles overlapping and none
leaving the strip? For a contiguous machine of ``W`` processors with every
job released at the same time ``r``, a placement at height ``H`` is a
schedule of makespan ``r + H`` (``x`` = first processor, ``y`` = start
minus ``r``), so deciding ``H = \lceil LB \rceil - r, LB + 1 - r, ...`` in
turn proves the optimal makespan, or finds it.

Search (:func:`decide`). The state is a *skyline*: column heights
``s(x)``, ``0 <= x < W``, stored as maximal segments of equal height. Every
cell below the skyline is either covered by a placed rectangle or declared
waste; every cell above it is free. A *valley* is a segment
``[x_0, x_0 + g)`` at height ``y_0 < H`` whose neighbours are higher
(``h_L, h_R > y_0``; the strip walls count as ``H``); the lowest-leftmost
segment is one. The search branches on one valley (the one where the
fewest shapes fit, a fail-first choice): either some rectangle has its
bottom-left corner at ``(x_0, y_0)``, with ``w <= g`` and
``h <= H - y_0``, or the cell ``[x_0, x_0 + 1) x [y_0, y_0 + 1)`` stays
empty (waste, which raises column ``x_0`` by one).

Completeness. Take any packing ``P`` that agrees with the state (placed
rectangles where they are, the others above the skyline). If a rectangle
``j`` of ``P`` covers the cell ``c = (x_0, y_0)``, its bottom is ``y_0``
(it lies above the skyline, which is ``y_0`` at ``x_0``) and its left edge
is ``x_0``: were it further left, it would cover column ``x_0 - 1`` at
height ``y_0 < h_L``, inside the skyline. It also fits the valley: the
column right of the valley is filled up to ``h_R > y_0``. So ``P``
agrees with the branch that places ``j`` there; otherwise ``c`` is empty in
``P`` and ``P`` agrees with the waste branch. Each branch adds a placed
rectangle or a waste cell, so the search ends, and a search that exhausts
every branch proves that no packing exists. This is the classic
bottom-left-corner branching of exact perfect-packing and strip-packing
searches: N. Lesh, J. Marks, A. McMahon, M. Mitzenmacher, "Exhaustive
approaches to 2D rectangular perfect packings", IPL 90(1), 2004; S. Martello,
M. Monaci, D. Vigo, "An exact approach to the strip-packing problem",
INFORMS J. Computing 15(3), 2003; M. Kenmochi, T. Imamichi, K. Nonobe,
M. Yagiura, H. Nagamochi, "Exact algorithms for the two-dimensional strip
packing problem with and without rotations", EJOR 198(1), 2009 (branching
on bottom-left stable positions); see also R. Alvarez-Valdes, F. Parreño,
J. M. Tamarit, "A branch and bound algorithm for the strip packing
problem", OR Spectrum 31, 2009, and J.-F. Côté, M. Dell'Amico, M. Iori,
"Combinatorial Benders' cuts for the strip packing problem", Operations
Research 62(3), 2014.

Pruning, each valid for every packing ``P`` agreeing with the state:

* *Waste budget.* ``P`` leaves ``B = W H - \sum_i w_i h_i`` cells empty, so
  a state with more waste is dead (zero for a perfect packing: no waste
  branch at all, which makes the search strong).
* *Every valley's well.* A rectangle of ``P`` covering a valley cell at
  height ``y < d = min(h_L, h_R)`` lies within the valley's columns (a
  neighbour column is filled up to ``h_L`` resp. ``h_R``), and one
  covering a cell of row ``y_0`` has its bottom at ``y_0``. The row
  ``y_0`` is therefore covered by distinct remaining rectangles with
  ``w <= g`` and ``h <= H - y_0`` whose widths sum to at most ``g``: at
  least ``g - \max\{\sum_{i \in S} w_i \le g\}`` of its cells are waste
  (a subset-sum over the remaining widths, a bitset; with no waste left
  the row must be filled exactly, Lesh et al. 2004). The well
  ``[x_0, x_0 + g) x [y_0, d)`` receives at most ``\sum w_i \min(h_i,
  d - y_0)`` cells from those rectangles. The larger shortfall is waste;
  the wells of different valleys are disjoint, so the shortfalls add up
  against the budget.
* *Narrow valley.* When no remaining rectangle has ``w <= g`` and
  ``h <= H - y_0``, no rectangle of ``P`` covers a valley cell below
  ``min(h_L, h_R)`` (previous point): the valley is raised to its lower
  neighbour at once, all waste.
* *Spanning rectangles* (as wide or as tall as the strip) are placed at the
  bottom resp. the left wall first (:func:`_peel`, a band argument).
* *Refuted states* (skyline and remaining rectangles) are remembered and
  not searched again (up to :data:`_MAX_DEAD`).
* *Identical rectangles* (same ``w``, ``h``) are tried once per node:
  exchanging two of them maps packings to packings.
* *Heights.* A rectangle taller than ``H - y_0`` cannot sit at ``y_0``.

The search is depth-first and iterative (no recursion limit), with the
skyline as an immutable tuple of ``(height, x, width)`` segments (the
lowest-leftmost segment is ``min`` of the tuple) and the remaining
rectangles as counts per distinct shape.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import time
from array import array
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from optsched.instance import Instance
from optsched.models.common.solution import Candidate, checked_candidate
from optsched.models.common.template import passed
from optsched.models.rigid import guillotine
from optsched.objective import Objective
from optsched.result import Bound
from optsched.schedule import Placement, Schedule

__all__ = ["Decision", "Strengthening", "applies", "decide", "strengthen"]

BACKEND = "tiling"

TILING_SHARE = 1.0 / 3.0
"""Share of the time left after the bounds that :func:`strengthen` may use
(see benchmarks/README.md, "Strip packing", for the measurements behind it)."""

_LEVEL_SHARE = 0.5
""":func:`strengthen`: share of its remaining time given to each height."""

_PERFECT_SHARE = 2.0 / 3.0
_PERFECT_LEVEL_SHARE = 0.75
_FIRST_TURN = 0.5
"""When the area bound leaves no waste (a perfect packing is the only way to
meet it), :func:`strengthen` may use this share of the time left (CP-SAT
rarely finds such packings) and gives the zero-waste height this share of
it, where the skyline and guillotine searches take turns of ``0.5 * 2**k``
seconds each (benchmarks/README.md, issue 30)."""

_FIRST_CUTOFF = 1000
_GROWTH = 1.5
"""Restart schedule: run ``k`` stops after ``_FIRST_CUTOFF * _GROWTH**k``
nodes (geometric, so a complete run costs at most a constant factor more
than without restarts)."""

_CHECK_EVERY = 256
"""Nodes between two looks at the clock."""

_MAX_DEAD = 200_000
"""Most refuted states remembered (each a bytes key of 6 bytes per skyline
segment and one per shape, a few hundred bytes: at most about 100 MB)."""

Segment = tuple[int, int, int]
"""``(height, x, width)``: columns ``[x, x + width)`` filled up to ``height``."""


@dataclass(frozen=True, slots=True)
class Decision:
    """Outcome of :func:`decide`.

    Parameters
    ----------
    status
        ``"feasible"`` (``positions`` is a packing), ``"infeasible"`` (the
        search was exhausted: no packing exists) or ``"unknown"`` (deadline
        or node limit reached first).
    positions
        ``(x, y)`` of each rectangle (bottom-left corner), in input order,
        when feasible; empty otherwise.
    nodes
        Search nodes expanded.
    seconds
        Wall-clock time of the search.
    method
        The search that decided: ``"skyline"`` (:func:`decide`) or
        ``"guillotine"`` (:func:`optsched.models.rigid.guillotine.tile`).
    """

    status: str
    positions: tuple[tuple[int, int], ...] = ()
    nodes: int = 0
    seconds: float = 0.0
    method: str = "skyline"


def decide(
    widths: Sequence[int],
    heights: Sequence[int],
    width: int,
    height: int,
    *,
    deadline: float | None = None,
    node_limit: int | None = None,
    restarts: bool = True,
    seed: int = 0,
) -> Decision:
    r"""Is there a packing of the rectangles into ``[0, width) x [0, height)``?

    Parameters
    ----------
    widths, heights
        Rectangle ``i`` is ``widths[i] x heights[i]`` (integers ``>= 1``
        resp. ``>= 0``; a zero height occupies nothing and goes to
        ``(0, 0)``).
    width, height
        The strip ``W`` and the height ``H`` tested.
    deadline
        A :func:`time.monotonic` instant after which the answer is
        ``"unknown"``.
    node_limit
        Stop with ``"unknown"`` after this many nodes (over all restarts).
    restarts
        Restart after ``1000 * 1.5**(k // 2)`` nodes of run ``k``, runs
        alternating between the strip as given and transposed (widths and
        heights exchanged), with a randomly perturbed order from run 2 on.
        Each run is complete: one that ends without hitting its cutoff is a
        proof. ``False``: a single run, as given.
    seed
        Seed of the perturbations.

    Returns
    -------
    Decision
        A packing, a proof of infeasibility (exhausted search) or unknown.

    Notes
    -----
    Bottom-left branching on the lowest-leftmost point of the skyline with
    the waste budget ``W H - \sum_i w_i h_i``; the completeness argument and
    the pruning rules are in the module docstring (Lesh et al. 2004;
    Martello, Monaci, Vigo 2003; Kenmochi et al. 2009).
    """
    began = time.perf_counter()
    if len(widths) != len(heights):
        raise ValueError("decide: widths and heights differ in length")
    if width < 1 or height < 0:
        raise ValueError(f"decide: strip {width} x {height} is not valid")
    area = sum(w * h for w, h in zip(widths, heights, strict=True))
    if any(w < 1 for w in widths) or any(h < 0 for h in heights):
        raise ValueError("decide: widths must be >= 1 and heights >= 0")
    flat = [i for i, h in enumerate(heights) if h > 0]
    if area > width * height or any(
        widths[i] > width or heights[i] > height for i in flat
    ):
        return Decision("infeasible", (), 0, time.perf_counter() - began)
    positions: list[tuple[int, int]] = [(0, 0)] * len(widths)
    flat, (left, bottom, width, height) = _peel(
        widths, heights, flat, positions, width, height
    )
    budget = width * height - sum(widths[i] * heights[i] for i in flat)
    if flat and (width < 1 or height < 1 or budget < 0):
        return Decision("infeasible", (), 0, time.perf_counter() - began)
    # Two orientations: the strip as given and transposed (a packing of the
    # transposed rectangles in a height x width strip, mirrored on the
    # diagonal, is one of the originals). Restarts alternate between them.
    sides = ((width, height), (height, width))
    shapes: tuple[dict[tuple[int, int], list[int]], ...] = (
        defaultdict(list),
        defaultdict(list),
    )
    for i in flat:
        shapes[0][(widths[i], heights[i])].append(i)
        shapes[1][(heights[i], widths[i])].append(i)
    nodes = 0
    limit = math.inf if node_limit is None else node_limit
    rng = random.Random(seed)
    dead: tuple[set[bytes], ...] = (set(), set())  # refuted states
    for run in itertools.count():
        turn = run % 2
        order = _order(list(shapes[turn]), rng if run > 1 else None)
        cutoff = math.inf if not restarts else _FIRST_CUTOFF * _GROWTH ** (run // 2)
        search = _Search(
            [s[0] for s in order],
            [s[1] for s in order],
            [len(shapes[turn][s]) for s in order],
            *sides[turn],
            budget,
            dead[turn],
        )
        status, placed = search.run(deadline, min(cutoff, limit - nodes))
        nodes += search.nodes
        if status != "unknown" or nodes >= limit or passed(deadline):
            break
    if status == "feasible":
        pools = [list(shapes[turn][s]) for s in order]
        for t, x, y in placed:
            if turn:
                x, y = y, x
            positions[pools[t].pop()] = (left + x, bottom + y)
    return Decision(
        status,
        tuple(positions) if status == "feasible" else (),
        nodes,
        time.perf_counter() - began,
    )


def _peel(
    widths: Sequence[int],
    heights: Sequence[int],
    items: list[int],
    positions: list[tuple[int, int]],
    width: int,
    height: int,
) -> tuple[list[int], tuple[int, int, int, int]]:
    """Place the rectangles that span the strip; return the rest and the
    strip left, as ``(items, (left, bottom, width, height))``.

    A rectangle as wide as the strip fills the band of its rows: every other
    rectangle lies wholly below or above it. Moving the band to the bottom
    and the rectangles below it up by its height keeps a packing a packing
    (with the same empty cells), so some packing, if any, has it at the
    bottom; likewise a rectangle as tall as the strip can go to the left
    wall. Applied until nothing spans what is left (the strip shrinks).
    """
    left = bottom = 0
    rest = list(items)
    while rest:
        spans = [i for i in rest if widths[i] == width or heights[i] == height]
        if not spans:
            break
        i = spans[0]
        rest.remove(i)
        positions[i] = (left, bottom)
        if widths[i] == width:
            bottom += heights[i]
            height -= heights[i]
        else:
            left += widths[i]
            width -= widths[i]
        if width == 0 or height == 0:
            break
    return rest, (left, bottom, width, height)


def _order(
    shapes: list[tuple[int, int]], rng: random.Random | None
) -> list[tuple[int, int]]:
    """Shapes in the order they are tried at a corner.

    Larger rectangles first: they are the hardest to place late, and in a
    perfect packing they fix the structure that the small ones then fill.
    A restart perturbs the areas by a random factor in ``[1/2, 2]``: the
    search time of such backtracking is heavy-tailed, and randomised
    restarts cut the tail (C. P. Gomes, B. Selman, H. Kautz, "Boosting
    combinatorial search through randomization", AAAI 1998).
    """
    if rng is None:
        return sorted(shapes, key=lambda s: (-s[0] * s[1], -s[1], -s[0]))
    noise = {s: 2.0 ** rng.uniform(-1.0, 1.0) for s in sorted(shapes)}
    return sorted(shapes, key=lambda s: (-s[0] * s[1] * noise[s], -s[1], -s[0]))


class _Search:
    """Depth-first bottom-left search over the distinct shapes."""

    def __init__(
        self,
        tw: list[int],
        th: list[int],
        count: list[int],
        width: int,
        height: int,
        budget: int,
        dead: set[bytes],
    ) -> None:
        self.tw, self.th, self.count = tw, th, count
        self.width, self.height, self.budget = width, height, budget
        self.left = sum(count)
        self.nodes = 0
        self.dead = dead
        # Keys pack the skyline's numbers in 2 bytes each when they fit.
        self.code = "H" if max(width, height) < 2**16 else "Q"
        # Shapes by width, for the subset-sum of the gap's bottom row.
        self.by_width = sorted(range(len(tw)), key=lambda t: tw[t])

    def _valley(self, y0: int, g: int, depth: int) -> tuple[list[int], int]:
        """Shapes that fit a valley ``g`` wide at ``y0`` with walls ``depth``
        high (the lower neighbour), and the fewest empty cells of its well.

        The bottom row's fewest empty cells come from a subset-sum of the
        fitting widths; the well ``g x depth`` (only rectangles within the
        valley's columns reach it) from the area they can bring into it,
        ``sum w min(h, depth)``. The larger of the two is returned.
        """
        tw, th, count = self.tw, self.th, self.count
        room = self.height - y0
        reach, top = 1, 1 << g
        mask = (top << 1) - 1
        fits: list[int] = []
        area = 0
        for t in self.by_width:
            w = tw[t]
            if w > g:
                break
            c = count[t]
            h = th[t]
            if not c or h > room:
                continue
            fits.append(t)
            area += c * w * (h if h < depth else depth)
            if reach & top:
                continue  # the row can already be filled exactly
            for _ in range(c):
                reach |= (reach << w) & mask
        row = g - (reach.bit_length() - 1)
        well = g * depth - area
        return fits, row if row > well else well

    def _node(
        self, segs: tuple[Segment, ...], waste: int
    ) -> tuple[tuple[Segment, ...], int, int, list[int]] | None:
        """Normalise a state (narrow valleys raised) and list its branches.

        ``None``: dead. Otherwise the state, the valley to branch on (the
        one with the fewest fitting shapes, lowest first on ties) and the
        shapes to try at its bottom-left corner; ``-1`` at the end stands
        for the waste cell.
        """
        height, budget = self.height, self.budget
        while True:
            last = len(segs) - 1
            chosen, options = -1, list[int]()
            short_all = waste
            raised = False
            for i in range(last + 1):
                y0, x0, g = segs[i]
                hl = segs[i - 1][0] if i > 0 else height
                hr = segs[i + 1][0] if i < last else height
                if y0 >= height or hl < y0 or hr < y0:
                    continue  # full, or not a valley
                fits, short = self._valley(y0, g, min(hl, hr) - y0)
                if not fits:
                    # Narrow valley: nothing covers it below its lower
                    # neighbour.
                    lift = min(hl, hr)
                    waste += g * (lift - y0)
                    if waste > budget:
                        return None
                    segs = _splice(segs, i, ((lift, x0, g),))
                    raised = True
                    break
                short_all += short
                if short_all > budget:
                    return None
                if chosen < 0 or len(fits) < len(options):
                    chosen, options = i, fits
            if raised:
                continue
            options.sort()  # back to the preference order of the shapes
            if waste < budget:
                options.append(-1)
            return segs, waste, chosen, options

    def _key(self, segs: tuple[Segment, ...]) -> bytes:
        """The state as bytes: skyline segments, then the remaining counts."""
        sky = array(self.code, itertools.chain.from_iterable(segs)).tobytes()
        if len(self.count) and max(self.count) < 256:
            return sky + b"|" + bytes(self.count)
        return sky + b"|" + array("Q", self.count).tobytes()

    def run(
        self, deadline: float | None, limit: float
    ) -> tuple[str, list[tuple[int, int, int]]]:
        """``(status, [(shape, x, y) placed])``."""
        tw, th, count = self.tw, self.th, self.count
        placed: list[tuple[int, int, int]] = []
        if self.left == 0:
            return "feasible", placed
        first = self._node(((0, 0, self.width),), 0)
        if first is None:
            return "infeasible", placed
        dead = self.dead
        # Frame: [segs, waste, valley, branches, next branch, branch taken,
        # key].
        stack: list[list[Any]] = [[*first, 0, None, None]]
        while stack:
            frame = stack[-1]
            segs, waste, i, fits, k, taken, key = frame
            if taken is not None:  # undo the previous branch of this node
                if taken >= 0:
                    count[taken] += 1
                    self.left += 1
                    placed.pop()
                frame[5] = None
            if k >= len(fits):
                stack.pop()
                if key is not None and len(dead) < _MAX_DEAD:
                    dead.add(key)
                continue
            t = fits[k]
            frame[4] = k + 1
            frame[5] = t
            self.nodes += 1
            if self.nodes >= limit or (
                self.nodes % _CHECK_EVERY == 0
                and deadline is not None
                and time.monotonic() >= deadline
            ):
                return "unknown", []
            y0, x0, g = segs[i]
            if t < 0:
                child = _splice(segs, i, _raise(y0, x0, g, 1, 1))
                waste += 1
            else:
                count[t] -= 1
                self.left -= 1
                placed.append((t, x0, y0))
                if self.left == 0:
                    return "feasible", placed
                child = _splice(segs, i, _raise(y0, x0, g, tw[t], th[t]))
            state = self._node(child, waste)
            if state is not None:
                key = self._key(state[0])
                if key not in dead:
                    stack.append([*state, 0, None, key])
        return "infeasible", []


def _raise(y0: int, x0: int, g: int, w: int, h: int) -> tuple[Segment, ...]:
    """The gap ``(y0, x0, g)`` with its first ``w`` columns raised by ``h``."""
    if w == g:
        return ((y0 + h, x0, g),)
    return ((y0 + h, x0, w), (y0, x0 + w, g - w))


def _splice(
    segs: tuple[Segment, ...], i: int, pieces: tuple[Segment, ...]
) -> tuple[Segment, ...]:
    """``segs`` with segment ``i`` replaced by ``pieces``, equal neighbours merged."""
    head = segs[:i]
    tail = segs[i + 1 :]
    first, last = pieces[0], pieces[-1]
    one = len(pieces) == 1
    if head and head[-1][0] == first[0]:
        h, x, w = head[-1]
        first = (h, x, w + first[2])
        head = head[:-1]
        if one:
            last = first
    if tail and tail[0][0] == last[0]:
        h, _, w = tail[0]
        last = (h, last[1], last[2] + w)
        tail = tail[1:]
        if one:
            first = last
    if one:
        return (*head, first, *tail)
    return (*head, first, *pieces[1:-1], last, *tail)


# --------------------------------------------------------------------------
# Use from the CP-SAT back-end
# --------------------------------------------------------------------------


@dataclass(slots=True)
class Strengthening:
    """What :func:`strengthen` did.

    ``notes`` go to the result's parameters (``"proved"`` when the best
    schedule meets the best bound). The CP-SAT back-end still runs its
    search then: it starts from the optimum with the makespan domain closed
    and ends at once, and its model facts stay in the parameters.
    """

    notes: dict[str, object] = field(default_factory=dict)


def applies(instance: Instance, objective: Objective) -> bool:
    """Is ``instance`` a plain strip-packing instance for :func:`strengthen`?

    Contiguous, makespan, no busy blocks or outages, one release for all
    jobs, rigid jobs on a flat machine without calendar or chains.
    """
    machine = instance.machine
    return (
        objective.kind == "cmax"
        and machine.allocation == "contiguous"
        and machine.flat
        and machine.calendar is None
        and not machine.unavailable
        and not machine.outages
        and bool(instance.jobs)
        and not instance.moldable
        and len({job.release for job in instance.jobs}) == 1
        and all(job.preceding_job is None for job in instance.jobs)
    )


def strengthen(
    instance: Instance,
    objective: Objective,
    bounds: list[Bound],
    candidates: list[Candidate],
    deadline: float,
    *,
    share: float = TILING_SHARE,
) -> Strengthening:
    r"""Decide the strip packing at the best bound, raising it while refuted.

    Parameters
    ----------
    instance, objective
        The problem; nothing is done unless :func:`applies`.
    bounds
        Lower bounds so far; a refuted height ``r + H`` appends
        ``Bound(r + H + 1, "tiling")``.
    candidates
        Checked schedules, best first; a packing found is checked
        (:func:`~optsched.models.common.solution.checked_candidate`) and inserted
        in order.
    deadline
        The back-end's :func:`time.monotonic` deadline; the search may use
        ``share`` of the time left.

    Returns
    -------
    Strengthening
        The decisions made, and ``"proved"`` when the best schedule meets
        the best bound (a search would prove nothing more).

    Notes
    -----
    With ``r`` the common release and ``LB`` the best bound, the heights
    ``H = \lceil LB \rceil - r, H + 1, ...`` below the best schedule's
    makespan are decided in turn by :func:`decide`, each with half of the
    time left, until a packing is found. A packing at ``H`` is a schedule
    of makespan ``r + H`` (start ``r + y``, processors ``[x, x + w)``); an
    exhausted search at ``H`` proves that no schedule ends by ``r + H``
    (a packing at a lower height would be one at ``H`` too): makespans are
    integers, so ``r + H + 1`` is a valid bound. A height left undecided
    at its deadline proves nothing; the next one is still tried, since a
    packing there improves the schedule.
    """
    if not applies(instance, objective):
        return Strengthening()
    began = time.monotonic()
    jobs = instance.jobs
    release = jobs[0].release
    widths = [j.size for j in jobs]
    heights = [j.runtime for j in jobs]
    lower = math.ceil(max(b.value for b in bounds)) if bounds else 0
    level = max(lower - release, max(heights))
    perfect = sum(j.area for j in jobs) == instance.processors * level
    if perfect:
        share = max(share, _PERFECT_SHARE)
    stop = began + share * max(0.0, deadline - began)
    tried: list[dict[str, object]] = []
    result = Strengthening(notes={"decisions": tried})
    best = min(c.value for c in candidates) if candidates else math.inf
    while release + level < best and time.monotonic() < stop:
        # Half of what is left per height: an undecided height leaves time
        # to look for a packing one unit higher (a better schedule).
        now = time.monotonic()
        decision = _decide_level(
            widths, heights, instance.processors, level,
            now + (_PERFECT_LEVEL_SHARE if perfect else _LEVEL_SHARE) * (stop - now),
            zero_waste=perfect,
        )  # fmt: skip
        perfect = False  # the total area fills one height only
        tried.append(
            {
                "height": release + level,
                "status": decision.status,
                "nodes": decision.nodes,
                "seconds": round(decision.seconds, 3),
                "method": decision.method,
            }
        )
        if decision.status == "feasible":
            found = _schedule(instance, decision.positions, release)
            candidate, reason = checked_candidate(instance, objective, BACKEND, found)
            if candidate is None:
                result.notes["rejected"] = str(reason)
                break
            _insert(candidates, candidate)
            best = candidate.value
            break
        if decision.status == "infeasible":
            # No packing at this height, hence none lower: makespans are
            # integers, so every schedule ends at release + level + 1 or later.
            bounds.append(Bound(release + level + 1, BACKEND, time.monotonic() - began))
        level += 1
    if candidates and bounds and best <= math.ceil(max(b.value for b in bounds)):
        # The caller's search then starts from the optimum with its makespan
        # domain closed (lower bound = hint), and ends at once.
        result.notes["proved"] = True
    return result


def _decide_level(
    widths: list[int],
    heights: list[int],
    width: int,
    level: int,
    deadline: float,
    *,
    zero_waste: bool,
) -> Decision:
    """:func:`decide` at ``level``; at a zero-waste level (the rectangles'
    area is ``width * level``: only a perfect packing fits) the skyline
    search and the guillotine merge search
    (:func:`optsched.models.rigid.guillotine.tile`) take turns.

    Turn ``k`` gives each :data:`_FIRST_TURN` ``* 2**k`` seconds (seed ``k``),
    so neither waits long for the other whichever finds the packing. A
    guillotine tiling found is a packing; none found proves nothing (only
    the skyline search can refute the height).
    """
    if not zero_waste:
        return decide(widths, heights, width, level, deadline=deadline)
    nodes, seconds = 0, 0.0
    for turn in itertools.count():
        slice_end = min(deadline, time.monotonic() + _FIRST_TURN * 2**turn)
        decision = decide(
            widths, heights, width, level, deadline=slice_end, seed=turn
        )  # fmt: skip
        nodes, seconds = nodes + decision.nodes, seconds + decision.seconds
        if decision.status != "unknown":
            return dataclasses.replace(decision, nodes=nodes, seconds=seconds)
        slice_end = min(deadline, time.monotonic() + _FIRST_TURN * 2**turn)
        tiled = guillotine.tile(
            widths, heights, width, level, deadline=slice_end, seed=turn
        )
        nodes, seconds = nodes + tiled.nodes, seconds + tiled.seconds
        if tiled.status == "feasible":
            return Decision("feasible", tiled.positions, nodes, seconds, "guillotine")
        if time.monotonic() >= deadline:
            break
    return Decision("unknown", (), nodes, seconds)


def _schedule(
    instance: Instance, positions: Sequence[tuple[int, int]], release: int
) -> Schedule:
    placements = {
        job.id: Placement.contiguous(
            release + y, release + y + job.runtime, x, job.size
        )
        for job, (x, y) in zip(instance.jobs, positions, strict=True)
    }
    return Schedule(placements, BACKEND)


def _insert(candidates: list[Candidate], candidate: Candidate) -> None:
    """Insert keeping ``candidates`` best first (earlier wins ties)."""
    k = 0
    while k < len(candidates) and candidates[k].value <= candidate.value:
        k += 1
    candidates.insert(k, candidate)
