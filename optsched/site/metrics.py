"""Mallmann's measures of a schedule (seed 000, §5).

* total load ``L_ges = sum_j p_j q_j``, identical for every strategy;
* total time ``T_ges``: from the first start to the last end, and the
  overall utilisation ``l_ges = L_ges / (T_ges * m)``;
* active time ``T_act``: the time in which at least one processor is busy,
  and ``l_act = L_ges / (T_act * m)``;
* waiting times ``start - submit`` by job class (all jobs, run time <= or >
  10 min, <= or > 32 processors): mean, maximum and the quantiles Q50, Q75,
  Q90, Q95 (the study computes them per month: pass each month's jobs);
* under a site calendar, the split by operating mode (:func:`mode_split`):
  ``L_bat``, ``L_mix``, ``L_ia`` (the load run in batch, mixed and
  interactive mode), the active and idle times of each mode, ``l_act,bat =
  L_bat / (T_act,bat * m)`` and ``t_idle,bat = T_idle,bat / T_bat``.

Only complete runs count: the node time of runs killed by outages is unused,
as in the study (§3.1.6).

Reference: B. Mallmann, *Untersuchung von Scheduling-Strategien für
Parallelrechner* (Jülich, 1997), §4.1.
"""

from __future__ import annotations

import itertools
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


MODES = ("batch", "mixed", "interactive")
"""The study's operating modes, from the calendar's batch capacity."""


@dataclass(frozen=True)
class ModeSplit:
    """Load (processor-seconds), active and idle time (seconds) per mode,
    over ``[first start, last end)``; ``modes`` maps each mode to the batch
    capacities that define it."""

    load: dict[str, int]
    active: dict[str, int]
    idle: dict[str, int]
    modes: dict[str, tuple[int, ...]]
    processors: int

    @property
    def l_act_bat(self) -> float:
        """``L_bat / (T_act,bat * m)``: the utilisation in active batch time."""
        active = self.active["batch"]
        return self.load["batch"] / (active * self.processors) if active else 0.0

    @property
    def t_idle_bat(self) -> float:
        """``T_idle,bat / T_bat``: the share of batch time with nothing running."""
        total = self.active["batch"] + self.idle["batch"]
        return self.idle["batch"] / total if total else 0.0


def mode_levels(instance: Instance, start: int, end: int) -> dict[str, tuple[int, ...]]:
    """Which batch capacities are which mode over ``[start, end)``.

    The study's T3E has three levels (518 batch, 383 mixed, 4 interactive
    nodes) and its Paragon two (the whole machine at night, none by day).
    Ours: the highest capacity that occurs is batch mode, the lowest
    interactive, any other mixed; a machine without calendar is always in
    batch mode.
    """
    calendar = instance.machine.calendar
    m = instance.machine.processors
    if calendar is None or end <= start:
        return {"batch": (m,), "mixed": (), "interactive": ()}
    levels = sorted({c for _, _, c, _ in calendar.segments(start, end, m)})
    if len(levels) == 1:
        return {"batch": (levels[0],), "mixed": (), "interactive": ()}
    return {
        "batch": (levels[-1],),
        "mixed": tuple(levels[1:-1]),
        "interactive": (levels[0],),
    }


def mode_split(instance: Instance, schedule: Schedule) -> ModeSplit:
    """The load, active and idle time of each operating mode (module
    docstring; modes by :func:`mode_levels`)."""
    m = instance.machine.processors
    runs = [
        (p.start, p.end, instance.job(j).size) for j, p in schedule.placements.items()
    ]
    runs = [r for r in runs if r[1] > r[0]]
    zero = dict.fromkeys(MODES, 0)
    if not runs:
        return ModeSplit(zero, dict(zero), dict(zero), mode_levels(instance, 0, 0), m)
    first = min(r[0] for r in runs)
    last = max(r[1] for r in runs)
    levels = mode_levels(instance, first, last)
    mode_of = {c: name for name, cs in levels.items() for c in cs}
    calendar = instance.machine.calendar
    cuts = (
        [(a, mode_of[c]) for a, _, c, _ in calendar.segments(first, last, m)]
        if calendar is not None
        else [(first, "batch")]
    )
    changes: dict[int, int] = {}
    for start, end, size in runs:
        changes[start] = changes.get(start, 0) + size
        changes[end] = changes.get(end, 0) - size
    times = sorted(set(changes) | {a for a, _ in cuts})
    load, active, idle = dict(zero), dict(zero), dict(zero)
    busy, k = 0, 0
    for t, after in itertools.pairwise(times):
        busy += changes.get(t, 0)
        while k + 1 < len(cuts) and cuts[k + 1][0] <= t:
            k += 1
        mode = cuts[k][1]
        load[mode] += busy * (after - t)
        if busy:
            active[mode] += after - t
        else:
            idle[mode] += after - t
    return ModeSplit(load, active, idle, levels, m)


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
