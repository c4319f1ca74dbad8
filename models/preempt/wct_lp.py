r"""Interval-indexed LP bound on the preemptive ``sum w_j C_j``, any horizon.

The time-indexed model (:mod:`optsched.models.preempt.timeindexed`) is
exact but needs one variable per job and second. For longer horizons this
LP gives a lower bound on the *continuous-time* preemptive optimum (hence
also on the integer-time one and on the non-preemptive one).

Slots ``[a_t, a_{t+1})`` cut the time from the first release to a horizon
``H`` (releases and busy-block ends included, so that in a slot the free
capacity ``c_t`` and the released jobs are constant, then evenly into about
``slots`` pieces). ``y_{j,t}`` is the time job ``j`` runs in slot ``t``:

.. math::

    \min \sum_j \frac{w_j}{p_j} \sum_t a_t\, y_{j,t}
         + \sum_j \frac{w_j p_j}{2}
    \quad\text{s.t.}\quad
    \sum_t y_{j,t} = p_j\ (\pi_j),\qquad
    \sum_j q_j\, y_{j,t} \le c_t\, \ell_t\ (\sigma_t \le 0),\qquad
    0 \le y_{j,t} \le \ell_t\ (\rho_{j,t} \le 0),

``y_{j,t} = 0`` before ``r_j``; ``\ell_t = a_{t+1} - a_t``.

Validity. In any preemptive schedule let ``y_{j,t}`` be the time job ``j``
runs in slot ``t``: the constraints hold (the job uses ``q_j`` processors
while it runs, at most ``c_t`` are free, a job runs at most the slot's
length). Its mean busy time ``M_j = (1/p_j) ∫ u 1[j runs at u] du`` is at
least ``(1/p_j) sum_t a_t y_{j,t}`` (what runs in slot ``t`` runs at or
after ``a_t``), and ``C_j >= M_j + p_j / 2`` because ``p_j`` seconds of
work inside ``[0, C_j)`` have their mean at most ``C_j - p_j / 2``. Hence
``sum_j w_j C_j`` is at least the LP value. ``H`` only needs to be at
least the makespan of some optimal schedule: ``T_0 + sum_j p_j`` (latest
release or block end plus all the work; see
:func:`~optsched.models.common.solution.completion_deadlines`, whose argument
holds for preemptive schedules). This is the mean-busy-time relaxation of
Goemans (1997) and of Dyer and Wolsey (1990), on slots, with per-job rate
limits ``q_j`` and sizes in the capacity rows.

Exactness: the dual of the LP above is feasible for *any* ``π`` and
``σ <= 0`` once ``ρ_{j,t} = min(0, w_j a_t / p_j - π_j - q_j σ_t)``; its
value, computed with :class:`fractions.Fraction` from HiGHS's duals, is the
bound reported, valid whatever the solver's rounding.

Time limit (issue 30): with a ``deadline`` the building loops, the solve
(HiGHS's ``time_limit`` is the time left) and the exact dual sum stop there
and raise :class:`~optsched.models.common.template.OutOfTime`. An LP stopped
before its optimum gives no bound worth reporting (its duals are not those
of the optimum), so the caller falls back on the closed-form bounds.
"""

from __future__ import annotations

import itertools
import math
import time
from fractions import Fraction
from typing import Any

import numpy as np

from optsched.instance import Instance, Job
from optsched.models.common.template import OutOfTime, on_time
from optsched.objective import Objective
from optsched.result import Bound

DEFAULT_SLOTS = 400
"""About how many slots the horizon is cut into."""

_CHECK_EVERY = 1024
"""Columns of the exact dual sum between two looks at the clock."""


def slot_starts(instance: Instance, slots: int = DEFAULT_SLOTS) -> list[int]:
    """``a_0 < a_1 < ... < a_T = H``: releases, block times and a regular grid."""
    jobs = instance.jobs
    first = min(j.release for j in jobs)
    blocks = [b for b in instance.machine.unavailable if b.end > b.start]
    t0 = max([j.release for j in jobs] + [b.end for b in blocks])
    horizon = max(t0, first) + sum(j.runtime for j in jobs)
    step = max(1, math.ceil((horizon - first) / max(1, slots)))
    points = set(range(first, horizon, step)) | {horizon}
    points |= {j.release for j in jobs}
    points |= {t for b in blocks for t in (b.start, b.end) if first < t < horizon}
    return sorted(points)


def preemptive_wct_lp_bound(
    instance: Instance,
    objective: Objective | str,
    *,
    slots: int = DEFAULT_SLOTS,
    deadline: float | None = None,
) -> Bound:
    """The certified value of the LP of the module notes (``relative`` applied).

    Rounded up when every weight is an integer (the objective is then an
    integer).

    Raises
    ------
    OutOfTime
        When ``deadline`` (``time.monotonic``) passes before the LP's
        optimum and its certified value are reached (module notes).
    """
    import highspy

    started = time.perf_counter()
    objective = Objective.parse(objective)
    jobs = [j for j in instance.jobs if j.runtime > 0]
    weights = [Fraction(objective.exact_weight(j)) for j in instance.jobs]
    pairs = zip(weights, instance.jobs, strict=True)
    constant = sum((w * j.release for w, j in pairs if j.runtime == 0), Fraction(0))
    constant -= Fraction(objective.offset(instance))
    if not jobs:
        return _bound(constant, objective, instance, started)
    weight = {j.id: Fraction(objective.exact_weight(j)) for j in jobs}
    points = slot_starts(instance, slots)
    starts, lengths = points[:-1], [b - a for a, b in itertools.pairwise(points)]
    capacity = [_free(instance, a, b) for a, b in itertools.pairwise(points)]
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    inf = highspy.kHighsInf
    n, count = len(jobs), len(starts)
    empty_i, empty_f = np.array([], dtype=np.int32), np.array([], dtype=np.float64)
    for job in jobs:
        highs.addRow(float(job.runtime), float(job.runtime), 0, empty_i, empty_f)
    for t in range(count):
        highs.addRow(-inf, float(capacity[t] * lengths[t]), 0, empty_i, empty_f)
    columns: list[tuple[int, int]] = []
    for j, job in enumerate(jobs):
        on_time(deadline)
        for t in range(count):
            if starts[t] >= job.release and capacity[t] >= job.size:
                cost = float(weight[job.id]) * starts[t] / job.runtime
                rows = np.array([j, n + t], dtype=np.int32)
                values = np.array([1.0, float(job.size)])
                highs.addCol(cost, 0.0, float(lengths[t]), 2, rows, values)
                columns.append((j, t))
    _run_within(highs, deadline, time.perf_counter() - started)
    duals = list(highs.getSolution().row_dual)
    if len(duals) != n + count or not all(math.isfinite(v) for v in duals):
        duals = [0.0] * (n + count)  # the trivial dual point, still valid
    value = _dual_value(
        jobs, weight, starts, lengths, capacity, columns, duals, deadline
    )
    value += sum((weight[j.id] * j.runtime / 2 for j in jobs), Fraction(0))
    return _bound(value + constant, objective, instance, started)


def _run_within(highs: Any, deadline: float | None, building: float) -> None:
    """Solve the LP to its optimum before ``deadline``, else raise
    :class:`OutOfTime`.

    HiGHS's ``time_limit`` is the time left. With less time left than the
    model took to build, HiGHS is not started: its presolve and crash do
    not look at the clock (the MILP back-end's lesson, commit 4ad61ba).
    """
    import highspy

    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= building:
            raise OutOfTime
        highs.setOptionValue("time_limit", left)
    highs.run()
    stopped = highs.getModelStatus() == highspy.HighsModelStatus.kTimeLimit
    if deadline is not None and (stopped or time.monotonic() >= deadline):
        raise OutOfTime


def _free(instance: Instance, start: int, end: int) -> int:
    """Free capacity on ``[start, end)`` (constant there: block times are
    slot boundaries)."""
    taken = sum(
        b.size
        for b in instance.machine.unavailable
        if b.end > b.start and b.start <= start and b.end >= end
    )
    return instance.processors - taken


def _dual_value(
    jobs: list[Job],
    weight: dict[int, Fraction],
    starts: list[int],
    lengths: list[int],
    capacity: list[int],
    columns: list[tuple[int, int]],
    duals: list[float],
    deadline: float | None = None,
) -> Fraction:
    """Value of the repaired dual point (exact; see the module notes);
    :class:`OutOfTime` once ``deadline`` passes (checked every
    :data:`_CHECK_EVERY` columns: the sum runs in exact fractions)."""
    n = len(jobs)
    pi = [Fraction(v) for v in duals[:n]]
    sigma = [min(Fraction(0), Fraction(v)) for v in duals[n:]]
    value = sum((p * j.runtime for p, j in zip(pi, jobs, strict=True)), Fraction(0))
    value += sum(
        (s * c * ell for s, c, ell in zip(sigma, capacity, lengths, strict=True)),
        Fraction(0),
    )
    # Only the existing columns constrain the dual (y_{j,t} = 0 otherwise).
    for position, (j, t) in enumerate(columns):
        if position % _CHECK_EVERY == 0:
            on_time(deadline)
        job = jobs[j]
        cost = weight[job.id] * starts[t] / job.runtime
        rho = min(Fraction(0), cost - pi[j] - job.size * sigma[t])
        value += lengths[t] * rho
    return value


def _bound(
    value: Fraction, objective: Objective, instance: Instance, started: float
) -> Bound:
    integral = all(float(objective.exact_weight(j)).is_integer() for j in instance.jobs)
    final: float = math.ceil(value) if integral else float(value)
    if not integral and final > value:
        final = math.nextafter(final, -math.inf)
    return Bound(final, "preemptive-lp", time.perf_counter() - started)
