"""Moldable schedules: the mode each job runs in.

A moldable job (:attr:`~optsched.instance.Job.modes`) runs in the mode
whose processor count its placement names (checker rule 8); a malleable one
may change count between pieces (rule 9). Metrics, writers and plots that
need a job's processors or run time ask here rather than reading the job's
requested mode.
"""

from __future__ import annotations

from optsched.instance import Instance, Job, Mode
from optsched.schedule import Placement, Schedule


def chosen_mode(job: Job, placement: Placement) -> Mode | None:
    """The mode ``placement`` runs ``job`` in: the mode of its processor
    count (the requested one when it names no processors); ``None`` for a
    malleable job that changes count or a count that is no mode."""
    counts = {len(procs) for _, _, procs in placement.segments() if procs is not None}
    if not counts:
        return job.mode(job.size)
    if len(counts) > 1:
        return None
    return job.mode(counts.pop())


def chosen_modes(instance: Instance, schedule: Schedule) -> dict[int, Mode]:
    """``{job id: mode}`` for every placed moldable job of one mode."""
    out: dict[int, Mode] = {}
    for job in instance.jobs:
        placement = schedule.placements.get(job.id)
        if job.modes and placement is not None:
            mode = chosen_mode(job, placement)
            if mode is not None:
                out[job.id] = mode
    return out


def resolved(instance: Instance, schedule: Schedule) -> Instance:
    """``instance`` with every moldable job fixed to the mode it runs in.

    Rigid jobs, and malleable jobs that change count, stay as they are;
    ``instance`` itself when no job has modes.
    """
    if not instance.moldable:
        return instance
    modes = chosen_modes(instance, schedule)
    return instance.with_jobs(
        job.rigid(modes[job.id]) if job.id in modes else job for job in instance.jobs
    )


def processor_work(job: Job, placement: Placement) -> int:
    """Processor-seconds of work: ``sum_k q_k w_k`` over the stretches of
    the placement (``q_k`` its processors, the job's size when not named;
    ``w_k`` its length minus the context switch it pays)."""
    if not job.modes:
        return job.size * placement.work
    switches = {piece.start: piece.switch for piece in placement.pieces}
    return sum(
        (job.size if procs is None else len(procs))
        * (end - start - switches.get(start, 0))
        for start, end, procs in placement.segments()
    )
