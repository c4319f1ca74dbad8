r"""Brute force over shelf schedules: the ground truth of the shelf back-end.

:func:`solve_shelf_exact` returns an optimal *shelf schedule*
(:func:`optsched.check.is_shelf_schedule`: jobs grouped by equal start,
each group ending before the next one starts) of a tiny instance, for
``cmax`` and every ``wct`` weight rule, on ``any`` and ``contiguous``
machines, with releases and busy blocks. It uses no solver, so that
:mod:`optsched.models.shelf.model` (CP-SAT) can be checked against it.

Notation: a shelf ``k`` is a set of jobs with start ``S_k``, height
``h_k = max_{j in k} p_j``, weight ``W_k = sum_{j in k} w_j`` and release
``R_k = max_{j in k} r_j``; ``a_k`` denotes the shelf's job set.

Placing an ordered partition (greedy earliest start)
----------------------------------------------------
Given the shelves' sets and their time order, place each shelf at the
earliest time ``t >= max(E_{k-1}, R_k)`` at which its jobs fit beside the
busy blocks (``E_{k-1}`` the previous shelf's end, ``E_0 = 0``): on ``any``
machines the jobs running plus the blocks use at most ``m`` processors at
every instant of ``[t, t + h_k)``; on ``contiguous`` machines some offsets
(searched exhaustively) keep the jobs' rectangles apart and off the
blocks. Shelves do not overlap in time, so whether a shelf fits at ``t``
depends on that shelf and the blocks only.

*This greedy is optimal for the ordered partition.* Let ``s_k`` be the
starts of any feasible shelf schedule with the same ordered partition and
``g_k`` the greedy's. By induction ``g_k <= s_k``: ``s_k`` is a time at
which shelf ``k`` fits, and ``s_k >= s_{k-1} + h_{k-1} >= g_{k-1} + h_{k-1}``
and ``s_k >= R_k``, so ``s_k`` is among the times the greedy considers and
it takes the least. Every completion is then no later than in the other
schedule, and both objectives are non-decreasing in completion times.
(Fitting need not be monotone in ``t`` with blocks, which is why the greedy
scans every integer time up to the last block end; after it every shelf of
total size ``<= m`` fits, left to right on a contiguous machine.)

Sequencing the shelves
----------------------
``sequencing="all"`` tries every ordered partition: a dynamic programme
over (set of jobs still to place, ready time) choosing the next shelf among
all non-empty subsets that fit. It is exact by the principle of optimality:
the best way to schedule the remaining jobs from a ready time depends on
nothing else (releases and blocks are absolute times).

``sequencing="rule"`` enumerates every set partition once (restricted
growth strings) and orders its shelves by a rule, valid only without busy
blocks:

* ``cmax``: earliest release first (non-decreasing ``R_k``; any order when
  all releases are 0). Without blocks the shelves are jobs of one machine
  with release ``R_k`` and length ``h_k`` (a shelf occupies
  ``[S_k, S_k + h_k)`` and needs ``S_k >= R_k``): the problem
  ``1 | r_j | C_max``. In the earliest-release order the greedy's makespan
  is ``max_k (R_k + sum_{l : R_l >= R_k} h_l)`` (the last idle time ends at
  some ``R_k``, and from then on only shelves released at ``R_k`` or later
  run, back to back), and every order needs at least that: the shelves
  released at ``R_k`` or later all run after ``R_k``, one at a time.
* ``wct`` with all releases 0: Smith's rule on the shelves, non-decreasing
  ``h_k / W_k``. Without releases and blocks the greedy places the shelves
  back to back from 0, ``S_k = sum_{l before k} h_l``, and
  ``sum_j w_j C_j = sum_k W_k S_k + sum_j w_j p_j``: each shelf is one job
  of length ``h_k`` and weight ``W_k`` on a single machine, and the problem
  is ``1 || sum W_k C_k`` (up to the constant ``sum_k W_k h_k``). Swapping
  two adjacent shelves ``a, b`` changes the cost by ``W_a h_b - W_b h_a``
  (the rest is unchanged), so ``a`` first is no worse iff
  ``h_a W_b <= h_b W_a``; sorting by the key ``h/W`` (``0`` when ``h = 0``,
  ``inf`` when ``W = 0 < h``, possible only under ``area`` weights) makes
  every adjacent pair satisfy it, and any order reaches the sorted one by
  adjacent swaps of inverted pairs, none increasing the cost (W. E. Smith,
  "Various optimizers for single-stage production", NRLQ 3, 1956).

Every shelf schedule has an ordered partition (its shelves in time order),
and the greedy placement of that partition is no worse, so both searches
return a shelf optimum; ``tests/families/shelf/test_shelf.py`` checks that they
agree and that CP-SAT agrees with them.

Jobs of run time 0 occupy nothing; they still belong to a shelf (they start
with it) and may form shelves of height 0.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from optsched.instance import Instance, Job
from optsched.objective import Objective
from optsched.packing import assign_processors
from optsched.result import Result
from optsched.schedule import Placement, Schedule

__all__ = [
    "SEQUENCING",
    "rule_applies",
    "set_partitions",
    "smith_key",
    "smith_order",
    "solve_shelf_exact",
]

SEQUENCING = ("auto", "rule", "all")
"""``rule``: set partitions ordered by ERD/Smith; ``all``: every ordered
partition; ``auto``: ``rule`` when it applies, else ``all``."""

BACKEND = "shelf-enumerate"


def set_partitions(items: Sequence[int]) -> Iterator[list[list[int]]]:
    """Every partition of ``items`` into non-empty blocks, each once.

    Restricted growth strings: item ``i`` joins one of the blocks opened by
    the items before it or opens the next one (Bell-number many).
    """
    blocks: list[list[int]] = []

    def grow(i: int) -> Iterator[list[list[int]]]:
        if i == len(items):
            yield [list(b) for b in blocks]
            return
        for block in blocks:
            block.append(items[i])
            yield from grow(i + 1)
            block.pop()
        blocks.append([items[i]])
        yield from grow(i + 1)
        blocks.pop()

    yield from grow(0)


def smith_key(height: int, weight: Fraction) -> tuple[int, Fraction]:
    """Smith's sort key: ``h/W``; ``0`` if ``h = 0``; last if ``W = 0 < h``."""
    if height == 0:
        return (0, Fraction(0))
    if weight == 0:
        return (1, Fraction(0))
    return (0, Fraction(height) / weight)


def smith_order(shelves: Sequence[tuple[int, Fraction]]) -> list[int]:
    """Indices of ``(height, weight)`` shelves by Smith's rule, ties in given order.

    Non-decreasing :func:`smith_key` (exact fractions; see the module notes).
    """
    return sorted(range(len(shelves)), key=lambda i: smith_key(*shelves[i]))


@dataclass
class _Shelves:
    """Placement of shelves on one instance (memoised per job set and time)."""

    instance: Instance
    jobs: list[Job]
    weights: list[Fraction]
    makespan: bool
    cache: dict[tuple[int, int], tuple[int, dict[int, int]]] = field(
        default_factory=dict
    )
    nodes: int = 0

    def __post_init__(self) -> None:
        machine = self.instance.machine
        self.m = machine.processors
        self.contiguous = machine.allocation == "contiguous"
        self.blocks = [b for b in machine.unavailable if b.end > b.start]
        self.last_block_end = max((b.end for b in self.blocks), default=0)

    def members(self, mask: int) -> list[int]:
        return [k for k in range(len(self.jobs)) if mask >> k & 1]

    def fits_size(self, mask: int) -> bool:
        return (
            sum(self.jobs[k].size for k in self.members(mask) if self.jobs[k].runtime)
            <= self.m
        )

    def height(self, mask: int) -> int:
        return max((self.jobs[k].runtime for k in self.members(mask)), default=0)

    def place(self, mask: int, ready: int) -> tuple[int, dict[int, int]]:
        """Earliest start ``>= ready`` (and releases) where the shelf fits, offsets."""
        key = (mask, ready)
        if key not in self.cache:
            self.cache[key] = self._place(self.members(mask), ready)
        return self.cache[key]

    def _place(self, members: list[int], ready: int) -> tuple[int, dict[int, int]]:
        t = max([ready] + [self.jobs[k].release for k in members])
        while True:
            offsets = self._fit(members, t)
            if offsets is not None:
                return t, offsets
            if t >= self.last_block_end:
                raise AssertionError("a shelf of total size <= m fits after the blocks")
            t += 1

    def _fit(self, members: list[int], t: int) -> dict[int, int] | None:
        running = [k for k in members if self.jobs[k].runtime > 0]
        if not self.contiguous:
            end = t + max((self.jobs[k].runtime for k in running), default=0)
            for u in range(t, end):
                load = sum(
                    self.jobs[k].size for k in running if t + self.jobs[k].runtime > u
                )
                load += sum(b.size for b in self.blocks if b.start <= u < b.end)
                if load > self.m:
                    return None
            return {k: 0 for k in members}
        return self._fit_offsets(members, running, t)

    def _fit_offsets(
        self, members: list[int], running: list[int], t: int
    ) -> dict[int, int] | None:
        # Exhaustive: every offset of every running job, widest first.
        order = sorted(running, key=lambda k: -self.jobs[k].size)
        chosen: dict[int, int] = {}

        def clear(k: int, offset: int) -> bool:
            job = self.jobs[k]
            lo, hi = offset, offset + job.size
            for other, o in chosen.items():  # all running jobs overlap at t
                if lo < o + self.jobs[other].size and o < hi:
                    return False
            for b in self.blocks:
                assert b.offset is not None
                if (
                    b.start < t + job.runtime
                    and b.end > t
                    and lo < b.offset + b.size
                    and b.offset < hi
                ):
                    return False
            return True

        def search(i: int) -> bool:
            if i == len(order):
                return True
            k = order[i]
            for offset in range(self.m - self.jobs[k].size + 1):
                if clear(k, offset):
                    chosen[k] = offset
                    if search(i + 1):
                        return True
                    del chosen[k]
            return False

        if not search(0):
            return None
        return {k: chosen.get(k, 0) for k in members}

    def cost(self, members: list[int], start: int) -> Fraction:
        """wct: ``sum w_j C_j`` of a shelf's jobs; cmax: the shelf's end."""
        if self.makespan:
            return Fraction(
                start + max((self.jobs[k].runtime for k in members), default=0)
            )
        return sum(
            (self.weights[k] * (start + self.jobs[k].runtime) for k in members),
            Fraction(0),
        )


def _combine(makespan: bool, here: Fraction, rest: Fraction) -> Fraction:
    return max(here, rest) if makespan else here + rest


def _all_orders(shelves: _Shelves) -> tuple[Fraction, list[tuple[int, int]]]:
    """Best ordered partition by dynamic programming; ``(value, [(mask, start)])``."""
    n = len(shelves.jobs)
    memo: dict[tuple[int, int], tuple[Fraction, int, int]] = {}

    def best(mask: int, ready: int) -> tuple[Fraction, int, int]:
        # (value of the rest, first shelf's mask, its start)
        if mask == 0:
            return (Fraction(ready) if shelves.makespan else Fraction(0)), 0, ready
        key = (mask, ready)
        if key in memo:
            return memo[key]
        shelves.nodes += 1
        found: tuple[Fraction, int, int] | None = None
        sub = mask
        while sub:
            if shelves.fits_size(sub):
                start, _ = shelves.place(sub, ready)
                end = start + shelves.height(sub)
                here = shelves.cost(shelves.members(sub), start)
                rest, _, _ = best(mask & ~sub, end)
                value = _combine(shelves.makespan, here, rest)
                if found is None or value < found[0]:
                    found = (value, sub, start)
            sub = (sub - 1) & mask
        assert found is not None  # singletons always fit
        memo[key] = found
        return found

    value, _, _ = best((1 << n) - 1, 0)
    plan: list[tuple[int, int]] = []
    mask, ready = (1 << n) - 1, 0
    while mask:
        _, sub, start = best(mask, ready)
        plan.append((sub, start))
        mask &= ~sub
        ready = start + shelves.height(sub)
    return value, plan


def _by_rule(shelves: _Shelves) -> tuple[Fraction, list[tuple[int, int]]]:
    """Every set partition, its shelves ordered by ERD (cmax) or Smith (wct)."""
    n = len(shelves.jobs)
    best_value: Fraction | None = None
    best_plan: list[tuple[int, int]] = []
    for partition in _fitting_partitions(shelves, n):
        shelves.nodes += 1
        masks = [sum(1 << k for k in block) for block in partition]
        if shelves.makespan:
            releases = [max(shelves.jobs[k].release for k in b) for b in partition]
            order = sorted(range(len(masks)), key=lambda i: releases[i])
        else:
            order = smith_order(
                [
                    (
                        shelves.height(mask),
                        sum((shelves.weights[k] for k in b), Fraction(0)),
                    )
                    for mask, b in zip(masks, partition, strict=True)
                ]
            )
        value = Fraction(0)
        ready = 0
        plan = []
        for i in order:
            start, _ = shelves.place(masks[i], ready)
            value = _combine(shelves.makespan, shelves.cost(partition[i], start), value)
            plan.append((masks[i], start))
            ready = start + shelves.height(masks[i])
        if best_value is None or value < best_value:
            best_value, best_plan = value, plan
    assert best_value is not None
    return best_value, best_plan


def _fitting_partitions(shelves: _Shelves, n: int) -> Iterator[list[list[int]]]:
    """Set partitions whose blocks' running sizes fit ``m`` (pruned while built)."""
    blocks: list[list[int]] = []
    used: list[int] = []

    def size(k: int) -> int:
        job = shelves.jobs[k]
        return job.size if job.runtime > 0 else 0

    def grow(k: int) -> Iterator[list[list[int]]]:
        if k == n:
            yield [list(b) for b in blocks]
            return
        for i, block in enumerate(blocks):
            if used[i] + size(k) <= shelves.m:
                block.append(k)
                used[i] += size(k)
                yield from grow(k + 1)
                used[i] -= size(k)
                block.pop()
        blocks.append([k])
        used.append(size(k))
        yield from grow(k + 1)
        used.pop()
        blocks.pop()

    yield from grow(0)


def rule_applies(instance: Instance, objective: Objective) -> bool:
    """Does ``sequencing="rule"`` apply (no blocks; wct also needs releases 0)?"""
    if any(b.end > b.start for b in instance.machine.unavailable):
        return False
    return objective.kind == "cmax" or all(j.release == 0 for j in instance.jobs)


def solve_shelf_exact(
    instance: Instance,
    objective: Objective | str,
    *,
    max_jobs: int = 8,
    sequencing: str = "auto",
) -> Result:
    """Optimal shelf schedule of a tiny instance by exhaustive search.

    Parameters
    ----------
    instance
        At most ``max_jobs`` jobs; both allocations, releases, busy blocks.
    objective
        :class:`Objective` or its text form.
    max_jobs
        Refuse larger instances (``sequencing="all"`` looks at ``3^n``
        (set, next shelf) pairs per ready time, ``"rule"`` at the Bell
        number of partitions).
    sequencing
        ``"rule"``, ``"all"`` or ``"auto"`` (see the module notes).

    Returns
    -------
    Result
        Status ``OPTIMAL``, objective and lower bound the shelf optimum
        (recomputed from the schedule), ``backend="shelf-enumerate"``,
        ``params["nodes"]`` (partitions or programme states visited) and
        ``params["sequencing"]`` (the one used).

    Raises
    ------
    ValueError
        Too many jobs, an unknown ``sequencing``, or ``"rule"`` where it
        does not apply (busy blocks; wct with releases).
    """
    began = time.perf_counter()
    objective = Objective.parse(objective)
    if len(instance.jobs) > max_jobs:
        raise ValueError(
            f"solve_shelf_exact: {len(instance.jobs)} jobs exceed max_jobs="
            f"{max_jobs}; the enumeration is only for tiny instances"
        )
    if sequencing not in SEQUENCING:
        raise ValueError(
            f"sequencing {sequencing!r} is not one of {', '.join(SEQUENCING)}"
        )
    applies = rule_applies(instance, objective)
    if sequencing == "rule" and not applies:
        raise ValueError(
            "sequencing 'rule' needs no busy blocks (and, for wct, all releases 0)"
        )
    used = (
        "rule" if sequencing == "rule" or (sequencing == "auto" and applies) else "all"
    )
    shelves = _Shelves(
        instance,
        list(instance.jobs),
        [Fraction(objective.weight(j)) for j in instance.jobs],
        objective.kind == "cmax",
    )
    plan: list[tuple[int, int]] = []
    if instance.jobs:
        search: Callable[[_Shelves], tuple[Fraction, list[tuple[int, int]]]] = (
            _by_rule if used == "rule" else _all_orders
        )
        _, plan = search(shelves)
    schedule = _schedule(shelves, plan)
    return Result.exhaustive(
        instance,
        objective,
        schedule,
        BACKEND,
        began,
        {"nodes": shelves.nodes, "sequencing": used, "max_jobs": max_jobs},
    )


def _schedule(shelves: _Shelves, plan: Sequence[tuple[int, int]]) -> Schedule:
    instance = shelves.instance
    starts: dict[int, int] = {}
    offsets: dict[int, int] = {}
    for mask, start in plan:
        placed, where = shelves.place(mask, start)
        assert placed == start
        for k, offset in where.items():
            starts[shelves.jobs[k].id] = start
            offsets[shelves.jobs[k].id] = offset
    if shelves.contiguous:
        jobs = instance.jobs_by_id()
        return Schedule(
            {
                jid: Placement.contiguous(
                    s, s + jobs[jid].runtime, offsets[jid], jobs[jid].size
                )
                for jid, s in starts.items()
            },
            BACKEND,
        )
    schedule = assign_processors(instance, starts)
    return Schedule(schedule.placements, BACKEND)
