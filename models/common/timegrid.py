r"""Coarse time grids for the time-indexed MILP, rounded in the safe direction.

A grid of step ``g`` seconds cuts time into cells ``[k g, (k + 1) g)``. A job
starts at the beginning of a cell ``t`` and occupies ``d_j`` whole cells.
Two roundings, each safe for its purpose:

**Relaxation** (:func:`relaxation_grid`, for lower bounds):
``d_j = \lfloor p_j / g \rfloor``, first start cell
``\lfloor r_j / g \rfloor``, cell capacity ``m - busy((k + 1) g - 1)``
(processors free in the cell's last second), completion cost
``g t + p_j``. Every feasible schedule ``S`` maps to a grid solution with
``t_j = \lfloor S_j / g \rfloor``: ``t_j \ge \lfloor r_j / g \rfloor``; if the
grid job occupies cell ``k`` (``t_j \le k < t_j + d_j``) then
``S_j \le (k + 1) g - 1`` and ``S_j + p_j \ge g (t_j + d_j) \ge (k + 1) g``,
so the real job runs in the cell's last second: the grid jobs occupying
``k`` run together at that second and fit in its free processors. The cost
``g t_j + p_j \le S_j + p_j = C_j``. Hence the grid optimum (and any dual
bound of it) is a lower bound on the true optimum.

**Feasible** (:func:`feasible_grid`, for schedules):
``d_j = \lceil p_j / g \rceil``, first start cell ``\lceil r_j / g \rceil``,
cell capacity ``m - \max_{s \in cell} busy(s)``. A grid solution started at
``S_j = g t_j`` runs inside its ``d_j`` cells, so it is feasible on the
original instance (for ``any`` allocation; processors are assigned
afterwards). It is then re-timed by list scheduling in the same order,
which starts no job later (see :mod:`optsched.models.rigid.milp`).

With ``g = 1`` both coincide with the exact time-indexed model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from optsched.instance import Instance


@dataclass(frozen=True, slots=True)
class GridJob:
    """One job on the grid: start cells ``first..last``, ``duration`` cells."""

    id: int
    size: int
    runtime: int
    first: int
    last: int
    duration: int
    weight: float

    def completion(self, cell: int, step: int) -> int:
        """Completion cost in seconds of a start in ``cell``: ``g t + p_j``."""
        return step * cell + self.runtime


@dataclass(frozen=True, slots=True)
class TimeGrid:
    """Jobs and per-cell capacities of one time-indexed model."""

    step: int
    processors: int
    capacity: tuple[int, ...]
    jobs: tuple[GridJob, ...]
    rounding: str

    @property
    def cells(self) -> int:
        """Number of cells ``K``."""
        return len(self.capacity)


def choose_step(horizon: int, max_cells: int) -> int:
    """Smallest step ``g`` with ``ceil(horizon / g) <= max_cells``."""
    if max_cells < 1:
        raise ValueError(f"max cells {max_cells} must be at least 1")
    return max(1, math.ceil(horizon / max_cells))


def busy_profile(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints ``T`` and busy counts ``B``: ``B[i]`` on ``[T[i], T[i+1])``."""
    deltas: dict[int, int] = {0: 0}
    for b in instance.machine.unavailable:
        if b.end > b.start:
            deltas[b.start] = deltas.get(b.start, 0) + b.size
            deltas[b.end] = deltas.get(b.end, 0) - b.size
    times = np.array(sorted(deltas), dtype=np.int64)
    busy = np.cumsum([deltas[int(t)] for t in times]).astype(np.int64)
    return times, busy


def _busy_at(times: np.ndarray, busy: np.ndarray, at: np.ndarray) -> np.ndarray:
    index = np.searchsorted(times, at, side="right") - 1
    return busy[np.maximum(index, 0)]


def _busy_max_per_cell(
    times: np.ndarray, busy: np.ndarray, step: int, cells: int
) -> np.ndarray:
    starts = np.arange(cells, dtype=np.int64) * step
    result = _busy_at(times, busy, starts)
    # Change points inside a cell raise that cell's maximum.
    for t, value in zip(times, busy, strict=True):
        cell = int(t) // step
        if cell < cells:
            result[cell] = max(result[cell], value)
    return result


def relaxation_grid(
    instance: Instance,
    deadlines: Mapping[int, int],
    step: int,
    weights: Mapping[int, float],
) -> TimeGrid:
    """The rounded-down grid (module notes); ``deadlines`` bound ``C_j``.

    The latest start cell is ``\\lfloor (D_j - p_j) / g \\rfloor`` since
    ``g t_j + p_j \\le S_j + p_j \\le D_j``.
    """
    jobs = tuple(
        GridJob(
            id=j.id,
            size=j.size,
            runtime=j.runtime,
            first=j.release // step,
            last=(deadlines[j.id] - j.runtime) // step,
            duration=j.runtime // step,
            weight=weights[j.id],
        )
        for j in instance.jobs
    )
    cells = max((g.last + g.duration for g in jobs), default=0)
    times, busy = busy_profile(instance)
    last_seconds = (np.arange(cells, dtype=np.int64) + 1) * step - 1
    free = instance.processors - _busy_at(times, busy, last_seconds)
    return TimeGrid(
        step, instance.processors, tuple(int(c) for c in free), jobs, "down"
    )


def feasible_grid(
    instance: Instance,
    step: int,
    order: Sequence[int],
    objective_kind: str,
    weights: Mapping[int, float],
) -> tuple[TimeGrid, dict[int, int]]:
    """The rounded-up grid, and a feasible grid schedule found in ``order``.

    The start windows keep every grid schedule at least as good as the one
    found by serial list scheduling in ``order`` (cmax: ``g t_j + p_j`` at
    most its makespan; wct: the per-job bound of
    :func:`optsched.models.common.solution.completion_deadlines`, in grid terms,
    and the shifting argument ``t_j \\le T_0 + \\sum_{i \\ne j} d_i``).

    Returns
    -------
    grid, starts
        The model data and ``{job id: start cell}`` of the list schedule.
    """
    m = instance.processors
    by_id = instance.jobs_by_id()
    first = {j.id: -(-j.release // step) for j in instance.jobs}
    duration = {j.id: -(-j.runtime // step) for j in instance.jobs}
    times, busy = busy_profile(instance)
    block_end = max((b.end for b in instance.machine.unavailable), default=0)
    base_cells = -(-block_end // step) + 1
    free = list(m - _busy_max_per_cell(times, busy, step, base_cells))
    starts = _serial_cells(order, by_id, first, duration, free, m)

    completion = {jid: step * starts[jid] + by_id[jid].runtime for jid in starts}
    t0 = max(max(first.values(), default=0), base_cells)
    total_cells = sum(duration.values())
    last: dict[int, int] = {}
    if objective_kind == "cmax":
        span = max(completion.values(), default=0)
        for jid in starts:
            last[jid] = (span - by_id[jid].runtime) // step
    else:
        ub = sum(weights[j] * completion[j] for j in starts)
        floor_all = sum(
            weights[j] * (step * first[j] + by_id[j].runtime) for j in starts
        )
        margin = 1e-9 * max(1.0, abs(ub))
        for jid in starts:
            if weights[jid] == 0:  # zero-length job: anywhere is as good
                last[jid] = starts[jid]
                continue
            rest = floor_all - weights[jid] * (step * first[jid] + by_id[jid].runtime)
            own = math.floor((ub - rest + margin) / weights[jid])
            by_ub = (own - by_id[jid].runtime) // step
            by_shift = t0 + total_cells - duration[jid]
            last[jid] = max(min(by_ub, by_shift), starts[jid])
    jobs = tuple(
        GridJob(
            id=j.id,
            size=j.size,
            runtime=j.runtime,
            first=first[j.id],
            last=max(last[j.id], starts[j.id]),
            duration=duration[j.id],
            weight=weights[j.id],
        )
        for j in instance.jobs
    )
    cells = max((g.last + g.duration for g in jobs), default=0)
    capacity = list(free[:cells]) + [m] * max(0, cells - len(free))
    return TimeGrid(step, m, tuple(int(c) for c in capacity), jobs, "up"), starts


def _serial_cells(
    order: Sequence[int],
    jobs: Mapping[int, object],
    first: Mapping[int, int],
    duration: Mapping[int, int],
    free: list[int],
    m: int,
) -> dict[int, int]:
    """Serial schedule generation on cells: each job at its earliest fit, in order."""
    left = list(free)
    starts: dict[int, int] = {}
    for jid in order:
        size = jobs[jid].size  # type: ignore[attr-defined]
        d = duration[jid]
        t = first[jid]
        while True:
            needed = t + d
            if needed > len(left):
                left.extend([m] * (needed - len(left)))
            blocked = next((k for k in range(t, t + d) if left[k] < size), None)
            if blocked is None:
                break
            t = blocked + 1
        for k in range(t, t + d):
            left[k] -= size
        starts[jid] = t
    return starts
