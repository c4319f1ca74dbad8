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

Processor sets are judged as intervals (:func:`~optsched.schedule.merged_runs`),
never processor by processor: rule 5 sweeps the stretches in time order,
keeping the processor intervals in use, so a schedule naming ``0-999999999``
on a machine of 10**9 processors costs what its text holds.

A job that migrates (``Placement.moves``) is judged on each stretch: every
processor set it uses obeys rules 5 and 6, and move times increase inside
``(start, end)``.

7. A preempted job (``Placement.pieces``, :class:`~optsched.schedule.Piece`)
   runs only in its pieces: they come in time order without overlapping
   (``end_k <= start_{k+1}``), the first pays no switch and every later one
   exactly the machine's resume cost
   (:meth:`~optsched.instance.Machine.resume_cost`, 0 when preemption is
   free), no piece is shorter than its switch, and rule 3 reads "the work,
   the sum of ``end - start - switch`` over the pieces, equals the run
   time". Rule 2 applies to the first piece (every later one starts after
   it), rules 4 to 6 to every piece, which holds its processors for its
   whole length, switch included.

8. A moldable job (one with :attr:`~optsched.instance.Job.modes`) runs in
   one of its modes: its placement names explicit processors, whose count
   is the processor count of one of its modes, and rule 3 reads "``end -
   start`` equals that mode's run time" (its estimate for a killed job).
   The rules above then judge the job as the rigid job of that mode; a
   preempted or migrating one keeps that count in every stretch.
9. A malleable job may change its processor count between pieces: every
   piece names explicit processors whose count ``p_k`` is one of its
   modes', pays the resume cost of ``p_k`` processors, and does the
   fraction ``w_k / T(p_k)`` of the job (``w_k`` its work, ``T(p_k)`` the
   mode's run time). Rule 3 reads: the fractions sum to at least 1, and
   the job ends in the second in which it completes (the sum minus
   ``1 / T(p_last)`` is below 1). Malleable jobs are never killed.

10. On a machine with speeds or SMP nodes (not
    :attr:`~optsched.instance.Machine.flat`) a job runs in one piece, without
    moving, on explicit processors; on SMP nodes they touch at most
    ``tight + ceil(size / cpus)`` nodes; and rule 3 reads "``end - start``
    equals ``ceil(p_j / sum_{k in S} s_k * inflation(span))``" (the job's
    ``runtime`` being its work at speed 1 when the machine has speeds;
    :mod:`optsched.nodes`). Nothing is killed there. The other rules then
    judge the job as a rigid job of that run time on a flat machine.
    The run time is computed here in exact fractions, on purpose apart from
    :meth:`~optsched.instance.Machine.run_time`, which the simulators use.

11. On a machine with a site calendar (:mod:`optsched.calendar`), at every
    start ``t`` of a job (of each piece of a preempted one) its size is at
    most the calendar's largest job at ``t``, and the processors held at
    ``t`` by every job running then (``start <= t < end``) and every busy
    block active then are at most the batch capacity at ``t`` (a job of 0 s
    occupies nothing, as in rule 4: only its own size must fit); jobs of
    its ``anytime_queues`` are exempt and do not count (they run beside the
    batch partition; rule 4 still counts them). No two jobs of one
    of its ``sequential_queues`` run at the same time. Only starts are
    judged: a job may run on when the capacity drops (Mallmann 1997,
    §3.1.5). The rules above then judge the schedule
    on the machine without its calendar.

12. A job with a predecessor (SWF fields 17/18; the edges of
    :func:`optsched.chains.chain_graph`: predecessors outside the instance
    and cycles dropped) starts no earlier than its predecessor's end plus
    its think time (a negative or missing think time counts as 0).

13. Machine outages kill jobs, whose lost attempts the schedule records
    (:attr:`~optsched.schedule.Schedule.lost`): see
    :mod:`optsched.check_outages`.

14. NQS's per-user limit (:attr:`Calendar.user_limit
    <optsched.calendar.Calendar.user_limit>`): see :mod:`optsched.check_limits`.

Structural promises are separate predicates, asked for by the producers
that make them: :func:`max_jobs_per_processor` (PBI keeps at most two jobs
in progress on any processor) and :func:`migrations` (jobs whose pieces do
not all use the same processors).

:func:`is_shelf_schedule` is a separate predicate on the *structure* of a
schedule (jobs grouped in shelves by start time, shelves not overlapping);
the shelf-restricted models accept only schedules that pass both.
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

import numpy as np

from optsched.instance import Instance, Job
from optsched.schedule import Placement, ProcessorSet, Schedule, merged_runs


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule, naming the job, the time and the processors involved."""

    kind: str
    message: str
    job: int | None = None
    time: int | None = None
    processors: Sequence[int] = ()

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

    Notes
    -----
    A valid schedule is recognised first by a vectorised pass over all the
    rules (:func:`_plainly_valid`, ``O(n log n + sum_j q_j)``); only when it
    does not vouch for the schedule do the rule-by-rule checks below run to
    name the violations. Both judge the same rules.
    """
    calendar = instance.machine.calendar
    if calendar is not None and calendar.user_limit is not None:
        from optsched.check_limits import check_user_limit

        violations = check_user_limit(instance, schedule)
        free = dataclasses.replace(calendar, user_limit=None)
        bare = instance.replace(machine=instance.machine.replace(calendar=free))
        return violations + check_schedule(bare, schedule)
    if instance.machine.outages or schedule.lost:
        from optsched.check_outages import check_outages

        return check_outages(instance, schedule, check_schedule)
    if any(job.preceding_job is not None for job in instance.jobs):
        from optsched.chains import without_chains

        violations = _check_chains(instance, schedule)
        bare = instance.replace(jobs=without_chains(instance.jobs))
        return violations + check_schedule(bare, schedule)
    if instance.machine.calendar is not None:
        violations = _check_calendar(instance, schedule)
        bare = instance.replace(machine=instance.machine.replace(calendar=None))
        return violations + check_schedule(bare, schedule)
    if not instance.machine.flat:
        resolved, violations = _topology_resolved(instance, schedule)
        if violations:
            return violations + _violations(resolved, schedule)
        instance = resolved
    if instance.moldable:
        chosen, violations = _modes_chosen(instance, schedule)
        if violations:
            return violations + _violations(chosen, schedule)
        instance = chosen
    if _plainly_valid(instance, schedule):
        return []
    return _violations(instance, schedule)


def _check_calendar(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Rule 11: sizes and batch capacity at every start (module docstring)."""
    machine = instance.machine
    calendar = machine.calendar
    assert calendar is not None
    m = machine.processors
    # Stretches (start, end, size) of the jobs' pieces and the busy blocks.
    held: list[tuple[int, int, int]] = []
    starts: list[tuple[int, int, int, bool]] = []  # (time, job, size, zero length)
    by_queue: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for job in instance.jobs:
        placement = schedule.placements.get(job.id)
        if placement is None:
            continue  # rule 1 reports it
        for start, end, size in _stretches_of(job, placement):
            # Jobs of anytime queues run beside the batch partition.
            if job.queue not in calendar.anytime_queues:
                held.append((start, end, size))
                starts.append((start, job.id, size, end == start))
            if job.queue in calendar.sequential_queues:
                by_queue[job.queue].append((start, end, job.id))
    held += [(b.start, b.end, b.size) for b in machine.unavailable]
    begins = sorted((a, q) for a, b, q in held if b > a)
    ends = sorted((b, q) for a, b, q in held if b > a)
    begin_times = [t for t, _ in begins]
    end_times = [t for t, _ in ends]
    begin_sum = np.cumsum([0, *(q for _, q in begins)])
    end_sum = np.cumsum([0, *(q for _, q in ends)])
    out = _check_sequential(by_queue)
    for t, jid, size, zero in sorted(starts):
        largest = calendar.max_size_at(t, m)
        if size > largest:
            out.append(
                Violation(
                    "calendar",
                    f"job {jid} of {size} processors starts at {t}, when the "
                    f"site calendar lets jobs of at most {largest} start",
                    job=jid,
                    time=t,
                )
            )
        # Held at t: stretches begun by t and not ended by t. A job of 0 s
        # occupies nothing (rule 4 agrees): it needs only its own size.
        begun = int(begin_sum[bisect.bisect_right(begin_times, t)])
        ended = int(end_sum[bisect.bisect_right(end_times, t)])
        total = size if zero else begun - ended
        capacity = calendar.capacity_at(t, m)
        if total > capacity:
            out.append(
                Violation(
                    "calendar",
                    f"job {jid} starts at {t} with {total} processors held, "
                    f"above the site calendar's batch capacity {capacity}",
                    job=jid,
                    time=t,
                )
            )
    return out


def _check_sequential(
    by_queue: dict[int, list[tuple[int, int, int]]],
) -> list[Violation]:
    """Rule 11, sequential queues: no two jobs of one overlap in time."""
    out: list[Violation] = []
    for queue, runs in sorted(by_queue.items()):
        runs.sort()
        last_end, last_job = None, None  # the job of the queue ending last
        for start, end, jid in runs:
            if last_end is not None and start < last_end:
                out.append(
                    Violation(
                        "calendar",
                        f"job {jid} of sequential queue {queue} starts at {start} "
                        f"while job {last_job} of that queue runs until {last_end}",
                        job=jid,
                        time=start,
                    )
                )
            if last_end is None or end > last_end:
                last_end, last_job = end, jid
    return out


def _check_chains(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Rule 12: a successor starts no earlier than its predecessor's end
    plus the think time (the edges of :func:`optsched.chains.chain_graph`,
    the graph the simulator follows)."""
    from optsched.chains import chain_graph

    graph = chain_graph(instance.jobs).graph
    out: list[Violation] = []
    for before, after, data in sorted(graph.edges(data=True)):
        first = schedule.placements.get(before)
        then = schedule.placements.get(after)
        if first is None or then is None:
            continue  # rule 1 reports it
        ready = first.end + data["think_time"]
        if then.start < ready:
            out.append(
                Violation(
                    "chain",
                    f"job {after} starts at {then.start}, before its predecessor "
                    f"{before} ends at {first.end} plus think time "
                    f"{data['think_time']}",
                    job=after,
                    time=then.start,
                )
            )
    return out


def _stretches_of(job: Job, placement: Placement) -> list[tuple[int, int, int]]:
    """``(start, end, processors)`` of each piece (one for an unpreempted job)."""
    if not placement.pieces:
        return [(placement.start, placement.end, job.size)]
    return [
        (p.start, p.end, job.size if p.processors is None else len(p.processors))
        for p in placement.pieces
    ]


def _modes_chosen(
    instance: Instance, schedule: Schedule
) -> tuple[Instance, list[Violation]]:
    """Rule 8: each moldable job fixed to the mode its placement names.

    Returns the instance with every moldable (not malleable) job made the
    rigid job of its placement's mode, and the violations of rule 8. A job
    whose placement names no valid mode becomes the rigid job of what it
    was given (its processor count and duration, when they make a job), so
    that the later rules do not repeat the same fault.
    """
    jobs: list[Job] = []
    out: list[Violation] = []
    for job in instance.jobs:
        placement = schedule.placements.get(job.id)
        if not job.modes or job.malleable or placement is None:
            jobs.append(job)
            continue
        counts = {len(q) for _, _, q in placement.segments() if q is not None}
        named = all(q is not None for _, _, q in placement.segments())
        if not named or len(counts) != 1:
            what = "no processors" if not named else "stretches of different counts"
            out.append(
                Violation(
                    "mode",
                    f"job {job.id} is moldable and has {what}: every stretch of "
                    "its placement must name the processors of one of its modes",
                    job=job.id,
                    time=placement.start,
                )
            )
            jobs.append(job)
            continue
        procs = placement.processors
        assert procs is not None
        mode = job.mode(len(procs))
        if mode is None:
            listed = ", ".join(str(m.processors) for m in job.modes)
            out.append(
                Violation(
                    "mode",
                    f"job {job.id} runs on {len(procs)} processors, not the count "
                    f"of one of its modes ({listed})",
                    job=job.id,
                    time=placement.start,
                    processors=procs,
                )
            )
            jobs.append(_as_given(job, placement, instance.processors))
            continue
        jobs.append(job.rigid(mode))
    return instance.with_jobs(jobs), out


def _topology_resolved(
    instance: Instance, schedule: Schedule
) -> tuple[Instance, list[Violation]]:
    """Rule 10: each job's run time on its processors, speeds and span.

    Returns the instance on the flat machine with every job's ``runtime``
    (and ``estimate``) replaced by its run time on the processors its
    placement names, and the violations of rule 10. A job whose placement
    names no usable processors keeps its ``runtime``, so that later rules
    do not repeat the fault.
    """
    machine = instance.machine
    flat = instance.replace(machine=machine.replace(speeds=None, nodes=None))
    jobs: list[Job] = []
    out: list[Violation] = [
        Violation(
            "killed",
            f"job {jid} is listed as killed on a machine with speeds or nodes",
            job=jid,
        )
        for jid in sorted(schedule.killed)
    ]
    for job in instance.jobs:
        placement = schedule.placements.get(job.id)
        if placement is None:
            jobs.append(job)
            continue
        procs = placement.processors
        problem = _topology_problem(instance, job, placement)
        if problem is not None:
            out.append(problem)
        if procs is None or (problem is not None and problem.kind == "topology"):
            # Judged on what it was given: no second message on its length.
            jobs.append(job.replace(runtime=placement.work, estimate=None))
            continue
        if not procs or min(procs) < 0 or max(procs) >= machine.processors:
            jobs.append(job)  # rule 5 names processors outside the machine
            continue
        runtime = _own_run_time(instance, job.runtime, procs)
        estimate = _own_run_time(instance, job.requested, procs)
        jobs.append(job.replace(runtime=runtime, estimate=estimate))
    return flat.with_jobs(jobs), out


def _topology_problem(
    instance: Instance, job: Job, placement: Placement
) -> Violation | None:
    # One piece, no moves, explicit processors that exist, and the span.
    machine = instance.machine
    procs = placement.processors
    if len(placement.pieces) > 1 or placement.moves or procs is None:
        return Violation(
            "topology",
            f"job {job.id} must run in one piece on named processors on a "
            "machine with speeds or SMP nodes",
            job=job.id,
            time=placement.start,
        )
    if not procs or min(procs) < 0 or max(procs) >= machine.processors:
        return None  # rule 5 names processors outside the machine
    nodes = machine.nodes
    if nodes is not None:
        span = len({p // nodes.cpus for p in procs})
        limit = (
            nodes.count
            if nodes.tight is None
            else min(nodes.count, nodes.tight + -(-len(procs) // nodes.cpus))
        )
        if span > limit:
            return Violation(
                "span",
                f"job {job.id} spans {span} nodes, more than its limit {limit} "
                f"(tight {nodes.tight} + ceil({len(procs)}/{nodes.cpus}))",
                job=job.id,
                time=placement.start,
                processors=tuple(procs),
            )
    return None


def _own_run_time(instance: Instance, work: int, procs: Sequence[int]) -> int:
    # ceil(work / sum of speeds * (1 + base * level * paid span)), exactly.
    machine = instance.machine
    time = Fraction(work)
    if machine.speeds is not None:
        time /= sum(Fraction(str(machine.speeds[p])) for p in set(procs))
    nodes = machine.nodes
    if nodes is not None and nodes.level:
        span = len({p // nodes.cpus for p in procs})
        if nodes.cost == "excess":
            span -= -(-len(procs) // nodes.cpus)
        time *= 1 + Fraction(str(nodes.base)) * nodes.level * span
    return -(-time.numerator // time.denominator)


def _as_given(job: Job, placement: Placement, m: int) -> Job:
    """The rigid job a placement describes, when it is one that fits the
    machine's ``m`` processors; else the job's requested mode."""
    assert placement.processors is not None
    size = len(placement.processors)
    if not 1 <= size <= m:
        return job.rigid()  # the processor checks name the fault
    try:
        return job.rigid().replace(
            size=size, runtime=max(placement.end - placement.start, 0), estimate=None
        )
    except ValueError:
        return job.rigid()


def _violations(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violation, rule by rule (:func:`check_schedule` without its fast path)."""
    jobs = instance.jobs_by_id()
    violations = _check_placed_once(jobs, schedule)
    placed = {jid: p for jid, p in schedule.placements.items() if jid in jobs}
    for jid, placement in sorted(placed.items()):
        violations += _check_times(jobs[jid], placement, jid in schedule.killed)
        violations += _check_pieces(instance, jobs[jid], placement)
        violations += _check_processor_set(instance, jobs[jid], placement)
    violations += _check_capacity(instance, jobs, placed)
    violations += _check_processor_overlaps(instance, placed)
    return violations


EXPANDED_LIMIT = 4_000_000
"""Most (job, processor) pairs the vectorised check of a valid schedule
expands; wider schedules go through the interval sweeps directly."""


def _plainly_valid(instance: Instance, schedule: Schedule) -> bool:
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
    m = instance.processors
    contiguous = instance.machine.allocation == "contiguous"
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
    if flat.dtype != np.int64 or (total and (flat.min() < 0 or flat.max() >= m)):
        return False
    owner = np.repeat(np.arange(len(procs)), lengths)
    same_job = owner[1:] == owner[:-1]
    if bool(np.any(same_job & (flat[1:] <= flat[:-1]))):
        return False  # not strictly increasing: repeated processors
    if contiguous and len(procs):
        firsts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        filled = lengths > 0
        span = flat[firsts[filled] + lengths[filled] - 1] - flat[firsts[filled]]
        if bool(np.any(span != lengths[filled] - 1)):
            return False
    index = np.array(given, dtype=np.int64)
    s, e = start[index][owner], end[index][owner]
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
    distinct = _count(runs)
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
        and (len(runs) != 1 or distinct != len(procs))
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


def _count(runs: Runs) -> int:
    return sum(last - first + 1 for first, last in runs)


def _outside(runs: Runs, m: int) -> Runs:
    """The parts of ``runs`` outside ``[0, m)``."""
    below = [(first, min(last, -1)) for first, last in runs if first < 0]
    above = [(max(first, m), last) for first, last in runs if last >= m]
    return below + above


def _describe(runs: Runs) -> str:
    """``[3, 4]`` for a few processors, ``[0-2999999999] (3000000000 processors)``
    beyond :data:`_LISTED`, so that a message stays one short line."""
    count = _count(runs)
    if count <= _LISTED:
        return str([p for first, last in runs for p in range(first, last + 1)])
    parts = [str(a) if a == b else f"{a}-{b}" for a, b in runs[:_LISTED]]
    more = ", ..." if len(runs) > _LISTED else ""
    return f"[{', '.join(parts)}{more}] ({count} processors)"


def _as_sequence(runs: Runs) -> Sequence[int]:
    """``runs`` as a sorted sequence, expanded only when small (or negative,
    which only an explicit, hence small, tuple can hold)."""
    if _count(runs) <= 64 or any(first < 0 for first, _ in runs):
        return tuple(p for first, last in runs for p in range(first, last + 1))
    return ProcessorSet(runs)


def _check_capacity(
    instance: Instance, jobs: dict[int, Job], placed: dict[int, Placement]
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
    instance: Instance, placed: dict[int, Placement]
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
        procs = _union(shared)
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
    instance: Instance, placed: dict[int, Placement]
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


def _union(runs: Runs) -> Runs:
    out: Runs = []
    for first, last in sorted(runs):
        if out and first <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out


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
