"""Brute-force exact solver for tiny instances: the ground truth of the tests.

:func:`solve_exact` enumerates the schedules that the serial schedule
generation scheme (SGS) builds from every job order and, on contiguous
machines, every offset of a *normal pattern*; it keeps the best one for the
objective. It uses no solver, so CP-SAT and MILP back-ends can be checked
against it.

Why it is exact
---------------
Both objectives (``C_max`` and ``sum w_j C_j``, absolute or relative to
releases) are *regular*: non-decreasing in every completion time. Take an
optimal schedule and *compact* it: repeatedly move one job to an earlier
feasible start on the same processors (down), or, on a contiguous machine,
one processor to the left (left), keeping all other jobs and the busy blocks
where they are. No completion time grows, so the schedule stays optimal, and
``sum_j (S_j + o_j)`` (start plus offset) strictly decreases, so this stops.
In the result

* no job can start earlier at its own processors (it is *active*), and
* on a contiguous machine each offset ``o_j`` is ``0`` or the right edge
  ``o_i + q_i`` of a job or busy block overlapping ``j`` in time. Unrolling
  this chain (offsets strictly decrease along it, so its jobs are distinct),
  ``o_j = b + sum_{i in I} q_i`` with ``b = 0`` or a block's right edge and
  ``I`` a set of other jobs: a normal pattern (J. C. Herz, "Recursive
  computational procedure for two-dimensional stock cutting", IBM J. R&D
  16(5), 1972; N. Christofides, C. Whitlock, "An algorithm for
  two-dimensional cutting problems", Operations Research 25(1), 1977).

List the compacted schedule's jobs by start time (any tie order) and run the
serial SGS with each job's offset fixed. By induction it rebuilds the
schedule exactly: the SGS start ``t`` of job ``k`` is at most ``S_k`` (that
start is feasible beside the jobs before ``k``); if ``t < S_k``, then in the
compacted schedule the cells ``[t, S_k)`` of ``k``'s processors are used only
by jobs listed before ``k`` (the others start at ``S_k`` or later) and by
blocks, all of which the SGS saw, and ``[S_k, t + p_k)`` is ``k``'s own: ``k``
could move down to ``t``, a contradiction. The same argument with a
processor count instead of processor ranges covers the ``any`` allocation
(R. Kolisch, "Serial and parallel resource-constrained project scheduling
methods revisited", EJOR 90, 1996: the serial SGS generates every active
schedule; A. Sprecher, R. Kolisch, A. Drexl, EJOR 80, 1995). Releases only
bound each start from below and busy blocks are fixed occupancy, so the
argument is unchanged.

The search is a depth-first enumeration of (job, offset) sequences that
prunes

* sequences whose SGS starts are not non-decreasing (ties ordered by job
  index): the list above has non-decreasing starts, so nothing is lost;
* identical jobs (same release, size, runtime and weight) out of index order
  (swapping them gives the same schedule);
* nodes whose lower bound is no better than the best schedule found: every
  unplaced job starts no earlier than its earliest start beside the jobs
  placed so far (more jobs only delay it) nor before the last start; for the
  makespan, the unplaced work after each such head must also fit in the
  capacity the placed jobs and blocks leave (processor area, and for each
  size threshold the number of the wider jobs that fit side by side).

The value of the best known schedule prunes nodes that are strictly worse
from the start: the best of a few list schedules (:func:`optsched.packing.
list_schedule` in submit order, longest first, Smith's ratio
``w_j / (q_j p_j)`` and largest area first) and of the ``incumbents`` the
caller passes (a good heuristic or policy schedule prunes more). It is never
returned itself (if the search found nothing under it, it searches again
without it), so the result depends on no other code being right.

Jobs of runtime 0 occupy nothing and go at their release.

On ``any`` machines processors are given by
:func:`optsched.packing.assign_processors` (the ``any`` rule is the
checker's capacity rule; busy blocks there are counts, so every
count-feasible start vector gets processor sets).
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import accumulate, pairwise

from optsched.instance import Instance, Job
from optsched.objective import Objective
from optsched.packing import assign_processors, list_schedule
from optsched.result import Result
from optsched.schedule import Placement, Schedule

__all__ = ["normal_patterns", "solve_exact"]

# (start, end, first processor, end processor) of a placed job or a block;
# on any machines the processor fields are (0, size).
_Rect = tuple[int, int, int, int]


def normal_patterns(instance: Instance, job: Job) -> list[int]:
    """Offsets ``b + sum_{i in I} q_i <= m - q_j`` that a compacted schedule uses.

    ``b`` is 0 or the right edge ``offset + size`` of a busy block, ``I`` a
    set of other jobs with positive runtime.
    """
    m = instance.processors
    sums = {0}
    for other in instance.jobs:
        if other.id != job.id and other.runtime > 0:
            sums |= {s + other.size for s in sums if s + other.size <= m}
    bases = {0} | {
        b.offset + b.size
        for b in instance.machine.unavailable
        if b.offset is not None and b.end > b.start
    }
    return sorted({b + s for b in bases for s in sums if b + s + job.size <= m})


@dataclass
class _Search:
    m: int
    contiguous: bool
    jobs: list[Job]
    weights: list[Fraction]
    offsets: list[list[int]]
    twin_before: list[int | None]
    """Index of the previous identical job, which must be placed first."""
    makespan: bool
    rects: list[_Rect] = field(default_factory=list)
    nodes: int = 0
    best_value: Fraction | None = None
    cutoff: Fraction | None = None
    """Value of a known schedule: prune only what is worse (never returned)."""
    best: list[tuple[int, int]] = field(default_factory=list)

    def earliest(self, k: int, offset: int) -> int:
        job = self.jobs[k]
        if self.contiguous:
            return _earliest_at(self.rects, job.release, job.runtime, offset, job.size)
        return _earliest_count(self.rects, self.m, job.release, job.runtime, job.size)

    def _add(self, value: Fraction, k: int, end: int) -> Fraction:
        """The objective of a partial schedule after job ``k`` ends at ``end``."""
        if self.makespan:
            return max(value, Fraction(end))
        return value + self.weights[k] * end

    def _energy(self, heads: dict[int, int]) -> Fraction:
        """Energy bounds on the makespan (unplaced jobs start at or after heads).

        For every head ``t``, the work of the unplaced jobs after ``t`` must fit
        in the processors that the placed jobs and blocks leave free (area);
        and for every size threshold, the jobs at least that wide, counted one
        unit each, must fit in the number of them that can run side by side.
        """
        jobs = self.jobs
        best = 0
        groups: list[tuple[list[int], Callable[[int], int]]] = [(list(heads), _same)]
        for theta in {jobs[k].size for k in heads}:
            chosen = [k for k in heads if jobs[k].size >= theta]
            prefix = list(accumulate(sorted(jobs[k].size for k in chosen)))
            groups.append((chosen, _fitting(prefix)))
        for index, (chosen, units) in enumerate(groups):
            for t in {heads[k] for k in chosen}:
                demand = sum(
                    (jobs[k].size if index == 0 else 1)
                    * max(0, min(jobs[k].runtime, heads[k] + jobs[k].runtime - t))
                    for k in chosen
                )
                best = max(best, _end_with(self.rects, self.m, t, demand, units))
        return Fraction(best)

    def _pruned(self, bound: Fraction) -> bool:
        if self.best_value is not None:
            return bound >= self.best_value
        return self.cutoff is not None and bound > self.cutoff

    def run(self) -> None:
        self._dfs([None] * len(self.jobs), (-1, -1), Fraction(0))

    def _dfs(
        self, chosen: list[tuple[int, int] | None], last: tuple[int, int], acc: Fraction
    ) -> None:
        self.nodes += 1
        remaining = [k for k, c in enumerate(chosen) if c is None]
        if not remaining:
            if self.best_value is None or acc < self.best_value:
                self.best_value = acc
                self.best = [c for c in chosen if c is not None]
            return
        children: list[tuple[int, int, int]] = []
        bound = acc
        heads: dict[int, int] = {}
        for k in remaining:
            starts = [(self.earliest(k, o), o) for o in self.offsets[k]]
            heads[k] = max(min(s for s, _ in starts), last[0])
            bound = self._add(bound, k, heads[k] + self.jobs[k].runtime)
            twin = self.twin_before[k]
            if twin is not None and chosen[twin] is None:
                continue
            children += [(s, k, o) for s, o in starts if (s, k) > last]
        if self.makespan:
            bound = max(bound, self._energy(heads))
        if self._pruned(bound):
            return
        for start, k, offset in sorted(children):
            job = self.jobs[k]
            end = start + job.runtime
            self.rects.append((start, end, offset, offset + job.size))
            chosen[k] = (start, offset)
            self._dfs(chosen, (start, k), self._add(acc, k, end))
            chosen[k] = None
            self.rects.pop()


def _earliest_at(
    rects: list[_Rect], release: int, duration: int, lo: int, size: int
) -> int:
    t = release
    while True:
        clash = [
            e
            for s, e, a, b in rects
            if s < t + duration and e > t and a < lo + size and b > lo
        ]
        if not clash:
            return t
        t = max(clash)  # every earlier start still overlaps these rectangles


def _same(free: int) -> int:
    return free


def _fitting(prefix: list[int]) -> Callable[[int], int]:
    """How many jobs (sizes' running sums ``prefix``) fit on ``free`` processors."""
    return lambda free: bisect_right(prefix, free)


def _end_with(
    rects: list[_Rect], m: int, t0: int, demand: int, units: Callable[[int], int]
) -> int:
    """Smallest ``T`` such that ``units(free processors)`` over ``[t0, T)`` covers
    ``demand`` (``free`` left by ``rects``; ``units(m) >= 1``)."""
    cuts = sorted({t0} | {x for s, e, _, _ in rects for x in (s, e) if x > t0})
    for t, nxt in pairwise(cuts):
        rate = units(m - sum(b - a for s, e, a, b in rects if s <= t < e))
        if rate * (nxt - t) >= demand:
            return t + (-(-demand // rate) if demand > 0 else 0)
        demand -= rate * (nxt - t)
    return cuts[-1] + -(-demand // units(m)) if demand > 0 else cuts[-1]


def _earliest_count(
    rects: list[_Rect], m: int, release: int, duration: int, size: int
) -> int:
    # The earliest feasible start is the release or the end of some interval.
    candidates = sorted({release} | {e for _, e, _, _ in rects if e > release})
    for t in candidates:
        points = [t] + [s for s, _, _, _ in rects if t < s < t + duration]
        if all(
            sum(b - a for s, e, a, b in rects if s <= x < e) + size <= m for x in points
        ):
            return t
    raise AssertionError("unreachable: after every interval the machine is free")


def _twins(jobs: list[Job], weights: list[Fraction]) -> list[int | None]:
    seen: dict[tuple[int, int, int, Fraction], int] = {}
    out: list[int | None] = []
    for k, (job, w) in enumerate(zip(jobs, weights, strict=True)):
        key = (job.release, job.size, job.runtime, w)
        out.append(seen.get(key))
        seen[key] = k
    return out


def solve_exact(
    instance: Instance,
    objective: Objective | str,
    *,
    max_jobs: int = 8,
    incumbents: Sequence[Schedule] = (),
) -> Result:
    """Optimal schedule of a tiny instance by exhaustive search.

    Parameters
    ----------
    instance
        At most ``max_jobs`` jobs; both allocations, releases and busy blocks.
    objective
        :class:`Objective` or its text form (``"cmax"``, ``"wct:size"``).
    max_jobs
        Refuse larger instances (the search is exponential: about ``n!``
        orders, times the offsets on contiguous machines).
    incumbents
        Known schedules of ``instance`` (heuristics, policies) whose best
        value prunes the search; only their end times are read, and a wrong
        one costs a second search, never a wrong answer.

    Returns
    -------
    Result
        Status ``OPTIMAL``, objective and lower bound both the optimum
        (recomputed from the schedule), ``backend="enumerate"``,
        ``params["nodes"]`` the number of search nodes.

    Raises
    ------
    ValueError
        When the instance has more than ``max_jobs`` jobs.
    """
    began = time.perf_counter()
    objective = Objective.parse(objective)
    if len(instance.jobs) > max_jobs:
        raise ValueError(
            f"solve_exact: {len(instance.jobs)} jobs exceed max_jobs={max_jobs}; "
            "the enumeration is only for tiny instances"
        )
    contiguous = instance.machine.allocation == "contiguous"
    busy = [
        (b.start, b.end, b.offset or 0, (b.offset or 0) + b.size)
        for b in instance.machine.unavailable
        if b.end > b.start
    ]
    positive = [j for j in instance.jobs if j.runtime > 0]
    weights = [Fraction(objective.weight(j)) for j in positive]
    search = _Search(
        m=instance.processors,
        contiguous=contiguous,
        jobs=positive,
        weights=weights,
        offsets=[normal_patterns(instance, j) if contiguous else [0] for j in positive],
        twin_before=_twins(positive, weights),
        makespan=objective.kind == "cmax",
        rects=busy,
    )
    search.cutoff = _heuristic_cutoff(
        instance, objective, positive, weights, incumbents
    )
    search.run()
    if len(search.best) < len(positive):  # the cutoff was wrong: search it all
        search.cutoff = None
        search.run()
    starts = {j.id: j.release for j in instance.jobs}
    offsets = {j.id: 0 for j in instance.jobs}
    for k, (start, offset) in enumerate(search.best):
        starts[positive[k].id], offsets[positive[k].id] = start, offset
    schedule = _schedule(instance, starts, offsets, contiguous)
    return Result.exhaustive(
        instance,
        objective,
        schedule,
        "enumerate",
        began,
        {"nodes": search.nodes, "max_jobs": max_jobs},
    )


_CUTOFF_ORDERS: dict[str, Callable[[Job, Objective], tuple[float, ...]]] = {
    "submit": lambda j, o: (j.release, j.id),
    "lpt": lambda j, o: (-j.runtime, j.release, j.id),
    "smith": lambda j, o: (-o.weight(j) / j.area, j.release, j.id),
    "largest-area": lambda j, o: (-j.area, j.release, j.id),
}
"""List orders of the cutoff schedules (jobs of positive runtime only)."""


def _heuristic_cutoff(
    instance: Instance,
    objective: Objective,
    positive: list[Job],
    weights: list[Fraction],
    incumbents: Sequence[Schedule] = (),
) -> Fraction | None:
    """The best value, on the jobs the search places, of a few list schedules
    and of the incumbents."""
    if not positive:
        return None
    zero = [j.id for j in instance.jobs if j.runtime == 0]
    schedules = [
        list_schedule(
            instance,
            [j.id for j in sorted(positive, key=lambda j: key(j, objective))] + zero,
        )
        for key in _CUTOFF_ORDERS.values()
    ]
    schedules += [s for s in incumbents if all(j.id in s.placements for j in positive)]
    values = []
    for schedule in schedules:
        ends = [schedule[j.id].end for j in positive]
        if objective.kind == "cmax":
            values.append(Fraction(max(ends)))
        else:
            values.append(
                sum((w * e for w, e in zip(weights, ends, strict=True)), Fraction(0))
            )
    return min(values)


def _schedule(
    instance: Instance,
    starts: dict[int, int],
    offsets: dict[int, int],
    contiguous: bool,
) -> Schedule:
    if not contiguous:
        return assign_processors(instance, starts, producer="enumerate")
    return Schedule(
        {
            j.id: Placement.contiguous(
                starts[j.id], starts[j.id] + j.runtime, offsets[j.id], j.size
            )
            for j in instance.jobs
        },
        "enumerate",
    )
