r"""Configuration LP of the preemptive makespan, solved by column generation.

The problem is ``P | r_j, size_j, pmtn | C_max`` with migration: rigid jobs
(``q_j`` processors, ``p_j`` seconds of work, release ``r_j``) may be
interrupted at any time and resumed on any processors, for free. It is
solved exactly, as a linear programme, by the configuration formulation of
the parallel-task literature (Błażewicz, Drabowski, Węglarz 1986 for
``P|size_j, pmtn|C_max``; with release dates by the interval decomposition
of Drozdowski, *Scheduling for Parallel Processing*, Springer 2009, §3.3.2,
and Jansen, Porkolab, "Linear-time approximation schemes for scheduling
malleable parallel tasks", Algorithmica 32, 2002).

Intervals
---------
The *breakpoints* ``b_0 < b_1 < ... < b_N`` are the distinct release dates
and the ends and starts of busy blocks (from the first release on).
Interval ``k`` is ``[b_k, b_{k+1})`` of length ``L_k``, the last one
``[b_N, ∞)``. Inside an interval nothing changes: the released jobs
``R_k = {j : r_j <= b_k}`` and the free capacity ``c_k = m - B_k`` (the
processors the busy blocks leave) are constant.

A *configuration* of interval ``k`` is a set ``C ⊆ R_k`` of jobs that fit
together, ``sum_{j in C} q_j <= c_k``. With preemption and migration a
schedule is, inside each interval, nothing but a sequence of
configurations, each run for some time; the order does not matter. So a
schedule that ends in interval ``i`` (makespan ``T ∈ [b_i, b_{i+1}]``)
exists iff the LP below is feasible with value ``<= T - b_i``:

.. math::

    \min \sum_{C \in \mathcal C_i} x_{C,i} \quad\text{s.t.}\quad
    \sum_{k \le i} \sum_{C \in \mathcal C_k : j \in C} x_{C,k} = p_j
    \ \ (\pi_j),\qquad
    \sum_{C \in \mathcal C_k} x_{C,k} \le L_k \ \ (\sigma_k \le 0),
    \ k \le i,\qquad x \ge 0

(``x_{C,k}``: time configuration ``C`` runs in interval ``k``; idle time is
the empty configuration, left implicit). The objective is the time used in
interval ``i``, so the makespan is ``b_i`` plus the LP value. ``i`` runs
from the interval of the last release (no schedule ends before it) upward;
the first *candidate* ``i`` whose LP is feasible gives the optimum. Without
busy blocks ending after the last release, that is the first candidate: the last
interval, whose length is bounded by ``U = sum_j p_j`` (running the jobs
one after the other from ``b_N`` is a schedule, so an optimal one uses at
most ``U`` there, and the bound never binds).

Column generation
-----------------
The configurations are exponentially many; the master LP keeps a few
(HiGHS through highspy) and the pricing problem adds one per interval with
a negative reduced cost ``cost_k - σ_k - sum_{j in C} π_j`` (``cost_k`` is 1
in the candidate interval, 0 before): a 0/1 knapsack with profits ``π_j``,
weights ``q_j`` and capacity ``c_k``. The released sets grow with time,
so one dynamic programme over the capacities, adding the jobs in release
order, solves the knapsacks of all intervals at once, exactly
(:func:`interval_knapsacks`, ``O(n · m)`` per round). On machines wider
than :data:`DP_CAPACITY_LIMIT` each interval takes the Nemhauser–Ullmann
list of Pareto-optimal (weight, profit) pairs instead (Nemhauser, Ullmann,
"Discrete dynamic programming and capital allocation", Management Science
15, 1969), at most ``min(c_k + 1, 2^{|R_k|})`` pairs whatever ``m``; should
that list outgrow :data:`PARETO_LIMIT`, pricing falls back to CP-SAT on
scaled profits and the certificate below to the Dantzig bound (both still
valid, the bound possibly weaker).
Feasibility (phase 1) is decided the same way with artificial variables
``u_j`` (cost 1) in the work rows, minimising ``sum_j u_j``.

Exactness
---------
The solver works in floating point; the bounds reported do not. After the
last pricing round the duals are taken as exact rationals
(:class:`fractions.Fraction`) and repaired into a dual-feasible point:
``σ'_k = min(0, cost_k - K_k(π))`` with ``K_k(π)`` the exact knapsack
optimum (phase 1 also caps ``π'_j <= 1``, the dual constraint of ``u_j``).
By weak duality ``b_i + sum_j p_j π_j + sum_k L_k σ'_k`` is a lower bound
on every schedule ending in interval ``i`` (the "Lagrangian" bound of
column generation, Lübbecke and Desrosiers, "Selected topics in column
generation", Operations Research 53, 2005), valid at every iteration, so
also when a time limit stops the generation early; a positive phase-1 dual
value proves a candidate infeasible. Makespans are integers (times are
integer seconds), so the bound is rounded up.

The LP optimum is a rational number, usually not an integer, and the
checker works in integer seconds: :func:`round_durations` turns the LP
solution into integer run times (see there), which gives an *upper* bound.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from optsched.instance import Instance
from optsched.models.common.template import OutOfTime, on_time

PARETO_LIMIT = 200_000
"""Most Pareto pairs the exact knapsack keeps before it gives up; beyond,
pricing falls back to CP-SAT and the certificate to the Dantzig bound."""

DP_CAPACITY_LIMIT = 1 << 16
"""Largest free capacity priced by the dynamic programme over capacities
(:func:`interval_knapsacks`); beyond, by the Nemhauser–Ullmann list."""

REDUCED_COST_TOLERANCE = 1e-9
"""A column enters the master when its reduced cost is below minus this."""

PHASE_ONE_TOLERANCE = 1e-7
"""Phase 1 counts as feasible when ``sum_j u_j`` is below this times
``sum_j p_j`` (HiGHS's own feasibility tolerance is ``1e-7``)."""

MIP_SECONDS = 10.0
"""Longest run of the rounding integer programme (:func:`round_durations`)."""

MAX_ROUNDS = 10_000
"""Most pricing rounds per phase (a guard against numerical cycling)."""


# --------------------------------------------------------------------------
# The intervals of an instance
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Interval:
    """``[start, start + length)`` with constant free capacity and released jobs.

    ``released`` holds the positions (in :attr:`ConfigurationProblem.ids`)
    of the jobs released by ``start``.
    """

    start: int
    length: int
    capacity: int
    released: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ConfigurationProblem:
    """The data of the configuration LP of an instance.

    Parameters
    ----------
    ids, sizes, works, releases
        Id, ``q_j``, ``p_j`` and ``r_j`` of the jobs with ``p_j > 0`` (jobs
        of run time 0 need no processor; they end at their release).
    intervals
        The intervals, in time order; the last one has length ``U = sum_j
        p_j`` (see the module notes).
    first_candidate
        Index of the interval of the last release, where every schedule ends
        at the earliest.
    machine_processors
        ``m``.
    """

    ids: tuple[int, ...]
    sizes: tuple[int, ...]
    works: tuple[int, ...]
    releases: tuple[int, ...]
    intervals: tuple[Interval, ...]
    first_candidate: int
    machine_processors: int

    @classmethod
    def of(cls, instance: Instance) -> ConfigurationProblem:
        """Build the intervals of ``instance`` (busy blocks as capacity)."""
        running = [j for j in instance.jobs if j.runtime > 0]
        ids = tuple(j.id for j in running)
        releases = [j.release for j in running]
        first = min(j.release for j in instance.jobs)
        last_release = max(j.release for j in instance.jobs)
        blocks = [
            b for b in instance.machine.unavailable if b.end > b.start and b.end > first
        ]
        points = {j.release for j in instance.jobs}
        points |= {t for b in blocks for t in (b.start, b.end) if t > first}
        breakpoints = sorted(points)
        total = sum(j.runtime for j in running)
        m = instance.processors
        intervals = []
        for k, start in enumerate(breakpoints):
            end = breakpoints[k + 1] if k + 1 < len(breakpoints) else start + total
            # Breakpoints include every block start and end: a block covers
            # an interval entirely or not at all.
            taken = sum(b.size for b in blocks if b.start <= start and b.end >= end)
            released = tuple(i for i, r in enumerate(releases) if r <= start)
            intervals.append(Interval(start, end - start, m - taken, released))
        return cls(
            ids=ids,
            sizes=tuple(j.size for j in running),
            works=tuple(j.runtime for j in running),
            releases=tuple(releases),
            intervals=tuple(intervals),
            first_candidate=breakpoints.index(last_release),
            machine_processors=m,
        )


# --------------------------------------------------------------------------
# Pricing: 0/1 knapsack
# --------------------------------------------------------------------------


Number = float | Fraction


def best_configuration(
    weights: Sequence[int], profits: Sequence[Number], capacity: int
) -> tuple[Number, tuple[int, ...]] | None:
    r"""Exact 0/1 knapsack: ``max sum_{j in C} v_j`` s.t. ``sum_{j in C} q_j <= c``.

    The Nemhauser–Ullmann list: after each item, the pairs (weight,
    profit) of the item subsets not dominated by another (no lighter subset
    is at least as profitable). Items with ``v_j <= 0`` are skipped (they
    never help). Exact for ``float`` and for :class:`~fractions.Fraction`
    profits (the arithmetic is the profits' own).

    Returns
    -------
    (value, chosen) or None
        The optimum and the positions of the chosen items (empty for
        value 0); ``None`` when the list outgrew :data:`PARETO_LIMIT`.
    """
    states: list[tuple[int, Number, tuple[int, ...]]] = [(0, 0, ())]
    for position, (weight, profit) in enumerate(zip(weights, profits, strict=True)):
        if profit <= 0 or weight > capacity:
            continue
        shifted = [
            (w + weight, v + profit, (*chosen, position))
            for w, v, chosen in states
            if w + weight <= capacity
        ]
        merged = sorted(states + shifted, key=lambda s: (s[0], -s[1]))
        states = []
        for state in merged:
            if not states or state[1] > states[-1][1]:
                states.append(state)
        if len(states) > PARETO_LIMIT:
            return None
    value, chosen = states[-1][1], states[-1][2]  # profits increase with weight
    return value, chosen


def dantzig_bound(
    weights: Sequence[int], profits: Sequence[Fraction], capacity: int
) -> Fraction:
    """Upper bound on the knapsack optimum: its LP relaxation (Dantzig 1957).

    Items by decreasing ``v_j / q_j``, the last one cut fractionally.
    """
    items = sorted(
        ((v, q) for q, v in zip(weights, profits, strict=True) if v > 0),
        key=lambda item: item[0] / item[1],
        reverse=True,
    )
    room, value = Fraction(capacity), Fraction(0)
    for v, q in items:
        if q <= room:
            room -= q
            value += v
        else:
            value += v * room / q
            break
    return value


def _price_cpsat(
    weights: Sequence[int], profits: Sequence[float], capacity: int
) -> tuple[float, tuple[int, ...]]:
    """Knapsack by CP-SAT on profits scaled to integers (a heuristic pricing:
    used only when the Pareto list is too long; the bound stays certified by
    :func:`dantzig_bound`)."""
    from ortools.sat.python import cp_model

    positive = [k for k, v in enumerate(profits) if v > 0 and weights[k] <= capacity]
    if not positive:
        return 0.0, ()
    scale = 2**30 / max(profits[k] for k in positive)
    model = cp_model.CpModel()
    take = {k: model.new_bool_var(f"t{k}") for k in positive}
    model.add(sum(weights[k] * take[k] for k in positive) <= capacity)
    model.maximize(sum(round(profits[k] * scale) * take[k] for k in positive))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 10.0
    solver.parameters.num_workers = 1
    solver.solve(model)
    chosen = tuple(k for k in positive if solver.value(take[k]))
    return sum(profits[k] for k in chosen), chosen


# --------------------------------------------------------------------------
# Master LP
# --------------------------------------------------------------------------


Column = tuple[int, frozenset[int]]
"""``(interval index, configuration)``: the jobs as problem indices."""


class _Master:
    """The restricted master LP of one candidate, in HiGHS.

    Rows: one work row per job (``= p_j``), then one length row per
    interval ``k <= last`` (``<= L_k``). Columns: the artificial ``u_j``
    (one per job, in its work row), then the configurations.
    """

    def __init__(self, problem: ConfigurationProblem, last: int) -> None:
        import highspy

        self.problem, self.last = problem, last
        self.highs = highspy.Highs()
        self.highs.setOptionValue("output_flag", False)
        inf = highspy.kHighsInf
        n = len(problem.ids)
        none_i, none_f = np.array([], dtype=np.int32), np.array([], dtype=np.float64)
        for work in problem.works:
            self.highs.addRow(float(work), float(work), 0, none_i, none_f)
        for interval in problem.intervals[: last + 1]:
            self.highs.addRow(-inf, float(interval.length), 0, none_i, none_f)
        for j in range(n):
            one = np.array([j], dtype=np.int32)
            self.highs.addCol(1.0, 0.0, inf, 1, one, np.array([1.0]))
        self.columns: list[Column] = []
        self.known: set[Column] = set()
        self.phase = 1

    def cost(self, k: int) -> float:
        """Objective coefficient of a configuration of interval ``k``."""
        return 1.0 if self.phase == 2 and k == self.last else 0.0

    def add(self, k: int, configuration: frozenset[int]) -> bool:
        """Add a column (``False`` if it is there already)."""
        column = (k, configuration)
        if column in self.known or not configuration:
            return False
        import highspy

        n = len(self.problem.ids)
        rows = [*sorted(configuration), n + k]
        self.highs.addCol(
            self.cost(k),
            0.0,
            highspy.kHighsInf,
            len(rows),
            np.array(rows, dtype=np.int32),
            np.ones(len(rows)),
        )
        self.columns.append(column)
        self.known.add(column)
        return True

    def start_phase_two(self) -> None:
        """Fix the artificials at 0 and price the time used in the last interval."""
        self.phase = 2
        n = len(self.problem.ids)
        for j in range(n):
            self.highs.changeColCost(j, 0.0)
            self.highs.changeColBounds(j, 0.0, 0.0)
        for position, (k, _) in enumerate(self.columns):
            self.highs.changeColCost(n + position, self.cost(k))

    def solve(self, deadline: float | None) -> tuple[bool, float, list[float]]:
        """Run HiGHS: ``(optimal, objective, row duals)``."""
        import highspy

        if deadline is not None:
            left = max(0.0, deadline - time.monotonic())
            self.highs.setOptionValue("time_limit", max(left, 1e-3))
        self.highs.run()
        status = self.highs.getModelStatus()
        optimal = status == highspy.HighsModelStatus.kOptimal
        solution = self.highs.getSolution()
        value = self.highs.getInfo().objective_function_value
        return optimal, float(value), list(solution.row_dual)

    def durations(self) -> list[float]:
        """``x_{C,k}`` of each configuration column, in :attr:`columns` order."""
        values = self.highs.getSolution().col_value
        n = len(self.problem.ids)
        return [max(0.0, float(v)) for v in values[n:]]


# --------------------------------------------------------------------------
# Column generation and certificates
# --------------------------------------------------------------------------


@dataclass(slots=True)
class Candidate:
    """What column generation found for one candidate interval.

    ``status``: ``"feasible"`` (phase 2 ran; ``bound`` is a certified lower
    bound on the makespan of every schedule ending in this candidate's
    interval, ``value`` the LP optimum found), ``"infeasible"`` (phase 1
    proved that no schedule ends there) or ``"unproven"`` (phase 1 found no
    feasible point but could not prove it, or the time ran out).
    """

    last: int
    status: str = "unproven"
    bound: Fraction | None = None
    value: float | None = None
    converged: bool = False
    columns: list[Column] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)
    rounds: int = 0


@dataclass(slots=True)
class Generation:
    """The outcome of :func:`solve_configuration_lp` over all candidates."""

    problem: ConfigurationProblem
    candidates: list[Candidate]
    lower_bound: Fraction
    notes: dict[str, Any]

    @property
    def chosen(self) -> Candidate | None:
        """The feasible candidate (the last one tried), with its primal solution."""
        last = self.candidates[-1] if self.candidates else None
        return last if last is not None and last.status == "feasible" else None


def interval_knapsacks(
    problem: ConfigurationProblem, last: int, profits: Sequence[Number]
) -> list[tuple[Number, tuple[int, ...]] | None]:
    """``K_k(π)`` and a best configuration for every interval ``k <= last``.

    The released sets grow with time (``R_0 ⊆ R_1 ⊆ ...``), so one dynamic
    programme over the capacities, adding the jobs in release order, gives
    every interval's knapsack: after the jobs of ``R_k``, ``best[c]`` is the
    largest profit of a subset of ``R_k`` of total size at most ``c``, and
    ``K_k = best[c_k]`` (Bellman's recursion ``best[c] = max(best[c],
    best[c - q_j] + π_j)``; one pass costs ``O(n · max_k c_k)``). Exact in the
    profits' own arithmetic (``float`` for pricing, ``Fraction`` for the
    certificate); the chosen jobs are read back from the table of
    improvements.

    Capacities above :data:`DP_CAPACITY_LIMIT` take the Nemhauser–Ullmann
    list per interval (:func:`best_configuration`) instead; an entry is
    ``None`` where that list outgrew :data:`PARETO_LIMIT`.

    Returns
    -------
    list
        Per interval, ``(value, chosen)`` with ``chosen`` as job positions
        (problem indices), or ``None``.
    """
    intervals = problem.intervals[: last + 1]
    top = max(interval.capacity for interval in intervals)
    if top > DP_CAPACITY_LIMIT:
        out: list[tuple[Number, tuple[int, ...]] | None] = []
        for interval in intervals:
            weights = [problem.sizes[j] for j in interval.released]
            values = [profits[j] for j in interval.released]
            found = best_configuration(weights, values, interval.capacity)
            if found is not None:
                found = (found[0], tuple(interval.released[c] for c in found[1]))
            out.append(found)
        return out
    return _release_order_dp(problem, intervals, profits, top)


def _release_order_dp(
    problem: ConfigurationProblem,
    intervals: Sequence[Interval],
    profits: Sequence[Number],
    top: int,
) -> list[tuple[Number, tuple[int, ...]] | None]:
    order = sorted(range(len(problem.ids)), key=lambda j: (problem.releases[j], j))
    exact = any(isinstance(v, Fraction) for v in profits)
    best: Any = [Fraction(0)] * (top + 1) if exact else np.zeros(top + 1)
    improved = np.zeros((len(order), top + 1), dtype=bool)
    out: list[tuple[Number, tuple[int, ...]] | None] = []

    def snapshot(interval: Interval, count: int) -> None:
        c, chosen = interval.capacity, []
        for step in range(count - 1, -1, -1):
            if improved[step, c]:
                chosen.append(order[step])
                c -= problem.sizes[order[step]]
        value = best[interval.capacity]
        out.append((value if exact else float(value), tuple(sorted(chosen))))

    k = 0
    for step, j in enumerate(order):
        while k < len(intervals) and len(intervals[k].released) == step:
            snapshot(intervals[k], step)
            k += 1
        q, v = problem.sizes[j], profits[j]
        if v <= 0 or q > top:
            continue
        if exact:
            for c in range(top, q - 1, -1):
                if best[c - q] + v > best[c]:
                    best[c] = best[c - q] + v
                    improved[step, c] = True
        else:
            candidate = best[: top + 1 - q] + v
            better = candidate > best[q:]
            improved[step, q:] = better
            best = best.copy()
            best[q:][better] = candidate[better]
    while k < len(intervals):
        snapshot(intervals[k], len(order))
        k += 1
    return out


def _knapsack_bound(
    problem: ConfigurationProblem,
    k: int,
    profits: Sequence[Fraction],
    found: tuple[Number, tuple[int, ...]] | None,
) -> Fraction:
    """Exact ``K_k(π)``, or its Dantzig upper bound when it is unknown."""
    if found is not None:
        return Fraction(found[0])
    interval = problem.intervals[k]
    weights = [problem.sizes[j] for j in interval.released]
    values = [profits[j] for j in interval.released]
    return dantzig_bound(weights, values, interval.capacity)


def certified_bound(
    problem: ConfigurationProblem, last: int, duals: Sequence[float], phase: int
) -> Fraction:
    r"""The dual value of a repaired, exactly feasible dual point.

    Phase 2: ``b_last + sum_j p_j π_j + sum_{k <= last} L_k σ'_k`` with
    ``σ'_k = min(0, cost_k - K_k(π))``: a lower bound on the makespan of
    every schedule ending in interval ``last``. Phase 1: with
    ``π'_j = min(π_j, 1)`` and ``σ'_k = min(0, -K_k(π'))``, the value
    ``sum_j p_j π'_j + sum_k L_k σ'_k`` bounds the phase-1 optimum from
    below; positive means infeasible. Exact rational arithmetic throughout.
    """
    n = len(problem.ids)
    profits = [Fraction(duals[j]) for j in range(n)]
    if phase == 1:
        profits = [min(v, Fraction(1)) for v in profits]
    value = sum(
        (p * v for p, v in zip(problem.works, profits, strict=True)), Fraction(0)
    )
    knapsacks = interval_knapsacks(problem, last, profits)
    for k in range(last + 1):
        cost = 1 if phase == 2 and k == last else 0
        best = _knapsack_bound(problem, k, profits, knapsacks[k])
        sigma = min(Fraction(0), cost - best)
        value += problem.intervals[k].length * sigma
    if phase == 2:
        value += problem.intervals[last].start
    return value


def _price(master: _Master, duals: Sequence[float]) -> int:
    """Add the best configuration of each interval if it has a negative
    reduced cost; return how many columns were added."""
    problem, n = master.problem, len(master.problem.ids)
    added = 0
    knapsacks = interval_knapsacks(problem, master.last, duals[:n])
    for k, found in enumerate(knapsacks):
        if found is None:
            interval = problem.intervals[k]
            weights = [problem.sizes[j] for j in interval.released]
            profits = [duals[j] for j in interval.released]
            heuristic, positions = _price_cpsat(weights, profits, interval.capacity)
            found = (heuristic, tuple(interval.released[c] for c in positions))
        reduced = master.cost(k) - duals[n + k] - float(found[0])
        if reduced < -REDUCED_COST_TOLERANCE:
            added += master.add(k, frozenset(found[1]))
    return added


def _generate(
    master: _Master, deadline: float | None
) -> tuple[bool, float, list[float], int]:
    """Price until no column improves: ``(converged, value, duals, rounds)``."""
    rounds = 0
    value, duals = math.inf, list[float]()
    while rounds < MAX_ROUNDS:
        rounds += 1
        optimal, value, duals = master.solve(deadline)
        if not optimal:
            return False, value, duals, rounds
        if not _price(master, duals):
            return True, value, duals, rounds
        if deadline is not None and time.monotonic() >= deadline:
            break
    optimal, value, duals = master.solve(deadline)
    return False, value, duals, rounds


def _seed(
    master: _Master,
    pool: dict[int, set[frozenset[int]]],
    deadline: float | None = None,
) -> None:
    """Start from the known columns and the single jobs of each interval.

    Raises :class:`~optsched.models.common.template.OutOfTime` once
    ``deadline`` passes (checked per interval: a 1,000-job window seeds
    half a million columns, 5 s of Python).
    """
    problem = master.problem
    for k in range(master.last + 1):
        on_time(deadline)
        interval = problem.intervals[k]
        for j in interval.released:
            if problem.sizes[j] <= interval.capacity:
                master.add(k, frozenset((j,)))
        for configuration in sorted(pool.get(k, ()), key=sorted):
            master.add(k, configuration)


def solve_configuration_lp(
    problem: ConfigurationProblem, *, deadline: float | None = None
) -> Generation:
    """Column generation over the candidate intervals (see the module notes).

    Returns
    -------
    Generation
        The candidates tried, in order; the last one has the primal solution
        when a feasible one was found. ``lower_bound`` is certified: the
        minimum, over the candidates tried, of each one's bound (``+inf``
        for one proven infeasible, its start when nothing was proven), and
        beyond the last candidate tried, the end of its interval.
    """
    pool: dict[int, set[frozenset[int]]] = {}
    candidates: list[Candidate] = []
    notes: dict[str, Any] = {"rounds": 0}
    if not problem.ids:
        start = problem.intervals[problem.first_candidate].start
        done = Candidate(
            problem.first_candidate,
            "feasible",
            Fraction(start),
            float(start),
            converged=True,
        )
        return Generation(problem, [done], Fraction(start), notes)
    for last in range(problem.first_candidate, len(problem.intervals)):
        candidate = _solve_candidate(problem, last, pool, deadline)
        candidates.append(candidate)
        notes["rounds"] += candidate.rounds
        if candidate.status == "feasible":
            break
        # No round: the deadline came before the master could be solved.
        if deadline is not None and (
            candidate.rounds == 0 or time.monotonic() >= deadline
        ):
            notes["stopped"] = "time limit"
            break
    lower = _combined_bound(problem, candidates)
    notes["columns"] = sum(len(c.columns) for c in candidates)
    return Generation(problem, candidates, lower, notes)


def _solve_candidate(
    problem: ConfigurationProblem,
    last: int,
    pool: dict[int, set[frozenset[int]]],
    deadline: float | None,
) -> Candidate:
    began = time.monotonic()
    candidate = Candidate(last)
    master = _Master(problem, last)
    try:
        _seed(master, pool, deadline)
    except OutOfTime:
        return candidate  # "unproven": nothing is claimed about this interval
    if deadline is not None and deadline - time.monotonic() <= (
        time.monotonic() - began
    ):
        # Less time left than the seeding took: HiGHS's first solve of a
        # master this size overran the limit by seconds (its presolve does
        # not look at the clock), so it is not started.
        return candidate
    converged, value, duals, rounds = _generate(master, deadline)
    candidate.rounds = rounds
    _remember(master, pool)
    if _finite(duals) and certified_bound(problem, last, duals, 1) > 0:
        candidate.status = "infeasible"
        return candidate
    if not converged or value > PHASE_ONE_TOLERANCE * max(1, sum(problem.works)):
        return candidate  # "unproven": nothing is claimed about this interval
    master.start_phase_two()
    converged, value, duals, more = _generate(master, deadline)
    candidate.rounds += more
    _remember(master, pool)
    candidate.status = "feasible"
    candidate.converged = converged
    candidate.value = problem.intervals[last].start + value
    if _finite(duals):
        candidate.bound = certified_bound(problem, last, duals, 2)
    candidate.columns = list(master.columns)
    candidate.durations = master.durations()
    return candidate


def _remember(master: _Master, pool: dict[int, set[frozenset[int]]]) -> None:
    for k, configuration in master.columns:
        pool.setdefault(k, set()).add(configuration)


def _finite(values: Sequence[float]) -> bool:
    return bool(values) and all(math.isfinite(v) for v in values)


def _combined_bound(
    problem: ConfigurationProblem, candidates: Sequence[Candidate]
) -> Fraction:
    """The minimum, over the candidate intervals tried, of what each proves
    (nothing for a proven-infeasible one, the interval start for an unproven
    one), and of the end of the last one's interval (schedules ending
    later)."""
    values: list[Fraction] = []
    for candidate in candidates:
        start = Fraction(problem.intervals[candidate.last].start)
        if candidate.status == "feasible" and candidate.bound is not None:
            values.append(max(start, candidate.bound))
        elif candidate.status != "infeasible":
            values.append(start)
    last = problem.intervals[candidates[-1].last]
    if candidates[-1].last + 1 < len(problem.intervals):
        values.append(Fraction(last.start + last.length))
    return min(values)


# --------------------------------------------------------------------------
# Integer run times
# --------------------------------------------------------------------------


def round_durations(
    problem: ConfigurationProblem,
    candidate: Candidate,
    *,
    deadline: float | None = None,
) -> tuple[list[int], str]:
    r"""Integer run times ``d_{C,k}`` for the candidate's columns.

    Tries, and keeps the one whose layout (:func:`lay_out`) ends first:

    * the integer programme (HiGHS MIP, at most :data:`MIP_SECONDS` each)
      ``min sum_{C in last} d_{C,last}`` with the LP's constraints,
      ``d ∈ Z_{>=0}`` and the objective at least ``ceil(LB) - b_last`` (no
      integer schedule does better; HiGHS may stop there), first on the
      columns the LP uses (small, fast), then on all the generated ones
      (under a ``deadline``, only with :data:`MIP_SECONDS` left).
      Every integer-time preemptive schedule is such a vector over all
      configurations, so with every column present this would be the exact
      integer-time optimum ("price and branch"; a heuristic here, as only
      the generated columns are offered);
    * ``d = floor(x)``: each job then misses fewer seconds than it has
      columns, which :func:`lay_out` appends at the end.

    Returns
    -------
    durations, method
        One integer per column, and ``"mip:support"``, ``"mip"`` or
        ``"floor"``.
    """
    if not candidate.columns:
        return [], "none"
    tries: list[tuple[list[int], str]] = []
    support = [x > 1e-9 for x in candidate.durations]
    found = _integer_programme(problem, candidate, deadline, support)
    if found is not None:
        tries.append((found, "mip:support"))
    # Under a deadline the MIP on all columns runs only when its whole
    # budget is left: HiGHS's start on it ignores the clock (2.4 s past a
    # 1.1 s limit on 8,458 columns of a 100-job KTH window).
    roomy = deadline is None or deadline - time.monotonic() >= MIP_SECONDS
    if roomy and (
        found is None
        or _end(problem, candidate, found) > math.ceil(candidate.bound or 0)
    ):
        everything = [True] * len(candidate.columns)
        found = _integer_programme(problem, candidate, deadline, everything)
        if found is not None:
            tries.append((found, "mip"))
    tries.append(([math.floor(x + 1e-9) for x in candidate.durations], "floor"))
    # The first of the best: an integer programme's over the floors on ties.
    return min(tries, key=lambda t: _end(problem, candidate, t[0]))


def _end(
    problem: ConfigurationProblem, candidate: Candidate, durations: Sequence[int]
) -> int:
    """Makespan of the layout of ``durations``."""
    segments = lay_out(problem, candidate, durations)
    return max((end for _, end, _ in segments), default=0)


def _integer_programme(
    problem: ConfigurationProblem,
    candidate: Candidate,
    deadline: float | None,
    offered: Sequence[bool],
) -> list[int] | None:
    """The MIP of :func:`round_durations` on the ``offered`` columns (the
    others fixed at 0); ``None`` when HiGHS finds no integer point."""
    import highspy

    began = time.monotonic()
    if deadline is not None and deadline <= began:
        return None
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("mip_rel_gap", 0.0)
    # The feasibility jump heuristic does not look at the clock (the MILP
    # back-end's measurements); the floors are the fallback anyway.
    highs.setOptionValue("mip_heuristic_run_feasibility_jump", False)
    inf = highspy.kHighsInf
    n, last = len(problem.ids), candidate.last
    none_i, none_f = np.array([], dtype=np.int32), np.array([], dtype=np.float64)
    for work in problem.works:
        highs.addRow(float(work), float(work), 0, none_i, none_f)
    for interval in problem.intervals[: last + 1]:
        highs.addRow(-inf, float(interval.length), 0, none_i, none_f)
    for (k, configuration), free in zip(candidate.columns, offered, strict=True):
        rows = [*sorted(configuration), n + k]
        highs.addCol(
            1.0 if k == last else 0.0,
            0.0,
            inf if free else 0.0,
            len(rows),
            np.array(rows, dtype=np.int32),
            np.ones(len(rows)),
        )
    if candidate.bound is not None:
        # No integer schedule ends before ceil(bound): telling HiGHS lets it
        # stop as soon as it meets that value.
        floor = math.ceil(candidate.bound) - problem.intervals[last].start
        in_last = [c for c, (k, _) in enumerate(candidate.columns) if k == last]
        highs.addRow(
            float(floor),
            inf,
            len(in_last),
            np.array(in_last, dtype=np.int32),
            np.ones(len(in_last)),
        )
    count = len(candidate.columns)
    highs.changeColsIntegrality(
        count,
        np.arange(count, dtype=np.int32),
        np.full(count, highspy.HighsVarType.kInteger.value, dtype=np.uint8),
    )
    left = MIP_SECONDS
    if deadline is not None:
        # HiGHS's clock starts with its run, so the limit is set now. With
        # less left than the building took, HiGHS is not started: its start
        # on the model (presolve) alone could overrun. Otherwise it gets
        # half of what is left: on 8,041 columns of a 100-job KTH window it
        # ran 3.7 s against a 2.2 s limit, and the layout and the checks
        # still follow.
        now = time.monotonic()
        if deadline - now <= now - began:
            return None
        left = min(left, 0.5 * (deadline - now))
    highs.setOptionValue("time_limit", left)
    highs.run()
    info = highs.getInfo()
    if info.primal_solution_status != 2:  # 2: a feasible point is known
        return None
    values = highs.getSolution().col_value
    durations = [max(0, round(v)) for v in values]
    # Rounded to the nearest integer: check the constraints exactly.
    done = [0] * n
    used = [0] * (last + 1)
    for (k, configuration), d in zip(candidate.columns, durations, strict=True):
        used[k] += d
        for j in configuration:
            done[j] += d
    if done != list(problem.works) or any(
        u > problem.intervals[k].length for k, u in enumerate(used)
    ):
        return None
    return durations


def lay_out(
    problem: ConfigurationProblem,
    candidate: Candidate,
    durations: Sequence[int],
) -> list[tuple[int, int, frozenset[int]]]:
    """Segments ``(start, end, jobs)`` in time order (jobs as ids).

    Inside each interval the configurations run one after another from its
    start, ordered so that consecutive ones share many jobs (fewer
    preemptions: a job keeps running, on the same processors, while
    consecutive configurations contain it); the idle time is left at the
    interval's end. Work still missing (floor rounding) runs afterwards,
    job after job, each at the earliest time the busy blocks leave it room.
    """
    done = [0] * len(problem.ids)
    segments: list[tuple[int, int, frozenset[int]]] = []
    previous: frozenset[int] = frozenset()
    for k in range(candidate.last + 1):
        interval = problem.intervals[k]
        chosen = [
            (configuration, d)
            for (kk, configuration), d in zip(candidate.columns, durations, strict=True)
            if kk == k and d > 0
        ]
        clock = interval.start
        if not segments or segments[-1][1] != clock:
            previous = frozenset()
        for configuration, d in _chain(chosen, previous):
            # Never beyond a job's work, nor beyond the interval (float noise).
            d = min(
                [d, interval.start + interval.length - clock]
                + [problem.works[j] - done[j] for j in configuration]
            )
            if d <= 0:
                continue
            for j in configuration:
                done[j] += d
            segments.append((clock, clock + d, configuration))
            clock += d
            previous = configuration
    clock = segments[-1][1] if segments else problem.intervals[candidate.last].start
    clock = max(clock, problem.intervals[candidate.last].start)
    missing = {
        j: work - have
        for j, (work, have) in enumerate(zip(problem.works, done, strict=True))
        if have < work
    }
    segments += _append(problem, clock, missing)
    return [(s, e, frozenset(problem.ids[j] for j in c)) for s, e, c in segments]


def _append(
    problem: ConfigurationProblem, clock: int, missing: dict[int, int]
) -> list[tuple[int, int, frozenset[int]]]:
    """Segments running the ``missing`` seconds of work from ``clock`` on.

    A list schedule, longest first: each job's remaining work runs as one
    piece at the earliest time when the busy blocks and the pieces placed
    before leave it room (then the segments of the overlapping pieces).
    """
    placed: list[tuple[int, int, int]] = []  # (start, end, job)
    for j in sorted(missing, key=lambda j: (-missing[j], j)):
        start = _earliest_room(problem, clock, problem.sizes[j], missing[j], placed)
        placed.append((start, start + missing[j], j))
    points = sorted({t for s, e, _ in placed for t in (s, e)})
    out = []
    for a, b in itertools.pairwise(points):
        jobs = frozenset(j for s, e, j in placed if s <= a and b <= e)
        if jobs:
            out.append((a, b, jobs))
    return out


def _chain(
    chosen: Sequence[tuple[frozenset[int], int]], previous: frozenset[int]
) -> list[tuple[frozenset[int], int]]:
    """Greedy order: each next configuration shares the most jobs with the
    current one (ties: the larger, then the lexicographically smaller)."""
    left = list(chosen)
    out: list[tuple[frozenset[int], int]] = []
    current = previous
    while left:
        best = max(
            range(len(left)),
            key=lambda i: (
                len(left[i][0] & current),
                len(left[i][0]),
                [-j for j in sorted(left[i][0])],
            ),
        )
        out.append(left.pop(best))
        current = out[-1][0]
    return out


def _earliest_room(
    problem: ConfigurationProblem,
    start: int,
    size: int,
    length: int,
    placed: Sequence[tuple[int, int, int]],
) -> int:
    """Earliest ``t >= start`` at which ``size`` processors stay free during
    ``[t, t + length)`` beside the busy blocks and the ``placed`` pieces
    ``(start, end, job)``. Only the starts ``start``, the ends of placed
    pieces and the ends of intervals need trying: the free capacity rises
    nowhere else."""
    ends = {e for _, e, _ in placed} | {
        iv.start + iv.length for iv in problem.intervals
    }
    for t in sorted({start} | {e for e in ends if e > start}):
        if _fits(problem, t, size, length, placed):
            return t
    raise RuntimeError("no room after every block and piece (a model bug)")


def _fits(
    problem: ConfigurationProblem,
    t: int,
    size: int,
    length: int,
    placed: Sequence[tuple[int, int, int]],
) -> bool:
    """Do ``size`` processors stay free on ``[t, t + length)``? (The free
    capacity is constant between the piece and interval boundaries.)"""
    end = t + length
    points = {t} | {s for s, _, _ in placed if t < s < end}
    points |= {iv.start for iv in problem.intervals if t < iv.start < end}
    for u in points:
        used = sum(problem.sizes[j] for s, e, j in placed if s <= u < e)
        if used + size > _capacity(problem, u):
            return False
    return True


def _capacity(problem: ConfigurationProblem, u: int) -> int:
    """Free capacity at time ``u`` (``m`` after the last breakpoint)."""
    for interval in problem.intervals[:-1]:
        if interval.start <= u < interval.start + interval.length:
            return interval.capacity
    return problem.machine_processors
