"""Rule 8: a moldable job runs in one of its modes."""

from __future__ import annotations

from collections.abc import Callable

from optsched.check.violation import Violation
from optsched.instance import Instance, Job
from optsched.schedule import Placement, Schedule


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


def rule(
    instance: Instance, schedule: Schedule, rest: Callable[..., list[Violation]]
) -> list[Violation]:
    """Rule 8, then ``rest`` with every moldable job made the rigid job of
    its placement's mode."""
    chosen, out = _modes_chosen(instance, schedule)
    return out + rest(chosen, schedule)
