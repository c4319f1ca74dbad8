"""From solver output and heuristic schedules to one checked :class:`Result`.

Shared by every back-end (through the frame of
:mod:`~optsched.models.common.template`, which calls these):

* :func:`upper_bound_candidates` collects the schedules every back-end starts
  from: the incumbents its caller gives (policies' complete schedules,
  offline heuristics, a user hint) and a list schedule of its own. Each one
  is checked against the instance before it is used; back-ends never run
  the simulator.
* :func:`assign_processors` gives explicit processor indices to a schedule
  found by a cumulative (``any``) model (:func:`optsched.packing.
  assign_processors`).
* :func:`completion_deadlines` gives, per job, a completion time that some
  (cmax) or every (wct) optimal schedule respects: the models' time horizon.
* :func:`finish` picks the best checked schedule, takes the maximum of all
  lower bounds and decides the status.

Status rule (every back-end): ``OPTIMAL`` iff the recomputed objective equals
the best lower bound. Makespans are integers, and so are weighted completion
times with integer weights: the objective is then an exact ``int``
(:meth:`Objective.value`), the lower bound is rounded up to an ``int`` and
the comparison is exact at any size. Weighted completion times with
fractional weights are float sums; they count as equal when they differ by
at most :data:`WCT_RELATIVE_TOLERANCE` times the objective.

Time limits: :func:`upper_bound_candidates` takes a ``time.monotonic``
deadline like :func:`optsched.models.rigid.bounds.lower_bounds_within`, so that
the checks of many incumbents on a large window stay inside the limit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from optsched import packing
from optsched.check import check_schedule
from optsched.families import first_with, load
from optsched.instance import Instance
from optsched.intervals import processor_set
from optsched.objective import Objective
from optsched.result import Bound, Incumbent, Result, SolveStatus
from optsched.schedule import Placement, Schedule

WCT_RELATIVE_TOLERANCE = 1e-9
"""Relative tolerance under which a non-integral wct objective equals its
lower bound (integral objectives compare exactly)."""

LIST_WINDOW = 256
"""Breakpoints of the capacity profile the back-ends' own list schedule
keeps open behind its latest ones (:func:`optsched.packing.list_schedule`'s
``window``): the serial SGS scans the whole past for each job, quadratic on
a long strip (a 50,000-item strip took minutes); with a bounded lookback it
is ``O(n * window)``. Smaller packings (profiles of up to ``2 * 256``
breakpoints) get the unbounded schedule; on larger ones the makespan may
grow: +0.3 % on a 3,152-item perfect packing, +1.1 % on an 8,000-item random
strip, none on KTH windows (benchmarks/README.md, issue 30)."""

FLOAT_NOISE_ULPS = 16
"""Units in the last place taken off a float bound before rounding it up.

Integer bounds are exact ``int`` values and are never touched; a float
bound (a solver's, already shifted down by the back-end's own safety
margin) may still carry a few roundings, each at most half an ulp. A
relative slack would not do: ``1e-9`` of ``10**12`` is 1000 units, which
turned proven optima into "feasible" with a bound 1000 too low."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A checked schedule and where it came from.

    Parameters
    ----------
    source
        ``"cpsat"``, ``"milp:highs"``, ``"policy:easy"``, ``"hint"``, or the
        producer of the offline heuristic (e.g. ``"list:lpt"``).
    schedule
        Feasible on the instance, with explicit processors.
    value
        Objective value recomputed from ``schedule``.
    """

    source: str
    schedule: Schedule
    value: float


# --------------------------------------------------------------------------
# Processor assignment
# --------------------------------------------------------------------------


def assign_processors(instance: Instance, starts: Mapping[int, int]) -> Schedule:
    """Placements with explicit processors for start times of a cumulative model.

    Parameters
    ----------
    instance
        An ``any``-allocation instance (its busy blocks are processor counts).
    starts
        ``{job id: start}`` respecting releases and the capacity rule (jobs
        plus busy blocks use at most ``m`` processors at every instant).

    Returns
    -------
    Schedule
        Every job with an explicit processor set.

    Notes
    -----
    Delegates to :func:`optsched.packing.assign_processors`, a sweep in
    start order giving each job, and each busy block, free processors. Why a
    count-feasible cumulative schedule always admits a non-migrating
    assignment on identical processors: think of each job and each block as
    an interval needing ``q`` processors. At a start time ``t`` the
    processors held by running items number ``sum(running q)``, and the
    capacity rule gives ``sum(running q) + q_j <= m``, so ``q_j`` processors
    are free; a processor freed at an end stays free until someone takes it,
    so nothing assigned earlier can block a later item. This is the
    classical argument that greedy colouring of an interval graph in order
    of left end points needs no more colours than the largest clique
    (Hajnal and Surányi 1958), with a job of size ``q`` as ``q`` identical
    intervals. Busy blocks on ``any`` machines carry no offset
    (:class:`~optsched.instance.Machine` refuses one), so no pinned block can
    defeat the sweep.

    A start vector that breaks the capacity rule (a model bug, or a solver's
    rounding) cannot be assigned; rather than stop the back-end, every job
    then gets processors ``[0, q_j)``, so that the checker rejects the
    schedule and names the overrun.
    """
    if instance.machine.allocation == "contiguous":
        raise ValueError("assign_processors: the machine is contiguous")
    try:
        return packing.assign_processors(instance, starts)
    except ValueError:
        jobs = instance.jobs_by_id()
        return Schedule(
            {
                jid: Placement(
                    s,
                    s + jobs[jid].runtime,
                    processor_set([(0, jobs[jid].size)]),
                )
                for jid, s in starts.items()
            }
        )


def with_processors(instance: Instance, schedule: Schedule) -> Schedule:
    """``schedule`` with explicit processors (assigned by a sweep when missing)."""
    if all(p.processors is not None for p in schedule.placements.values()):
        return schedule
    if instance.machine.allocation == "contiguous":
        raise ValueError("a contiguous schedule needs explicit processors")
    starts = {jid: p.start for jid, p in schedule.placements.items()}
    assigned = assign_processors(instance, starts)
    return Schedule(assigned.placements, schedule.producer, schedule.killed)


# --------------------------------------------------------------------------
# Upper-bound candidates
# --------------------------------------------------------------------------


def checked_candidate(
    instance: Instance, objective: Objective, source: str, schedule: Schedule
) -> tuple[Candidate | None, str | None]:
    """Check ``schedule``; return it as a candidate, or ``None`` and the reason.

    A schedule in which a job was killed did less work than the offline
    problem asks, and one in which a job migrates or is preempted is not a
    schedule of the offline models: none may bound their optimum.
    """
    if schedule.killed:
        return None, f"{source}: kills jobs {sorted(schedule.killed)[:5]}"
    migrated = sorted(j for j, p in schedule.placements.items() if p.moves)
    if migrated:
        return None, f"{source}: migrates jobs {migrated[:5]}"
    preempted = sorted(j for j, p in schedule.placements.items() if p.pieces)
    if preempted:
        return None, f"{source}: preempts jobs {preempted[:5]}"
    try:
        schedule = with_processors(instance, schedule)
    except ValueError as error:
        return None, f"{source}: {error}"
    violations = check_schedule(instance, schedule)
    if violations:
        return None, f"{source}: {violations[0]}"
    schedule = Schedule(schedule.placements, source)
    return Candidate(source, schedule, objective.value(instance, schedule)), None


def upper_bound_candidates(
    instance: Instance,
    objective: Objective,
    *,
    incumbents: Sequence[Incumbent] = (),
    deadline: float | None = None,
) -> tuple[list[Candidate], list[str]]:
    """Checked starting schedules: the given incumbents and a list schedule.

    Back-ends do not simulate policies: the caller (the analysis pipeline,
    :mod:`optsched.analysis.gap`) passes the policies' and offline heuristics'
    schedules as ``incumbents``. A list schedule in submit order
    (:func:`optsched.packing.list_schedule`, lookback bounded by
    :data:`LIST_WINDOW`) is always added, so that a back-end called alone
    still has a feasible schedule for its horizon.
    The first incumbent (the caller's best) is always checked; the others
    only while ``deadline`` (``time.monotonic``) has not passed, and are
    listed as not checked otherwise.

    Returns
    -------
    candidates, rejected
        Feasible schedules (best first) and one line per rejected schedule.
    """
    from optsched.packing import list_schedule
    from optsched.topology.machines import append_schedule

    row = first_with("candidates", instance)
    if row is not None:
        # A list schedule ignores the feature (site rules): the family
        # table names the candidates that follow it.
        assert row.candidates is not None
        return load(row.candidates)(instance, objective, incumbents, deadline)
    submit_order = [j.id for j in instance.jobs]
    fallback = (
        list_schedule(instance, submit_order, window=LIST_WINDOW)
        if instance.machine.flat
        else append_schedule(instance, submit_order)
    )
    raw: list[tuple[str, Schedule]] = [("list:submit", fallback)]
    raw += [(incumbent.source, incumbent.schedule) for incumbent in incumbents]
    return check_candidates(
        instance, objective, raw, always=2, deadline=deadline, what="heuristic"
    )


def check_candidates(
    instance: Instance,
    objective: Objective,
    raw: Sequence[tuple[str, Schedule]],
    *,
    always: int,
    deadline: float | None,
    what: str,
) -> tuple[list[Candidate], list[str]]:
    """``raw`` schedules through :func:`checked_candidate`, best first.

    The first ``always`` are checked whatever the time; the others only
    while ``deadline`` (``time.monotonic``) has not passed, and are listed
    as not checked otherwise. ``RuntimeError`` ("no feasible ``what``
    schedule") when none passes.
    """
    rejected: list[str] = []
    candidates: list[Candidate] = []
    for k, (source, schedule) in enumerate(raw):
        if k >= always and deadline is not None and time.monotonic() >= deadline:
            rejected.append(f"{source}: not checked (time limit)")
            continue
        candidate, reason = checked_candidate(instance, objective, source, schedule)
        if candidate is None:
            rejected.append(str(reason))
        else:
            candidates.append(candidate)
    if not candidates:
        raise RuntimeError(f"no feasible {what} schedule: {'; '.join(rejected)}")
    candidates.sort(key=lambda c: c.value)
    return candidates, rejected


def bounds_deadline(deadline: float) -> float:
    """When the closed-form bounds of a searching back-end must stop.

    Half the time left (``time.monotonic``): the long bounds stop there,
    keeping their best value, so that the solver keeps the other half.
    """
    now = time.monotonic()
    return now + 0.5 * max(0.0, deadline - now)


# --------------------------------------------------------------------------
# Horizons
# --------------------------------------------------------------------------


def safe_horizon(instance: Instance) -> int:
    """``T0 + sum_j p_j`` with ``T0 = max(max_j r_j, max busy-block end)``.

    Every schedule minimising a sum of completion times with positive weights
    completes all jobs by this time (see :func:`completion_deadlines`).
    """
    t0 = max(
        [j.release for j in instance.jobs]
        + [b.end for b in instance.machine.unavailable]
        + [0]
    )
    return t0 + sum(j.runtime for j in instance.jobs)


def completion_deadlines(
    instance: Instance, objective: Objective, upper_bound: Schedule
) -> dict[int, int]:
    """Per job, a latest completion time that keeps an optimal schedule.

    Parameters
    ----------
    instance, objective
        The problem.
    upper_bound
        A feasible schedule (the incumbent); it meets every deadline.

    Returns
    -------
    dict
        ``{job id: D_j}`` with ``r_j + p_j <= D_j``.

    Notes
    -----
    *cmax*: ``D_j = UB``, the incumbent's makespan; an optimal schedule has
    makespan at most ``UB``, so all its jobs end by ``UB``.

    *wct*: ``D_j = min(T0 + sum_i p_i, floor((UB - R_j) / w_j))`` with
    ``R_j = sum_{i != j} w_i (r_i + p_i)`` and ``UB = sum_i w_i C_i`` of the
    incumbent. Both hold for *every* optimal schedule:

    1. The second term: ``w_j C_j + sum_{i != j} w_i C_i <= UB`` and
       ``C_i >= r_i + p_i``.
    2. The first term (``T0`` = latest release or busy-block end): if a job
       started after ``T0 + sum_{i != j} p_i``, the other jobs could not
       cover every unit slot of ``[T0, S_j)``, so some slot ``[t, t + 1)``
       with ``t >= T0`` would see no job running. All jobs starting after
       ``t`` are released and meet no busy block there, so shifting them one
       unit left keeps the schedule feasible (also on contiguous machines,
       offsets unchanged) and lowers the objective since weights are
       positive: a contradiction. Hence ``C_j <= T0 + sum_i p_i``.

    A zero weight only arises for a zero-length job under ``area`` weights;
    such a job occupies nothing, so moving it to its release keeps any
    schedule feasible and optimal: ``D_j = r_j`` (or the incumbent's ``C_j``
    if later, so the incumbent stays inside) keeps *some* optimal schedule.

    Integer weights: the arithmetic is exact (Python integers). Fractional
    weights: ``UB`` is a float sum; a margin of ``1e-9 * UB`` is added
    before rounding down so that rounding errors never cut the incumbent.
    """
    jobs = instance.jobs
    if objective.kind == "cmax":
        span = max((upper_bound[j.id].end for j in jobs), default=0)
        return {j.id: span for j in jobs}
    horizon = safe_horizon(instance)
    weights = {j.id: objective.exact_weight(j) for j in jobs}
    total = sum(weights[j.id] * upper_bound[j.id].end for j in jobs)
    floor_all = sum(weights[j.id] * (j.release + j.runtime) for j in jobs)
    exact = all(isinstance(w, int) for w in weights.values())
    margin = 0 if exact else 1e-9 * max(1.0, abs(total))
    deadlines = {}
    for j in jobs:
        if weights[j.id] == 0:
            # Only zero-length jobs weigh 0 (area weights); they occupy
            # nothing, so some optimal schedule runs them at their release.
            deadlines[j.id] = max(j.release + j.runtime, upper_bound[j.id].end)
            continue
        rest = floor_all - weights[j.id] * (j.release + j.runtime)
        if exact:
            own = int((total - rest) // weights[j.id])
        else:
            own = math.floor((total - rest + margin) / weights[j.id])
        deadlines[j.id] = max(min(horizon, own), upper_bound[j.id].end)
    return deadlines


def option_deadlines(
    instance: Instance,
    objective: Objective,
    upper_bound: Schedule,
    shortest: Mapping[int, int],
    longest: Mapping[int, int],
) -> dict[int, int]:
    """Per job a latest completion that keeps an optimal schedule.

    For jobs whose run time depends on a choice (a mode, a speed mix, a
    span), ``shortest`` and ``longest`` bound it per job. ``cmax``: the
    incumbent's makespan ``UB``. ``wct``: ``D_j = max(C^UB_j, min(H,
    floor((UB - R_j) / w_j)))`` with ``H = T0 + sum_i longest_i`` (``T0``
    the latest release or busy-block end), ``R_j = sum_{i != j} w_i (r_i +
    shortest_i)`` and ``UB = sum_i w_i C^UB_i``; ``D_j = max(H, C^UB_j)``
    for a job of weight 0.

    Proof (``wct``), as :func:`completion_deadlines` with choices: every
    optimal schedule has ``w_j C_j <= UB - sum_{i != j} w_i C_i`` and
    ``C_i >= r_i + shortest_i``. For ``H``: in an optimal schedule of the
    chosen options, an idle unit slot ``[t, t + 1)`` with ``t >= T0``
    before the last start lets every job starting after ``t`` move one unit
    left on the same processors (released, no block, nothing runs in the
    slot), which strictly lowers the objective when those jobs weigh; so
    some optimal schedule completes by ``T0`` plus the sum of the chosen run
    times, at most ``H``. The incumbent meets its own ``D_j``. Fractional
    weights: a margin of ``1e-9 UB`` before rounding down.
    """
    jobs = instance.jobs
    if objective.kind == "cmax":
        span = max((upper_bound[j.id].end for j in jobs), default=0)
        return {j.id: span for j in jobs}
    t0 = max(
        [j.release for j in jobs] + [b.end for b in instance.machine.unavailable] + [0]
    )
    horizon = t0 + sum(longest.values())
    weights = {j.id: objective.exact_weight(j) for j in jobs}
    total = sum(weights[j.id] * upper_bound[j.id].end for j in jobs)
    earliest = {j.id: j.release + shortest[j.id] for j in jobs}
    floor_all = sum(weights[j.id] * earliest[j.id] for j in jobs)
    exact = all(isinstance(w, int) for w in weights.values())
    margin = 0 if exact else 1e-9 * max(1.0, abs(total))
    deadlines = {}
    for j in jobs:
        w = weights[j.id]
        if w == 0:
            deadlines[j.id] = max(horizon, upper_bound[j.id].end)
            continue
        rest = floor_all - w * earliest[j.id]
        own = (
            int((total - rest) // w)
            if exact
            else math.floor((total - rest + margin) / w)
        )
        deadlines[j.id] = max(min(horizon, own), upper_bound[j.id].end)
    return deadlines


# --------------------------------------------------------------------------
# Result assembly
# --------------------------------------------------------------------------


def best_lower_bound(
    instance: Instance, objective: Objective, bounds: Sequence[Bound]
) -> float | None:
    """Maximum of all bounds, rounded up when the objective is integral.

    Makespans are integers; so is ``sum_j w_j C_j`` (and its ``relative``
    form) when every weight is an integer. Rounding up then keeps the bound
    valid. Integer bounds (``int`` values) are exact and stay as they are;
    a float bound first loses :data:`FLOAT_NOISE_ULPS` units in its last
    place (float noise such as ``1101.0000000000002``), an absolute slack
    that stays far below one unit wherever floats hold integers exactly.
    """
    if not bounds:
        return None
    value = max(b.value for b in bounds)  # Python compares int and float exactly
    if integral_objective(instance, objective):
        return round_up_bound(value)
    return value


def round_up_bound(value: float) -> int:
    """The smallest integer at or above the bound ``value``, float noise aside.

    An ``int`` is returned as it is; a float first loses
    :data:`FLOAT_NOISE_ULPS` units in its last place (never ``1e-9`` of the
    value, nor a float conversion of a large ``int``, either of which can
    move the result by many units).
    """
    if isinstance(value, int):
        return value
    return math.ceil(value - FLOAT_NOISE_ULPS * math.ulp(value))


def integral_objective(instance: Instance, objective: Objective) -> bool:
    """Is every schedule's objective an integer?"""
    if objective.kind == "cmax":
        return True
    return all(float(objective.weight(j)).is_integer() for j in instance.jobs)


def is_optimal(objective: Objective, value: float, lower: float | None) -> bool:
    """Does ``value`` equal the lower bound (see the module notes)?

    Exact when both are integers (always for makespans, whose bound
    :func:`best_lower_bound` rounds up to an ``int``); within
    :data:`WCT_RELATIVE_TOLERANCE` otherwise.
    """
    if lower is None:
        return False
    if objective.kind == "cmax" or (isinstance(value, int) and isinstance(lower, int)):
        return value <= lower  # exact: Python compares int and float exactly
    return value - lower <= WCT_RELATIVE_TOLERANCE * max(1.0, abs(value))


def finish(
    instance: Instance,
    objective: Objective,
    *,
    backend: str,
    candidates: Sequence[Candidate],
    bounds: Sequence[Bound],
    started: float,
    params: Mapping[str, Any],
) -> Result:
    """Assemble the :class:`Result`: best schedule, best bound, status.

    ``candidates`` are tried in order; on equal objective values the earlier
    one wins (back-ends list heuristics before their own solution, so the
    source names the first schedule that reached the value). The status is
    ``ERROR`` when ``params`` holds an ``"error"`` (a back-end failure) or
    when a bound exceeds the objective of a checked schedule.

    The back-ends collect ``"error"``, ``"interrupted"``, ``"rejected"``
    and ``"skipped"`` in their working ``params``; they become the typed
    fields :attr:`Result.error`, :attr:`Result.interrupted`,
    :attr:`Result.rejected` and :attr:`Result.skipped` here, so no consumer
    need read them from a dict. ``params["skipped"]`` stays as well, for
    the readers outside the models that still look there
    (:mod:`optsched.cli.bound`).
    """
    params = dict(params)
    error = params.pop("error", None)
    interrupted = bool(params.pop("interrupted", False))
    rejected = tuple(str(r) for r in params.pop("rejected", ()))
    skipped = tuple(str(s) for s in params.get("skipped", ()))
    lower = best_lower_bound(instance, objective, bounds)
    if not candidates:
        status = SolveStatus.BOUNDED if lower is not None else SolveStatus.UNKNOWN
        if error is not None:
            status = SolveStatus.ERROR
        return Result(
            status, None, lower, None, time.perf_counter() - started, backend,
            params, tuple(bounds), None,
            error=None if error is None else str(error),
            interrupted=interrupted, rejected=rejected, skipped=skipped,
        )  # fmt: skip
    best = min(candidates, key=lambda c: c.value)
    if error is not None:
        status = SolveStatus.ERROR
    elif lower is not None and not _consistent(objective, best.value, lower):
        status = SolveStatus.ERROR
        error = (
            f"lower bound {lower} exceeds the objective {best.value} of a checked "
            f"schedule: a bound is invalid ({_binding(bounds)})"
        )
    elif is_optimal(objective, best.value, lower):
        status = SolveStatus.OPTIMAL
    else:
        status = SolveStatus.FEASIBLE
    return Result(
        status=status,
        objective=best.value,
        lower_bound=lower,
        schedule=best.schedule,
        runtime=time.perf_counter() - started,
        backend=backend,
        params=params,
        bounds=tuple(bounds),
        upper_bound_source=best.source,
        error=None if error is None else str(error),
        interrupted=interrupted,
        rejected=rejected,
        skipped=skipped,
    )


def _consistent(objective: Objective, value: float, lower: float) -> bool:
    if objective.kind == "cmax" or (isinstance(value, int) and isinstance(lower, int)):
        return lower <= value
    return lower <= value + WCT_RELATIVE_TOLERANCE * max(1.0, abs(value))


def _binding(bounds: Sequence[Bound]) -> str:
    top = max(bounds, key=lambda b: b.value)
    return f"{top.method} = {top.value}"


def empty_result(objective: Objective, backend: str, started: float) -> Result:
    """The result for an instance without jobs: the empty schedule, optimal."""
    del objective
    return Result(
        status=SolveStatus.OPTIMAL,
        objective=0.0,
        lower_bound=0.0,
        schedule=Schedule({}, backend),
        runtime=time.perf_counter() - started,
        backend=backend,
        bounds=(Bound(0.0, "empty"),),
        upper_bound_source=backend,
    )
