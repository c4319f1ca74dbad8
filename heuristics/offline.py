"""Offline list and shelf heuristics: upper bounds and solver hints.

* :func:`list_schedule` is the serial schedule generation scheme (SGS): the
  jobs, in a given order, each go to the earliest feasible start at or after
  their release, given the jobs already placed and the busy blocks (holes
  left earlier are filled). On ``any`` machines the processors are assigned
  afterwards by a sweep (:func:`assign_processors`); on ``contiguous``
  machines each job gets the lowest offset of a free range at that time.
* :func:`nfdh` and :func:`ffdh` are the shelf heuristics of strip packing
  (Coffman, Garey, Johnson, Tarjan 1980).
* :func:`best_heuristic` runs several orders and shelves and keeps the best
  schedule for an objective.

Every schedule returned is feasible: it passes
:func:`optsched.check.check_schedule` (the tests assert it).

Semantics of the ``any`` allocation: at every instant the running jobs and
the busy blocks use at most ``m`` processors (the checker's capacity rule).
Processors are then assigned explicitly by a sweep in start order; it
always succeeds when no busy block has an offset. Blocks with offsets pin
processors; if the sweep cannot avoid them, the placements are returned
without processor sets (the checker accepts that on ``any`` machines).
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from optsched.instance import BusyBlock, Instance, Job
from optsched.objective import Objective
from optsched.schedule import Placement, Schedule

__all__ = [
    "ORDERS",
    "assign_processors",
    "best_heuristic",
    "ffdh",
    "heuristic_schedules",
    "improve_schedule",
    "list_schedule",
    "nfdh",
    "order_by",
]


# --------------------------------------------------------------------------
# Resource structures
# --------------------------------------------------------------------------


class _CountProfile:
    """Processors in use over time: ``used[i]`` on ``[times[i], times[i+1])``."""

    def __init__(self, m: int, blocks: Iterable[BusyBlock]) -> None:
        self.m = m
        self.times: list[int] = [0]
        self.used: list[int] = [0]
        for block in blocks:
            self.add(block.start, block.end, block.size)

    def _cut(self, t: int) -> int:
        """Index of a breakpoint at ``t`` (inserted if absent)."""
        i = _bisect_right(self.times, t) - 1
        if self.times[i] == t:
            return i
        self.times.insert(i + 1, t)
        self.used.insert(i + 1, self.used[i])
        return i + 1

    def add(self, start: int, end: int, size: int) -> None:
        """Occupy ``size`` processors during ``[start, end)``."""
        if end <= start:
            return
        first, last = self._cut(start), self._cut(end)
        for i in range(first, last):
            self.used[i] += size

    def earliest(self, release: int, duration: int, size: int) -> int:
        """Earliest ``t >= release`` with ``used + size <= m`` during the run."""
        if duration == 0:
            return release
        limit = self.m - size
        t = release
        times, used = self.times, self.used
        j = _bisect_right(times, t) - 1
        while j < len(times) and times[j] < t + duration:
            if used[j] > limit:
                # Every start before this segment's end overlaps it; the last
                # segment is never overloaded (it is free), so j + 1 exists.
                t = times[j + 1]
            j += 1
        return t


def _bisect_right(values: list[int], x: int) -> int:
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        if x < values[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


class _Strip:
    """Rectangles ``[lo, hi) x [start, end)`` placed on a contiguous machine."""

    def __init__(self, m: int, blocks: Iterable[BusyBlock]) -> None:
        self.m = m
        self.count = _CountProfile(m, ())
        self._rows = np.zeros((64, 4), dtype=np.int64)  # start, end, lo, hi
        self._n = 0
        for block in blocks:
            if block.offset is None:
                raise ValueError(
                    f"busy block {block.label or (block.start, block.end)}: "
                    "contiguous placement needs busy blocks with offsets"
                )
            self.add(block.start, block.end, block.offset, block.size)

    def add(self, start: int, end: int, offset: int, size: int) -> None:
        """Occupy processors ``[offset, offset + size)`` during ``[start, end)``."""
        if end <= start:
            return
        if self._n == len(self._rows):
            self._rows = np.concatenate([self._rows, np.zeros_like(self._rows)])
        self._rows[self._n] = (start, end, offset, offset + size)
        self._n += 1
        self.count.add(start, end, size)

    def earliest(self, release: int, duration: int, size: int) -> tuple[int, int]:
        """Earliest ``(start, offset)``; the lowest offset among equal starts."""
        if duration == 0:
            return release, 0
        t = release
        while True:
            t = self.count.earliest(t, duration, size)  # necessary condition
            offset, retry = self._fit_at(t, duration, size)
            if offset is not None:
                return t, offset
            t = retry

    def earliest_at(self, release: int, duration: int, offset: int, size: int) -> int:
        """Earliest start ``>= release`` on processors ``[offset, offset + size)``."""
        if duration == 0:
            return release
        rows = self._rows[: self._n]
        columns = (rows[:, 2] < offset + size) & (rows[:, 3] > offset)
        t = release
        while True:
            clash = columns & (rows[:, 0] < t + duration) & (rows[:, 1] > t)
            if not clash.any():
                return t
            t = int(rows[clash, 1].max())

    def _fit_at(self, t: int, duration: int, size: int) -> tuple[int | None, int]:
        rows = self._rows[: self._n]
        live = rows[(rows[:, 0] < t + duration) & (rows[:, 1] > t)]
        if len(live) == 0:
            return 0, t
        live = live[np.argsort(live[:, 2], kind="stable")]
        reach = np.maximum.accumulate(live[:, 3])
        gap_start = np.concatenate(([0], reach))
        gap_end = np.concatenate((live[:, 2], [self.m]))
        fits = np.flatnonzero(gap_end - gap_start >= size)
        if len(fits):
            return int(gap_start[fits[0]]), t
        # Until the first of these rectangles ends, all of them still overlap.
        return None, int(live[:, 1].min())


# --------------------------------------------------------------------------
# Processor assignment on any machines
# --------------------------------------------------------------------------


def assign_processors(
    instance: Instance, starts: Mapping[int, int], *, producer: str = ""
) -> Schedule:
    """Turn start times into a schedule with explicit processor sets.

    ``starts`` must be feasible for the capacity rule (jobs plus busy blocks
    use at most ``m`` processors at every instant). A sweep in time order
    gives each starting job the lowest-numbered free processors, skipping
    those that a busy block with an offset pins during the job's run; blocks
    without an offset take free processors like jobs. Without blocks with
    offsets this always succeeds (interval-graph colouring). When it fails,
    the placements carry no processor sets (valid for ``any`` machines).

    Raises ``ValueError`` on a contiguous machine (offsets are part of the
    decision there; see :func:`list_schedule`).
    """
    if instance.machine.allocation == "contiguous":
        raise ValueError("assign_processors: the machine is contiguous")
    processors = _sweep_processors(instance, starts)
    placements = {}
    for job in instance.jobs:
        start = starts[job.id]
        procs = processors[job.id] if processors is not None else None
        placements[job.id] = Placement(start, start + job.runtime, procs)
    return Schedule(placements, producer)


def _sweep_processors(
    instance: Instance, starts: Mapping[int, int]
) -> dict[int, tuple[int, ...]] | None:
    m = instance.processors
    pinned = [b for b in instance.machine.unavailable if b.offset is not None]
    # Items that need processors: jobs (id >= 0 keys) and anonymous blocks.
    items: list[tuple[int, int, int, object]] = []
    for job in instance.jobs:
        items.append((starts[job.id], starts[job.id] + job.runtime, job.size, job.id))
    for k, block in enumerate(instance.machine.unavailable):
        if block.offset is None and block.end > block.start:
            items.append((block.start, block.end, block.size, ("block", k)))
    items.sort(key=lambda it: (it[0], it[1]))
    free = list(range(m))
    heapq.heapify(free)
    running: list[tuple[int, int, tuple[int, ...]]] = []  # (end, seq, procs)
    out: dict[int, tuple[int, ...]] = {}
    for seq, (start, end, size, key) in enumerate(items):
        while running and running[0][0] <= start:
            for p in heapq.heappop(running)[2]:
                heapq.heappush(free, p)
        if end == start:  # zero-length: no processor is really held
            if isinstance(key, int):
                out[key] = tuple(range(size))
            continue
        taboo = {
            p
            for b in pinned
            if b.start < end and b.end > start
            for p in range(b.offset or 0, (b.offset or 0) + b.size)
        }
        chosen: list[int] = []
        skipped: list[int] = []
        while free and len(chosen) < size:
            p = heapq.heappop(free)
            (skipped if p in taboo else chosen).append(p)
        for p in skipped:
            heapq.heappush(free, p)
        if len(chosen) < size:
            return None
        heapq.heappush(running, (end, seq, tuple(chosen)))
        if isinstance(key, int):
            out[key] = tuple(sorted(chosen))
    return out


# --------------------------------------------------------------------------
# List scheduling (serial SGS)
# --------------------------------------------------------------------------


def _check_order(instance: Instance, order: Sequence[int]) -> list[Job]:
    jobs = instance.jobs_by_id()
    seen: set[int] = set()
    for jid in order:
        if jid not in jobs:
            raise ValueError(f"list_schedule: job {jid} is not in the instance")
        if jid in seen:
            raise ValueError(f"list_schedule: job {jid} appears twice in the order")
        seen.add(jid)
    missing = sorted(jobs.keys() - seen)
    if missing:
        raise ValueError(f"list_schedule: the order misses jobs {missing[:5]}")
    return [jobs[jid] for jid in order]


def list_schedule(
    instance: Instance,
    order: Sequence[int],
    *,
    allocation: str | None = None,
    producer: str = "list",
) -> Schedule:
    """Serial schedule generation scheme: each job at its earliest feasible start.

    Parameters
    ----------
    instance
        The problem (busy blocks are fixed occupancy).
    order
        Job ids, each exactly once.
    allocation
        ``None`` (the machine's), ``"any"`` or ``"contiguous"``. Contiguous
        placements are also valid on an ``any`` machine when its busy blocks
        have offsets; ``"any"`` on a contiguous machine is refused.
    producer
        Recorded in the schedule.

    Returns
    -------
    Schedule
        Job ``j`` starts at the earliest ``t >= r_j`` at which it fits beside
        the busy blocks and the jobs placed before it (on ``any`` machines: at
        most ``m`` processors in use; on ``contiguous`` machines: a free range
        of ``q_j`` adjacent processors, the lowest such offset). This is the
        serial SGS of R. Kolisch, "Serial and parallel resource-constrained
        project scheduling methods revisited", EJOR 90, 1996, with releases,
        time-varying capacity and, for contiguity, the offset choice.
    """
    allocation = allocation or instance.machine.allocation
    if allocation not in ("any", "contiguous"):
        raise ValueError(f"list_schedule: unknown allocation {allocation!r}")
    if allocation == "any" and instance.machine.allocation == "contiguous":
        raise ValueError(
            "list_schedule: a contiguous machine needs contiguous placement"
        )
    jobs = _check_order(instance, order)
    blocks = [b for b in instance.machine.unavailable if b.end > b.start]
    if allocation == "contiguous":
        strip = _Strip(instance.processors, blocks)
        placements = {}
        for job in jobs:
            start, offset = strip.earliest(job.release, job.runtime, job.size)
            strip.add(start, start + job.runtime, offset, job.size)
            placements[job.id] = Placement.contiguous(
                start, start + job.runtime, offset, job.size
            )
        return Schedule(placements, producer)
    profile = _CountProfile(instance.processors, blocks)
    starts = {}
    for job in jobs:
        start = profile.earliest(job.release, job.runtime, job.size)
        profile.add(start, start + job.runtime, job.size)
        starts[job.id] = start
    return assign_processors(instance, starts, producer=producer)


# --------------------------------------------------------------------------
# Shelf heuristics
# --------------------------------------------------------------------------


@dataclass
class _Shelf:
    start: int
    height: int
    used: int  # width taken so far (jobs go left to right)


def _shelf_schedule(instance: Instance, first_fit: bool, producer: str) -> Schedule:
    blocks = [b for b in instance.machine.unavailable if b.end > b.start]
    obstacles = _Strip(instance.processors, blocks)  # raises without offsets
    m = instance.processors
    # Decreasing height; the release breaks ties so early jobs open shelves.
    jobs = sorted(instance.jobs, key=lambda j: (-j.runtime, j.release, j.id))
    shelves: list[_Shelf] = []
    placements: dict[int, Placement] = {}
    for job in jobs:
        candidates = shelves if first_fit else shelves[-1:]
        shelf = next((s for s in candidates if _fits(obstacles, s, job, m)), None)
        if shelf is None:
            ready = shelves[-1].start + shelves[-1].height if shelves else 0
            start = obstacles.earliest_at(
                max(ready, job.release), job.runtime, 0, job.size
            )
            shelf = _Shelf(start, job.runtime, 0)
            shelves.append(shelf)
        placements[job.id] = Placement.contiguous(
            shelf.start, shelf.start + job.runtime, shelf.used, job.size
        )
        shelf.used += job.size
    return Schedule(placements, producer)


def _fits(obstacles: _Strip, shelf: _Shelf, job: Job, m: int) -> bool:
    # A job joins a shelf only if it is released by then (it never delays the
    # shelf) and its rectangle misses every busy block.
    if job.release > shelf.start or shelf.used + job.size > m:
        return False
    start = obstacles.earliest_at(shelf.start, job.runtime, shelf.used, job.size)
    return start == shelf.start


def nfdh(instance: Instance) -> Schedule:
    """Next-Fit Decreasing Height shelf packing.

    Jobs by non-increasing runtime fill a shelf left to right; a job that does
    not fit the current shelf opens a new one on top of it (height = its
    runtime, the tallest of the shelf). Releases: a job joins a shelf only if
    it is released by the shelf's start, and a shelf starts at
    ``max(end of the previous shelf, release of its first job)``. Busy blocks
    (which need offsets) delay a new shelf until its first job fits, and a
    job joins a shelf only if it misses every block. Meant for strip packing
    (all releases 0); with releases it stays valid but is weak. Placements
    are contiguous, so the schedule is valid on both machine kinds.

    Reference: E. G. Coffman, M. R. Garey, D. S. Johnson, R. E. Tarjan,
    "Performance bounds for level-oriented two-dimensional packing
    algorithms", SIAM J. Computing 9(4), 1980 (NFDH <= 2 OPT + h_max).
    """
    return _shelf_schedule(instance, first_fit=False, producer="shelf:nfdh")


def ffdh(instance: Instance) -> Schedule:
    """First-Fit Decreasing Height shelf packing (see :func:`nfdh`).

    Each job goes to the first (lowest) shelf it fits, else opens a new one.
    Coffman et al. 1980: FFDH <= 1.7 OPT + h_max.
    """
    return _shelf_schedule(instance, first_fit=True, producer="shelf:ffdh")


# --------------------------------------------------------------------------
# Orders and the best heuristic
# --------------------------------------------------------------------------


def _ratio(job: Job, objective: Objective) -> float:
    # Smith's ratio w_j / (q_j p_j); zero-area jobs first.
    area = job.size * job.runtime
    return float("inf") if area == 0 else objective.weight(job) / area


ORDERS: dict[str, Callable[[Job, Objective], tuple[float, ...]]] = {
    "release-lpt": lambda j, o: (j.release, -j.runtime, -j.size, j.id),
    "lpt": lambda j, o: (-j.runtime, j.release, -j.size, j.id),
    "wspt": lambda j, o: (-_ratio(j, o), j.release, j.id),
    "release-wspt": lambda j, o: (j.release, -_ratio(j, o), j.id),
    "largest-size": lambda j, o: (-j.size, -j.runtime, j.release, j.id),
    "largest-area": lambda j, o: (-j.size * j.runtime, j.release, j.id),
    "spt": lambda j, o: (j.runtime, j.release, j.id),
}
"""Sort keys of the list-scheduling orders (smallest key first)."""

SHELVES: dict[str, Callable[[Instance], Schedule]] = {"nfdh": nfdh, "ffdh": ffdh}


def order_by(instance: Instance, objective: Objective, name: str) -> list[int]:
    """Job ids sorted by the order ``name`` of :data:`ORDERS`."""
    key = ORDERS[name]
    return [j.id for j in sorted(instance.jobs, key=lambda j: key(j, objective))]


def heuristic_schedules(
    instance: Instance,
    objective: Objective | str,
    *,
    candidates: Iterable[str] | None = None,
) -> dict[str, Schedule]:
    """Schedules of the candidate heuristics, by name.

    Names are those of :data:`ORDERS` (list scheduling in that order) and of
    :data:`SHELVES`. Shelves are skipped when a busy block has no offset.
    """
    objective = Objective.parse(objective)
    names = list(candidates) if candidates is not None else [*ORDERS, *SHELVES]
    unknown = [n for n in names if n not in ORDERS and n not in SHELVES]
    if unknown:
        valid = ", ".join([*ORDERS, *SHELVES])
        raise ValueError(f"unknown heuristic {unknown[0]!r}; expected one of {valid}")
    anonymous = any(b.offset is None for b in instance.machine.unavailable)
    out: dict[str, Schedule] = {}
    for name in names:
        if name in ORDERS:
            order = order_by(instance, objective, name)
            out[name] = list_schedule(instance, order, producer=f"list:{name}")
        elif not anonymous:
            out[name] = SHELVES[name](instance)
    return out


def improve_schedule(
    instance: Instance,
    objective: Objective | str,
    schedule: Schedule,
    *,
    time_limit: float = 1.0,
    max_evaluations: int | None = None,
    seed: int = 0,
    stop_at: float | None = None,
) -> Schedule:
    """Local search over list-scheduling orders, starting from ``schedule``.

    The jobs in order of their starts in ``schedule`` form the first list
    (on ``any`` machines the serial SGS of that list starts no job later, so
    nothing is lost). Each step moves one job to another position of the
    list (half the time a job among the five that end last, moved earlier;
    otherwise any job to any position), list-schedules the new order and
    keeps it when the objective is not worse (sideways moves let the search
    cross plateaus). Stops after ``time_limit`` seconds or
    ``max_evaluations`` orders (give ``max_evaluations`` and a large time
    limit for a reproducible result), or as soon as the objective reaches
    ``stop_at`` (a lower bound, when known). Returns the best schedule seen,
    ``schedule`` itself if nothing beats it; the producer gets ``+ls``.
    """
    objective = Objective.parse(objective)
    n = len(instance.jobs)
    best, best_value = schedule, objective.value(instance, schedule)
    if n < 2:
        return best
    order = sorted(schedule.placements, key=lambda jid: (schedule[jid].start, jid))
    producer = f"{schedule.producer or 'heuristic'}+ls"
    current = list_schedule(instance, order, producer=producer)
    value = objective.value(instance, current)
    if value < best_value:
        best, best_value = current, value
    rng = random.Random(seed)
    deadline = time.perf_counter() + time_limit
    evaluations = 0
    while (
        time.perf_counter() < deadline
        and (max_evaluations is None or evaluations < max_evaluations)
        and (stop_at is None or best_value > stop_at)
    ):
        candidate = _moved(order, current, rng)
        trial = list_schedule(instance, candidate, producer=producer)
        evaluations += 1
        trial_value = objective.value(instance, trial)
        if trial_value <= value:
            order, current, value = candidate, trial, trial_value
            if value < best_value:
                best, best_value = current, value
    return best


def _moved(order: list[int], current: Schedule, rng: random.Random) -> list[int]:
    """``order`` with one job moved (a late-ending one earlier, or at random)."""
    n = len(order)
    if rng.random() < 0.5:
        late = sorted(order, key=lambda jid: -current[jid].end)[:5]
        i = order.index(rng.choice(late))
        j = rng.randrange(0, i) if i > 0 else rng.randrange(n)
    else:
        i, j = rng.randrange(n), rng.randrange(n)
    moved = order[:]
    moved.insert(j, moved.pop(i))
    return moved


def best_heuristic(
    instance: Instance,
    objective: Objective | str,
    *,
    candidates: Iterable[str] | None = None,
    improve: float = 0.0,
    seed: int = 0,
) -> Schedule:
    """The best schedule by ``objective.value`` among the candidate heuristics.

    Candidates default to every order of :data:`ORDERS` (release+LPT, LPT,
    WSPT by ``w_j / (q_j p_j)``, release+WSPT, largest size, largest area,
    SPT) and the shelves NFDH and FFDH. The first best wins ties; the
    schedule's ``producer`` names it (``"list:wspt"``, ``"shelf:ffdh"``).
    With ``improve`` seconds, :func:`improve_schedule` then searches from
    the best one (producer ``"list:wspt+ls"``).
    """
    objective = Objective.parse(objective)
    schedules = heuristic_schedules(instance, objective, candidates=candidates)
    if not schedules:
        raise ValueError("best_heuristic: no applicable candidate heuristic")
    best = min(schedules.values(), key=lambda s: objective.value(instance, s))
    if improve > 0:
        best = improve_schedule(
            instance, objective, best, time_limit=improve, seed=seed
        )
    return best
