"""Objectives and statistics, computed only from (instance, schedule).

Nothing here trusts a solver's reported objective: every number is
recomputed from the placements.

Notation: job ``j`` has release ``r_j``, size ``q_j``, runtime ``p_j``,
weight ``w_j``; its placement starts at ``S_j`` and ends at ``C_j``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from optsched.instance import Instance
from optsched.moldable.modes import processor_work
from optsched.schedule import Schedule

BSLD_THRESHOLD = 10
"""Default bounded-slowdown threshold tau in seconds (Feitelson et al. 1997)."""


_INT64_SAFE = 2**62
"""Largest magnitude kept in ``int64`` arrays: differences of two such values
(waits, responses, run times) still fit in ``int64``."""


def _times(values: list[int]) -> np.ndarray:
    """``values`` as ``int64``, or as ``float64`` when some exceed ``int64``.

    Times are at most ``2**53`` each (the core types refuse more), but a
    schedule's ends add run times up; past ``2**62`` NumPy would raise
    ``OverflowError`` or wrap around, while float64 only rounds.
    """
    if values and max(abs(min(values)), abs(max(values))) >= _INT64_SAFE:
        return np.array(values, dtype=np.float64)
    return np.array(values, dtype=np.int64)


def _arrays(instance: Instance, schedule: Schedule) -> dict[str, np.ndarray]:
    jobs = instance.jobs
    return {
        "release": _times([j.release for j in jobs]),
        "size": _times([j.size for j in jobs]),
        "weight": np.array([j.weight for j in jobs], dtype=np.float64),
        "start": _times([schedule[j.id].start for j in jobs]),
        "end": _times([schedule[j.id].end for j in jobs]),
        "run": _times([schedule[j.id].work for j in jobs]),
    }


def makespan(instance: Instance, schedule: Schedule, *, relative: bool = False) -> int:
    """``C_max = max_j C_j``; with ``relative``, ``max_j C_j - min_j r_j``.

    An instance without jobs has makespan 0.
    """
    if not instance.jobs:
        return 0
    last = max(schedule[j.id].end for j in instance.jobs)
    if relative:
        return last - min(j.release for j in instance.jobs)
    return last


def weighted_completion(
    instance: Instance, schedule: Schedule, *, relative: bool = False
) -> float:
    """``sum_j w_j C_j``; with ``relative``, the weighted flow.

    The weighted flow is ``sum_j w_j (C_j - r_j)``.
    """
    return float(
        sum(
            j.weight * (schedule[j.id].end - (j.release if relative else 0))
            for j in instance.jobs
        )
    )


def total_completion(instance: Instance, schedule: Schedule) -> int:
    """``sum_j C_j`` (unweighted)."""
    return sum(schedule[j.id].end for j in instance.jobs)


def waits(instance: Instance, schedule: Schedule) -> np.ndarray:
    """Wait times ``S_j - r_j`` in instance job order."""
    a = _arrays(instance, schedule)
    return a["start"] - a["release"]


def responses(instance: Instance, schedule: Schedule) -> np.ndarray:
    """Response (flow) times ``C_j - r_j``."""
    a = _arrays(instance, schedule)
    return a["end"] - a["release"]


def bounded_slowdowns(
    instance: Instance, schedule: Schedule, threshold: int = BSLD_THRESHOLD
) -> np.ndarray:
    """Bounded slowdown ``max(1, (C_j - r_j) / max(p_j, tau))``.

    ``p_j`` is the run time in the schedule: ``C_j - S_j`` (a killed job ran
    for less), or for a preempted job the work of its pieces
    (:attr:`~optsched.schedule.Placement.work`: the time between its pieces
    and its context switches are waiting, not running).
    Reference: D. G. Feitelson, L. Rudolph, U. Schwiegelshohn, K. C. Sevcik,
    P. Wong, "Theory and practice in parallel job scheduling", JSSPP 1997.
    """
    a = _arrays(instance, schedule)
    return np.maximum(1.0, (a["end"] - a["release"]) / np.maximum(a["run"], threshold))


def slowdowns(instance: Instance, schedule: Schedule) -> np.ndarray:
    """Plain slowdown ``(C_j - r_j) / p_j``; ``1`` for zero-length runs.

    ``p_j`` as in :func:`bounded_slowdowns`.
    """
    a = _arrays(instance, schedule)
    run = a["run"]
    response = a["end"] - a["release"]
    safe = np.where(run > 0, run, 1)
    return np.where(run > 0, response / safe, 1.0)


def utilisation(instance: Instance, schedule: Schedule) -> float:
    """Share of processor time used by jobs over ``[min_j r_j, max_j C_j)``.

    ``sum_j q_j p_j / (m (max_j C_j - min_j r_j))`` with ``p_j = C_j - S_j``, or
    the work of a preempted job's pieces (context switches hold processors
    but do no work); ``q_j`` is the count of the mode a moldable job runs
    in, piece by piece for a malleable one; busy blocks are not counted as
    useful work. 0 for an empty or zero-length schedule.
    """
    if not instance.jobs:
        return 0.0
    # Python integers: sizes times run times overflow int64 on huge values.
    placements = [schedule[j.id] for j in instance.jobs]
    span = max(p.end for p in placements) - min(j.release for j in instance.jobs)
    if span <= 0:
        return 0.0
    work = sum(
        processor_work(j, p) for j, p in zip(instance.jobs, placements, strict=True)
    )
    return work / (instance.processors * span)


@dataclass(frozen=True, slots=True)
class Summary:
    """The standard metrics table of one schedule."""

    jobs: int
    makespan: int
    makespan_relative: int
    weighted_completion: float
    mean_wait: float
    max_wait: int
    median_wait: float
    p95_wait: float
    mean_response: float
    mean_bounded_slowdown: float
    max_bounded_slowdown: float
    utilisation: float

    def as_dict(self) -> dict[str, float | int]:
        """Field name to value."""
        return asdict(self)


def summarize(
    instance: Instance, schedule: Schedule, threshold: int = BSLD_THRESHOLD
) -> Summary:
    """All standard metrics of ``schedule`` on ``instance``."""
    if not instance.jobs:
        return Summary(0, 0, 0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0)
    wait = waits(instance, schedule)
    bsld = bounded_slowdowns(instance, schedule, threshold)
    return Summary(
        jobs=len(instance.jobs),
        makespan=makespan(instance, schedule),
        makespan_relative=makespan(instance, schedule, relative=True),
        weighted_completion=weighted_completion(instance, schedule),
        mean_wait=float(wait.mean()),
        max_wait=int(wait.max()),
        median_wait=float(np.median(wait)),
        p95_wait=float(np.quantile(wait, 0.95)),
        mean_response=float(responses(instance, schedule).mean()),
        mean_bounded_slowdown=float(bsld.mean()),
        max_bounded_slowdown=float(bsld.max()),
        utilisation=utilisation(instance, schedule),
    )
