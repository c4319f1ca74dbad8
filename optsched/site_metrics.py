"""Mallmann's measures of a schedule (seed 000, §5).

* total load ``L_ges = sum_j p_j q_j``, identical for every strategy;
* total time ``T_ges``: from the first start to the last end, and the
  overall utilisation ``l_ges = L_ges / (T_ges * m)``;
* active time ``T_act``: the time in which at least one processor is busy,
  and ``l_act = L_ges / (T_act * m)``;
* waiting times ``start - submit`` by job class (all jobs, run time <= or >
  10 min, <= or > 32 processors): mean, maximum and the quantiles Q50, Q75,
  Q90, Q95 (the study computes them per month: pass each month's jobs).

Reference: B. Mallmann, *Untersuchung von Scheduling-Strategien für
Parallelrechner* (Jülich, 1997), §4.1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from optsched.instance import Instance, Job
from optsched.schedule import Schedule

CLASSES: dict[str, Callable[[Job], bool]] = {
    "all": lambda job: True,
    "<=10min": lambda job: job.runtime <= 600,
    ">10min": lambda job: job.runtime > 600,
    "<=32p": lambda job: job.size <= 32,
    ">32p": lambda job: job.size > 32,
}
"""The study's job classes C_all, C_<=10min, C_>10min, C_<=32p, C_>32p."""


@dataclass(frozen=True)
class Utilisation:
    """``L_ges`` (processor-seconds), ``T_ges`` and ``T_act`` (seconds), and
    the two utilisations."""

    load: int
    total_time: int
    active_time: int
    l_ges: float
    l_act: float


@dataclass(frozen=True)
class Waits:
    """Waiting-time statistics of one job class (seconds)."""

    jobs: int
    mean: float
    maximum: int
    q50: float
    q75: float
    q90: float
    q95: float


def utilisation(instance: Instance, schedule: Schedule) -> Utilisation:
    """``l_ges`` and ``l_act`` of ``schedule`` (module docstring).

    Each job counts ``end - start`` seconds on its size (a job stopped at
    its estimate counts what it ran).
    """
    m = instance.machine.processors
    runs = sorted(
        (p.start, p.end, instance.job(j).size) for j, p in schedule.placements.items()
    )
    if not runs:
        return Utilisation(0, 0, 0, 0.0, 0.0)
    load = sum((end - start) * size for start, end, size in runs)
    first = runs[0][0]
    last = max(end for _, end, _ in runs)
    active, reach = 0, first
    for start, end, _ in runs:
        if end > reach:
            active += end - max(start, reach)
            reach = end
    total = last - first
    return Utilisation(
        load,
        total,
        active,
        load / (total * m) if total else 0.0,
        load / (active * m) if active else 0.0,
    )


def waits_by_class(instance: Instance, schedule: Schedule) -> dict[str, Waits]:
    """Waiting-time statistics per class of :data:`CLASSES` (empty classes
    are left out). Quantiles interpolate linearly (numpy's default)."""
    out: dict[str, Waits] = {}
    for name, member in CLASSES.items():
        values = np.array(
            [
                schedule.placements[job.id].start - job.release
                for job in instance.jobs
                if member(job) and job.id in schedule.placements
            ],
            dtype=np.int64,
        )
        if not len(values):
            continue
        q50, q75, q90, q95 = np.quantile(values, [0.5, 0.75, 0.9, 0.95])
        out[name] = Waits(
            len(values),
            float(values.mean()),
            int(values.max()),
            float(q50),
            float(q75),
            float(q90),
            float(q95),
        )
    return out
