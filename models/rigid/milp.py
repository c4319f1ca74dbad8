r"""Time-indexed MILP back-end through PuLP (HiGHS by default, CBC as fallback).

Formulation (Sousa and Wolsey 1992; Pritsker, Watters and Wolfe 1969 for the
time-indexed variables; the "step" variables of Bigras, Gamache and Savard
2008 give the same LP relaxation with far fewer non-zeros). On a grid of
step ``g`` (see :mod:`optsched.models.common.timegrid`) job ``j`` may start in cells
``t \in [a_j, b_j]`` and occupies ``d_j`` cells. Binary
``y_{j,t} = 1`` iff ``j`` has started by cell ``t`` (``y_{j,t} = 0`` for
``t < a_j``, ``y_{j,b_j} = 1``):

.. math::

    y_{j,t-1} \le y_{j,t}, \qquad
    T_j = a_j + \sum_{t=a_j}^{b_j - 1} (1 - y_{j,t}) \quad\text{(start cell)}

    \sum_j q_j\,(y_{j,k} - y_{j,k-d_j}) \le \mathrm{cap}_k \quad \forall k
    \quad\text{(jobs running in cell } k\text{)}

    \text{cmax: } \min C,\ C \ge g T_j + p_j \qquad
    \text{wct: } \min \sum_j w_j (g T_j + p_j)

``cap_k`` is ``m`` minus the busy blocks (rounded as the grid says).
Contiguous machines with ``g = 1`` and a small model use pulse variables
``x_{j,t,o}`` (start ``t``, first processor ``o``) with one capacity row per
cell and processor: ``\sum x_{j,t,o} \le 1 - blocked_{k,p}`` over the
``(t, o)`` that cover ``(k, p)``. Larger contiguous instances are solved
as their ``any`` relaxation, for the lower bound only; their schedules then
come from the heuristics (``params['contiguous_model']`` says which).

Grid ``g > 1``: the rounded-down model gives a lower bound (its dual bound,
or with ``lp_only`` its LP optimum); the rounded-up model gives schedules,
which are re-timed by list scheduling in their start order. The serial
schedule generation scheme places each job at its earliest feasible start;
fed the jobs in start order of a feasible schedule it starts none of them
later (the jobs placed before ``j`` start no later than before, so those
running during ``j``'s original slot are a subset of the original ones;
Sprecher, Kolisch and Drexl 1995), hence both objectives can only improve.
The better of the two schedules is kept; every schedule is checked on the
original instance.

Solver facts are read from the solver, not from PuLP's status: HiGHS
reports "Optimal" only for a closed gap (we set ``mip_rel_gap = 0``) and
its ``mip_dual_bound`` is the bound; a time-limited run gives a dual bound
and maybe a solution. CBC's bound is only known when it proves optimality.
Bounds lose ``1e-6`` relative (:data:`BOUND_SAFETY`) to cover the solvers'
feasibility tolerances. Ctrl-C cancels HiGHS (through highspy's threaded
solve) and the call returns the heuristics and the bounds found so far,
with ``params['interrupted']``.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pulp

from optsched.instance import Instance
from optsched.models.common.settings import (
    DEFAULT_TIME_LIMIT,
    DEFAULT_WORKERS,
    SolverSettings,
)
from optsched.models.common.solution import (
    Candidate,
    assign_processors,
    checked_candidate,
    completion_deadlines,
)
from optsched.models.common.template import OutOfTime, conclude, on_time, prepare
from optsched.models.common.timegrid import (
    TimeGrid,
    choose_step,
    feasible_grid,
    relaxation_grid,
)
from optsched.models.moldable.bounds import require_rigid
from optsched.models.rigid.bounds import lower_bounds_within
from optsched.objective import Objective
from optsched.result import Bound, Incumbent, Result
from optsched.schedule import Placement, Schedule

BACKEND = "milp"
SOLVERS = ("highs", "cbc")
BOUND_SAFETY = 1e-6
"""Relative amount subtracted from solver bounds (feasibility tolerances)."""

MAX_CELLS = 400
"""Default largest number of grid cells; the step is chosen to fit it."""

CONTIGUOUS_NONZEROS = 50_000
"""Largest pulse model (non-zeros) built for an exact contiguous MILP."""


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    incumbents: Sequence[Incumbent] = (),
    solver: str = "highs",
    lp_only: bool = False,
    grid: int | None = None,
    max_cells: int = MAX_CELLS,
    log: bool = False,
) -> Result:
    """Solve or bound ``instance`` with the time-indexed MILP.

    Parameters
    ----------
    instance, objective
        The problem.
    time_limit
        Seconds for the whole call.
    workers
        Solver threads.
    incumbents
        Starting schedules, checked as for
        :func:`optsched.models.rigid.cpsat.solve` (the best feasible one is
        the solver's hint and the fallback upper bound).
    solver
        ``"highs"`` (through highspy) or ``"cbc"`` (PuLP's bundled CBC).
    lp_only
        Solve only the LP relaxation: a lower bound, no schedule
        (status ``BOUNDED``).
    grid
        Grid step in seconds; ``None`` picks the smallest step giving at
        most ``max_cells`` cells over the horizon.
    max_cells
        See ``grid``.
    log
        Show the solver's log.

    Returns
    -------
    Result
        ``params`` records the step, the model sizes, the solver status and
        which contiguous model was used.
    """
    settings = SolverSettings.of(locals())
    require_rigid("milp", instance)
    if solver not in SOLVERS:
        raise ValueError(f"unknown MILP solver {solver!r}; valid: {', '.join(SOLVERS)}")
    if grid is not None and grid < 1:
        raise ValueError(f"grid step {grid} must be a positive number of seconds")
    solving = prepare(
        instance, objective, settings, backend=BACKEND, incumbents=incumbents,
        bounds=lower_bounds_within, record=(),
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    objective = solving.objective
    run = _Run(instance, objective, solving.started, time_limit, workers, solver, log)
    run.bounds, run.params = solving.bounds, solving.params
    run.deadline = solving.deadline
    heuristics = solving.candidates
    deadlines = completion_deadlines(instance, objective, solving.hint.schedule)
    horizon = max(deadlines.values())
    step = grid if grid is not None else choose_step(horizon, max_cells)
    run.params.update(step=step, horizon=horizon, lp_only=lp_only)
    too_large = model_overflow(objective, run.weights, horizon)
    if too_large is not None:
        solving.skip(f"{BACKEND}: model not built: {too_large}")
    elif solving.expired():
        solving.skip(f"{BACKEND}: model skipped (time limit)")
    else:
        try:
            solving.candidates += _solve_models(
                run, deadlines, step, lp_only, heuristics
            )
        except (KeyboardInterrupt, _Interrupted):
            # Ctrl-C: keep the heuristics and the bounds found so far.
            run.params["interrupted"] = True
        except OutOfTime as late:
            # A model's construction reached the deadline, or too little
            # was left to solve it: the bounds of the models solved before
            # it stay.
            what = str(late) or "model building stopped"
            solving.skip(f"{BACKEND}: {what} (time limit)")
    return conclude(solving, schedules=not lp_only)


FEASIBILITY_JUMP_SECONDS = 30.0
"""Shortest HiGHS time limit with its feasibility jump heuristic on (it runs
without looking at the clock; see :func:`_run_solver`)."""

FLOAT_EXACT = 2**53
"""Largest objective value a MILP may reach: beyond, doubles no longer hold
every integer, and HiGHS treats values from ``1e20`` on as infinite."""


def model_overflow(
    objective: Objective, weights: Mapping[int, float], horizon: int
) -> str | None:
    """Why the MILP exceeds float precision, or ``None``.

    Every value of the model (a completion time up to the horizon ``H``, a
    makespan, ``sum_j w_j C_j <= sum_j w_j H``) must stay below
    :data:`FLOAT_EXACT`, where doubles still count in units.
    """
    scale = 1 if objective.kind == "cmax" else max(1, int(sum(weights.values())))
    total = scale * horizon
    if horizon < FLOAT_EXACT and total < FLOAT_EXACT:
        return None
    return (
        f"horizon {horizon} gives objective values up to {total}, beyond the "
        "MILP solvers' float precision 2**53"
    )


@dataclass
class _Run:
    """Settings and accumulated outputs of one MILP call."""

    instance: Instance
    objective: Objective
    started: float
    time_limit: float
    workers: int
    solver: str
    log: bool
    bounds: list[Bound] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    deadline: float | None = None  # time.monotonic, for the model builders

    def remaining(self, share: float = 1.0) -> float:
        """Seconds left times ``share`` (at least a token 0.05 s)."""
        left = self.time_limit - (time.perf_counter() - self.started)
        return max(0.05, left * share)

    @property
    def weights(self) -> dict[int, float]:
        return {j.id: self.objective.weight(j) for j in self.instance.jobs}


def _solve_models(
    run: _Run,
    deadlines: Mapping[int, int],
    step: int,
    lp_only: bool,
    heuristics: list[Candidate],
) -> list[Candidate]:
    instance = run.instance
    contiguous = instance.machine.allocation == "contiguous"
    if contiguous:
        exact = (
            step == 1 and _pulse_nonzeros(instance, deadlines) <= CONTIGUOUS_NONZEROS
        )
        run.params["contiguous_model"] = "exact" if exact else "any-relaxation"
        if exact:
            return _solve_pulse(run, deadlines, lp_only)
    down = relaxation_grid(instance, deadlines, step, run.weights)
    if lp_only:
        _solve_step(run, down, "lp", relax=True, share=1.0)
        return []
    if step == 1:
        starts = _solve_step(run, down, "exact", relax=False, share=1.0)
        return [] if contiguous else _schedules_from(run, starts, step)
    _solve_step(run, down, "relaxation", relax=False, share=0.5)
    if contiguous:
        return []
    order = sorted(heuristics[0].schedule.placements, key=_by_start(heuristics[0]))
    up, _ = feasible_grid(instance, step, order, run.objective.kind, run.weights)
    starts = _solve_step(run, up, "schedule", relax=False, share=1.0, bound=False)
    return _schedules_from(run, starts, step)


def _by_start(candidate: Candidate) -> Any:
    placements = candidate.schedule.placements
    return lambda jid: (placements[jid].start, jid)


# --------------------------------------------------------------------------
# Step formulation (any allocation)
# --------------------------------------------------------------------------


def _solve_step(
    run: _Run,
    grid: TimeGrid,
    role: str,
    *,
    relax: bool,
    share: float,
    bound: bool = True,
) -> dict[int, int] | None:
    """Build and solve the step model; record its bound; return start cells."""
    began = time.monotonic()
    prob, y, _ = _step_model(grid, run.objective, relax, run.deadline)
    _enough_left(run, time.monotonic() - began)
    run.params[f"{role}_model"] = {
        "variables": prob.numVariables(),
        "constraints": prob.numConstraints(),
        "cells": grid.cells,
        "step": grid.step,
    }
    # HiGHS's presolve of the step model's long monotone chains runs for
    # seconds without looking at the clock or at Ctrl-C (on a 200-job
    # window: 19 s against a 10 s limit, no bound); without it the limit
    # holds and the root LP gives a bound at once.
    outcome = _run_solver(run, prob, relax=relax, share=share, presolve=False)
    run.params[f"{role}_status"] = outcome.status
    if outcome.infeasible:
        run.params["error"] = (
            f"{role} model infeasible (a model bug: a schedule exists)"
        )
    if bound and outcome.bound is not None:
        name = _bound_name(run.solver, role, grid.step, relax)
        if run.instance.machine.allocation == "contiguous":
            name += ":any"  # the cumulative relaxation of a contiguous machine
        value = outcome.bound - run.objective.offset(run.instance)
        run.bounds.append(Bound(_safe(value), name, outcome.runtime))
    if outcome.interrupted:
        raise _Interrupted(role)
    if not outcome.has_solution:
        return None
    return {
        job.id: job.first + sum(1 for v in y[job.id] if (v.varValue or 0.0) < 0.5)
        for job in grid.jobs
    }


def _enough_left(run: _Run, building: float) -> None:
    """:class:`OutOfTime` when less time is left than building the model took.

    HiGHS's start on a model (the transfer, its setup, the first LP
    iterations) looks at neither the clock nor Ctrl-C for a time that grows
    with the model like its building does: on a 1,000-job KTH window a
    model built in 2.6 s with 2.1 s left ran 2.8 s in HiGHS and ended the
    call 2.4 s late. Such a solve is left out.
    """
    if run.deadline is not None and run.deadline - time.monotonic() < building:
        raise OutOfTime("model not solved: less time left than its building took")


def _step_model(
    grid: TimeGrid, objective: Objective, relax: bool, deadline: float | None = None
) -> tuple[pulp.LpProblem, dict[int, list[pulp.LpVariable]], dict[int, Any]]:
    prob = pulp.LpProblem("optsched_step", pulp.LpMinimize)
    cat = pulp.LpContinuous if relax else pulp.LpBinary
    g = grid.step
    y: dict[int, list[pulp.LpVariable]] = {}
    starts: dict[int, pulp.LpAffineExpression] = {}
    for job in grid.jobs:
        on_time(deadline)  # OutOfTime: the builder stops at the deadline
        # y[t - first] for t in [first, last - 1]; y at `last` is the constant 1.
        y[job.id] = [
            prob.add_variable(f"y_{job.id}_{t}", 0, 1, cat)
            for t in range(job.first, job.last)
        ]
        for earlier, later in zip(y[job.id], y[job.id][1:], strict=False):
            prob += earlier <= later
        starts[job.id] = job.last - pulp.lpSum(y[job.id])
    _add_step_capacity(prob, grid, y, deadline)
    completion = {j.id: g * starts[j.id] + j.runtime for j in grid.jobs}
    _minimise(prob, objective, completion, {j.id: j.weight for j in grid.jobs})
    return prob, y, starts


def _minimise(
    prob: pulp.LpProblem,
    objective: Objective,
    completion: Mapping[int, Any],
    weights: Mapping[int, float],
) -> None:
    """The objective of both MILPs over the jobs' ``completion`` expressions:
    ``cmax``, ``min C`` with ``C >= C_j``; ``wct``, ``min sum_j w_j C_j``."""
    if objective.kind == "cmax":
        cmax = prob.add_variable("Cmax", 0)
        for done in completion.values():
            prob += done <= cmax
        prob += cmax
    else:
        prob += pulp.lpSum(weights[jid] * done for jid, done in completion.items())


def _add_step_capacity(
    prob: pulp.LpProblem,
    grid: TimeGrid,
    y: Mapping[int, list[pulp.LpVariable]],
    deadline: float | None = None,
) -> None:
    """``sum_j q_j (y_{j,k} - y_{j,k-d_j}) <= cap_k`` for every cell ``k``."""
    terms: list[dict[pulp.LpVariable, float]] = [{} for _ in range(grid.cells)]
    constants = [0.0] * grid.cells
    for job in grid.jobs:
        on_time(deadline)
        if job.duration == 0:
            continue
        for k in range(job.first, min(grid.cells, job.last + job.duration)):
            _add_started(terms[k], constants, k, job, k, y[job.id], +job.size)
            _add_started(
                terms[k], constants, k, job, k - job.duration, y[job.id], -job.size
            )
    for k in range(grid.cells):
        if not terms[k] and constants[k] <= grid.capacity[k]:
            continue
        expr = pulp.LpAffineExpression(list(terms[k].items()))
        prob += expr <= grid.capacity[k] - constants[k]


def _add_started(
    terms: dict[pulp.LpVariable, float],
    constants: list[float],
    row: int,
    job: Any,
    cell: int,
    y: list[pulp.LpVariable],
    coefficient: int,
) -> None:
    """Add ``coefficient * y_{job, cell}`` (a constant outside the variable range)."""
    if cell < job.first:
        return
    if cell >= job.last:
        constants[row] += coefficient
        return
    var = y[cell - job.first]
    terms[var] = terms.get(var, 0.0) + coefficient


# --------------------------------------------------------------------------
# Pulse formulation (small contiguous instances, g = 1)
# --------------------------------------------------------------------------


def _pulse_nonzeros(instance: Instance, deadlines: Mapping[int, int]) -> int:
    m = instance.processors
    total = 0
    for j in instance.jobs:
        starts = deadlines[j.id] - j.runtime - j.release + 1
        total += starts * (m - j.size + 1) * max(1, j.runtime * j.size)
    return total


def _solve_pulse(
    run: _Run, deadlines: Mapping[int, int], lp_only: bool
) -> list[Candidate]:
    instance = run.instance
    prob, x = _pulse_model(
        instance, run.objective, deadlines, relax=lp_only, deadline=run.deadline
    )
    run.params["exact_model"] = {
        "variables": prob.numVariables(),
        "constraints": prob.numConstraints(),
    }
    outcome = _run_solver(run, prob, relax=lp_only, share=1.0)
    run.params["exact_status"] = outcome.status
    if outcome.infeasible:
        run.params["error"] = "contiguous model infeasible (a model bug)"
    if outcome.bound is not None:
        name = _bound_name(run.solver, "lp" if lp_only else "exact", 1, lp_only)
        value = outcome.bound - run.objective.offset(instance)
        run.bounds.append(Bound(_safe(value), name, outcome.runtime))
    if outcome.interrupted:
        raise _Interrupted("exact")
    if lp_only or not outcome.has_solution:
        return []
    jobs = instance.jobs_by_id()
    placements = {}
    for (jid, t, o), var in x.items():
        if (var.varValue or 0.0) > 0.5:
            placements[jid] = Placement.contiguous(
                t, t + jobs[jid].runtime, o, jobs[jid].size
            )
    schedule = Schedule(placements, _source(run.solver))
    candidate, reason = checked_candidate(
        instance, run.objective, _source(run.solver), schedule
    )
    if candidate is None:
        run.params.setdefault("rejected", []).append(str(reason))
        return []
    return [candidate]


def _pulse_model(
    instance: Instance,
    objective: Objective,
    deadlines: Mapping[int, int],
    *,
    relax: bool,
    deadline: float | None = None,
) -> tuple[pulp.LpProblem, dict[tuple[int, int, int], pulp.LpVariable]]:
    m = instance.processors
    prob = pulp.LpProblem("optsched_pulse", pulp.LpMinimize)
    cat = pulp.LpContinuous if relax else pulp.LpBinary
    x: dict[tuple[int, int, int], pulp.LpVariable] = {}
    cover: dict[tuple[int, int], list[pulp.LpVariable]] = {}
    completion: dict[int, pulp.LpAffineExpression] = {}
    for j in instance.jobs:
        own: list[tuple[pulp.LpVariable, float]] = []
        for t in range(j.release, deadlines[j.id] - j.runtime + 1):
            on_time(deadline)  # OutOfTime: the builder stops at the deadline
            for o in range(m - j.size + 1):
                var = prob.add_variable(f"x_{j.id}_{t}_{o}", 0, 1, cat)
                x[j.id, t, o] = var
                own.append((var, float(t + j.runtime)))
                for k in range(t, t + j.runtime):
                    for p in range(o, o + j.size):
                        cover.setdefault((k, p), []).append(var)
        prob += pulp.lpSum(var for var, _ in own) == 1
        completion[j.id] = pulp.LpAffineExpression(own)
    blocked = _blocked_cells(instance)
    for (k, p), variables in cover.items():
        prob += pulp.lpSum(variables) <= (0 if (k, p) in blocked else 1)
    weights = {j.id: objective.weight(j) for j in instance.jobs}
    _minimise(prob, objective, completion, weights)
    return prob, x


def _blocked_cells(instance: Instance) -> set[tuple[int, int]]:
    return {
        (k, p)
        for b in instance.machine.unavailable
        for k in range(b.start, b.end)
        for p in (b.processors or ())
    }


# --------------------------------------------------------------------------
# Solvers
# --------------------------------------------------------------------------


class _HiGHS(pulp.HiGHS):
    """PuLP's highspy interface, with a bulk model transfer and Ctrl-C.

    PuLP 3.3 hands the model to HiGHS one column and one row at a time
    (about 8 s for a 200-job window's 40,000 columns, mostly in per-column
    integrality calls); here columns, integrality and rows go in three bulk
    calls. The solve runs through highspy's ``solve()`` with
    ``HandleKeyboardInterrupt``: Ctrl-C cancels HiGHS, which returns its
    incumbent and bound with model status "Interrupted by user". A model
    transferred after ``deadline`` (``time.monotonic``) is not solved
    (:class:`~optsched.models.common.template.OutOfTime`).
    """

    deadline: float | None = None
    timed_out = False

    def buildSolverModel(self, lp: pulp.LpProblem) -> None:
        import highspy

        inf = highspy.kHighsInf
        highs = lp.solverModel
        variables = lp.variables()
        sense = -1.0 if lp.sense == pulp.LpMaximize else 1.0
        for index, var in enumerate(variables):
            var.index = index
        lower = [-inf if v.lowBound is None else v.lowBound for v in variables]
        upper = [inf if v.upBound is None else v.upBound for v in variables]
        highs.addVars(len(variables), np.array(lower), np.array(upper))
        costs = [sense * lp.objective.get(v, 0.0) for v in variables]
        everything = np.arange(len(variables), dtype=np.int32)
        highs.changeColsCost(len(variables), everything, np.array(costs, dtype=float))
        integer = [v.index for v in variables if v.cat == pulp.LpInteger]
        if integer and self.mip:
            kinds = np.full(len(integer), highspy.HighsVarType.kInteger.value)
            highs.changeColsIntegrality(
                len(integer), np.array(integer, dtype=np.int32), kinds.astype(np.uint8)
            )
        self._add_rows(lp, highs, inf)
        on_time(self.deadline)

    @staticmethod
    def _add_rows(lp: pulp.LpProblem, highs: Any, inf: float) -> None:
        starts: list[int] = []
        indices: list[int] = []
        values: list[float] = []
        lower: list[float] = []
        upper: list[float] = []
        for index, constraint in enumerate(lp._constraints.values()):
            constraint.index = index
            starts.append(len(indices))
            for var, coefficient in constraint.items():
                if coefficient != 0:
                    indices.append(var.index)
                    values.append(coefficient)
            low, high = constraint.getLb(), constraint.getUb()
            lower.append(-inf if low is None else low)
            upper.append(inf if high is None else high)
        highs.addRows(
            len(starts),
            np.array(lower, dtype=float),
            np.array(upper, dtype=float),
            len(indices),
            np.array(starts, dtype=np.int32),
            np.array(indices, dtype=np.int32),
            np.array(values, dtype=float),
        )

    def callSolver(self, lp: pulp.LpProblem) -> None:
        highs = lp.solverModel
        highs.HandleKeyboardInterrupt = True
        # HiGHS's own limit counts from its start and some of its steps
        # (the root LP of a large model) overrun it; at the call's deadline
        # it is cancelled like Ctrl-C, and `timed_out` tells the two apart.
        self.timed_out = False
        alarm = None
        if self.deadline is not None:

            def cancel() -> None:
                self.timed_out = True
                highs.cancelSolve()

            alarm = threading.Timer(max(0.0, self.deadline - time.monotonic()), cancel)
            alarm.daemon = True
            alarm.start()
        try:
            highs.solve()
        finally:
            if alarm is not None:
                alarm.cancel()


class _Interrupted(Exception):
    """HiGHS stopped on Ctrl-C: no further model is solved."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    status: str
    bound: float | None
    has_solution: bool
    infeasible: bool
    runtime: float
    interrupted: bool = False


def _run_solver(
    run: _Run,
    prob: pulp.LpProblem,
    *,
    relax: bool,
    share: float,
    presolve: bool = True,
) -> _Outcome:
    # A model finished after the deadline is not handed to the solver (its
    # transfer alone takes seconds on large grids).
    on_time(run.deadline)
    limit = run.remaining(share)
    began = time.perf_counter()
    if run.solver == "highs":
        # HiGHS's feasibility jump heuristic does not look at the clock: on
        # the 35,000-column step model of a 200-item strip it ran 6 s
        # before the first node against a 1 s limit. Short solves go
        # without it (the heuristics' schedules are the incumbents).
        jump = limit >= FEASIBILITY_JUMP_SECONDS
        backend = _HiGHS(
            mip=not relax,
            msg=run.log,
            timeLimit=limit,
            threads=run.workers,
            gapRel=0.0,
            gapAbs=0.0,
            presolve="on" if presolve else "off",
            mip_heuristic_run_feasibility_jump=jump,
        )
        backend.deadline = run.deadline
        try:
            prob.solve(backend)
        except (IndexError, pulp.PulpSolverError) as error:
            # HiGHS refused the model (PuLP then reads missing solution rows):
            # no bound, no solution, said in one line rather than a traceback.
            return _Outcome(
                f"solver failed: {type(error).__name__}: {error}", None, False, False,
                time.perf_counter() - began,
            )  # fmt: skip
        outcome = _highs_outcome(prob, relax)
        if backend.timed_out:  # cancelled at the deadline, not by Ctrl-C
            outcome = dataclasses.replace(outcome, status="Time limit reached")
    else:
        with warnings.catch_warnings():
            # PuLP 3.3 announces that PULP_CBC_CMD (its bundled CBC binary)
            # goes away in PuLP 4; it is the CBC every PuLP 3 install has.
            warnings.simplefilter("ignore", DeprecationWarning)
            backend = pulp.PULP_CBC_CMD(
                mip=not relax,
                msg=run.log,
                timeLimit=limit,
                threads=run.workers,
                gapRel=0.0,
            )
            prob.solve(backend)
        outcome = _cbc_outcome(prob)
    return _Outcome(
        outcome.status,
        outcome.bound,
        outcome.has_solution,
        outcome.infeasible,
        time.perf_counter() - began,
        interrupted="interrupt" in outcome.status.lower(),
    )


def _highs_outcome(prob: pulp.LpProblem, relax: bool) -> _Outcome:
    import highspy

    highs = prob.solverModel
    # PuLP hands HiGHS the column costs only: add the objective's constant.
    constant = float(prob.objective.constant) if prob.objective is not None else 0.0
    status = highs.getModelStatus()
    info = highs.getInfo()
    name = highs.modelStatusToString(status)
    infeasible = status == highspy.HighsModelStatus.kInfeasible
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    bound: float | None = None
    if relax:
        # An LP value is a bound only at optimality.
        if status == highspy.HighsModelStatus.kOptimal:
            bound = float(info.objective_function_value) + constant
    elif info.mip_dual_bound > -float("inf") and info.mip_dual_bound < float("inf"):
        bound = float(info.mip_dual_bound) + constant
    return _Outcome(name, bound, has_solution and not relax, infeasible, 0.0)


def _cbc_outcome(prob: pulp.LpProblem) -> _Outcome:
    # CBC through PuLP exposes no dual bound: only a proven optimum is a bound.
    status = pulp.LpStatus[prob.status]
    solution = pulp.LpSolution[prob.sol_status]
    proven = prob.sol_status == pulp.LpSolutionOptimal
    value = pulp.value(prob.objective)
    bound = float(value) if proven and value is not None else None
    has_solution = prob.sol_status in (
        pulp.LpSolutionOptimal,
        pulp.LpSolutionIntegerFeasible,
    )
    infeasible = prob.status == pulp.LpStatusInfeasible
    return _Outcome(f"{status}/{solution}", bound, has_solution, infeasible, 0.0)


def _safe(value: float) -> float:
    return value - BOUND_SAFETY * max(1.0, abs(value))


def _bound_name(solver: str, role: str, step: int, relax: bool) -> str:
    kind = "lp" if relax else "milp"
    grid = f":grid={step}" if step > 1 else ""
    return f"{kind}:{solver}{grid}"


def _source(solver: str) -> str:
    return f"{BACKEND}:{solver}"


# --------------------------------------------------------------------------
# Schedules
# --------------------------------------------------------------------------


def _schedules_from(
    run: _Run, cells: Mapping[int, int] | None, step: int
) -> list[Candidate]:
    """The grid schedule (``S_j = g t_j``) and its list-scheduled re-timing."""
    if cells is None:
        return []
    from optsched.packing import list_schedule

    instance, objective = run.instance, run.objective
    source = _source(run.solver)
    out: list[Candidate] = []
    raw = assign_processors(instance, {jid: step * t for jid, t in cells.items()})
    candidate, reason = checked_candidate(instance, objective, source, raw)
    if candidate is None:
        run.params.setdefault("rejected", []).append(str(reason))
    else:
        out.append(candidate)
    order = sorted(cells, key=lambda jid: (cells[jid], jid))
    retimed = list_schedule(instance, order)
    candidate, reason = checked_candidate(
        instance, objective, f"{source}+list", retimed
    )
    if candidate is None:
        run.params.setdefault("rejected", []).append(str(reason))
    else:
        out.append(candidate)
    return out
