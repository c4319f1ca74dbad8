r"""Perfect guillotine packings rebuilt bottom-up by merging rectangles.

The question: do the rectangles ``(w_i, h_i)`` (no rotation) tile the
strip ``[0, W) x [0, H)`` exactly (``\sum_i w_i h_i = W H``) with a
*guillotine* pattern, one that straight cuts across the whole split
recursively into the single rectangles? A yes is a packing at the area
bound, hence an optimal strip packing of height ``H``.

Bottom-up view. A guillotine tiling is a binary tree whose leaves are the
rectangles and whose inner nodes put two rectangles side by side (equal
heights) or on top of each other (equal widths). Every tree with two leaves
or more has a node with two leaf children, so some pair of rectangles
sharing a full side can be merged into one, leaving a smaller set that a
guillotine tree still tiles. The search (:func:`tile`) merges such pairs
depth first until one ``W x H`` rectangle is left; since every such pair is
a branch, a search that runs out of branches proves that no guillotine
tiling exists (not that no tiling exists: this is a primal method, the
lower bound stays the area bound).

Rules, each valid for every guillotine tiling ``T`` of the current set:

* *Bands.* A rectangle as wide as the strip is a full-width band of ``T``;
  the rows above and below it are guillotine again (a straight cut splits a
  guillotine pattern into guillotine patterns), so the band is put at the
  bottom and the strip shortens (likewise for the full height, at the left).
* *Partners.* A rectangle ``p`` that is not the whole strip has a sibling
  ``S`` in ``T``. Side by side, ``S`` is ``p.h`` high and at most
  ``W - p.w`` wide, and its left column is a stack of rectangles whose
  heights add up to ``p.h``: ``p.h`` is a subset sum of the other
  rectangles' heights (those at most ``W - p.w`` wide); on top of each
  other, likewise with the widths. A state where some rectangle has
  neither is dead.
* *Refuted states* (strip and multiset of rectangles) are remembered:
  merging in another order reaches the same state.

Order. Merges that complete a band come first, then those whose result
lines up with another rectangle (its new side equals that rectangle's),
then merges of rare sides (two rectangles that are the only ones of their
height are likely siblings of the cut). Runs alternate between dives that
backtrack up to a node cutoff (growing slowly from ``2 n``; refuted states
shared between runs) and pilot dives, which make at each step the merge,
among the three best ranked, whose greedy completion leaves the fewest
rectangles (C. Voß, A. Fink, C. Duin, "Looking ahead with the pilot
method", Annals of OR 136, 2005); every run but the first perturbs the
ranks at random, which cuts the heavy tail of the search time (C. P.
Gomes, B. Selman, H. Kautz, AAAI 1998). The merge view of guillotine
patterns is that of the bottom-up constructions for guillotine cutting of
P. Y. Wang, "Two algorithms for constrained two-dimensional cutting stock
problems", Operations Research 31(3), 1983; E. K. Burke, G. Kendall,
G. Whitwell, Operations Research 52(4), 2004, give the guillotine
perfect-packing instances (BKW) this targets.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from optsched.models.common.template import passed

__all__ = ["Tiling", "tile"]

Shape = tuple[int, int]
"""``(width, height)``."""

_FIRST_CUTOFF = 20
_GROWTH = 1.05
"""Run ``k`` stops after ``2 n + _FIRST_CUTOFF (_GROWTH**k - 1)`` nodes
(``n`` rectangles): short randomised dives first, longer ones later."""

_PILOT_BREADTH = 3
"""Merges a pilot dive looks ahead from at each step."""

_MAX_DEAD = 500_000
"""Most refuted states remembered."""


@dataclass(frozen=True, slots=True)
class Tiling:
    """Outcome of :func:`tile`.

    ``status``: ``"feasible"`` (``positions`` holds each rectangle's
    bottom-left corner, in input order), ``"no-guillotine"`` (exhausted: no
    guillotine tiling; a non-guillotine one may exist) or ``"unknown"``
    (deadline or node limit first).
    """

    status: str
    positions: tuple[tuple[int, int], ...] = ()
    nodes: int = 0
    seconds: float = 0.0


@dataclass(slots=True)
class _Node:
    """A rectangle of the tree: a leaf (``item`` >= 0) or its parts, side
    by side from the left (``across``) or stacked from the bottom."""

    width: int
    height: int
    item: int = -1
    parts: tuple[_Node, ...] = ()
    across: bool = False


def tile(
    widths: Sequence[int],
    heights: Sequence[int],
    width: int,
    height: int,
    *,
    deadline: float | None = None,
    node_limit: int | None = None,
    seed: int = 0,
) -> Tiling:
    r"""A guillotine tiling of ``width x height`` by the rectangles, if one exists.

    Parameters
    ----------
    widths, heights
        Rectangle ``i`` is ``widths[i] x heights[i]`` (integers ``>= 1``).
    width, height
        The strip ``W`` and height ``H``; the total area must be ``W H``
        (otherwise the answer is ``"no-guillotine"`` at once).
    deadline
        A :func:`time.monotonic` instant after which the answer is
        ``"unknown"``.
    node_limit
        Stop after this many merges tried (over all restarts).
    seed
        Seed of the restarts' perturbations.

    Returns
    -------
    Tiling
        The positions of a guillotine tiling, a proof that there is none, or
        unknown.
    """
    began = time.perf_counter()
    if len(widths) != len(heights):
        raise ValueError("tile: widths and heights differ in length")
    if any(w < 1 for w in widths) or any(h < 1 for h in heights):
        raise ValueError("tile: widths and heights must be >= 1")
    area = sum(w * h for w, h in zip(widths, heights, strict=True))
    if (
        not widths
        or area != width * height
        or max(widths) > width
        or max(heights) > height
    ):
        status = (
            "feasible" if not widths and area == width * height else "no-guillotine"
        )
        return Tiling(status, (), 0, time.perf_counter() - began)
    leaves = [
        _Node(w, h, i) for i, (w, h) in enumerate(zip(widths, heights, strict=True))
    ]
    rng = random.Random(seed)
    dead: set[tuple[object, ...]] = set()
    nodes = 0
    limit = math.inf if node_limit is None else node_limit
    for run in itertools.count():
        # Even runs: a dive with backtracking up to a node cutoff; odd runs:
        # a pilot dive (look-ahead, no backtracking). Each finds packings
        # the other misses (benchmarks/README.md, issue 30).
        cutoff = 2 * len(leaves) + _FIRST_CUTOFF * (_GROWTH**run - 1)
        search = _Search(leaves, width, height, dead, rng if run else None)
        if run % 2:
            status, root = search.pilot(deadline, limit - nodes, _PILOT_BREADTH)
        else:
            status, root = search.run(deadline, min(cutoff, limit - nodes))
        nodes += search.nodes
        if status != "unknown" or nodes >= limit or passed(deadline):
            break
    positions: list[tuple[int, int]] = [(0, 0)] * len(widths)
    if root is not None:
        _lay_out(root, 0, 0, positions)
    return Tiling(
        status,
        tuple(positions) if status == "feasible" else (),
        nodes,
        time.perf_counter() - began,
    )


def _lay_out(root: _Node, x: int, y: int, positions: list[tuple[int, int]]) -> None:
    """Write the leaves' corners, the tree's bottom-left corner at ``(x, y)``."""
    todo = [(root, x, y)]
    while todo:
        node, x, y = todo.pop()
        if node.item >= 0:
            positions[node.item] = (x, y)
            continue
        for part in node.parts:
            todo.append((part, x, y))
            if node.across:
                x += part.width
            else:
                y += part.height


def _subset_sums(values: Sequence[int], cap: int) -> int:
    """Bitset of the subset sums ``<= cap`` of ``values`` (bit ``s`` set)."""
    reach, mask = 1, (1 << (cap + 1)) - 1
    for v in values:
        if v <= cap:
            reach |= (reach << v) & mask
    return reach


class _Search:
    """Depth-first merging over the multiset of rectangle shapes."""

    def __init__(
        self,
        leaves: list[_Node],
        width: int,
        height: int,
        dead: set[tuple[object, ...]],
        rng: random.Random | None,
    ) -> None:
        self.width, self.height = width, height
        self.pools: dict[Shape, list[_Node]] = {}
        for leaf in leaves:
            self.pools.setdefault((leaf.width, leaf.height), []).append(leaf)
        self.dead = dead
        self.rng = rng
        self.nodes = 0
        # Bands peeled off the strip, in order: (node, full width?).
        self.bands: list[tuple[_Node, bool]] = []
        self._ok: set[Shape] = set()

    # -- state -------------------------------------------------------------

    def _key(self) -> tuple[object, ...]:
        shapes = tuple(sorted((s, len(p)) for s, p in self.pools.items() if p))
        return (self.width, self.height, shapes)

    def _count(self) -> Counter[Shape]:
        return Counter({s: len(p) for s, p in self.pools.items() if p})

    def _merge(self, shapes: tuple[Shape, ...], across: bool) -> _Node:
        parts = tuple(self.pools[s].pop() for s in shapes)
        if across:
            size = (sum(p.width for p in parts), parts[0].height)
        else:
            size = (parts[0].width, sum(p.height for p in parts))
        node = _Node(*size, -1, parts, across)
        self.pools.setdefault(size, []).append(node)
        return node

    def _unmerge(self, node: _Node) -> None:
        self.pools[(node.width, node.height)].pop()
        for part in reversed(node.parts):
            self.pools[(part.width, part.height)].append(part)

    def _peel(self) -> int:
        """Peel spanning rectangles into bands; return how many."""
        peeled = 0
        while True:
            left = sum(len(p) for p in self.pools.values())
            if left <= 1:
                return peeled
            span = next(
                (
                    s
                    for s, p in self.pools.items()
                    if p and (s[0] == self.width or s[1] == self.height)
                ),
                None,
            )
            if span is None:
                return peeled
            node = self.pools[span].pop()
            self.bands.append((node, span[0] == self.width))
            if span[0] == self.width:
                self.height -= span[1]
            else:
                self.width -= span[0]
            peeled += 1

    def _unpeel(self, peeled: int) -> None:
        for _ in range(peeled):
            node, full_width = self.bands.pop()
            if full_width:
                self.height += node.height
            else:
                self.width += node.width
            self.pools[(node.width, node.height)].append(node)

    def _alive(self, count: Counter[Shape]) -> bool:
        """The partner rule (module docstring) for every shape.

        The subset sums are taken over all rectangles narrow (resp. low)
        enough, the rectangle itself included when it is: a larger set of
        sums, so a weaker but still valid test, computed as prefix bitsets
        over the rectangles sorted by width (resp. height).
        """
        if sum(count.values()) <= 1:
            return True
        return all(self._sides_alive(count, across) for across in (True, False))

    def _sides_alive(self, count: Counter[Shape], across: bool) -> bool:
        """Side by side (``across``) or stacked: mark in ``self._ok`` the
        shapes with a partner that way; the second pass returns whether
        every shape has one either way."""
        width, height = (
            (self.width, self.height) if across else (self.height, self.width)
        )
        # Orient: "length" is the side summed across the sibling's column.
        shapes = sorted(count, key=lambda s: s[0] if across else s[1])
        length = (lambda s: s[0]) if across else (lambda s: s[1])
        other = (lambda s: s[1]) if across else (lambda s: s[0])
        mask = (1 << (height + 1)) - 1
        reach, k = 1, 0
        ok = self._ok if not across else set()
        # Shapes by decreasing room width - length, so the prefix grows.
        for p in sorted(count, key=lambda s: -(width - length(s))):
            room = width - length(p)
            while k < len(shapes) and length(shapes[k]) <= room:
                q = shapes[k]
                for _ in range(count[q]):
                    reach |= (reach << other(q)) & mask
                k += 1
            if room > 0 and (reach >> other(p)) & 1:
                ok.add(p)
        if across:
            self._ok = ok
            return True
        return len(ok) == len(count)

    def _moves(
        self, count: Counter[Shape]
    ) -> list[tuple[float, tuple[Shape, ...], bool]]:
        """Merges ``(score, shapes, across)``, best first.

        Every pair sharing a side (which makes the search complete for
        guillotine tilings) and groups of three or more rectangles sharing a
        side whose summed length meets the strip or another rectangle's
        side (a whole row or stack of the cut, perhaps). Scores: a group
        ``8 + (its size) / (rectangles sharing the side)``, plus 4 when it
        makes a band, else ``log2(1 + rectangles of the new length)``; a
        pair ``1 / (rectangles sharing the side) + log2(1 + rectangles of
        the new length)``. A restart perturbs them (:data:`_NOISE`).
        """
        moves: list[tuple[float, tuple[Shape, ...], bool]] = []
        rng = self.rng
        for across in (True, False):
            cap = self.width if across else self.height
            side = (lambda s: s[1]) if across else (lambda s: s[0])
            length = (lambda s: s[0]) if across else (lambda s: s[1])
            targets = Counter(length(s) for s in count for _ in range(count[s]))
            groups: dict[int, list[Shape]] = {}
            for s in count:
                groups.setdefault(side(s), []).append(s)
            for group in groups.values():
                total = sum(count[s] for s in group)
                if total < 2:
                    continue
                group.sort(key=length, reverse=True)
                items = [s for s in group for _ in range(count[s])]
                for subset in _target_subsets(items, length, targets, cap):
                    long = sum(length(s) for s in subset)
                    score = 8.0 + len(subset) / total
                    score += 4.0 if long == cap else math.log2(1 + targets[long])
                    moves.append((score, subset, across))
                for i, a in enumerate(group):
                    for b in group[i:]:
                        long = length(a) + length(b)
                        if (a == b and count[a] < 2) or long > cap:
                            continue
                        score = 1.0 / total + math.log2(1 + targets[long])
                        moves.append((score, (a, b), across))
        if rng is not None:
            moves = [
                (sc * 2.0 ** rng.uniform(-_NOISE, _NOISE), sh, ac)
                for sc, sh, ac in moves
            ]
        moves.sort(key=lambda m: -m[0])
        return moves

    # -- search ------------------------------------------------------------

    def run(self, deadline: float | None, limit: float) -> tuple[str, _Node | None]:
        """``(status, root)``; the root holds the bands and the last rectangle."""
        self._peel()
        # Frame: [moves, next move, merge taken, bands peeled after it, key].
        stack: list[list[Any]] = []
        if self._done():
            return "feasible", self._root()
        count = self._count()
        if not self._alive(count):
            return "no-guillotine", None
        stack.append([self._moves(count), 0, None, 0, self._key()])
        while stack:
            frame = stack[-1]
            moves, k, taken, _, key = frame
            if taken is not None:
                self._unpeel(frame[3])
                self._unmerge(taken)
                frame[2] = None
            if k >= len(moves):
                stack.pop()
                if len(self.dead) < _MAX_DEAD:
                    self.dead.add(key)
                continue
            _, shapes, across = moves[k]
            frame[1] = k + 1
            self.nodes += 1
            if self.nodes >= limit or passed(deadline):
                return "unknown", None
            frame[2] = self._merge(shapes, across)
            frame[3] = self._peel()
            if self._done():
                return "feasible", self._root()
            child = self._key()
            if child in self.dead:
                continue
            count = self._count()
            if not self._alive(count):
                self.dead.add(child)
                continue
            stack.append([self._moves(count), 0, None, 0, child])
        return "no-guillotine", None

    def pilot(
        self, deadline: float | None, limit: float, breadth: int
    ) -> tuple[str, _Node | None]:
        """One dive, each merge chosen by greedy look-ahead (the pilot method).

        Of the ``breadth`` best-ranked merges, the one whose greedy
        completion (:meth:`_greedy`) leaves the fewest rectangles is made;
        a greedy completion that tiles the strip ends the search. Returns
        ``("feasible", root)`` or ``("unknown", None)``: a failed dive proves
        nothing. C. Voß, A. Fink, C. Duin, "Looking ahead with the pilot
        method", Annals of OR 136, 2005.
        """
        self._peel()
        while not self._done():
            count = self._count()
            moves = self._moves(count) if self._alive(count) else []
            best: tuple[int, tuple[Shape, ...], bool] | None = None
            for _, shapes, across in moves[:breadth]:
                node = self._merge(shapes, across)
                peeled = self._peel()
                left, root = self._greedy(deadline, limit)
                if root is not None:
                    return "feasible", root
                self._unpeel(peeled)
                self._unmerge(node)
                if left < 0:
                    return "unknown", None  # out of time or nodes
                if best is None or left < best[0]:
                    best = (left, shapes, across)
            if best is None:
                return "unknown", None
            self._merge(best[1], best[2])
            self._peel()
        return "feasible", self._root()

    def _greedy(self, deadline: float | None, limit: float) -> tuple[int, _Node | None]:
        """Merge the best-ranked pair until stuck; ``(rectangles left, None)``
        with the state restored, ``(0, root)`` when tiled (state kept), or
        ``(-1, None)`` past the deadline or node limit."""
        undo: list[tuple[_Node, int]] = []
        left = -1
        while True:
            if self._done():
                return 0, self._root()
            self.nodes += 1
            if self.nodes >= limit or passed(deadline):
                break
            count = self._count()
            moves = self._moves(count) if self._alive(count) else []
            if not moves:
                left = sum(count.values())
                break
            node = self._merge(moves[0][1], moves[0][2])
            undo.append((node, self._peel()))
        for node, peeled in reversed(undo):
            self._unpeel(peeled)
            self._unmerge(node)
        return left, None

    def _done(self) -> bool:
        left = [p for p in self.pools.values() if p]
        return (
            len(left) == 1
            and len(left[0]) == 1
            and (left[0][0].width, left[0][0].height) == (self.width, self.height)
        ) or (not left and (self.width == 0 or self.height == 0))

    def _root(self) -> _Node:
        """The last rectangle with the bands put back, outermost last."""
        left = [p[0] for p in self.pools.values() if p]
        node = left[0] if left else None
        for band, full_width in reversed(self.bands):
            if node is None:
                node = band
            elif full_width:  # at the bottom
                node = _Node(band.width, band.height + node.height, -1, (band, node))
            else:  # full height, at the left
                node = _Node(
                    band.width + node.width, band.height, -1, (band, node), True
                )
        assert node is not None
        return node


_NOISE = 1.0
"""A restart multiplies each merge's score by ``2**u``, ``u`` uniform in
``[-_NOISE, _NOISE]``."""


_MAX_SUBSETS = 8
_WALK_BUDGET = 60
"""Group merges listed per side value, and the steps of their enumeration."""


def _target_subsets(
    items: list[Shape], length: Any, targets: Counter[int], cap: int
) -> list[tuple[Shape, ...]]:
    """Sub-multisets of ``items`` (3 or more, or the whole group) whose
    summed length is ``cap`` or in ``targets``; largest first, at most
    :data:`_MAX_SUBSETS`, found by a bounded depth-first enumeration."""
    found: list[tuple[Shape, ...]] = []
    whole = sum(length(s) for s in items)
    if whole <= cap and (whole == cap or targets[whole]):
        found.append(tuple(items))
    budget = [_WALK_BUDGET]
    chosen: list[Shape] = []

    def walk(k: int, total: int) -> None:
        if len(found) >= _MAX_SUBSETS or budget[0] <= 0:
            return
        budget[0] -= 1
        if (
            len(chosen) >= 3
            and len(chosen) < len(items)
            and (total == cap or targets[total])
        ):
            found.append(tuple(chosen))
        for j in range(k, len(items)):
            if j > k and items[j] == items[j - 1]:
                continue  # identical rectangles: one branch
            if total + length(items[j]) > cap:
                continue
            chosen.append(items[j])
            walk(j + 1, total + length(items[j]))
            chosen.pop()

    walk(0, 0)
    return found
