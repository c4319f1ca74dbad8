r"""Exact per-request optimum of a co-reservation by event-point enumeration.

A request with parts :math:`q_1..q_k` needs a common integer start
:math:`S \in [e, \ell]` (``earliest_start``, ``latest_start``) and an
injective map :math:`\sigma` of parts to clusters with

.. math:: \mathrm{free}_{\sigma(i)}(S, S + d) \ge q_i,\qquad
          S \ge \mathrm{nb}_{\sigma(i)}\ \text{(optional fairness bound)}

and costs :math:`C(S, \sigma) = \sum_i \mathrm{cost}_{\sigma(i)}(S, d, q_i)`
(:meth:`optsched.coreserve.tariff.Tariff.cost`). Objectives (Meltzer 2005, §4.7;
Eq. 2 for ``weighted``):

``start``
    min :math:`S`, then min :math:`C`, then the lexicographically smallest
    tuple of cluster indices;
``cost``
    min :math:`C`, then min :math:`S`, then cluster indices;
``weighted``
    min :math:`W = k \frac{C - c_{min}}{c_{max} - c_{min}} + s \frac{S -
    s_{min}}{s_{max} - s_{min}}` over the *true* feasible set (a term is 0
    when its difference is 0), then min :math:`S`, then min :math:`C`.

Candidate starts (why enumerating them is exact)
-------------------------------------------------
Let :math:`u_c(t)` be the CPUs committed on cluster ``c`` at ``t``: a
right-continuous step function that rises only at busy starts and falls only
at busy ends. A pair (part ``i``, cluster ``c``) is infeasible at ``S`` iff
:math:`[S, S + d)` meets a maximal interval :math:`[a, b)` where
:math:`u_c > P_c - q_i` (``a`` a busy start, ``b`` a busy end), i.e. iff
:math:`a - d < S < b`. So its feasible starts form a union of closed integer
intervals :math:`[L, R]` with

* left ends :math:`L \in \mathcal L = \{e\} \cup \{\text{busy ends}\}
  \cup \{\mathrm{nb}_c\}` and
* right ends :math:`R \in \mathcal R = \{\ell\} \cup \{a - d : a
  \text{ a busy start}\}`.

The sampled cost of one CPU,
:math:`\sum_{j=0}^{\lfloor d/3600 \rfloor} r(S + 3600 j)`, depends only on
the hour :math:`h = \lfloor S / 3600 \rfloor` and changes between hours
``h - 1`` and ``h`` only if :math:`r(h - 1) \ne r(h + \lfloor d/3600
\rfloor)` (the sampled hours ``h-1..h+n-2`` and ``h..h+n-1``, ``n`` samples,
share all but those two), so add :math:`\mathcal H = \{3600 h\}` for those
hours.

*Sampled rule.* Take any feasible :math:`(S^*, \sigma)` and
:math:`S' = \max\{x \in \mathcal L \cup \mathcal H : x \le S^*\}`. Each pair
of :math:`\sigma` is feasible on some :math:`[L, R] \ni S^*` with
:math:`L \in \mathcal L`, so :math:`L \le S' \le S^*` and the pair stays
feasible at :math:`S'`; no point of :math:`\mathcal H` lies in
:math:`(S', S^*]`, so every cluster's sampled cost is the same at both and
:math:`C(S', \sigma) = C(S^*, \sigma)`. Hence
:math:`(S', \sigma)` is no later and no dearer: every minimum (``start``,
``cost``, ``weighted``, also the *earliest* optimal start, hence the tie
rules) and :math:`c_{min}, c_{max}, s_{min}` are attained on
:math:`\mathcal L \cup \mathcal H`, and every Pareto point lies there (a
Pareto point at :math:`S^* \ne S'` would be dominated by :math:`(S', C)`).
Symmetrically :math:`s_{max} \in \mathcal R` (move right to the nearest
right end). Non-dominated points among the candidates are non-dominated
overall: a dominating point moved left stays dominating and is a candidate.

*Pro-rata rule.* :math:`\frac{q}{3600}\int_S^{S+d} r` is linear in ``S``
between consecutive points of :math:`\mathcal T = \{B, B - d\}`, ``B`` the
hour boundaries where some rate changes. Between two consecutive candidates
of :math:`\mathcal K = \mathcal L \cup \mathcal R \cup \mathcal T` the set of
feasible pairs is constant (a pair feasible inside is feasible on the closed
interval between them, its :math:`[L, R]` containing it) and every
:math:`C(\cdot, \sigma)` and :math:`W(\cdot, \sigma)` is linear, so their
minima and maxima, and the earliest minimiser, lie on :math:`\mathcal K`.
The Pareto front may now contain runs of consecutive starts whose cost falls
linearly (and, where two assignments' costs cross between candidates, bends
there): :func:`pareto_front` returns its points *at the candidates* — every
returned point is non-dominated over all integer starts (by linearity, a
point dominating it can be replaced by a candidate one), and between two
returned points the front, if any, follows the min-cost curve.

The enumeration evaluates :math:`\mathcal L \cup \mathcal R \cup
\mathcal H` (sampled) or :math:`\mathcal K` (pro-rata), within
:math:`[e, \ell]` (a superset only adds exact evaluations). At a candidate,
the free CPUs of every cluster over :math:`[S, S + d)` come from a
sparse-table range maximum over its occupancy step function (:math:`O(1)`
per query after :math:`O(B \log B)`); the
assignment is a bipartite matching: a greedy feasibility test (sorted parts
against sorted free counts: feasible iff the j-th largest part fits the
j-th largest free count for every j, since eligibility is a threshold), then
a maximum-weight maximum-cardinality matching (Edmonds' blossom algorithm as
``networkx.max_weight_matching``; Galil 1986) on integer-scaled costs,
with a base-``m`` tie-break term that makes the minimum-cost assignment the
lexicographically smallest.

Reference: J. Meltzer, *Vergleich von Co-Reservierungs-Algorithmen in
Grid-Umgebungen*, Diplomarbeit, FU Berlin / ZIB (about 2005), §4.7, Eq. 2.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import networkx as nx
import numpy as np

from optsched.coreserve.request import Choice, ClusterState, Request, occupancy_steps
from optsched.coreserve.tariff import COST_RULES, HOUR, WEEK_HOURS, exact

OBJECTIVES = ("start", "cost", "weighted")

REASONS = {
    "parts": "more parts than clusters",
    "window": "the window is shorter than the duration",
    "none": "no start in the window has enough free CPUs on distinct clusters",
}


@dataclass(frozen=True)
class Optimum:
    """The optimum of one request, or why there is none.

    ``value`` is the objective of ``choice`` (its start, its cost, or its
    weighted value ``W``); ``smin``/``smax`` are the earliest and latest
    feasible starts and ``cmin``/``cmax`` the least and greatest cost over all
    feasible (start, assignment) pairs (``None`` when infeasible).
    ``candidates`` counts the starts evaluated.
    """

    objective: str
    choice: Choice | None
    reason: str | None
    candidates: int
    value: Fraction | None = None
    smin: int | None = None
    smax: int | None = None
    cmin: Fraction | None = None
    cmax: Fraction | None = None


@dataclass(frozen=True)
class _Point:
    """A feasible candidate start, its min-cost and max-cost assignments."""

    start: int
    clusters: tuple[int, ...]
    cost: Fraction
    max_cost: Fraction


class FreeProfile:
    """CPUs of one cluster free throughout ``[S, S + d)``, for many ``S`` at once.

    The occupancy step function (:func:`occupancy_steps`) with a sparse table
    of range maxima: level ``j`` holds the maximum of ``2**j`` consecutive
    steps, so the maximum over any run of steps is that of two overlapping
    blocks (Bender and Farach-Colton 2000).
    """

    def __init__(self, cluster: ClusterState) -> None:
        steps = occupancy_steps(cluster.busy)
        self.processors = cluster.processors
        self.times = np.array([t for t, _ in steps], dtype=np.int64)
        used = np.array([q for _, q in steps], dtype=np.int64)
        levels = [used]
        width = 1
        while 2 * width <= len(used):
            prev = levels[-1]
            levels.append(np.maximum(prev[:-width], prev[width:]))
            width *= 2
        table = np.zeros((len(levels), max(len(used), 1)), dtype=np.int64)
        for j, level in enumerate(levels):
            table[j, : len(level)] = level
        self.table = table

    def free(self, starts: np.ndarray, duration: int) -> np.ndarray:
        """Free CPUs over ``[S, S + duration)`` for each ``S`` of ``starts``."""
        starts = np.asarray(starts, dtype=np.int64)
        if len(self.times) == 0:
            return np.full(starts.shape, self.processors, dtype=np.int64)
        # Steps in force somewhere in [S, S + d): the one at S (index lo, or
        # none before the first step, whose value is 0) up to the last one
        # beginning before S + d (index hi).
        lo = np.maximum(np.searchsorted(self.times, starts, side="right") - 1, 0)
        hi = np.searchsorted(self.times, starts + duration, side="left") - 1
        empty = hi < lo
        hi = np.where(empty, lo, hi)
        length = hi - lo + 1
        level = np.floor(np.log2(length)).astype(np.int64)
        # log2 of exact powers of two is exact; guard the rounding anyway.
        level = np.where((1 << (level + 1)) <= length, level + 1, level)
        level = np.where((1 << level) > length, level - 1, level)
        used = np.maximum(
            self.table[level, lo], self.table[level, hi - (1 << level) + 1]
        )
        return self.processors - np.where(empty, 0, used)


def refusal(request: Request, clusters: Sequence[ClusterState]) -> str | None:
    """Why the request cannot be placed whatever the busy entries (or ``None``)."""
    if len(request.parts) > len(clusters):
        return REASONS["parts"]
    biggest = max(c.processors for c in clusters)
    too_big = [q for q in request.parts if q > biggest]
    if too_big:
        return f"part of {max(too_big)} CPUs exceeds every cluster"
    if request.latest_start < request.earliest_start:
        return REASONS["window"]
    return None


def candidate_starts(
    request: Request,
    clusters: Sequence[ClusterState],
    *,
    cost_rule: str = "sampled",
    not_before: Mapping[str, int] | None = None,
) -> list[int]:
    r"""The sorted candidate starts :math:`\mathcal K` inside the window (see
    the module docstring)."""
    es, ls, d = request.earliest_start, request.latest_start, request.duration
    points = {es, ls}
    for cluster in clusters:
        for start, end, cpus in cluster.busy:
            if end > start and cpus:
                points.update((end, start - d))
    points.update((not_before or {}).values())
    events = sorted(p for p in points if es <= p <= ls)
    points.update(_price_changes(request, clusters, cost_rule, events))
    return sorted(p for p in points if es <= p <= ls)


def _price_changes(
    request: Request,
    clusters: Sequence[ClusterState],
    cost_rule: str,
    events: Sequence[int],
) -> list[int]:
    """:math:`\\mathcal H` (sampled) or :math:`\\mathcal T` (pro-rata), in the
    first week after each event point only.

    Between two consecutive points of ``events`` (:math:`\\mathcal L \\cup
    \\mathcal R` in the window) the feasible pairs do not change, and prices
    repeat every week: a price point a week or more after the last event
    before it has a twin one week earlier, as feasible and as dear, and
    earlier. So the enumeration walks at most a week of hours per event, and
    a deadline of ``2**53`` s costs no more than one of a week.
    """
    ls, d = request.latest_start, request.duration
    hourly = [c.tariff.hourly for c in clusters]
    sampled = cost_rule == "sampled"
    # Sampled: n samples, hours h-1..h+n-2 and h..h+n-1 differ by r(h-1),
    # r(h+n-1). Pro-rata: the rate changes at hour h (two points, h and h-d).
    residues = _changes(hourly, d // HOUR + 1 if sampled else 1)
    last_hour = (ls if sampled else ls + d) // HOUR
    hours: set[int] = set()
    # Sampled: points h*HOUR; pro-rata also h*HOUR - d (hours shifted by d).
    for event in events:
        for shift in (0,) if sampled else (0, d):
            first = -(-(event + shift) // HOUR)
            last = min(last_hour, first + WEEK_HOURS)
            hours.update(
                h for h in range(first, last + 1) if h % WEEK_HOURS in residues
            )
    if sampled:
        return [h * HOUR for h in hours]
    return [t for h in hours for t in (h * HOUR, h * HOUR - d)]


def _changes(hourly: Sequence[Sequence[Fraction]], shift: int) -> set[int]:
    """Hours ``h`` of the week where some table has ``r(h - 1) != r(h - 1 + shift)``."""
    week = WEEK_HOURS
    return {
        h
        for h in range(week)
        if any(r[(h - 1) % week] != r[(h - 1 + shift) % week] for r in hourly)
    }


def fits(parts: Sequence[int], free: Sequence[int]) -> bool:
    """Whether parts go to distinct clusters with ``free`` CPUs (eligible ones).

    Eligibility is a threshold (``q <= f``), so the largest parts take the
    largest free counts: feasible iff the j-th largest part is at most the
    j-th largest free count for every j.
    """
    if len(parts) > len(free):
        return False
    big = sorted(free, reverse=True)
    return all(q <= f for q, f in zip(sorted(parts, reverse=True), big, strict=False))


def assign(
    parts: Sequence[int],
    free: Sequence[int],
    unit: Sequence[Fraction],
    *,
    maximise: bool = False,
) -> tuple[tuple[int, ...], Fraction] | None:
    """Min-cost (or max-cost) map of parts to distinct eligible clusters.

    Parameters
    ----------
    parts
        CPUs of each part.
    free
        Free CPUs of each cluster (``-1``: the cluster may not be used).
    unit
        Cost of one CPU on each cluster at this start.
    maximise
        The dearest assignment instead (no tie rule).

    Returns
    -------
    (clusters, cost) or None
        Cluster index per part and the exact cost; among min-cost maps the
        lexicographically smallest tuple. ``None`` if no map exists.
    """
    if not fits(parts, free):
        return None
    m, k = len(free), len(parts)
    scale = math.lcm(1, *(u.denominator for u in unit))
    cost = [[q * int(u * scale) for u in unit] for q in parts]
    if k == 1:
        eligible = [c for c in range(m) if free[c] >= parts[0]]
        if maximise:
            pick = max(eligible, key=lambda c: cost[0][c])
        else:
            pick = min(eligible, key=lambda c: (cost[0][c], c))
        return (pick,), Fraction(cost[0][pick], scale)
    # Minimise cost * m**k + sum_i sigma(i) * m**(k-1-i): the digits in base m
    # order equal-cost maps lexicographically, and never outweigh one unit of
    # cost. Weights are made positive (every maximum-cardinality matching
    # here has k edges, so the constant shift changes no choice).
    base = m**k
    top = max(max(row) for row in cost) * base + base
    graph = nx.Graph()
    for i, q in enumerate(parts):
        for c in range(m):
            if free[c] >= q:
                if maximise:
                    weight = cost[i][c] + 1
                else:
                    weight = top - (cost[i][c] * base + c * m ** (k - 1 - i))
                graph.add_edge(("part", i), ("cluster", c), weight=weight)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    chosen = [0] * k
    for a, b in matching:
        part, cluster = (a, b) if a[0] == "part" else (b, a)
        chosen[part[1]] = cluster[1]
    if len(matching) != k:  # pragma: no cover - fits() said a map exists
        return None
    total = sum(
        (Fraction(cost[i][c], scale) for i, c in enumerate(chosen)), Fraction(0)
    )
    return tuple(chosen), total


def _check(objective: str, cost_rule: str) -> None:
    if objective not in OBJECTIVES:
        raise ValueError(
            f"unknown objective {objective!r}; valid: {', '.join(OBJECTIVES)}"
        )
    if cost_rule not in COST_RULES:
        raise ValueError(
            f"unknown cost rule {cost_rule!r}; valid: {', '.join(COST_RULES)}"
        )


def _unit(cluster: ClusterState, start: int, duration: int, cost_rule: str) -> Fraction:
    return cluster.tariff.cost(start, duration, 1, cost_rule)


def feasible_points(
    request: Request,
    clusters: Sequence[ClusterState],
    *,
    cost_rule: str = "sampled",
    not_before: Mapping[str, int] | None = None,
    with_max: bool = True,
) -> tuple[list[_Point], int]:
    """Every feasible candidate start with its min-cost (and max-cost) map.

    Returns the points in start order and the number of candidates.
    """
    starts = candidate_starts(
        request, clusters, cost_rule=cost_rule, not_before=not_before
    )
    array = np.array(starts, dtype=np.int64)
    d, parts = request.duration, request.parts
    free = [FreeProfile(c).free(array, d) for c in clusters]
    bounds = [(not_before or {}).get(c.name) for c in clusters]
    # Only which parts fit matters: round each free count down to the largest
    # part size it holds (-1: none), so that equal eligibility and prices
    # share one matching (the memo).
    sizes = sorted(set(parts))
    memo: dict[tuple[object, ...], tuple[tuple[int, ...], Fraction, Fraction]] = {}
    points = []
    for j, start in enumerate(starts):
        avail = tuple(
            _fitting(sizes, int(f[j])) if nb is None or start >= nb else -1
            for f, nb in zip(free, bounds, strict=True)
        )
        if not fits(parts, avail):
            continue
        unit = tuple(_unit(c, start, d, cost_rule) for c in clusters)
        key = (avail, unit)
        if key not in memo:
            best = assign(parts, avail, unit)
            assert best is not None
            dearest = assign(parts, avail, unit, maximise=True) if with_max else None
            memo[key] = (*best, best[1] if dearest is None else dearest[1])
        chosen, cost, max_cost = memo[key]
        points.append(_Point(start, chosen, cost, max_cost))
    return points, len(starts)


def _fitting(sizes: Sequence[int], free: int) -> int:
    """The largest of the sorted ``sizes`` at most ``free`` (``-1``: none)."""
    k = bisect.bisect_right(sizes, free)
    return sizes[k - 1] if k else -1


def weighted_value(
    start: int,
    cost: Fraction,
    k: Fraction,
    s: Fraction,
    smin: int,
    smax: int,
    cmin: Fraction,
    cmax: Fraction,
) -> Fraction:
    """Meltzer's Eq. 2: ``k (C - cmin)/(cmax - cmin) + s (S - smin)/(smax - smin)``,
    a term being 0 when its difference is 0."""
    value = Fraction(0)
    if cmax != cmin:
        value += k * (cost - cmin) / (cmax - cmin)
    if smax != smin:
        value += s * Fraction(start - smin, smax - smin)
    return value


def optimum(
    request: Request,
    clusters: Sequence[ClusterState],
    objective: str = "start",
    *,
    k: float | Fraction = 1,
    s: float | Fraction = 1,
    cost_rule: str = "sampled",
    not_before: Mapping[str, int] | None = None,
) -> Optimum:
    """The exact optimum of one co-reservation request (see the module docstring).

    Parameters
    ----------
    request, clusters
        The request and the clusters as it sees them.
    objective
        ``start``, ``cost`` or ``weighted`` (weights ``k`` on cost and ``s``
        on start, both ``>= 0``).
    cost_rule
        ``sampled`` (the study's) or ``prorata``.
    not_before
        Cluster name -> earliest start it may host a part at (Meltzer's A3
        backlog rule); clusters not named are unrestricted.

    Returns
    -------
    Optimum
        The choice, its objective value, the extreme starts and costs; or
        ``choice=None`` with a one-sentence ``reason``.
    """
    _check(objective, cost_rule)
    kk, ss = exact(k), exact(s)
    if kk < 0 or ss < 0:
        raise ValueError("weights k and s must be >= 0")
    reason = refusal(request, clusters)
    if reason is not None:
        return Optimum(objective, None, reason, 0)
    points, count = feasible_points(
        request, clusters, cost_rule=cost_rule, not_before=not_before
    )
    if not points:
        return Optimum(objective, None, REASONS["none"], count)
    smin, smax = points[0].start, points[-1].start
    cmin = min(p.cost for p in points)
    cmax = max(p.max_cost for p in points)
    if objective == "start":
        best, value = points[0], Fraction(points[0].start)
    elif objective == "cost":
        best = min(points, key=lambda p: (p.cost, p.start))
        value = best.cost
    else:
        scored = [
            (
                weighted_value(p.start, p.cost, kk, ss, smin, smax, cmin, cmax),
                p.start,
                p.cost,
                p,
            )
            for p in points
        ]
        value, _, _, best = min(scored, key=lambda t: t[:3])
    return Optimum(
        objective, _choice(best, clusters), None, count, value, smin, smax, cmin, cmax
    )


def pareto_front(
    request: Request,
    clusters: Sequence[ClusterState],
    *,
    cost_rule: str = "sampled",
    not_before: Mapping[str, int] | None = None,
) -> list[Choice]:
    """The non-dominated (start, cost) points, sorted by start.

    One :class:`Choice` per point, with the min-cost assignment at that start
    (ties: smallest cluster indices). Under ``sampled`` this is the whole
    front. Under ``prorata`` the front may contain runs of starts along which
    the cost falls linearly: the points returned are its vertices at the
    candidate starts (module docstring), each non-dominated over all starts.
    Empty when the request cannot be placed.
    """
    _check("start", cost_rule)
    if refusal(request, clusters) is not None:
        return []
    points, _ = feasible_points(
        request, clusters, cost_rule=cost_rule, not_before=not_before, with_max=False
    )
    front: list[Choice] = []
    for p in points:  # in start order: keep each strictly cheaper point
        if not front or p.cost < front[-1].cost:
            front.append(_choice(p, clusters))
    return front


def _choice(point: _Point, clusters: Sequence[ClusterState]) -> Choice:
    return Choice(
        point.start, tuple(clusters[c].name for c in point.clusters), point.cost
    )
