"""Shared schedule toolkit: capacity profile, strip, list scheduling, processors.

Everything here works on the core types alone, so that the offline models
(:mod:`optsched.models`), the simulator and the offline heuristics
(:mod:`optsched.heuristics`) build schedules the same way without importing
each other.

* :class:`Profile` is *the* capacity profile: free processors as a step
  function of time, with insertion of rectangles and earliest-fit queries.
  The simulator plans backfilling with it, list scheduling places jobs with
  it, and :class:`Strip` uses it as its count filter.
* :class:`Strip` holds the rectangles ``[offset, offset + size) x [start,
  end)`` placed on a contiguous machine and finds the earliest free range.
* :func:`list_schedule` is the serial schedule generation scheme (SGS).
* :func:`assign_processors` turns count-feasible start times on an ``any``
  machine into explicit processor sets (jobs and busy blocks together).

The ``any`` rule and why processors can always be assigned
---------------------------------------------------------
On an ``any`` machine processors are interchangeable: a busy block is a
*count* of processors over ``[start, end)`` and carries no offset (the
machine, or the scheduler, picks its processors when it starts;
:class:`~optsched.instance.Machine` refuses offsets there). A start vector
is *count-feasible* when at every instant the running jobs plus the busy
blocks use at most ``m`` processors (the checker's capacity rule). Every
count-feasible start vector admits a non-migrating assignment of processors
to the jobs and the blocks together: treat each job or block of size ``q``
as ``q`` identical intervals (blocks are intervals with a fixed start, jobs
intervals starting at their given start) and colour them greedily in order
of start times with the processors as colours. When an item starts at
``t``, the items still running hold ``sum(running q)`` processors, and
count-feasibility at ``t`` gives ``sum(running q) + q <= m``, so ``q``
processors are free; a processor freed at an end stays free until someone
takes it, so nothing assigned earlier can block a later item. This is the
classical fact that greedy colouring of an interval graph in order of left
end points uses no more colours than its largest clique (A. Hajnal, J.
Surányi, "Über die Auflösung von Graphen in vollständige Teilgraphen",
Ann. Univ. Sci. Budapest 1, 1958). Pinned blocks would break it: on two
processors, blocks pinned on processor 0 during ``[0, 1)`` and on processor
1 during ``[1, 2)`` leave one processor free at every instant, yet no single
processor for a one-processor job on ``[0, 2)``; that is why blocks on
``any`` machines are counts.

Zero-length jobs occupy nothing (the checker ignores them in the capacity
and overlap rules); they start at their release.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from optsched.instance import BusyBlock, Instance, Job
from optsched.intervals import processor_set
from optsched.schedule import Placement, Schedule

__all__ = [
    "Profile",
    "Strip",
    "assign_processors",
    "contiguous_placement",
    "list_schedule",
    "processor_set",
]


# --------------------------------------------------------------------------
# The capacity profile
# --------------------------------------------------------------------------


class Profile:
    """Free processors from ``now`` on, as a step function of time.

    Representation: parallel lists ``times`` (strictly increasing
    breakpoints) and ``free``; segment ``k`` covers ``[times[k],
    times[k+1])`` with ``free[k]`` processors free, and the last segment
    extends to infinity. Neighbouring segments never have the same value
    (they are merged). Every operation is linear in the number of breakpoints
    it touches. The profile only describes the future: the segment holding
    the current time starts at ``now``, and :meth:`advance` forgets the past,
    so its length is bounded by what is still planned (running jobs, busy
    blocks, reservations), never by the finished jobs.

    Uses: the simulator's availability profile for backfilling (Mu'alem and
    Feitelson's "cpu snapshot" of conservative backfilling: running jobs
    occupy their processors until their *estimated* end, busy blocks over
    their interval, reservations over ``[start, start + estimate)``); the
    count of processors in use by list scheduling (:func:`list_schedule`,
    ``now = 0``); the count filter of :class:`Strip`.

    Reference: A. W. Mu'alem, D. G. Feitelson, "Utilization,
    predictability, workloads, and user runtime estimates in scheduling the
    IBM SP2 with backfilling", IEEE TPDS 12(6), 2001.

    Parameters
    ----------
    now
        First instant described.
    free
        Free processors from ``now`` to infinity before any rectangle is added.
    """

    __slots__ = ("free", "times")

    def __init__(self, now: int, free: int) -> None:
        self.times: list[int] = [now]
        self.free: list[int] = [free]

    @classmethod
    def of_blocks(
        cls, processors: int, blocks: Iterable[BusyBlock], now: int = 0
    ) -> Profile:
        """The free processors of a machine of ``processors`` with busy blocks."""
        profile = cls(now, processors)
        for block in blocks:
            profile.add(block.start, block.end, -block.size)
        return profile

    def copy(self) -> Profile:
        """An independent copy."""
        clone = Profile.__new__(Profile)
        clone.times = self.times.copy()
        clone.free = self.free.copy()
        return clone

    @property
    def now(self) -> int:
        """The first instant described."""
        return self.times[0]

    def __len__(self) -> int:
        return len(self.times)

    def _split(self, time: int) -> int:
        # Index of the breakpoint at `time`, inserting one if needed. Times
        # before `now` are clamped to `now`: the past is not described.
        times = self.times
        if time <= times[0]:
            return 0
        index = bisect_left(times, time)
        if index < len(times) and times[index] == time:
            return index
        times.insert(index, time)
        self.free.insert(index, self.free[index - 1])
        return index

    def add(self, start: int, end: int, delta: int) -> None:
        """Add ``delta`` free processors over ``[start, end)``.

        A negative ``delta`` occupies processors (a running job, a block, a
        reservation); a positive one releases them. Parts before ``now`` are
        ignored.
        """
        if end <= start or end <= self.times[0]:
            return
        first = self._split(start)
        last = self._split(end)
        free = self.free
        for k in range(first, last):
            free[k] += delta
        # Merge equal neighbours at both ends (the interior keeps its steps),
        # so the profile only holds real changes: removing a reservation
        # leaves no trace.
        times = self.times
        if last < len(free) and free[last] == free[last - 1]:
            del times[last]
            del free[last]
        if first > 0 and free[first] == free[first - 1]:
            del times[first]
            del free[first]

    def advance(self, now: int) -> None:
        """Forget everything before ``now`` (``now`` never goes back)."""
        times = self.times
        if now <= times[0]:
            return
        k = bisect_right(times, now) - 1
        if k > 0:
            del times[:k]
            del self.free[:k]
        times[0] = now

    def free_at(self, time: int) -> int:
        """Free processors at instant ``time`` (``now`` if earlier)."""
        k = bisect_right(self.times, time) - 1
        return self.free[max(k, 0)]

    def min_free(self, start: int, end: int) -> int:
        """Minimum free processors over ``[start, end)``.

        An empty interval (``end <= start``) is the instant ``start``: a job
        of zero duration still needs its processors when it starts.
        """
        times, free = self.times, self.free
        k = max(bisect_right(times, start) - 1, 0)
        low = free[k]
        k += 1
        n = len(times)
        while k < n and times[k] < end:
            if free[k] < low:
                low = free[k]
            k += 1
        return low

    def fits(self, start: int, duration: int, size: int) -> bool:
        """Whether ``size`` processors are free over ``[start, start + duration)``."""
        return self.min_free(start, start + duration) >= size

    def earliest(
        self, size: int, duration: int, limit: int | None = None
    ) -> int | None:
        """Earliest start ``t >= now`` with ``size`` processors free over
        ``[t, t + duration)``.

        Candidate starts are ``now`` and the breakpoints: free capacity only
        rises at breakpoints, so the first feasible window starts at one.
        With ``limit``, the search stops at ``limit`` and returns ``limit``
        when no earlier start exists (the caller knows ``limit`` is feasible).
        Returns ``None`` when no start exists (``size`` exceeds what the
        profile ever frees).
        """
        times, free = self.times, self.free
        n = len(times)
        k = 0
        while k < n:
            start = times[k]
            if limit is not None and start >= limit:
                return limit
            if free[k] < size:
                k += 1
                continue
            end = start + duration
            j = k + 1
            while j < n and times[j] < end and free[j] >= size:
                j += 1
            if j >= n or times[j] >= end:
                return start
            k = j + 1  # segment j is too low: no window can contain it
        return None

    def earliest_from(self, release: int, size: int, duration: int) -> int | None:
        """Earliest start ``t >= max(release, now)`` with ``size`` processors
        free over ``[t, t + duration)`` (the instant ``t`` if ``duration`` is 0).

        Same scan as :meth:`earliest`, from the segment holding ``release``:
        after ``release``, free capacity only rises at breakpoints, so the
        candidates are ``release`` and the later breakpoints. ``None`` when
        no start exists.
        """
        times, free = self.times, self.free
        n = len(times)
        start = max(release, times[0])
        k = bisect_right(times, start) - 1
        while True:
            if free[k] >= size:
                end = start + duration
                j = k + 1
                while j < n and times[j] < end and free[j] >= size:
                    j += 1
                if j >= n or times[j] >= end:
                    return start
                k = j  # segment j is too low: no window can contain it
            k += 1
            if k >= n:
                return None
            start = times[k]

    def earliest_before(self, size: int, duration: int, limit: int) -> int | None:
        """Earliest start ``t < limit`` for a job that holds a reservation at
        ``limit``, or ``None`` when it cannot move earlier.

        The profile still contains the job's own rectangle ``[limit, limit +
        duration)``. A window ``[t, t + duration)`` with ``t < limit`` ends
        inside that rectangle, where the job's own processors are available
        to it, so only ``[t, min(t + duration, limit))`` needs ``size`` free
        processors. Nothing is modified: compressing a reservation that
        cannot move costs one scan of the breakpoints before ``limit``.
        """
        times, free = self.times, self.free
        n = bisect_left(times, limit)  # segments starting before `limit`
        k = 0
        while k < n:
            if free[k] < size:
                k += 1
                continue
            start = times[k]
            end = min(start + duration, limit)
            j = k + 1
            while j < n and times[j] < end and free[j] >= size:
                j += 1
            if j >= n or times[j] >= end:
                return start
            k = j + 1
        return None

    def segments(self) -> list[tuple[int, int]]:
        """``(time, free)`` breakpoints, for tests and debugging."""
        return list(zip(self.times, self.free, strict=True))


# --------------------------------------------------------------------------
# The contiguous strip
# --------------------------------------------------------------------------


class Strip:
    """Rectangles ``[lo, hi) x [start, end)`` placed on a contiguous machine.

    Busy blocks (which need offsets here) are fixed rectangles. A
    :class:`Profile` of the processors in use filters candidate starts: a
    free range of ``q`` processors needs at least ``q`` free processors, so
    the count's earliest fit is a lower bound on the earliest range fit.

    Parameters
    ----------
    m
        Processors of the machine.
    blocks
        Busy blocks, each with an offset (``ValueError`` otherwise).
    """

    def __init__(self, m: int, blocks: Iterable[BusyBlock]) -> None:
        self.m = m
        self.count = Profile(0, m)
        self._rows = np.zeros((64, 4), dtype=np.int64)  # start, end, lo, hi
        self._n = 0
        self._compacted = 64  # rows kept by the last forget_before
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
        self.count.add(start, end, -size)

    def earliest(self, release: int, duration: int, size: int) -> tuple[int, int]:
        """Earliest ``(start, offset)``; the lowest offset among equal starts.

        Alternates the count filter (the earliest start at which ``size``
        processors are free at all) and a range test at that start; when no
        range fits, no start before the end of the first rectangle that
        overlaps the window can fit either (all of them keep overlapping).
        """
        if duration == 0:
            return release, 0
        t = release
        while True:
            found = self.count.earliest_from(t, size, duration)
            assert found is not None, "the last segment of the count is free"
            t = found
            offset, retry = self._fit_at(t, duration, size)
            if offset is not None:
                return t, offset
            t = retry

    def forget_before(self, now: int) -> None:
        """Describe the strip from ``now`` on only (``now`` never goes back).

        Later starts are at ``now`` or after it, so rectangles that end by
        then can no longer be met: they are dropped once they make up half
        of the rows (amortised linear time).
        """
        self.count.advance(now)
        if self._n < 2 * self._compacted:
            return
        rows = self._rows[: self._n]
        kept = rows[rows[:, 1] > self.count.now]
        self._rows[: len(kept)] = kept
        self._n = len(kept)
        self._compacted = max(64, self._n)

    def earliest_at(self, release: int, duration: int, offset: int, size: int) -> int:
        """Earliest start ``>= release`` on processors ``[offset, offset + size)``."""
        if duration == 0:
            return release
        rows = self._rows[: self._n]
        columns = (rows[:, 2] < offset + size) & (rows[:, 3] > offset)
        t = max(release, self.count.now)
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
    """Turn count-feasible start times into a schedule with explicit processors.

    Parameters
    ----------
    instance
        An ``any``-allocation instance (its busy blocks are counts).
    starts
        ``{job id: start}`` for every job, count-feasible: jobs plus busy
        blocks use at most ``m`` processors at every instant.
    producer
        Recorded in the schedule.

    Returns
    -------
    Schedule
        Every job has a processor set; no two overlapping jobs share a
        processor, and the busy blocks fit, without migrating, on the
        processors the jobs leave (they take processors in the same sweep).

    Raises
    ------
    ValueError
        On a contiguous machine (offsets are part of the decision there; see
        :func:`list_schedule`), or when ``starts`` breaks the capacity rule.

    Notes
    -----
    A sweep in order of start times (ties: earlier end first) over jobs and
    busy blocks gives each starting item the lowest-numbered free
    processors, after taking back those of the items that ended (half-open
    intervals: at or before the start). By the greedy interval-colouring
    argument of the module notes, a count-feasible vector never runs short
    of free processors. The free processors at a start are exactly ``m``
    minus the sizes of the items still running, so the sweep runs short
    only when the start vector itself breaks the capacity rule at that
    instant, which is reported as such.
    """
    if instance.machine.allocation == "contiguous":
        raise ValueError("assign_processors: the machine is contiguous")
    processors = _sweep(instance, starts)
    placements = {}
    for job in instance.jobs:
        start = starts[job.id]
        placements[job.id] = Placement(start, start + job.runtime, processors[job.id])
    return Schedule(placements, producer)


def _sweep(instance: Instance, starts: Mapping[int, int]) -> dict[int, Sequence[int]]:
    m = instance.processors
    # (start, end, size, job id or -1 - block index): jobs and blocks alike.
    items: list[tuple[int, int, int, int]] = []
    jobs = instance.jobs
    for index, job in enumerate(jobs):
        start = starts[job.id]
        items.append((start, start + job.runtime, job.size, index))
    for k, block in enumerate(instance.machine.unavailable):
        if block.end > block.start:
            items.append((block.start, block.end, block.size, -1 - k))
    items.sort(key=lambda it: (it[0], it[1]))
    free = _FreeRanges(m)
    running: list[tuple[int, int, list[tuple[int, int]]]] = []  # (end, seq, ranges)
    out: dict[int, Sequence[int]] = {}
    for seq, (start, end, size, key) in enumerate(items):
        while running and running[0][0] <= start:
            free.give(heapq.heappop(running)[2])
        if end == start:  # zero-length job: it holds no processor
            out[jobs[key].id] = processor_set([(0, size)])
            continue
        if free.count < size:
            who = f"job {jobs[key].id}" if key >= 0 else "a busy block"
            raise ValueError(
                f"assign_processors: the start times break the capacity rule: "
                f"{m - free.count + size} processors in use at time {start} "
                f"({who} starting), machine has {m}"
            )
        chosen = free.take(size)
        heapq.heappush(running, (end, seq, chosen))
        if key >= 0:
            out[jobs[key].id] = processor_set(chosen)
    return out


def contiguous_placement(start: int, end: int, offset: int, size: int) -> Placement:
    """:meth:`Placement.contiguous` with a :func:`processor_set` (wide jobs cheap)."""
    return Placement(start, end, processor_set([(offset, offset + size)]))


class _FreeRanges:
    """The free processors of a sweep as sorted, disjoint ranges ``[lo, hi)``.

    A list of processor indices would cost memory in ``m`` (gigabytes for a
    machine of ``10**9`` processors); ranges cost memory in the number of
    items running, since each item takes and gives back at most a few
    ranges. :meth:`take` hands out the lowest free indices, as a heap of
    indices would.
    """

    __slots__ = ("count", "highs", "lows")

    def __init__(self, m: int) -> None:
        self.lows: list[int] = [0] if m > 0 else []
        self.highs: list[int] = [m] if m > 0 else []
        self.count = m

    def take(self, size: int) -> list[tuple[int, int]]:
        """Remove and return the lowest ``size`` free processors (as ranges)."""
        lows, highs = self.lows, self.highs
        chosen: list[tuple[int, int]] = []
        need = size
        used = 0  # ranges consumed whole
        while need > 0:
            lo, hi = lows[used], highs[used]
            if hi - lo > need:
                chosen.append((lo, lo + need))
                lows[used] = lo + need
                need = 0
            else:
                chosen.append((lo, hi))
                need -= hi - lo
                used += 1
        del lows[:used]
        del highs[:used]
        self.count -= size
        return chosen

    def give(self, ranges: Iterable[tuple[int, int]]) -> None:
        """Return ``ranges`` (disjoint from the free ones), merging neighbours."""
        lows, highs = self.lows, self.highs
        for lo, hi in ranges:
            k = bisect_left(lows, lo)
            joins_left = k > 0 and highs[k - 1] == lo
            joins_right = k < len(lows) and lows[k] == hi
            if joins_left and joins_right:
                highs[k - 1] = highs[k]
                del lows[k]
                del highs[k]
            elif joins_left:
                highs[k - 1] = hi
            elif joins_right:
                lows[k] = lo
            else:
                lows.insert(k, lo)
                highs.insert(k, hi)
            self.count += hi - lo


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
    window: int | None = None,
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
        placements are also valid on an ``any`` machine without busy blocks
        (``ValueError`` with blocks: they are counts there, with no place on
        the strip); ``"any"`` on a contiguous machine is refused.
    producer
        Recorded in the schedule.
    window
        ``None``: the whole past stays open. Otherwise the lookback is
        bounded: once the capacity profile holds more than ``2 * window``
        breakpoints, it forgets all but the last ``window`` of them, and
        later jobs start at the first one kept or after it. Each job then
        scans at most about ``2 * window`` candidate starts, so the schedule
        takes ``O(n * window)`` steps instead of ``O(n^2)`` on a long
        packing (a strip of 50,000 items, a trace of 200,000 jobs);
        schedules whose profile never grows beyond ``2 * window``
        breakpoints are the unbounded ones.

    Returns
    -------
    Schedule
        Job ``j`` starts at the earliest ``t >= r_j`` at which it fits beside
        the busy blocks and the jobs placed before it (on ``any`` machines: at
        most ``m`` processors in use, found on a :class:`Profile`; on
        ``contiguous`` machines: a free range of ``q_j`` adjacent processors,
        the lowest such offset, found on a :class:`Strip`). This is the
        serial SGS of R. Kolisch, "Serial and parallel resource-constrained
        project scheduling methods revisited", EJOR 90, 1996, with releases,
        time-varying capacity and, for contiguity, the offset choice. On
        ``any`` machines the start vector is count-feasible by construction,
        so :func:`assign_processors` gives every job a processor set.
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
        strip = Strip(instance.processors, blocks)
        placements = {}
        for job in jobs:
            start, offset = strip.earliest(job.release, job.runtime, job.size)
            strip.add(start, start + job.runtime, offset, job.size)
            if window is not None and len(strip.count) > 2 * window:
                strip.forget_before(strip.count.times[-window])
            placements[job.id] = contiguous_placement(
                start, start + job.runtime, offset, job.size
            )
        return Schedule(placements, producer)
    profile = Profile.of_blocks(instance.processors, blocks)
    starts = {}
    for job in jobs:
        if job.runtime == 0:
            starts[job.id] = job.release  # occupies nothing
            continue
        found = profile.earliest_from(job.release, job.size, job.runtime)
        assert found is not None, "the last segment of the profile is all free"
        profile.add(found, found + job.runtime, -job.size)
        starts[job.id] = found
        if window is not None and len(profile) > 2 * window:
            profile.advance(profile.times[-window])
    return assign_processors(instance, starts, producer=producer)
