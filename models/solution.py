"""From solver output and heuristic schedules to one checked :class:`Result`.

Shared by every back-end (:mod:`~optsched.models.cpsat`,
:mod:`~optsched.models.milp`, :mod:`~optsched.models.bounds_only`):

* :func:`upper_bound_candidates` collects the schedules every back-end starts
  from: the best offline list heuristic, the simulated online policies (run
  with exact run times, so no job is killed) and an optional user hint. Each
  one is checked against the instance before it is used.
* :func:`assign_processors` gives explicit processor indices to a schedule
  found by a cumulative (``any``) model.
* :func:`completion_deadlines` gives, per job, a completion time that some
  (cmax) or every (wct) optimal schedule respects: the models' time horizon.
* :func:`finish` picks the best checked schedule, takes the maximum of all
  lower bounds and decides the status.

Status rule (every back-end): ``OPTIMAL`` iff the recomputed objective equals
the best lower bound. Makespans are integers, so the lower bound is rounded
up to an integer and the comparison is exact. Weighted completion times are
sums of float products; they count as equal when they differ by at most
:data:`WCT_RELATIVE_TOLERANCE` times the objective.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.models.objective import Objective
from optsched.models.result import Bound, Result, SolveStatus
from optsched.schedule import Placement, Schedule

WCT_RELATIVE_TOLERANCE = 1e-9
"""Relative tolerance under which a wct objective equals its lower bound."""

SIMULATED_POLICIES: tuple[str, ...] = ("fcfs", "easy", "conservative", "best-package")
"""Online policies simulated (with exact run times) as upper-bound candidates."""


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


def assign_processors(instance: Instance, times: Mapping[int, int]) -> Schedule:
    """Give each job explicit processors, given start times from a cumulative model.

    Parameters
    ----------
    instance
        An ``any``-allocation instance.
    times
        ``{job id: start}``; every job runs ``[start, start + runtime)``.

    Returns
    -------
    Schedule
        Placements with processor indices (producer left empty).

    Raises
    ------
    ValueError
        When no assignment is found (only possible with busy blocks that hold
        fixed processors and start after some job, see below).

    Notes
    -----
    Sweep over time; at each instant, first free the processors of the jobs
    and blocks that end (intervals are half-open), then let blocks that start
    take their fixed processors, then give each starting job ``size`` free
    processors. Why this always succeeds when every fixed-processor block
    starts no later than the first job: when job ``j`` starts at ``t``, the
    processors not held by running jobs or fixed blocks number
    ``m - sum(running sizes) - sum(fixed block sizes)``, which is at least
    ``size_j`` because the cumulative model guarantees
    ``sum(running sizes) + size_j + sum(all block sizes) <= m`` at ``t``. A
    processor, once freed, stays free until someone takes it, so nothing
    assigned earlier can block a later job: this is the interval-graph
    colouring argument (greedy colouring in order of left end points uses
    ``max clique`` colours; Hajnal and Surányi 1958). With fixed blocks that
    start later (reservations), the cumulative model is only a relaxation:
    the sweep then prefers processors whose next reservation is latest and
    raises ``ValueError`` if a reservation finds its processor taken.
    """
    m = instance.processors
    jobs = instance.jobs_by_id()
    fixed = [b for b in instance.machine.unavailable if b.offset is not None]
    fixed = [b for b in fixed if b.end > b.start]
    running = [jid for jid in times if jobs[jid].runtime > 0]
    first_start = min((times[jid] for jid in running), default=0)
    reservations_ahead = any(b.start > first_start for b in fixed)

    events: list[tuple[int, int, int, int]] = []
    # (time, phase, order, index): phase 0 = end, 1 = block start, 2 = job start
    for k, block in enumerate(fixed):
        events.append((block.end, 0, 0, -1 - k))
        events.append((block.start, 1, 0, -1 - k))
    for jid in running:
        start, end = times[jid], times[jid] + jobs[jid].runtime
        events.append((end, 0, 0, jid))
        # Longer jobs first among equal starts: they need processors longest.
        events.append((start, 2, -end, jid))
    events.sort()

    next_reservation = _reservation_lookup(fixed) if reservations_ahead else None
    free = list(range(m - 1, -1, -1))  # a stack; pop() gives the lowest index
    held: dict[int, tuple[int, ...]] = {}  # by jobs and blocks, right now
    assigned: dict[int, tuple[int, ...]] = {}  # by jobs, for good
    owner: dict[int, int] = {}
    for when, phase, _, key in events:
        if phase == 0:
            for proc in held.pop(key, ()):
                owner.pop(proc, None)
                free.append(proc)
            continue
        if phase == 1:
            block = fixed[-1 - key]
            procs = tuple(block.processors or ())
            clash = [p for p in procs if p in owner]
            if clash:
                raise ValueError(
                    f"cannot assign processors: busy block at {block.start} needs "
                    f"processors {clash} held by job {owner[clash[0]]}"
                )
            taken = set(procs)
            free = [p for p in free if p not in taken]
            held[key] = procs
            for p in procs:
                owner[p] = key
            continue
        size = jobs[key].size
        if len(free) < size:
            raise ValueError(
                f"cannot assign processors: job {key} needs {size} at {when}, "
                f"{len(free)} free"
            )
        if next_reservation is None:
            procs = tuple(free.pop() for _ in range(size))
        else:
            free.sort(key=lambda p: (next_reservation(p, when), -p))
            procs = tuple(free[-size:])
            del free[-size:]
        held[key] = assigned[key] = procs
        for p in procs:
            owner[p] = key
    placements = {}
    for jid, start in times.items():
        end = start + jobs[jid].runtime
        # Zero-length jobs occupy nothing; any `size` processors do.
        procs = assigned.get(jid, tuple(range(jobs[jid].size)))
        placements[jid] = Placement(start, end, procs)
    return Schedule(placements)


def _reservation_lookup(fixed: Sequence[Any]) -> Any:
    """``f(p, t)``: the start of the first fixed block on ``p`` at or after ``t``."""
    starts: dict[int, list[int]] = {}
    for block in fixed:
        for p in block.processors:
            starts.setdefault(p, []).append(block.start)
    for values in starts.values():
        values.sort()

    def next_start(proc: int, now: int) -> float:
        values = starts.get(proc)
        if not values:
            return math.inf
        k = bisect.bisect_left(values, now)
        return values[k] if k < len(values) else math.inf

    return next_start


def with_processors(instance: Instance, schedule: Schedule) -> Schedule:
    """``schedule`` with explicit processors (assigned by a sweep when missing)."""
    if all(p.processors is not None for p in schedule.placements.values()):
        return schedule
    if instance.machine.allocation == "contiguous":
        raise ValueError("a contiguous schedule needs explicit processors")
    times = {jid: p.start for jid, p in schedule.placements.items()}
    assigned = assign_processors(instance, times)
    return Schedule(assigned.placements, schedule.producer, schedule.killed)


# --------------------------------------------------------------------------
# Upper-bound candidates
# --------------------------------------------------------------------------


def exact_estimates(instance: Instance) -> Instance:
    """The instance with ``estimate = runtime``: simulated policies then kill nobody.

    The offline problem runs every job for its full run time; a policy
    schedule with killed jobs would not be a schedule of it.
    """
    jobs = tuple(
        j if j.estimate == j.runtime else j.replace(estimate=j.runtime)
        for j in instance.jobs
    )
    return instance.with_jobs(jobs)


def checked_candidate(
    instance: Instance, objective: Objective, source: str, schedule: Schedule
) -> tuple[Candidate | None, str | None]:
    """Check ``schedule``; return it as a candidate, or ``None`` and the reason."""
    if schedule.killed:
        return None, f"{source}: kills jobs {sorted(schedule.killed)[:5]}"
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
    hint: Schedule | None = None,
    policies: Iterable[str] = SIMULATED_POLICIES,
) -> tuple[list[Candidate], list[str]]:
    """Checked heuristic schedules: offline heuristic, simulated policies, hint.

    Returns
    -------
    candidates, rejected
        Feasible schedules (best first) and one line per rejected schedule.
    """
    from optsched.heuristics import POLICY_NAMES, simulate
    from optsched.heuristics.offline import best_heuristic

    raw: list[tuple[str, Schedule]] = []
    offline = best_heuristic(instance, objective)
    raw.append((offline.producer or "heuristic", offline))
    exact = exact_estimates(instance)
    for policy in policies:
        if policy in POLICY_NAMES:
            raw.append((f"policy:{policy}", simulate(exact, policy).schedule))
    if hint is not None:
        raw.append(("hint", hint))
    candidates: list[Candidate] = []
    rejected: list[str] = []
    for source, schedule in raw:
        candidate, reason = checked_candidate(instance, objective, source, schedule)
        if candidate is None:
            rejected.append(str(reason))
        else:
            candidates.append(candidate)
    if not candidates:
        raise RuntimeError(f"no feasible heuristic schedule: {'; '.join(rejected)}")
    candidates.sort(key=lambda c: c.value)
    return candidates, rejected


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

    *wct*: ``D_j = min(T0 + sum_i p_i, floor((UB - sum_{i != j} w_i (r_i + p_i)) / w_j))``
    with ``UB = sum_i w_i C_i`` of the incumbent. Both hold for *every*
    optimal schedule:

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

    Floats: ``UB`` is a float sum; a margin of ``1e-9 * UB`` is added before
    rounding down so that rounding errors never cut the incumbent.
    """
    jobs = instance.jobs
    if objective.kind == "cmax":
        span = max((upper_bound[j.id].end for j in jobs), default=0)
        return {j.id: span for j in jobs}
    horizon = safe_horizon(instance)
    weights = {j.id: objective.weight(j) for j in jobs}
    total = sum(weights[j.id] * upper_bound[j.id].end for j in jobs)
    floor_all = sum(weights[j.id] * (j.release + j.runtime) for j in jobs)
    margin = 1e-9 * max(1.0, abs(total))
    deadlines = {}
    for j in jobs:
        rest = floor_all - weights[j.id] * (j.release + j.runtime)
        own = math.floor((total - rest + margin) / weights[j.id])
        deadline = max(min(horizon, own), upper_bound[j.id].end)
        deadlines[j.id] = deadline
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
    valid; a slack of ``1e-9`` relative absorbs float noise such as
    ``1101.0000000002`` from a division.
    """
    if not bounds:
        return None
    value = max(b.value for b in bounds)
    if integral_objective(instance, objective):
        return float(math.ceil(value - 1e-9 * max(1.0, abs(value))))
    return value


def integral_objective(instance: Instance, objective: Objective) -> bool:
    """Is every schedule's objective an integer?"""
    if objective.kind == "cmax":
        return True
    return all(float(objective.weight(j)).is_integer() for j in instance.jobs)


def is_optimal(objective: Objective, value: float, lower: float | None) -> bool:
    """Does ``value`` equal the lower bound (see the module notes)?"""
    if lower is None:
        return False
    if objective.kind == "cmax":
        return value <= lower
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
    source names the first schedule that reached the value).
    """
    params = dict(params)
    lower = best_lower_bound(instance, objective, bounds)
    if not candidates:
        status = SolveStatus.BOUNDED if lower is not None else SolveStatus.UNKNOWN
        return Result(
            status, None, lower, None, time.perf_counter() - started, backend,
            params, tuple(bounds), None,
        )  # fmt: skip
    best = min(candidates, key=lambda c: c.value)
    if lower is not None and not _consistent(objective, best.value, lower):
        status = SolveStatus.ERROR
        params["error"] = (
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
    )


def _consistent(objective: Objective, value: float, lower: float) -> bool:
    if objective.kind == "cmax":
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
