"""Lower bounds on machines with node speeds or SMP nodes.

Every closed-form bound of :mod:`optsched.models.bounds` applies to the
*flat relaxation* (:func:`optsched.machines.flat_relaxation`): each job at
its shortest possible run time (its work on the fastest processors of its
size, at the fewest nodes' communication cost), on identical processors
without a span limit. A schedule of the original, each job cut to that run
time at the same start, is a schedule of the relaxation, and every
objective only falls as completions move earlier; so the relaxation's
optimum, and every bound on it, is at most the original's. On a machine
with speeds, the speed-weighted area bound (:func:`speed_area_bound`) adds
what the relaxation forgets: fast processors are few.
"""

from __future__ import annotations

import dataclasses
import time
from fractions import Fraction

from optsched.instance import Instance
from optsched.machines import flat_relaxation
from optsched.models.result import Bound
from optsched.nodes import ceiling
from optsched.objective import Objective

RELAXED = " (shortest run times)"
"""Suffix of the method name of a bound computed on the flat relaxation."""


def speed_area_bound(instance: Instance) -> Bound:
    r"""Makespan bound from the work and the machine's total speed.

    .. math:: C_{max} \ge r_{min} + \left\lceil
              \frac{\sum_j p_j}{\sum_k s_k} \right\rceil

    Proof: job ``j`` on set ``S_j`` runs ``d_j >= p_j / sum_{k in S_j} s_k``
    (rounding up and the communication inflation only lengthen it), so it
    uses ``sum_{k in S_j} s_k d_j >= p_j`` speed-seconds; the machine offers
    ``sum_k s_k`` per second from ``r_min`` on. ``C_max`` is an integer.
    Without speeds every ``s_k`` is 1 and this is the area bound of the
    run times at speed 1 (weaker there than the relaxation's own).
    """
    began = time.perf_counter()
    machine = instance.machine
    if not instance.jobs:
        return Bound(0, "speed-area", time.perf_counter() - began)
    speeds = machine.exact_speeds() or (Fraction(1),) * machine.processors
    if machine.speeds is None:
        work = sum(job.runtime * job.size for job in instance.jobs)
    else:
        work = sum(job.runtime for job in instance.jobs)
    first = min(job.release for job in instance.jobs)
    value = first + ceiling(Fraction(work) / sum(speeds))
    return Bound(value, "speed-area", time.perf_counter() - began)


def topology_lower_bounds(
    instance: Instance, objective: Objective, deadline: float | None
) -> tuple[list[Bound], list[str]]:
    """The bounds of the flat relaxation, and the speed-weighted area bound.

    Same contract as :func:`optsched.models.bounds.lower_bounds_within`;
    the relaxation's bounds carry the suffix :data:`RELAXED` in their
    method name.
    """
    # Imported here: bounds dispatches to this module.
    from optsched.models.bounds import lower_bounds_within

    relaxed, notes = lower_bounds_within(flat_relaxation(instance), objective, deadline)
    bounds = [dataclasses.replace(b, method=b.method + RELAXED) for b in relaxed]
    if objective.kind == "cmax" and instance.machine.speeds is not None:
        area = speed_area_bound(instance)
        if objective.relative and instance.jobs:
            first = min(job.release for job in instance.jobs)
            area = dataclasses.replace(area, value=area.value - first)
        bounds.append(area)
    return bounds, notes
