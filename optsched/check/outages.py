"""Rule 13 of the checker: machine outages and the attempts they killed.

A machine's outages (:attr:`optsched.instance.Machine.outages`) take
processors down during ``[start, end)`` without warning; the jobs running on
the lost processors are killed and run again from scratch. A schedule
records each killed run beside the job's complete one
(:attr:`optsched.schedule.Schedule.lost`). This module judges them; like
:mod:`optsched.check`, it imports nothing from the producers.

13. Every lost attempt belongs to a job of the instance, starts before it
    ends, ends exactly when an outage starts, and is shorter than the job's
    full run (``runtime``, or ``estimate`` for a job listed as killed at its
    estimate: a run that long would have completed). A job's attempts come
    in time order, without overlapping, all before its complete run. A kill
    is necessary: on an ``any`` machine (outages are processor counts), at
    an instant ``t`` at which attempts end, the processors left by the busy
    blocks, the outages already active, the runs going on across ``t``
    (start before ``t``, end after it) and the killed attempts are fewer
    than those the outages starting at ``t`` take; on a contiguous machine
    each killed attempt held a processor of one of those outages at ``t``.

    Then every other rule applies with the outages as busy blocks
    (:meth:`~optsched.instance.Machine.offline`) and each attempt as a job of
    its own (same size, queue, release and predecessor, run time its length):
    attempts hold processors (rules 4 and 5), their starts obey the site
    calendar (rule 11) and the chains (rule 12), like any start.

Mallmann (1997, §3.1.6, §3.2.6) treats jobs running at a downtime as never
started and requeues them; their node time counts as unused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from optsched.check.violation import Violation
from optsched.instance import Instance, Job
from optsched.intervals import disjoint
from optsched.schedule import Placement, Schedule


def rule(
    instance: Instance,
    schedule: Schedule,
    check: Callable[[Instance, Schedule], list[Violation]],
) -> list[Violation]:
    """Rule 13, then ``check`` (the checker's walk) on the offline view,
    each lost attempt a job of its own."""
    out: list[Violation] = [
        Violation("outage", message, job=job, time=time)
        for job, time, message in _attempt_problems(instance, schedule)
    ]
    expanded, pseudo = _with_attempts_as_jobs(instance, schedule)

    def named(match: re.Match[str]) -> str:
        number = int(match.group(1))
        if number not in pseudo:
            return match.group(0)
        jid, k = pseudo[number]
        return f"job {jid} (lost attempt {k + 1})"

    for v in check(*expanded):
        job = pseudo[v.job][0] if v.job in pseudo else v.job
        text = re.sub(r"\bjob (\d+)\b", named, v.message)
        out.append(Violation(v.kind, text, job, v.time, v.processors))
    return out


def _with_attempts_as_jobs(
    instance: Instance, schedule: Schedule
) -> tuple[tuple[Instance, Schedule], dict[int, tuple[int, int]]]:
    """The instance on the offline machine with one job per lost attempt,
    and the schedule placing them; ``{pseudo id: (job id, attempt)}``."""
    jobs = {job.id: job for job in instance.jobs}
    next_id = max(jobs, default=0) + 1
    pseudo: dict[int, tuple[int, int]] = {}
    extra_jobs: list[Job] = []
    placements = dict(schedule.placements)
    for jid, attempts in sorted(schedule.lost.items()):
        job = jobs.get(jid)
        if job is None:
            continue  # reported by _attempt_problems
        for k, attempt in enumerate(attempts):
            # A rigid job's attempt holds its size (rule 5 then flags other
            # processor counts); a moldable one's, the mode it ran in.
            size = (
                len(attempt.processors)
                if job.moldable and attempt.processors
                else job.size
            )
            extra_jobs.append(
                job.replace(
                    id=next_id,
                    size=size,
                    runtime=max(attempt.end - attempt.start, 0),
                    estimate=None,
                    modes=(),
                    malleable=False,
                )
            )
            placements[next_id] = attempt
            pseudo[next_id] = (jid, k)
            next_id += 1
    offline = instance.replace(
        machine=instance.machine.offline(), jobs=(*instance.jobs, *extra_jobs)
    )
    plain = Schedule(placements, schedule.producer, schedule.killed)
    return (offline, plain), pseudo


def _attempt_problems(
    instance: Instance, schedule: Schedule
) -> list[tuple[int | None, int | None, str]]:
    """``(job, time, message)`` for every broken part of rule 13."""
    jobs = {job.id: job for job in instance.jobs}
    outage_starts = {o.start for o in instance.machine.outages if o.end > o.start}
    out: list[tuple[int | None, int | None, str]] = []
    for jid, attempts in sorted(schedule.lost.items()):
        job = jobs.get(jid)
        if job is None:
            out.append((jid, None, f"lost attempts of job {jid}, not in the instance"))
            continue
        out += _one_job_problems(job, attempts, schedule, outage_starts)
    out += _unneeded_kills(instance, schedule)
    return out


def _one_job_problems(
    job: Job,
    attempts: Sequence[Placement],
    schedule: Schedule,
    outage_starts: set[int],
) -> list[tuple[int | None, int | None, str]]:
    out: list[tuple[int | None, int | None, str]] = []
    previous_end: int | None = None
    for k, run in enumerate(attempts, start=1):
        full = _full_run(job, run, job.id in schedule.killed)
        name = f"lost attempt {k} of job {job.id} [{run.start}, {run.end})"
        if run.end <= run.start:
            out.append((job.id, run.start, f"{name} is empty"))
        if run.end not in outage_starts:
            out.append((job.id, run.end, f"{name} ends when no outage starts"))
        if run.end - run.start >= full:
            out.append(
                (job.id, run.end, f"{name} lasts its full run {full}: it completed")
            )
        if previous_end is not None and run.start < previous_end:
            out.append((job.id, run.start, f"{name} starts before the previous ends"))
        previous_end = run.end
    final = schedule.placements.get(job.id)
    if final is not None and previous_end is not None and final.start < previous_end:
        out.append(
            (
                job.id,
                final.start,
                f"job {job.id} runs again at {final.start}, before its lost "
                f"attempt ends at {previous_end}",
            )
        )
    return out


def _full_run(job: Job, run: Placement, killed: bool) -> int:
    """How long ``run`` of ``job`` lasts if nothing stops it: its run time
    (its estimate for a job killed at it), in the mode its processors name
    for a moldable job (rule 8: a restarted job may run in another mode)."""
    mode = job.mode(len(run.processors)) if job.modes and run.processors else None
    if mode is None:
        return job.requested if killed else job.runtime
    return mode.requested if killed else mode.runtime


def _unneeded_kills(
    instance: Instance, schedule: Schedule
) -> list[tuple[int | None, int | None, str]]:
    """Kills at instants when the outages found enough processors idle, or
    (contiguous machines) of attempts off every outage's processors."""
    machine = instance.machine
    kills: dict[int, list[tuple[int, Placement]]] = {}
    for jid, attempts in schedule.lost.items():
        for run in attempts:
            kills.setdefault(run.end, []).append((jid, run))
    sizes = {job.id: job.size for job in instance.jobs}
    runs = [(p, sizes.get(j, 0)) for j, p in schedule.placements.items()]
    runs += [
        (run, sizes.get(j, 0))
        for j, attempts in schedule.lost.items()
        for run in attempts
    ]
    out: list[tuple[int | None, int | None, str]] = []
    for t, killed in sorted(kills.items()):
        new = [o for o in machine.outages if o.start == t and o.end > t]
        if not new:
            continue  # reported as "ends when no outage starts"
        down = sum(b.size for b in machine.unavailable if b.start <= t < b.end)
        down += sum(o.size for o in machine.outages if o.start < t < o.end)
        going_on = sum(_size_at(p, t, q) for p, q in runs if p.start < t < p.end)
        victims = sum(_size_at(run, t, sizes.get(j, 0)) for j, run in killed)
        idle = machine.processors - down - going_on - victims
        if machine.allocation != "contiguous" and idle >= sum(o.size for o in new):
            out.append(
                (
                    killed[0][0],
                    t,
                    f"jobs {', '.join(str(j) for j, _ in killed)} are killed at {t}, "
                    f"but {idle} idle processors hold the outages starting then",
                )
            )
        if machine.allocation != "contiguous":
            continue
        for jid, run in killed:
            held = _processors_at(run, t)
            if held and all(disjoint(held, o.processors or ()) for o in new):
                out.append(
                    (
                        jid,
                        t,
                        f"job {jid} is killed at {t} on processors no outage "
                        "starting then takes",
                    )
                )
    return out


def _size_at(run: Placement, t: int, size: int) -> int:
    """Processors ``run`` (which started before ``t`` and ends at or after
    it) holds just before ``t``: ``size`` unless it names its processors; 0
    when ``t`` is in or at the edge of a gap between pieces (a move keeps
    the count)."""
    if run.pieces:
        inside = [p for p in run.pieces if p.start < t <= p.end]
        if not inside:
            return 0
        procs = inside[0].processors
        return len(procs) if procs else size
    return len(run.processors) if run.processors else size


def _processors_at(run: Placement, t: int) -> Sequence[int]:
    """The processors ``run`` holds just before ``t`` (its last stretch
    starting before ``t``)."""
    held: Sequence[int] = ()
    for start, _, procs in run.segments():
        if start < t:
            held = procs or ()
    return held
