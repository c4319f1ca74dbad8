"""Independent schedule checker.

This module imports nothing from :mod:`optsched.models` or
:mod:`optsched.heuristics`: every schedule, whoever produced it, is judged
against the instance alone.

Rules checked (half-open intervals ``[start, end)``):

1. every job of the instance is placed exactly once, no unknown job is placed;
2. ``start >= release``;
3. ``end - start == runtime`` (``== estimate`` for jobs listed as killed,
   which is only allowed when ``estimate < runtime``);
4. at every instant the jobs running plus the busy blocks use at most ``m``
   processors;
5. explicit processor sets have exactly ``size`` distinct indices in
   ``[0, m)`` and never share a processor with an overlapping job, nor (on
   a contiguous machine) with an overlapping busy block;
6. on a contiguous machine every job has processors and they are consecutive.

Busy blocks on the two machine kinds: on a ``contiguous`` machine every
block has an offset and occupies its processor range (rules 4 and 5). On an
``any`` machine a block is a processor *count* with no offset
(:class:`~optsched.instance.Machine` refuses one): it enters rule 4 only.
Processor sets of jobs are optional there; when given they must be
exclusive among overlapping jobs (rule 5). Rule 4 is what makes an ``any``
schedule realisable: every start vector that passes it admits a
non-migrating assignment of processors to jobs and blocks together (greedy
colouring of an interval graph in order of start times, blocks being
intervals with a fixed start; :mod:`optsched.packing`). The job indices
given are not checked against the blocks, which have none: they need not
leave each block the same processors for its whole interval (processors
being interchangeable, a relabelling does), and
:func:`optsched.packing.assign_processors` builds an assignment that
includes the blocks.

A job that migrates (``Placement.moves``) is judged on each stretch: every
processor set it uses obeys rules 5 and 6, and move times increase inside
``(start, end)``.

:func:`is_shelf_schedule` is a separate predicate on the *structure* of a
schedule (jobs grouped in shelves by start time, shelves not overlapping);
the shelf-restricted models accept only schedules that pass both.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from optsched.instance import Instance, Job
from optsched.schedule import Placement, Schedule


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule, naming the job, the time and the processors involved."""

    kind: str
    message: str
    job: int | None = None
    time: int | None = None
    processors: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def check_schedule(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Return every violation of ``schedule`` on ``instance`` (empty if valid).

    Parameters
    ----------
    instance
        The problem.
    schedule
        The placements to judge.

    Returns
    -------
    list of Violation
        Empty when the schedule is feasible. Order: placement completeness
        (missing, unknown jobs), then per job in id order its times and
        processor set, then capacity overruns and shared processors in time
        order.
    """
    jobs = instance.jobs_by_id()
    violations = _check_placed_once(jobs, schedule)
    placed = {jid: p for jid, p in schedule.placements.items() if jid in jobs}
    for jid, placement in sorted(placed.items()):
        violations += _check_times(jobs[jid], placement, jid in schedule.killed)
        violations += _check_processor_set(instance, jobs[jid], placement)
    violations += _check_capacity(instance, jobs, placed)
    violations += _check_processor_overlaps(instance, placed)
    return violations


def _check_placed_once(jobs: dict[int, Job], schedule: Schedule) -> list[Violation]:
    # Placements are a mapping, so a job cannot appear twice; readers reject
    # duplicate rows before a Schedule exists.
    out = [
        Violation("missing", f"job {jid} is not placed", job=jid)
        for jid in sorted(jobs.keys() - schedule.placements.keys())
    ]
    out += [
        Violation("unknown", f"job {jid} is placed but not in the instance", job=jid)
        for jid in sorted(schedule.placements.keys() - jobs.keys())
    ]
    out += [
        Violation("unknown", f"job {jid} is listed as killed but unknown", job=jid)
        for jid in sorted(schedule.killed - jobs.keys())
    ]
    return out


def _check_times(job: Job, placement: Placement, killed: bool) -> list[Violation]:
    out: list[Violation] = []
    if placement.start < job.release:
        out.append(
            Violation(
                "early-start",
                f"job {job.id} starts at {placement.start} before its release "
                f"{job.release}",
                job=job.id,
                time=placement.start,
            )
        )
    expected = job.runtime
    if killed:
        if job.requested >= job.runtime:
            out.append(
                Violation(
                    "bad-kill",
                    f"job {job.id} is listed as killed but its estimate "
                    f"{job.requested} is not below its runtime {job.runtime}",
                    job=job.id,
                )
            )
        expected = min(job.runtime, job.requested)
    if placement.end - placement.start != expected:
        out.append(
            Violation(
                "duration",
                f"job {job.id} runs [{placement.start}, {placement.end}) = "
                f"{placement.end - placement.start} s, expected {expected} s",
                job=job.id,
                time=placement.start,
            )
        )
    return out


def _check_processor_set(
    instance: Instance, job: Job, placement: Placement
) -> list[Violation]:
    out = _check_moves(job, placement)
    out += _check_one_processor_set(
        instance, job, placement.start, placement.processors
    )
    for time, procs in placement.moves:
        out += _check_one_processor_set(instance, job, time, procs)
    return out


def _check_moves(job: Job, placement: Placement) -> list[Violation]:
    if not placement.moves:
        return []
    times = [time for time, _ in placement.moves]
    inside = all(placement.start < t < placement.end for t in times)
    if placement.processors is None or not inside or times != sorted(set(times)):
        return [
            Violation(
                "bad-move",
                f"job {job.id}: moves at {times} must be increasing, inside "
                f"({placement.start}, {placement.end}), from a known processor set",
                job=job.id,
                time=placement.start,
            )
        ]
    return []


def _check_one_processor_set(
    instance: Instance, job: Job, start: int, procs: tuple[int, ...] | None
) -> list[Violation]:
    m = instance.processors
    if procs is None:
        if instance.machine.allocation == "contiguous":
            return [
                Violation(
                    "no-processors",
                    f"job {job.id} has no processors on a contiguous machine",
                    job=job.id,
                    time=start,
                )
            ]
        return []
    out: list[Violation] = []
    if len(set(procs)) != len(procs) or len(procs) != job.size:
        out.append(
            Violation(
                "processor-count",
                f"job {job.id} has {len(set(procs))} distinct processors, "
                f"its size is {job.size}",
                job=job.id,
                time=start,
                processors=procs,
            )
        )
    outside = tuple(p for p in procs if not 0 <= p < m)
    if outside:
        out.append(
            Violation(
                "processor-range",
                f"job {job.id} uses processors {list(outside)} outside [0, {m})",
                job=job.id,
                time=start,
                processors=outside,
            )
        )
    if (
        instance.machine.allocation == "contiguous"
        and procs  # an empty set is already a processor-count violation
        and procs != tuple(range(procs[0], procs[0] + len(procs)))
    ):
        out.append(
            Violation(
                "not-contiguous",
                f"job {job.id} uses non-consecutive processors on a contiguous machine",
                job=job.id,
                time=start,
                processors=procs,
            )
        )
    return out


def _check_capacity(
    instance: Instance, jobs: dict[int, Job], placed: dict[int, Placement]
) -> list[Violation]:
    # Event sweep; at equal times releases of capacity (negative deltas) come
    # first because intervals are half-open.
    events: list[tuple[int, int, int | None]] = []
    for jid, p in placed.items():
        if p.end > p.start:
            events.append((p.start, jobs[jid].size, jid))
            events.append((p.end, -jobs[jid].size, jid))
    for block in instance.machine.unavailable:
        if block.end > block.start:
            events.append((block.start, block.size, None))
            events.append((block.end, -block.size, None))
    events.sort(key=lambda e: (e[0], e[1]))
    m = instance.processors
    used = 0
    out: list[Violation] = []
    i = 0
    while i < len(events):
        time = events[i][0]
        starting: list[int] = []
        grew = False
        while i < len(events) and events[i][0] == time:
            used += events[i][1]
            grew = grew or events[i][1] > 0
            if events[i][1] > 0 and events[i][2] is not None:
                starting.append(events[i][2])  # type: ignore[arg-type]
            i += 1
        # Report where an overrun begins or worsens; at a time where work
        # only ends, the overrun continues one already reported.
        if used > m and grew:
            who = starting[0] if starting else None
            out.append(
                Violation(
                    "capacity",
                    f"{used} processors in use at time {time}, machine has {m}"
                    + (f" (jobs starting: {sorted(starting)})" if starting else ""),
                    job=who,
                    time=time,
                )
            )
    return out


def _check_processor_overlaps(
    instance: Instance, placed: dict[int, Placement]
) -> list[Violation]:
    # Per processor, sort the intervals using it and compare neighbours.
    usage: dict[int, list[tuple[int, int, int | None]]] = defaultdict(list)
    for jid, p in placed.items():
        for start, end, processors in p.segments():
            if processors is not None and end > start:
                for proc in set(processors):
                    usage[proc].append((start, end, jid))
    for block in instance.machine.unavailable:
        if block.processors is not None and block.end > block.start:
            for proc in block.processors:
                usage[proc].append((block.start, block.end, None))
    clashes: dict[tuple[int | None, int | None], list[int]] = defaultdict(list)
    clash_time: dict[tuple[int | None, int | None], int] = {}
    for proc, intervals in usage.items():
        intervals.sort(key=lambda x: (x[0], x[1]))
        # Compare each interval with every one still running when it starts
        # (not only the latest-ending one), so that each clashing pair lists
        # all the processors it shares. The clash begins at the later start.
        active: list[tuple[int, int, int | None]] = []
        for start, end, owner in intervals:
            active = [a for a in active if a[1] > start]
            for _, _, other in active:
                key = (other, owner)
                clashes[key].append(proc)
                clash_time.setdefault(key, start)
            active.append((start, end, owner))
    out = []
    for (first, second), procs in sorted(
        clashes.items(), key=lambda kv: (clash_time[kv[0]], str(kv[0]))
    ):
        name = lambda o: "a busy block" if o is None else f"job {o}"  # noqa: E731
        out.append(
            Violation(
                "processor-overlap",
                f"{name(second)} and {name(first)} share processors "
                f"{sorted(procs)} at time {clash_time[(first, second)]}",
                job=second if second is not None else first,
                time=clash_time[(first, second)],
                processors=tuple(sorted(procs)),
            )
        )
    return out


def is_shelf_schedule(instance: Instance, schedule: Schedule) -> str | None:
    """Why ``schedule`` is not a shelf schedule, or ``None`` if it is one.

    A *shelf* is the set of jobs that start at one time ``s``; its end ``e``
    is the latest end of its jobs (its height ``e - s`` the longest of their
    run times). A schedule is a shelf schedule when, with its shelves sorted
    by start ``s_1 < s_2 < ...``, every shelf ends before the next one
    starts: ``e_i <= s_{i+1}``. Equivalently, no job starts while a job that
    started earlier is still running (``S_i < S_j < C_i`` for no pair). A
    job of run time 0 is a shelf of height 0 unless it shares a start with
    other jobs.

    Only the structure is judged (starts and ends of the instance's jobs);
    feasibility (releases, capacity, processors) is :func:`check_schedule`'s.

    Returns
    -------
    str or None
        One line naming the first offending pair (or a missing job), or
        ``None`` for a shelf schedule.
    """
    jobs = instance.jobs_by_id()
    missing = sorted(jobs.keys() - schedule.placements.keys())
    if missing:
        return f"job {missing[0]} is not placed"
    order = sorted(jobs, key=lambda jid: (schedule[jid].start, jid))
    # Sweep in start order, remembering the job that runs longest among those
    # that started before the current start.
    longest: int | None = None  # job id with the latest end among earlier shelves
    current: int | None = None  # start of the shelf being read
    shelf_longest: int | None = None
    for jid in order:
        placement = schedule[jid]
        if placement.start != current:
            if shelf_longest is not None and (
                longest is None or schedule[shelf_longest].end > schedule[longest].end
            ):
                longest = shelf_longest
            current, shelf_longest = placement.start, None
        if longest is not None and schedule[longest].end > placement.start:
            earlier = schedule[longest]
            return (
                f"job {jid} starts at {placement.start} while job {longest} "
                f"(started at {earlier.start}) runs until {earlier.end}: shelves "
                "must not overlap"
            )
        if shelf_longest is None or placement.end > schedule[shelf_longest].end:
            shelf_longest = jid
    return None
