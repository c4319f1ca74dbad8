"""Rule 10: run times and spans on machines with speeds or SMP nodes.

A moldable job is judged in the mode its processor count names (rule 8
read per mode): a mode ``(q, t)`` gives the run time ``t`` on ``q``
processors of speed 1, so its work at speed 1 is ``q * t`` on a machine
with speeds (a rigid job's ``runtime`` is its work there already), and on
SMP nodes ``q`` is what the span limit reads. The rule computes this on
its own, apart from :func:`optsched.topology.machines.mode_work`, which the
simulators and models use, so that a wrong reading in one is caught by the
other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

from optsched.check.violation import Violation
from optsched.instance import Instance, Job
from optsched.schedule import Placement, Schedule


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
            jobs.append(job.rigid().replace(runtime=placement.work, estimate=None))
            continue
        if not procs or min(procs) < 0 or max(procs) >= machine.processors:
            jobs.append(job)  # rule 5 names processors outside the machine
            continue
        jobs.append(_on_processors(instance, job, procs))
    return flat.with_jobs(jobs), out


def _on_processors(instance: Instance, job: Job, procs: Sequence[int]) -> Job:
    """``job`` as the rigid job it is on ``procs``: its run time (and
    estimate) there. A moldable job takes the mode of ``len(procs)``
    processors (module notes); one that has no such mode is left with its
    modes for rule 8 to name the fault."""
    work, estimated = job.runtime, job.requested
    if job.modes:
        mode = job.mode(len(procs))
        if mode is None:
            return job
        work, estimated = mode.runtime, mode.requested
        if instance.machine.speeds is not None:
            work, estimated = work * mode.processors, estimated * mode.processors
        job = job.rigid(mode)
    runtime = _own_run_time(instance, work, procs)
    estimate = _own_run_time(instance, estimated, procs)
    return job.replace(runtime=runtime, estimate=estimate)


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


def rule(
    instance: Instance, schedule: Schedule, rest: Callable[..., list[Violation]]
) -> list[Violation]:
    """Rule 10, then ``rest`` on the flat machine with each job's own run
    time on its processors."""
    resolved, out = _topology_resolved(instance, schedule)
    return out + rest(resolved, schedule)
