"""Structural predicates asked for by the producers that promise them:
shelf schedules, migrations, jobs in progress per processor."""

from __future__ import annotations

import bisect
from collections import defaultdict

from optsched.check.violation import Violation
from optsched.instance import Instance
from optsched.intervals import merged_runs
from optsched.schedule import Schedule


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


def migrations(schedule: Schedule) -> list[int]:
    """Ids of the jobs that change processors (sorted).

    A job migrates when its pieces (or the stretches between its moves) do
    not all use the same processor set; a preempted job that always
    resumes where it stopped does not. Jobs without processor sets never
    count.
    """
    out = []
    for jid, placement in schedule.placements.items():
        sets = {
            tuple(merged_runs(processors))
            for _, _, processors in placement.segments()
            if processors is not None
        }
        if len(sets) > 1:
            out.append(jid)
    return sorted(out)


def max_jobs_per_processor(instance: Instance, schedule: Schedule) -> int:
    """Most jobs ever in progress together on one processor.

    A job is *in progress* on processor ``p`` from the start of its first
    piece on ``p`` to the end of its last piece on ``p`` (half-open): a
    suspended job keeps its memory there. Without preemption this is 1
    for every valid schedule; PBI (Schwiegelshohn, Turek and Wolf 1995)
    promises 2, which is what lets it run on machines without per-processor
    virtual memory (Kalthoff 2002, seed 001 §1.2).

    Processors are handled as intervals: the boundaries of every processor
    run cut the processor axis into elementary ranges, and each range gets
    an event sweep over the residency intervals that cover it. ``0`` for a
    schedule without jobs.

    Raises
    ------
    ValueError
        A job of positive length without processor sets (a count-only
        schedule says nothing about which processors are shared).
    """
    del instance  # the residency only depends on the schedule
    spans: list[tuple[int, int, int, int]] = []  # (first, last, start, end)
    for jid, placement in schedule.placements.items():
        reach: dict[tuple[int, int], list[int]] = {}
        for start, end, processors in placement.segments():
            if end <= start:
                continue
            if processors is None:
                raise ValueError(f"job {jid} has no processor set")
            for run in merged_runs(processors):
                span = reach.setdefault(run, [start, end])
                span[0], span[1] = min(span[0], start), max(span[1], end)
        spans += [(a, b, s, e) for (a, b), (s, e) in reach.items()]
    cuts = sorted({a for a, _, _, _ in spans} | {b + 1 for _, b, _, _ in spans})
    covering: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for first, last, start, end in spans:
        low = bisect.bisect_left(cuts, first)
        for k in range(low, bisect.bisect_left(cuts, last + 1)):
            covering[k].append((start, end))
    return max((_max_overlap(intervals) for intervals in covering.values()), default=0)


def _max_overlap(intervals: list[tuple[int, int]]) -> int:
    """Largest number of half-open intervals sharing an instant."""
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    best = running = 0
    for _, delta in events:  # at equal times, ends (-1) come first
        running += delta
        best = max(best, running)
    return best


def check_promises(
    instance: Instance,
    schedule: Schedule,
    *,
    max_per_processor: int | None = None,
    no_migration: bool = False,
) -> list[Violation]:
    """Violations of structural promises a producer makes, on request.

    ``max_per_processor``: at most that many jobs in progress on any
    processor (:func:`max_jobs_per_processor`; PBI promises 2).
    ``no_migration``: every job keeps one processor set
    (:func:`migrations`). These are not rules of a valid schedule:
    :func:`check_schedule` does not ask them.
    """
    out = []
    if max_per_processor is not None:
        found = max_jobs_per_processor(instance, schedule)
        if found > max_per_processor:
            out.append(
                Violation(
                    "promise",
                    f"{found} jobs in progress share a processor, promised at "
                    f"most {max_per_processor}",
                )
            )
    if no_migration:
        out += [
            Violation(
                "promise",
                f"job {jid} changes processors (promised: no migration)",
                job=jid,
            )
            for jid in migrations(schedule)
        ]
    return out
