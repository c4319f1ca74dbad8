r"""Time-indexed model of ``P | r_j, size_j, pmtn | sum w_j C_j`` (HiGHS, CP-SAT).

Integer times: job ``j`` runs in unit slot ``[t, t + 1)`` iff ``x_{j,t} = 1``;
preemption and migration are free (a job may stop at any integer time and
resume on any processors), so a schedule is just the set of slots of each
job (the processors are assigned slot by slot afterwards,
:func:`optsched.models.preempt.model.schedule_from_segments`):

.. math::

    \min \sum_j \tilde w_j C_j \quad\text{s.t.}\quad
    \sum_{t = r_j}^{D_j - 1} x_{j,t} = p_j,\qquad
    \sum_j q_j x_{j,t} \le c(t),\qquad
    C_j \ge (t + 1)\, x_{j,t},\qquad
    x_{j,t} \in \{0, 1\},\ C_j \in [r_j + p_j, D_j]

with ``c(t) = m - B(t)`` the processors the busy blocks leave in slot
``t`` (their times are integers, so ``B`` is constant on a slot). This is
the classical time-indexed formulation (Sousa and Wolsey, "A time indexed
formulation of non-preemptive single machine scheduling problems", Math.
Programming 54, 1992) in its preemptive form, where every slot is a
variable of its own (Dyer and Wolsey, "Formulating the single machine
sequencing problem with release dates as a mixed integer program", Discrete
Applied Math. 26, 1990); ``C_j >= (t + 1) x_{j,t}`` is written with
"unfinished" indicators (:func:`_add_job`). Integer slots lose nothing
among integer-time schedules, the checker's world: every preemptive
schedule with integer piece ends is such an ``x``. (A continuous-time
preemptive optimum may be fractional; it is then below this one.)

Horizon: ``D_j`` are the deadlines of
:func:`~optsched.models.common.solution.completion_deadlines` computed from the
best checked schedule (list schedules, incumbents; a non-preemptive
schedule is a preemptive one too). Both of their
arguments hold for preemptive schedules: ``w_j C_j + sum_{i != j} w_i
(r_i + p_i) <= UB``, and no optimal schedule leaves a unit slot after the
last release and block end entirely idle before its last completion (moving
every later slot one unit left would lower the objective).

The model is solved as a MILP by HiGHS (:func:`solve_slots_highs`, the
default: it proves optimality much sooner) or by CP-SAT
(:func:`solve_slots`); both add the redundant rows of :func:`_add_job`,
which make the LP relaxation strong.

Weights: both engines take integer coefficients (:func:`objective_weights`).
Weights given as floats are dyadic rationals; multiplied by the least
common denominator ``D`` (a power of two) they become exact integers, used
when ``sum_j D w_j * horizon < 2**50``: the objective and the solver's bound
divided by ``D`` are then exact. Otherwise the scaled and floored weights
of :func:`optsched.models.rigid.cpsat.integer_weights`, whose bound divided by
the scale stays valid but may fall a little short of the optimum.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from optsched.instance import Instance, Job
from optsched.objective import Objective
from optsched.schedule import Schedule

MAX_HORIZON = 2_000
"""Largest horizon (latest deadline minus earliest release) accepted."""

MAX_SLOTS = 100_000
"""Largest number of (job, slot) variables accepted."""


@dataclass(slots=True)
class SlotSolution:
    """What CP-SAT found: the slots of each job, the bound and the notes.

    ``slots`` maps job ids to their unit slots (sorted), ``None`` when no
    solution was found; ``bound`` is the solver's bound on ``sum_j w_j C_j``
    (absolute, before any ``relative`` offset), already in the objective's
    units.
    """

    slots: dict[int, list[int]] | None
    bound: float | None
    status: str
    notes: dict[str, Any] = field(default_factory=dict)


def slot_capacity(instance: Instance, start: int, end: int) -> list[int]:
    """``c(t)`` for ``t`` in ``[start, end)``: processors free of busy blocks."""
    free = [instance.processors] * max(0, end - start)
    for block in instance.machine.unavailable:
        for t in range(max(block.start, start), min(block.end, end)):
            free[t - start] -= block.size
    return free


def horizon_refusal(
    instance: Instance,
    deadlines: Mapping[int, int],
    *,
    max_horizon: int = MAX_HORIZON,
    max_slots: int = MAX_SLOTS,
) -> str | None:
    """Why the time-indexed model is too large for ``deadlines``, or ``None``."""
    first = min(j.release for j in instance.jobs)
    horizon = max(deadlines.values()) - first
    if horizon > max_horizon:
        return (
            f"horizon {horizon} s above the limit {max_horizon} s of the "
            "time-indexed model (one variable per job and unit slot): pass a "
            "larger max_horizon or use a smaller instance"
        )
    slots = sum(deadlines[j.id] - j.release for j in instance.jobs if j.runtime)
    if slots > max_slots:
        return (
            f"{slots} job-slot variables above the limit {max_slots} of the "
            "time-indexed model: pass a larger max_slots or use a smaller instance"
        )
    return None


def solve_slots(
    instance: Instance,
    objective: Objective,
    deadlines: Mapping[int, int],
    *,
    hint: Schedule | None = None,
    time_limit: float | None = None,
    workers: int = 2,
) -> SlotSolution:
    """Build and solve the model of the module notes.

    Parameters
    ----------
    instance
        The problem (``any`` allocation; busy blocks are counts).
    objective
        A ``wct`` objective.
    deadlines
        ``D_j`` per job id (see the module notes).
    hint
        A feasible schedule (non-preemptive is fine) given to CP-SAT.
    time_limit
        Seconds for the search (``None``: until proven optimal).
    workers
        CP-SAT threads.
    """
    jobs = [j for j in instance.jobs if j.runtime > 0]
    first = min(j.release for j in instance.jobs)
    last = max([deadlines[j.id] for j in jobs] + [first])
    capacity = slot_capacity(instance, first, last)
    weights, scale = objective_weights([objective.weight(j) for j in jobs], last)
    model = cp_model.CpModel()
    x: dict[int, dict[int, cp_model.IntVar]] = {}
    ends: dict[int, cp_model.IntVar] = {}
    for job in jobs:
        allowed = [
            t
            for t in range(job.release, deadlines[job.id])
            if capacity[t - first] >= job.size
        ]
        x[job.id], ends[job.id] = _add_job(model, job, allowed, deadlines[job.id])
    for t in range(first, last):
        used = [(job.size, x[job.id][t]) for job in jobs if t in x[job.id]]
        if sum(q for q, _ in used) > capacity[t - first]:
            model.add(sum(q * var for q, var in used) <= capacity[t - first])
    model.minimize(sum(w * ends[j.id] for w, j in zip(weights, jobs, strict=True)))
    if hint is not None:
        _add_hint(model, x, ends, hint)
    solver = cp_model.CpSolver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.0, time_limit)
    solver.parameters.num_workers = max(1, workers)
    solver.parameters.linearization_level = 2
    began = time.perf_counter()
    status = solver.solve(model)
    notes: dict[str, Any] = {
        "cpsat_status": solver.status_name(status),
        "weight_scale": scale,
        "slot_variables": sum(len(v) for v in x.values()),
        "search_seconds": time.perf_counter() - began,
    }
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return SlotSolution(None, None, solver.status_name(status), notes)
    slots = {
        jid: sorted(t for t, var in row.items() if solver.value(var))
        for jid, row in x.items()
    }
    # Jobs of run time 0 and the constant part: C_j = r_j for them.
    constant = sum(
        objective.exact_weight(j) * j.release for j in instance.jobs if j.runtime == 0
    )
    exact = all(
        c == Fraction(objective.weight(j)) * Fraction(scale)
        for c, j in zip(weights, jobs, strict=True)
    )
    bound = _bound(solver.best_objective_bound, scale, exact) + constant
    return SlotSolution(slots, bound, solver.status_name(status), notes)


EXACT_LIMIT = 2**50
"""Largest ``sum_j D w_j * horizon`` solved with exact integer weights."""


def objective_weights(
    weights: Sequence[float], horizon: int
) -> tuple[list[int], float]:
    """Integer coefficients and the scale ``s`` they carry (``c_j ≈ s w_j``).

    Those of :func:`optsched.models.rigid.cpsat.integer_weights`: exact (``c_j =
    D w_j``, ``s = D`` a power of two) when small enough (see the module
    notes), else scaled and floored.
    """
    from optsched.models.rigid.cpsat import integer_weights

    integer, scale, _ = integer_weights(weights, max(1, horizon))
    return integer, scale


def _add_job(
    model: cp_model.CpModel, job: Job, allowed: Sequence[int], deadline: int
) -> tuple[dict[int, cp_model.IntVar], cp_model.IntVar]:
    r"""The slots ``x_{j,t}`` (``t`` in ``allowed``) and ``C_j`` of one job.

    Besides ``sum_t x_{j,t} = p_j``, the completion is written with
    "unfinished" indicators ``u_{j,t} = [C_j > t]`` for ``r_j <= t < D_j``:
    ``C_j = r_j + sum_t u_{j,t}``, ``u`` non-increasing, ``x_{j,t} <=
    u_{j,t}`` (a job runs only while unfinished) and ``p_j (1 - u_{j,t}) <=
    W_{j,t}`` with ``W_{j,t} = sum_{t' < t} x_{j,t'}`` (finished by ``t``
    means all its work lies before ``t``). Together with the mean-busy-time
    row ``2 p_j C_j >= sum_t (2t + 1) x_{j,t} + p_j^2`` (valid since ``p_j``
    unit slots before ``C_j`` have mean at most ``C_j - p_j / 2``) this is
    the strong time-indexed relaxation that CP-SAT's LP uses to prove
    bounds (Sousa and Wolsey 1992; Goemans 1997).
    """
    jid, p = job.id, job.runtime
    x = {t: model.new_bool_var(f"x{jid}_{t}") for t in allowed}
    model.add(sum(x.values()) == p)
    end = model.new_int_var(job.release + p, deadline, f"C{jid}")
    horizon = range(job.release, deadline)
    unfinished = {t: model.new_bool_var(f"u{jid}_{t}") for t in horizon}
    model.add(end == job.release + sum(unfinished.values()))
    done: Any = 0  # W_{j,t}, a linear expression in the x before t
    for t in horizon:
        if t + 1 < deadline:
            model.add(unfinished[t] >= unfinished[t + 1])
        if t in x:
            model.add(x[t] <= unfinished[t])
        model.add(p * (1 - unfinished[t]) <= done)
        if t in x:
            done = done + x[t]
    model.add(2 * p * end >= sum((2 * t + 1) * var for t, var in x.items()) + p * p)
    return x, end


def _bound(raw: float, scale: float, exact: bool) -> float:
    """The solver's bound in the objective's units, rounded the safe way.

    CP-SAT's bound on an integer objective is an integer (a float, exact
    below ``2**53``); divided by a power-of-two ``D`` it stays exact.
    """
    if exact:
        value = int(raw) if abs(raw) <= 2**53 else raw * (1 - 1e-15)
        return value if scale == 1.0 else value / scale
    return raw / scale * (1.0 - 1e-12)


def _add_hint(
    model: cp_model.CpModel,
    x: Mapping[int, Mapping[int, cp_model.IntVar]],
    ends: Mapping[int, cp_model.IntVar],
    hint: Schedule,
) -> None:
    for jid, row in x.items():
        placement = hint[jid]
        busy = {t for start, end, _ in placement.segments() for t in range(start, end)}
        if not busy <= row.keys():
            return  # the hint uses a slot outside the model: give none
    for jid, row in x.items():
        placement = hint[jid]
        busy = {t for start, end, _ in placement.segments() for t in range(start, end)}
        for t, var in row.items():
            model.add_hint(var, t in busy)
        model.add_hint(ends[jid], placement.end)


def solve_slots_highs(
    instance: Instance,
    objective: Objective,
    deadlines: Mapping[int, int],
    *,
    time_limit: float | None = None,
) -> SlotSolution:
    """The same model as :func:`solve_slots`, as a MILP solved by HiGHS.

    Variables per job: ``x_{j,t}``, ``u_{j,t}`` binary and the prefix sums
    ``W_{j,t}`` (continuous, ``W_{j,t+1} = W_{j,t} + x_{j,t}``); the
    objective is ``sum_j c_j (r_j + sum_t u_{j,t})`` with the integer
    coefficients ``c_j`` of :func:`objective_weights`. HiGHS proves
    optimality on these models far sooner than CP-SAT (its LP bound is the
    strong relaxation of :func:`_add_job`); its bound is a float within
    feasibility tolerances, so it loses :data:`BOUND_SAFETY` relative, as
    the MILP back-end's (:mod:`optsched.models.rigid.milp`), before it is rounded
    up (exact integer coefficients: every objective value is an integer)
    and divided by the scale.
    """
    import highspy

    jobs = [j for j in instance.jobs if j.runtime > 0]
    first = min(j.release for j in instance.jobs)
    last = max([deadlines[j.id] for j in jobs] + [first])
    capacity = slot_capacity(instance, first, last)
    weights, scale = objective_weights([objective.weight(j) for j in jobs], last)
    exact = all(
        c == Fraction(objective.weight(j)) * Fraction(scale)
        for c, j in zip(weights, jobs, strict=True)
    )
    model = _Milp()
    x: dict[int, dict[int, int]] = {}
    for job, weight in zip(jobs, weights, strict=True):
        allowed = [
            t
            for t in range(job.release, deadlines[job.id])
            if capacity[t - first] >= job.size
        ]
        x[job.id] = model.add_job(job, weight, allowed, deadlines[job.id])
    for t in range(first, last):
        used = [(job.size, x[job.id][t]) for job in jobs if t in x[job.id]]
        if sum(q for q, _ in used) > capacity[t - first]:
            model.row(-math.inf, capacity[t - first], [(v, q) for q, v in used])
    highs = model.build()
    if time_limit is not None:
        highs.setOptionValue("time_limit", max(1e-3, time_limit))
    began = time.perf_counter()
    highs.run()
    info = highs.getInfo()
    status = highs.getModelStatus()
    notes: dict[str, Any] = {
        "milp_status": highs.modelStatusToString(status),
        "weight_scale": scale,
        "slot_variables": sum(len(v) for v in x.values()),
        "search_seconds": time.perf_counter() - began,
    }
    bound = None
    if math.isfinite(info.mip_dual_bound):
        # In scaled units: sum_j c_j (r_j + sum_t u_{j,t}), c_j ~ scale w_j.
        raw = info.mip_dual_bound + sum(
            c * j.release for c, j in zip(weights, jobs, strict=True)
        )
        safe = raw - BOUND_SAFETY * max(1.0, abs(raw))
        scaled = math.ceil(safe) if exact else safe
        constant = sum(
            objective.exact_weight(j) * j.release
            for j in instance.jobs
            if j.runtime == 0
        )
        bound = (scaled if scale == 1.0 else scaled / scale) + constant
    slots = None
    if info.primal_solution_status == 2:  # a feasible point is known
        values = highs.getSolution().col_value
        slots = {
            jid: sorted(t for t, k in row.items() if values[k] > 0.5)
            for jid, row in x.items()
        }
        if not _slots_valid(jobs, slots, capacity, first):
            notes["solution_rejected"] = "HiGHS solution breaks the model when rounded"
            slots = None
    optimal = status == highspy.HighsModelStatus.kOptimal
    name = "OPTIMAL" if optimal else str(notes["milp_status"])
    return SlotSolution(slots, bound, name, notes)


BOUND_SAFETY = 1e-6
"""Relative amount the HiGHS bound loses (its feasibility tolerances)."""


def _slots_valid(
    jobs: Sequence[Job],
    slots: Mapping[int, Sequence[int]],
    capacity: Sequence[int],
    first: int,
) -> bool:
    """Exact check of rounded slots: work, releases, capacity."""
    use: dict[int, int] = {}
    for job in jobs:
        times = slots[job.id]
        if len(times) != job.runtime or (times and times[0] < job.release):
            return False
        for t in times:
            use[t] = use.get(t, 0) + job.size
    return all(q <= capacity[t - first] for t, q in use.items())


class _Milp:
    """Columns and rows collected in Python, passed to HiGHS at once."""

    def __init__(self) -> None:
        self.costs: list[float] = []
        self.lower: list[float] = []
        self.upper: list[float] = []
        self.integer: list[int] = []
        self.rows: list[tuple[float, float, list[tuple[int, float]]]] = []

    def column(self, cost: float, lower: float, upper: float, integer: bool) -> int:
        self.costs.append(cost)
        self.lower.append(lower)
        self.upper.append(upper)
        if integer:
            self.integer.append(len(self.costs) - 1)
        return len(self.costs) - 1

    def row(self, lower: float, upper: float, terms: list[tuple[int, float]]) -> None:
        self.rows.append((lower, upper, terms))

    def add_job(
        self, job: Job, weight: float, allowed: Sequence[int], deadline: int
    ) -> dict[int, int]:
        """The rows of :func:`_add_job` for one job; its ``x`` columns."""
        p = job.runtime
        x = {t: self.column(0.0, 0, 1, True) for t in allowed}
        self.row(p, p, [(k, 1.0) for k in x.values()])
        horizon = range(job.release, deadline)
        unfinished = {t: self.column(weight, 0, 1, True) for t in horizon}
        done = {t: self.column(0.0, 0, p, False) for t in horizon}
        for t in horizon:
            if t + 1 < deadline:
                self.row(0, math.inf, [(unfinished[t], 1), (unfinished[t + 1], -1)])
                step = [(done[t + 1], 1.0), (done[t], -1.0)]
                step += [(x[t], -1.0)] if t in x else []
                self.row(0, 0, step)
            if t in x:
                self.row(0, math.inf, [(unfinished[t], 1), (x[t], -1)])
            # p (1 - u_t) <= W_t
            self.row(p, math.inf, [(done[t], 1), (unfinished[t], p)])
        self.upper[done[job.release]] = 0  # nothing done before the release
        # 2 p (r_j + sum u) >= sum (2t + 1) x + p^2
        terms = [(unfinished[t], 2.0 * p) for t in horizon]
        terms += [(k, -(2.0 * t + 1)) for t, k in x.items()]
        self.row(p * p - 2.0 * p * job.release, math.inf, terms)
        return x

    def build(self) -> Any:
        import highspy

        highs = highspy.Highs()
        highs.setOptionValue("output_flag", False)
        highs.setOptionValue("mip_rel_gap", 0.0)
        inf = highspy.kHighsInf
        n = len(self.costs)
        highs.addVars(n, np.array(self.lower), np.array(self.upper))
        highs.changeColsCost(n, np.arange(n, dtype=np.int32), np.array(self.costs))
        if self.integer:
            count = len(self.integer)
            highs.changeColsIntegrality(
                count,
                np.array(self.integer, dtype=np.int32),
                np.full(count, highspy.HighsVarType.kInteger.value, dtype=np.uint8),
            )
        lower = [-inf if lo == -math.inf else lo for lo, _, _ in self.rows]
        upper = [inf if hi == math.inf else hi for _, hi, _ in self.rows]
        starts: list[int] = []
        index: list[int] = []
        value: list[float] = []
        for _, _, terms in self.rows:
            starts.append(len(index))
            index += [k for k, _ in terms]
            value += [v for _, v in terms]
        highs.addRows(
            len(self.rows),
            np.array(lower),
            np.array(upper),
            len(index),
            np.array(starts, dtype=np.int32),
            np.array(index, dtype=np.int32),
            np.array(value, dtype=np.float64),
        )
        return highs


def slot_segments(
    slots: Mapping[int, Sequence[int]],
) -> list[tuple[int, int, frozenset[int]]]:
    """Unit slots to segments ``(start, end, jobs)``: consecutive slots with
    the same jobs merge."""
    by_time: dict[int, set[int]] = {}
    for jid, times in slots.items():
        for t in times:
            by_time.setdefault(t, set()).add(jid)
    segments: list[tuple[int, int, frozenset[int]]] = []
    for t in sorted(by_time):
        members = frozenset(by_time[t])
        if segments and segments[-1][1] == t and segments[-1][2] == members:
            segments[-1] = (segments[-1][0], t + 1, members)
        else:
            segments.append((t, t + 1, members))
    return segments
