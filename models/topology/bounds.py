"""Lower bounds on machines with node speeds or SMP nodes.

Every closed-form bound of :mod:`optsched.models.rigid.bounds` applies to the
*flat relaxation* (:func:`optsched.topology.machines.flat_relaxation`): each job at
its shortest possible run time (its work on the fastest processors of its
size, at the fewest nodes' communication cost), on identical processors
without a span limit. A schedule of the original, each job cut to that run
time at the same start, is a schedule of the relaxation, and every
objective only falls as completions move earlier; so the relaxation's
optimum, and every bound on it, is at most the original's. On a machine
with speeds, the speed-weighted area bound adds what the relaxation
forgets, that fast processors are few (:func:`staged_speed_area_bound`),
and for weighted completion times the mean-busy-time bound on the squashed
machine (:func:`speed_squashed_bound`).

Moldable jobs (a mode ``(q, t)``: ``q`` processors, ``t`` seconds on
speed-1 processors, work ``q t`` with speeds): the flat relaxation keeps
every mode at its shortest run time (the bounds of moldable jobs then
apply to it), and the two bounds here give each job its least work over
its modes and its shortest run time over them, each job at its least-work
mode on the fastest processors: whatever mode a schedule gives a job, it
uses at least that much, so every step of the proofs below still holds.
"""

from __future__ import annotations

import dataclasses
import math
import time
from fractions import Fraction
from typing import Any

from optsched.instance import Instance, Job, Machine
from optsched.models.rigid.bounds import lower_bounds_within
from optsched.nodes import ceiling
from optsched.objective import Objective
from optsched.result import Bound
from optsched.topology.machines import flat_relaxation, mode_work

RELAXED = " (shortest run times)"
"""Suffix of the method name of a bound computed on the flat relaxation."""


def _ways(machine: Machine, job: Job) -> list[tuple[int, int]]:
    """``(processors, work)`` of every way ``job`` may run: its modes (their
    work through :func:`~optsched.topology.machines.mode_work`), or its
    size and ``runtime`` for a rigid job."""
    if not job.modes:
        return [(job.size, job.runtime)]
    return [(m.processors, mode_work(machine, m)[0]) for m in job.modes]


def _capacity(instance: Instance) -> tuple[dict[int, Fraction], Fraction]:
    """Per job the capacity-seconds it uses at least, and the machine's
    capacity per second: ``p_j`` and ``sum_k s_k`` with speeds; ``\\pi_j``
    times its shortest run time and ``m`` without.

    A moldable job counts its least over its modes: whichever mode it runs
    in, it uses at least that mode's capacity-seconds (the proofs below
    read "the job uses at least ``p_j``"), so the least of them is a valid
    ``p_j``: each job at its least-work mode, on the fastest processors."""
    machine = instance.machine
    speeds = machine.exact_speeds()
    if speeds is not None:
        used = {j.id: min(w for _, w in _ways(machine, j)) for j in instance.jobs}
        return {k: Fraction(v) for k, v in used.items()}, sum(speeds, Fraction(0))
    return (
        {
            j.id: Fraction(
                min(q * machine.shortest_run_time(w, q) for q, w in _ways(machine, j))
            )
            for j in instance.jobs
        },
        Fraction(machine.processors),
    )


def _shortest(machine: Machine, job: Job) -> int:
    """The job's shortest run time over its modes and processor sets."""
    return min(machine.shortest_run_time(w, q) for q, w in _ways(machine, job))


def staged_speed_area_bound(instance: Instance) -> Bound:
    r"""Makespan bound from the work released from each release date on.

    .. math:: C_{max} \ge \max_\rho \Big(\rho + \Big\lceil
              \frac{\sum_{j: r_j \ge \rho} p_j}{\sum_k s_k} \Big\rceil\Big)

    over the release dates ``\rho``. Proof: job ``j`` on set ``S_j`` runs
    ``d_j >= p_j / sum_{k in S_j} s_k`` seconds, so it uses
    ``d_j sum_{S_j} s_k >= p_j`` speed-seconds, all after ``r_j``; the jobs
    released at or after ``\rho`` thus use ``sum p_j`` speed-seconds in
    ``[\rho, C_{max})``, where the machine offers ``sum_k s_k`` per second
    (running jobs hold disjoint processors). ``C_max`` is an integer. With
    ``\rho = r_{min}`` this is the speed-area bound of
    the speed-area bound ``r_min + ceil(sum_j p_j / sum_k s_k)``. Without speeds
    ``p_j`` reads ``\pi_j`` times the job's shortest run time and
    ``sum_k s_k`` reads ``m`` (the area bound with release stages). Rassmann
    (2020) C8; the release-staged form is the classical energy argument
    (Baptiste, Le Pape, Nuijten 2001).
    """
    began = time.perf_counter()
    if not instance.jobs:
        return Bound(0, "speed-area-staged", 0.0)
    used, capacity = _capacity(instance)
    best = 0
    later = Fraction(0)
    jobs = sorted(instance.jobs, key=lambda j: -j.release)
    for k, job in enumerate(jobs):
        later += used[job.id]
        if k + 1 < len(jobs) and jobs[k + 1].release == job.release:
            continue  # add every job of this release date first
        best = max(best, job.release + ceiling(later / capacity))
    return Bound(best, "speed-area-staged", time.perf_counter() - began)


def speed_squashed_bound(instance: Instance, objective: Objective) -> Bound:
    r"""Weighted completion bound from mean busy times on the squashed machine.

    .. math:: \sum_j w_j C_j \ge \sum_k w_{(k)} \Big(r_{min} +
              \frac{\sum_{i < k} p_{(i)} + p_{(k)} / 2}{\sum_k s_k}\Big)
              + \frac12 \sum_j w_j d_j^{min}

    with the jobs in Smith's order (``p_j / w_j`` ascending) and
    ``d_j^{min}`` the job's shortest run time on any processors
    (:meth:`~optsched.instance.Machine.shortest_run_time`). Proof: job ``j``
    runs on ``S_j`` over ``[S_j, C_j)`` at the constant rate ``sigma_j =
    sum_{S_j} s_k``; scaled down to ``sigma_j p_j / (sigma_j d_j) <=
    sigma_j`` it does exactly ``p_j`` speed-seconds there, and its mean busy
    time ``M_j`` (the average instant of its work) is ``S_j + d_j / 2``, so
    ``C_j = M_j + d_j / 2 >= M_j + d_j^min / 2``. Running jobs hold
    disjoint processors, so the scaled rates sum to at most ``sum_k s_k``
    at every instant after ``r_min``: for every job set ``A``,
    ``sum_A p_j M_j >= p(A) (r_min + p(A) / (2 sum_k s_k))`` (the work of
    ``A`` done as early as possible at full rate). Minimising ``sum w_j M_j``
    under these inequalities gives Smith's order (Queyranne, "Structure of
    a simple scheduling polyhedron", Math. Programming 58, 1993; Goemans,
    "Improved approximation algorithms for scheduling with release dates",
    SODA 1997), with the mean busy times ``r_min + (sum_{i < k} p_(i) +
    p_(k) / 2) / sum_k s_k``. It is at least the plain squashed-area bound
    (Eastman, Even and Isaacs, Management Science 11, 1964), since
    ``d_j^min >= p_j / sum_k s_k``. Without speeds ``p_j`` reads
    ``\pi_j d_j^min`` and ``sum_k s_k`` reads ``m``. With ``relative`` the
    constant ``sum_j w_j r_j`` is subtracted.
    """
    began = time.perf_counter()
    if not instance.jobs:
        return Bound(0, "speed-squashed", 0.0)
    used, capacity = _capacity(instance)
    machine = instance.machine
    weight = {j.id: Fraction(objective.exact_weight(j)) for j in instance.jobs}
    first = min(j.release for j in instance.jobs)
    # Zero weights last (their order does not matter); Smith's ratio otherwise.
    ordered = sorted(
        instance.jobs,
        key=lambda j: (
            weight[j.id] == 0,
            used[j.id] / weight[j.id] if weight[j.id] else 0,
        ),
    )
    total, done = Fraction(0), Fraction(0)
    for job in ordered:
        busy = first + (done + used[job.id] / 2) / capacity
        shortest = _shortest(machine, job)
        total += weight[job.id] * (busy + Fraction(shortest, 2))
        done += used[job.id]
    if objective.relative:
        total -= sum((weight[j.id] * j.release for j in instance.jobs), Fraction(0))
    value = _bound_value(total, weight.values())
    return Bound(value, "speed-squashed", time.perf_counter() - began)


def _bound_value(value: Fraction, weights: Any) -> float:
    """An exact bound as a number: rounded up when every weight is an
    integer (the objective is then one), else the float just below."""
    if all(w.denominator == 1 for w in weights):
        return ceiling(value)
    return math.nextafter(float(value), -math.inf)


def topology_lower_bounds(
    instance: Instance, objective: Objective, deadline: float | None
) -> tuple[list[Bound], list[str]]:
    """The bounds of the flat relaxation, and :func:`staged_speed_area_bound`
    (``cmax``) or :func:`speed_squashed_bound` (``wct``).

    Same contract as :func:`optsched.models.rigid.bounds.lower_bounds_within`;
    the relaxation's bounds carry the suffix :data:`RELAXED` in their
    method name. The relaxation is handed the jobs' weights under the
    objective's rule, fixed before the run times change (an ``area``
    weight would otherwise follow the shortened or inflated run time and
    could exceed the optimum), and without the jobs that weigh nothing
    (they add 0 to every objective; removing jobs only lowers an optimum).
    """
    fixed, rule = instance, objective
    if objective.kind == "wct":
        kept = [j for j in instance.jobs if objective.exact_weight(j) != 0]
        fixed = instance.with_jobs(
            j.replace(weight=float(objective.weight(j))) for j in kept
        )
        rule = Objective("wct", "instance", objective.relative)
    relaxed, notes = (
        lower_bounds_within(flat_relaxation(fixed), rule, deadline)
        if fixed.jobs
        else ([], [])
    )
    bounds = [dataclasses.replace(b, method=b.method + RELAXED) for b in relaxed]
    if objective.kind == "cmax":
        bounds.append(staged_speed_area_bound(instance))
    else:
        bounds.append(speed_squashed_bound(instance, objective))
    return bounds, notes
