"""Rules 1 to 7 and 9: the plain problem (placements, times, capacity,
processor sets, pieces, malleable progress), rule by rule and vectorised."""

from __future__ import annotations

import bisect
import heapq
from collections import defaultdict
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, cast

import numpy as np

from optsched.check.violation import Violation
from optsched.instance import Instance, Job
from optsched.intervals import (
    ProcessorSet,
    count,
    format_runs,
    is_consecutive,
    merge_runs,
    merged_runs,
)
from optsched.schedule import Placement, PlacementColumns, Schedule


def violations(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violation, rule by rule (:func:`check_schedule` without its fast path)."""
    jobs = instance.jobs_by_id()
    violations = _check_placed_once(jobs, schedule)
    placed: Mapping[int, Placement] = schedule.placements
    if isinstance(placed, PlacementColumns):
        placed = placed.as_intervals()  # judged on runs, never expanded
    if not placed.keys() <= jobs.keys():
        placed = {jid: p for jid, p in placed.items() if jid in jobs}
    # One placement at a time: a column-wise schedule builds each as it is
    # read, so the rules never hold every processor tuple at once.
    for jid in sorted(placed):
        placement = placed[jid]
        violations += _check_times(jobs[jid], placement, jid in schedule.killed)
        violations += _check_pieces(instance, jobs[jid], placement)
        violations += _check_processor_set(instance, jobs[jid], placement)
    violations += _check_capacity(instance, jobs, placed)
    violations += _check_processor_overlaps(instance, placed)
    return violations


EXPANDED_LIMIT = 4_000_000
"""Most (job, processor) pairs the vectorised check of a valid schedule
expands; wider schedules go through the interval sweeps directly."""


def plainly_valid(instance: Instance, schedule: Schedule) -> bool:
    """Does ``schedule`` break no rule? ``False`` also means "not decided here".

    The same rules as :func:`check_schedule`, decided at once with numpy
    (``O(n log n + sum_j q_j)``) for the common case of a valid schedule
    without migrations whose processor sets are tuples: ``True`` only when
    every rule holds, so that :func:`check_schedule` returns ``[]``; on
    ``False`` the rule-by-rule checks run and name the violations (or find
    none, e.g. for a :class:`~optsched.schedule.ProcessorSet`).

    * Rules 1 to 3: the placed ids equal the job ids; elementwise
      ``start >= release`` and ``end - start`` equal to the run time (to
      the estimate for a killed job, whose estimate must be below its run
      time).
    * Rule 4: the event sweep of :func:`_check_capacity`. Events sorted by
      time, releases of capacity first, so the running total only peaks at
      the end of a group of equal times; no overrun is reported iff the
      largest prefix sum is at most ``m``.
    * Rules 5 and 6: each processor set strictly increasing (so distinct),
      of ``size`` entries inside ``[0, m)``, consecutive on a contiguous
      machine. Overlaps: one row per (stretch, processor), sorted by
      processor then start; two stretches on one processor overlap iff some
      pair of neighbours does (sorted by start, an interval that overlaps a
      later one overlaps the next one too).
    """
    jobs = instance.jobs
    placements = schedule.placements
    if len(placements) != len(jobs) or not schedule.killed <= placements.keys():
        return False
    if instance.malleable:
        return False  # rule 9 is judged job by job
    if isinstance(placements, PlacementColumns):
        return _columns_valid(instance, schedule.killed, placements)
    contiguous = instance.machine.allocation == "contiguous"
    try:
        placed = [placements[j.id] for j in jobs]
    except KeyError:
        return False
    if any(p.moves or p.pieces for p in placed):
        return False
    procs = [p.processors for p in placed]
    given = [k for k, q in enumerate(procs) if q is not None]
    if (contiguous and len(given) < len(procs)) or any(
        type(procs[k]) is not tuple for k in given
    ):
        return False
    if not jobs:
        return False  # nothing to gain: the rules are immediate
    # Integers beyond int64 make an object array: the rules decide those.
    start = np.array([p.start for p in placed])
    end = np.array([p.end for p in placed])
    if start.dtype != np.int64 or end.dtype != np.int64:
        return False
    if not _times_valid(jobs, schedule.killed, start, end):
        return False
    size = np.array([j.size for j in jobs], dtype=np.int64)
    if not _capacity_valid(instance, size, start, end):
        return False
    tuples = [cast(tuple[int, ...], procs[k]) for k in given]
    return _processors_valid(instance, tuples, given, start, end)


def _columns_valid(
    instance: Instance, killed: frozenset[int], placements: PlacementColumns
) -> bool:
    """:func:`plainly_valid` on a column-wise schedule: the same rules on
    its arrays, no :class:`~optsched.schedule.Placement` built."""
    jobs = instance.jobs
    if placements.special or not jobs:
        return False  # moves are judged stretch by stretch
    ids, starts, ends, sets = placements.columns
    column_ids = np.frombuffer(ids, dtype=np.int64)
    job_ids = np.array([j.id for j in jobs], dtype=np.int64)
    by_column = np.argsort(column_ids, kind="stable")
    by_job = np.argsort(job_ids, kind="stable")
    if not np.array_equal(column_ids[by_column], job_ids[by_job]):
        return False
    column_of = np.empty(len(jobs), dtype=np.int64)  # job k's column
    column_of[by_job] = by_column
    start = np.frombuffer(starts, dtype=np.int64)[column_of]
    end = np.frombuffer(ends, dtype=np.int64)[column_of]
    if not _times_valid(jobs, killed, start, end):
        return False
    size = np.array([j.size for j in jobs], dtype=np.int64)
    if not _capacity_valid(instance, size, start, end):
        return False
    lengths = sets.sizes()  # column order, as the sets' indices below
    job_of = np.empty(len(jobs), dtype=np.int64)  # column c's job
    job_of[by_column] = by_job
    if not np.array_equal(lengths, size[job_of]):
        return False
    if int(lengths.sum()) > EXPANDED_LIMIT:
        return False
    flat, _ = sets.flat()
    return _sets_valid(instance, flat, lengths, start[job_of], end[job_of])


def _times_valid(
    jobs: Sequence[Job], killed: frozenset[int], start: np.ndarray, end: np.ndarray
) -> bool:
    """Rules 2 and 3 on every job at once (``int64`` times)."""
    # Far from the int64 limits, so that differences cannot overflow.
    limit = 2**62
    for times in (start, end):
        if not bool(np.all((times > -limit) & (times < limit))):
            return False
    if killed:
        expected = []
        for job in jobs:
            if job.id in killed:
                if job.requested >= job.runtime:
                    return False
                expected.append(job.requested)
            else:
                expected.append(job.runtime)
    else:
        expected = [job.runtime for job in jobs]
    # Releases and run times are at most MAX_INTEGER = 2**53 (instance rule).
    release = np.array([j.release for j in jobs], dtype=np.int64)
    if not bool(np.all(start >= release)):
        return False
    return bool(np.all(end - start == np.array(expected, dtype=np.int64)))


def _capacity_valid(
    instance: Instance, size: np.ndarray, start: np.ndarray, end: np.ndarray
) -> bool:
    """Rule 4: the peak of the event sweep is at most ``m``."""
    running = end > start
    blocks = [b for b in instance.machine.unavailable if b.end > b.start]
    times = np.concatenate(
        (
            start[running],
            end[running],
            [b.start for b in blocks],
            [b.end for b in blocks],
        )
    ).astype(np.int64)
    deltas = np.concatenate(
        (
            size[running],
            -size[running],
            [b.size for b in blocks],
            [-b.size for b in blocks],
        )
    ).astype(np.int64)
    if len(times) == 0:
        return True
    order = np.lexsort((deltas, times))  # by time, releases of capacity first
    return int(np.cumsum(deltas[order]).max()) <= instance.processors


def _processors_valid(
    instance: Instance,
    procs: list[tuple[int, ...]],
    given: list[int],
    start: np.ndarray,
    end: np.ndarray,
) -> bool:
    """Rules 5 and 6 for tuple processor sets, one row per (job, processor)."""
    lengths = np.array([len(q) for q in procs], dtype=np.int64)
    jobs = instance.jobs
    sizes = np.array([jobs[k].size for k in given], dtype=np.int64)
    if not np.array_equal(lengths, sizes):
        return False
    total = int(lengths.sum())
    if total > EXPANDED_LIMIT:
        return False
    flat = np.array([p for q in procs for p in q])
    if total == 0:
        flat = np.zeros(0, dtype=np.int64)
    index = np.array(given, dtype=np.int64)
    return _sets_valid(instance, flat, lengths, start[index], end[index])


def _sets_valid(
    instance: Instance,
    flat: np.ndarray,
    lengths: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
) -> bool:
    """Rules 5 and 6 on sets given as their indices one after the other
    (``flat``), the length of each, and the stretch ``[start, end)`` of each
    (lengths already equal to the jobs' sizes)."""
    m = instance.processors
    contiguous = instance.machine.allocation == "contiguous"
    total = len(flat)
    if flat.dtype != np.int64 or (total and (flat.min() < 0 or flat.max() >= m)):
        return False
    owner = np.repeat(np.arange(len(lengths)), lengths)
    same_job = owner[1:] == owner[:-1]
    if bool(np.any(same_job & (flat[1:] <= flat[:-1]))):
        return False  # not strictly increasing: repeated processors
    if contiguous and len(lengths):
        firsts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        filled = lengths > 0
        span = flat[firsts[filled] + lengths[filled] - 1] - flat[firsts[filled]]
        if bool(np.any(span != lengths[filled] - 1)):
            return False
    s, e = start[owner], end[owner]
    keep = e > s
    rows_p, rows_s, rows_e = flat[keep], s[keep], e[keep]
    blocks = [
        b
        for b in instance.machine.unavailable
        if b.offset is not None and b.end > b.start and b.size > 0
    ]
    if blocks:
        if total + sum(b.size for b in blocks) > EXPANDED_LIMIT:
            return False
        extra = [
            (p, b.start, b.end)
            for b in blocks
            for p in range(b.offset or 0, (b.offset or 0) + b.size)
        ]
        more = np.array(extra, dtype=np.int64).reshape(-1, 3)
        rows_p = np.concatenate((rows_p, more[:, 0]))
        rows_s = np.concatenate((rows_s, more[:, 1]))
        rows_e = np.concatenate((rows_e, more[:, 2]))
    order = np.lexsort((rows_s, rows_p))
    rows_p, rows_s, rows_e = rows_p[order], rows_s[order], rows_e[order]
    clash = (rows_p[1:] == rows_p[:-1]) & (rows_e[:-1] > rows_s[1:])
    return not bool(np.any(clash))


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
    if job.malleable:
        return _check_release(job, placement) + _check_progress(job, placement, killed)
    out = _check_release(job, placement)
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
    if placement.pieces:
        if placement.work != expected:
            out.append(
                Violation(
                    "duration",
                    f"job {job.id} works {placement.work} s in its "
                    f"{len(placement.pieces)} pieces (their lengths minus "
                    f"{placement.switch_cost} s of switches), expected {expected} s",
                    job=job.id,
                    time=placement.start,
                )
            )
    elif placement.end - placement.start != expected:
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


def _check_release(job: Job, placement: Placement) -> list[Violation]:
    if placement.start >= job.release:
        return []
    return [
        Violation(
            "early-start",
            f"job {job.id} starts at {placement.start} before its release "
            f"{job.release}",
            job=job.id,
            time=placement.start,
        )
    ]


def _check_progress(job: Job, placement: Placement, killed: bool) -> list[Violation]:
    """Rule 9: a malleable job's pieces complete it, in their last second."""
    if killed:
        return [
            Violation(
                "bad-kill",
                f"job {job.id} is malleable and listed as killed; malleable jobs "
                "run to completion",
                job=job.id,
            )
        ]
    done = Fraction(0)
    before_last_second = Fraction(0)
    segments = placement.segments()
    # Pieces pay switches; the stretches between moves do not.
    switches = [p.switch for p in placement.pieces] or [0] * len(segments)
    for (start, end, procs), switch in zip(segments, switches, strict=True):
        mode = job.mode(len(procs)) if procs is not None else None
        if mode is None:
            return []  # rule 9's processor counts are reported by the set check
        work = end - start - switch
        if done >= 1:
            if end > start:
                before_last_second = done  # held on after completing: a fault
            continue
        if mode.runtime == 0:
            # No work to do: done at once, so the stretch must have no work.
            done, before_last_second = Fraction(1), Fraction(int(work > 0))
        else:
            before_last_second = done + Fraction(max(work - 1, 0), mode.runtime)
            done += Fraction(work, mode.runtime)
    if done >= 1 and before_last_second < 1:
        return []
    if done < 1:
        why = f"does {float(done):.6g} of its work"
    else:
        why = f"completes before its last second ({float(done):.6g} of its work)"
    return [
        Violation(
            "duration",
            f"job {job.id} (malleable) {why} in [{placement.start}, "
            f"{placement.end}); it must end in the second it completes",
            job=job.id,
            time=placement.start,
        )
    ]


def _piece_size(job: Job, procs: Sequence[int] | None) -> int:
    """Processors a stretch of ``job`` holds: its own count for a malleable
    job (whose pieces may differ), else the job's size."""
    if job.malleable and procs is not None:
        return len(procs)
    return job.size


def _check_pieces(
    instance: Instance, job: Job, placement: Placement
) -> list[Violation]:
    """Rule 7: the pieces of a preempted job (see the module docstring)."""
    out: list[Violation] = []
    previous_end = None
    for k, piece in enumerate(placement.pieces):
        cost = instance.machine.resume_cost(_piece_size(job, piece.processors))
        where = f"job {job.id}, piece {k} [{piece.start}, {piece.end})"
        if previous_end is not None and piece.start < previous_end:
            out.append(
                Violation(
                    "piece-order",
                    f"{where} starts before the previous piece ends at {previous_end}",
                    job=job.id,
                    time=piece.start,
                )
            )
        wanted = 0 if k == 0 else cost
        if piece.switch != wanted:
            why = "a first piece pays none" if k == 0 else "the machine's resume cost"
            out.append(
                Violation(
                    "switch-cost",
                    f"{where} records a switch of {piece.switch} s, expected "
                    f"{wanted} s ({why})",
                    job=job.id,
                    time=piece.start,
                )
            )
        elif piece.work < 0:
            out.append(
                Violation(
                    "piece-order",
                    f"{where} is shorter than its switch of {piece.switch} s",
                    job=job.id,
                    time=piece.start,
                )
            )
        previous_end = piece.end
    return out


def _check_processor_set(
    instance: Instance, job: Job, placement: Placement
) -> list[Violation]:
    if placement.pieces:
        out: list[Violation] = []
        for piece in placement.pieces:
            out += _check_one_processor_set(
                instance, job, piece.start, piece.processors
            )
        return out
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
    instance: Instance, job: Job, start: int, procs: Sequence[int] | None
) -> list[Violation]:
    m = instance.processors
    if procs is None and job.malleable:
        return [
            Violation(
                "no-processors",
                f"job {job.id} is malleable: each of its pieces must name its "
                "processors",
                job=job.id,
                time=start,
            )
        ]
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
    # Judged on intervals: a range of 10**9 processors costs two integers.
    runs = merged_runs(procs)
    distinct = count(runs)
    out: list[Violation] = []
    if job.malleable and (distinct != len(procs) or job.mode(len(procs)) is None):
        counts = ", ".join(str(mode.processors) for mode in job.modes)
        out.append(
            Violation(
                "processor-count",
                f"job {job.id} (malleable) has {distinct} distinct processors at "
                f"{start}, not the count of one of its modes ({counts})",
                job=job.id,
                time=start,
                processors=procs,
            )
        )
    elif not job.malleable and (distinct != len(procs) or len(procs) != job.size):
        out.append(
            Violation(
                "processor-count",
                f"job {job.id} has {distinct} distinct processors, "
                f"its size is {job.size}",
                job=job.id,
                time=start,
                processors=procs,
            )
        )
    outside = _outside(runs, m)
    if outside:
        out.append(
            Violation(
                "processor-range",
                f"job {job.id} uses processors {_describe(outside)} outside [0, {m})",
                job=job.id,
                time=start,
                processors=_as_sequence(outside),
            )
        )
    if (
        instance.machine.allocation == "contiguous"
        and procs  # an empty set is already a processor-count violation
        and not is_consecutive(procs)
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


Runs = list[tuple[int, int]]
"""Disjoint sorted inclusive intervals ``(first, last)`` of processor indices."""

_LISTED = 8
"""Processor sets up to this size are listed one by one in messages."""


def _outside(runs: Runs, m: int) -> Runs:
    """The parts of ``runs`` outside ``[0, m)``."""
    below = [(first, min(last, -1)) for first, last in runs if first < 0]
    above = [(max(first, m), last) for first, last in runs if last >= m]
    return below + above


def _describe(runs: Runs) -> str:
    """``[3, 4]`` for a few processors, ``[0-2999999999] (3000000000 processors)``
    beyond :data:`_LISTED`, so that a message stays one short line."""
    total = count(runs)
    if total <= _LISTED:
        return str([p for first, last in runs for p in range(first, last + 1)])
    parts = format_runs(runs[:_LISTED]).replace(" ", ", ")
    more = ", ..." if len(runs) > _LISTED else ""
    return f"[{parts}{more}] ({total} processors)"


def _as_sequence(runs: Runs) -> Sequence[int]:
    """``runs`` as a sorted sequence, expanded only when small (or negative,
    which only an explicit, hence small, tuple can hold)."""
    if count(runs) <= 64 or any(first < 0 for first, _ in runs):
        return tuple(p for first, last in runs for p in range(first, last + 1))
    return ProcessorSet(runs)


def _check_capacity(
    instance: Instance, jobs: dict[int, Job], placed: Mapping[int, Placement]
) -> list[Violation]:
    # Event sweep; at equal times releases of capacity (negative deltas) come
    # first because intervals are half-open.
    events: list[tuple[int, int, int | None]] = []
    for jid, p in placed.items():
        # A malleable job counts its own processors in every stretch, a
        # one-piece placement included (its count need not be the request).
        whole = p.pieces or jobs[jid].malleable
        stretches = p.segments() if whole else ((p.start, p.end, None),)
        for start, end, procs in stretches:
            if end > start:
                size = _piece_size(jobs[jid], procs)
                events.append((start, size, jid))
                events.append((end, -size, jid))
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


Owner = int | None
"""A job id, or ``None`` for a busy block."""


def _check_processor_overlaps(
    instance: Instance, placed: Mapping[int, Placement]
) -> list[Violation]:
    # Sweep in time over the stretches that hold processors, keeping the
    # processor intervals in use (never one entry per processor). Each
    # stretch is compared with every one still running when it starts, so
    # that each clashing pair lists all the processors it shares; the clash
    # begins at the later start.
    items = _stretches(instance, placed)
    items.sort(key=lambda item: (item[0], item[1], item[2]))
    in_use = _Occupancy()
    running: list[tuple[int, int, Runs]] = []  # heap of (end, order, runs)
    clashes: dict[tuple[Owner, Owner], Runs] = defaultdict(list)
    clash_time: dict[tuple[Owner, Owner], int] = {}
    for start, end, order, owner, runs in items:
        while running and running[0][0] <= start:
            _, done, done_runs = heapq.heappop(running)
            for first, last in done_runs:
                in_use.remove(first, last, done)
        for first, last in runs:
            for other, lo, hi in in_use.add(first, last, order, owner):
                key = (other, owner)
                clashes[key].append((lo, hi))
                clash_time.setdefault(key, start)
        heapq.heappush(running, (end, order, runs))
    out = []
    for (first_owner, second), shared in sorted(
        clashes.items(), key=lambda kv: (clash_time[kv[0]], str(kv[0]))
    ):
        name = lambda o: "a busy block" if o is None else f"job {o}"  # noqa: E731
        procs = merge_runs(shared)
        out.append(
            Violation(
                "processor-overlap",
                f"{name(second)} and {name(first_owner)} share processors "
                f"{_describe(procs)} at time {clash_time[(first_owner, second)]}",
                job=second if second is not None else first_owner,
                time=clash_time[(first_owner, second)],
                processors=_as_sequence(procs),
            )
        )
    return out


def _stretches(
    instance: Instance, placed: Mapping[int, Placement]
) -> list[tuple[int, int, int, Owner, Runs]]:
    """``(start, end, order, owner, runs)`` of every stretch holding processors.

    ``order`` (jobs as placed, then blocks) breaks ties between equal
    intervals, as in the order the violations name the pair.
    """
    items: list[tuple[int, int, int, Owner, Runs]] = []
    for jid, p in placed.items():
        for start, end, processors in p.segments():
            if processors is not None and end > start:
                items.append((start, end, len(items), jid, merged_runs(processors)))
    for block in instance.machine.unavailable:
        if block.offset is not None and block.end > block.start:
            runs = [(block.offset, block.offset + block.size - 1)] if block.size else []
            items.append((block.start, block.end, len(items), None, runs))
    return items


class _Occupancy:
    """Processor intervals in use, as disjoint pieces each with its holders.

    A piece is ``[first, last, holders]``; holders are ``(order, owner)``
    pairs. A valid schedule keeps one holder per piece, so the pieces are as
    many as the intervals running; a clash splits pieces at the boundaries
    of the intervals involved, never per processor.
    """

    def __init__(self) -> None:
        self.firsts: list[int] = []
        self.pieces: list[list[Any]] = []

    def _split(self, i: int, at: int) -> None:
        """Cut piece ``i`` before index ``at`` (inside it)."""
        first, last, holders = self.pieces[i]
        self.pieces[i] = [first, at - 1, holders]
        self.pieces.insert(i + 1, [at, last, list(holders)])
        self.firsts.insert(i + 1, at)

    def _insert(self, i: int, first: int, last: int, holder: Any) -> None:
        self.pieces.insert(i, [first, last, [holder]])
        self.firsts.insert(i, first)

    def add(
        self, first: int, last: int, order: int, owner: Owner
    ) -> list[tuple[Owner, int, int]]:
        """Hold ``[first, last]``; the ``(owner, lo, hi)`` already holding parts."""
        holder = (order, owner)
        found: list[tuple[Owner, int, int]] = []
        i = bisect.bisect_right(self.firsts, first) - 1
        if i >= 0 and self.pieces[i][1] >= first:
            if self.pieces[i][0] < first:
                self._split(i, first)
                i += 1
        else:
            i += 1
        position = first
        while position <= last:
            if i < len(self.pieces) and self.pieces[i][0] <= last:
                if self.pieces[i][0] > position:
                    self._insert(i, position, self.pieces[i][0] - 1, holder)
                    i += 1
                if self.pieces[i][1] > last:
                    self._split(i, last + 1)
                piece = self.pieces[i]
                found += [(other, piece[0], piece[1]) for _, other in piece[2]]
                piece[2].append(holder)
                position = piece[1] + 1
                i += 1
            else:
                self._insert(i, position, last, holder)
                position = last + 1
        return found

    def remove(self, first: int, last: int, order: int) -> None:
        """Release ``[first, last]``, held by the stretch ``order``."""
        i = bisect.bisect_left(self.firsts, first)
        while i < len(self.pieces) and self.pieces[i][0] <= last:
            holders = self.pieces[i][2]
            holders[:] = [h for h in holders if h[0] != order]
            if holders:
                i += 1
            else:
                del self.pieces[i], self.firsts[i]
