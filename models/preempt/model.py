r"""Exact preemptive optima: what preemption is worth.

Two entry points, one per objective, each returning a checked
:class:`~optsched.result.Result`:

* :func:`preemptive_makespan`: ``P | r_j, size_j, pmtn | C_max`` with
  migration, exact by the configuration LP and column generation
  (:mod:`optsched.models.preempt.configurations`). The LP optimum is the
  continuous-time optimum, a rational number; its certified value, rounded
  up, is the lower bound. The schedule is an integer-time rounding of the LP
  solution (the checker works in integer seconds), an upper bound; the
  result is the interval ``[ceil(LP), makespan of that schedule]``,
  ``OPTIMAL`` when they meet.
* :func:`preemptive_wct`: ``P | r_j, size_j, pmtn | sum w_j C_j`` on small
  horizons, exact among integer-time schedules by a time-indexed model
  (HiGHS MILP or CP-SAT, :mod:`optsched.models.preempt.timeindexed`);
  beyond, optionally, the interval-indexed LP bound
  (:mod:`optsched.models.preempt.wct_lp`).

Both assume free preemption and migration on an ``any`` machine (busy
blocks are capacity that varies over time). A machine with a context-switch
cost is refused (a bound under switch costs is future work). On a
``contiguous`` machine, where a job keeps one range of adjacent processors,
the migrating optimum of the same capacity is still a valid *lower bound*
(every contiguous schedule without migration is a migrating one): the
result is then ``BOUNDED``, without a schedule.

Schedules: :func:`schedule_from_segments` turns a sequence of time segments,
each with the set of jobs running in it, into pieces
(:class:`~optsched.schedule.Piece`) with explicit processors.
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Sequence
from fractions import Fraction
from typing import Any

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.models.common.settings import (
    DEFAULT_TIME_LIMIT,
    DEFAULT_WORKERS,
    SolverSettings,
)
from optsched.models.common.solution import Candidate, completion_deadlines
from optsched.models.common.template import (
    PROBLEM_FACTS,
    OutOfTime,
    Solving,
    conclude,
    prepare,
)
from optsched.models.preempt.configurations import (
    ConfigurationProblem,
    lay_out,
    round_durations,
    solve_configuration_lp,
)
from optsched.models.preempt.timeindexed import (
    MAX_HORIZON,
    MAX_SLOTS,
    horizon_refusal,
    slot_segments,
    solve_slots,
    solve_slots_highs,
)
from optsched.models.preempt.wct_lp import preemptive_wct_lp_bound
from optsched.objective import Objective
from optsched.packing import list_schedule, processor_set
from optsched.result import Bound, Incumbent, Result, SolveStatus
from optsched.schedule import Piece, Placement, Schedule

MAKESPAN_BACKEND = "preemptive-lp"
WCT_BACKEND = "preemptive-timeindexed"

CONTIGUOUS_RELAXATION = (
    "migrating optimum on the same capacity: a lower bound for "
    "contiguous schedules without migration"
)
"""``params["relaxation"]`` of a contiguous machine's result (module notes)."""

CONFIGURATION_LP_CUT = (
    "configuration-lp: column generation did not converge within the time "
    "limit: its bound is the certified value reached (down to the start of "
    "the first candidate interval when no master LP was solved)"
)
"""``Result.skipped`` note of a makespan call cut by its time limit."""

__all__ = [
    "MAKESPAN_BACKEND",
    "WCT_BACKEND",
    "configuration_lp_bound",
    "preemptive_closed_form_bounds",
    "preemptive_makespan",
    "preemptive_wct",
    "schedule_from_segments",
    "solve",
]


# --------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------


def _refuse_switch_costs(instance: Instance, who: str) -> None:
    machine = instance.machine
    if machine.switch_cost or machine.switch_cost_per_processor:
        raise ValueError(
            f"{who}: the machine has a context-switch cost (switch_cost "
            f"{machine.switch_cost}, per processor "
            f"{machine.switch_cost_per_processor}); the exact preemptive models "
            "assume free preemption (a bound under switch costs is future work)"
        )


def _relaxed(instance: Instance) -> Instance:
    """The ``any`` machine of the same capacity (blocks as counts)."""
    if instance.machine.allocation == "any":
        return instance
    return instance.replace(machine=instance.machine.with_allocation("any"))


# --------------------------------------------------------------------------
# Pieces from segments
# --------------------------------------------------------------------------


def schedule_from_segments(
    instance: Instance,
    segments: Sequence[tuple[int, int, Collection[int]]],
    producer: str,
) -> Schedule:
    """A preemptive schedule from ``(start, end, job ids)`` segments.

    Parameters
    ----------
    instance
        An ``any`` instance; the segments respect its releases and capacity.
    segments
        In time order, not overlapping; the jobs of a segment run during all
        of it. Jobs of run time 0 need none: they are placed at their release.
    producer
        Recorded in the schedule.

    Notes
    -----
    Processors, segment by segment: a job that also ran in the previous
    segment, when that one ends where this one starts, keeps its processors
    (its piece goes on); a job that resumes takes back the processors of its
    previous piece when they are free; every other job takes the lowest
    free indices (migration is allowed, so any free ones would do). There
    are always enough: the jobs of a segment use at most ``m`` processors
    together.
    Busy blocks on ``any`` machines are counts without processors, so
    indices are not kept apart from them (the checker does not either).
    A job's pieces are therefore its maximal runs of abutting segments.
    """
    jobs = instance.jobs_by_id()
    m = instance.processors
    pieces: dict[int, list[list[Any]]] = {jid: [] for jid in jobs}
    held: dict[int, list[tuple[int, int]]] = {}
    previous_end: int | None = None
    for start, end, members in segments:
        if end <= start:
            continue
        kept = {j: held[j] for j in members if previous_end == start and j in held}
        taken = sorted(run for runs in kept.values() for run in runs)
        fresh: dict[int, list[tuple[int, int]]] = {}
        starting = sorted(set(members) - kept.keys())
        for jid in starting:
            # A resumed job takes back its last processors when they are
            # free: fewer migrations, at no cost.
            last = pieces[jid][-1][2] if pieces[jid] else None
            if last is not None and _disjoint(last, taken):
                fresh[jid] = last
                taken = sorted(taken + last)
        for jid in starting:
            if jid not in fresh:
                fresh[jid] = _lowest_free(taken, jobs[jid].size, m)
                taken = sorted(taken + fresh[jid])
        for jid in members:
            if jid in kept:
                pieces[jid][-1][1] = end
            else:
                pieces[jid].append([start, end, fresh[jid]])
        held = {**kept, **fresh}
        previous_end = end
    placements = {}
    for jid, job in jobs.items():
        if not pieces[jid]:
            if job.runtime:
                raise RuntimeError(f"job {jid} runs in no segment (a model bug)")
            placements[jid] = Placement(
                job.release, job.release, processor_set([(0, job.size)])
            )
            continue
        made = [
            Piece(s, e, processor_set([(lo, hi + 1) for lo, hi in runs]))
            for s, e, runs in pieces[jid]
        ]
        placements[jid] = Placement.of_pieces(made)
    return Schedule(placements, producer)


def _disjoint(
    runs: Sequence[tuple[int, int]], taken: Sequence[tuple[int, int]]
) -> bool:
    """Do the inclusive runs ``runs`` miss every run of ``taken``?"""
    return all(b < c or d < a for a, b in runs for c, d in taken)


def _lowest_free(
    taken: Sequence[tuple[int, int]], size: int, m: int
) -> list[tuple[int, int]]:
    """``size`` lowest indices of ``[0, m)`` outside the sorted inclusive runs
    ``taken``, as inclusive runs."""
    out: list[tuple[int, int]] = []
    cursor, need = 0, size
    for first, last in [*taken, (m, m)]:
        if need and first > cursor:
            count = min(need, first - cursor)
            out.append((cursor, cursor + count - 1))
            need -= count
        cursor = max(cursor, last + 1)
    if need:
        raise RuntimeError(f"segment needs more than {m} processors (a model bug)")
    return out


# --------------------------------------------------------------------------
# Makespan
# --------------------------------------------------------------------------


def preemptive_makespan(
    instance: Instance,
    *,
    time_limit: float | None = None,
    incumbents: Sequence[Incumbent] = (),
) -> Result:
    r"""The preemptive makespan optimum with release dates (migration allowed).

    Parameters
    ----------
    instance
        The problem. Busy blocks are capacity that varies over time. A
        ``contiguous`` machine gets a lower bound only (see the module
        notes).
    time_limit
        Seconds for the whole call; ``None``: until proven.
    incumbents
        Further schedules (PBI, PSRS, gang, non-preemptive ones: every
        schedule is a preemptive one); each is checked and, if feasible and
        complete (no job killed), competes as an upper bound.

    Returns
    -------
    Result
        ``lower_bound``: the certified LP value rounded up (a valid bound
        also when the time limit stopped the column generation);
        ``objective`` and ``schedule``: the integer-time rounding of the LP
        solution, or the non-preemptive list schedule when that is better
        or when no LP solution was found. ``params["lp_value"]`` is the LP
        optimum (the continuous-time preemptive optimum when
        ``params["lp_converged"]``), ``params["lp_bound"]`` its certified
        value as an exact fraction (text), ``params["rounding"]`` how the
        LP became integer (``"mip"`` or ``"floor"``, see
        :func:`~optsched.models.preempt.configurations.round_durations`).

    Raises
    ------
    ValueError
        When the machine has a context-switch cost.

    Notes
    -----
    Formulation, pricing and the certificate: see
    :mod:`optsched.models.preempt.configurations`. Reference:
    J. Błażewicz, M. Drabowski, J. Węglarz, "Scheduling multiprocessor
    tasks to minimize schedule length", IEEE Trans. Computers 35(5), 1986;
    M. Drozdowski, *Scheduling for Parallel Processing*, Springer 2009.
    """
    _refuse_switch_costs(instance, "preemptive_makespan")
    solving = prepare(
        instance, Objective("cmax"), SolverSettings(time_limit=time_limit),
        backend=MAKESPAN_BACKEND, incumbents=incumbents, candidates=None,
        bounds=None, record=("time_limit", "allocation"),
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    objective = solving.objective
    relaxed = _relaxed(instance)
    problem = ConfigurationProblem.of(relaxed)
    generation = solve_configuration_lp(problem, deadline=solving.deadline)
    chosen = generation.chosen
    solving.bounds = [
        Bound(
            math.ceil(generation.lower_bound),
            "configuration-lp",
            time.perf_counter() - solving.started,
        ),
        *preemptive_closed_form_bounds(relaxed, objective),
    ]
    solving.params.update(
        lp_bound=exact_value(generation.lower_bound),
        lp_value=None if chosen is None else chosen.value,
        lp_converged=bool(chosen and chosen.converged),
        intervals=len(problem.intervals),
        candidates=len(generation.candidates),
        **generation.notes,
    )
    if not solving.params["lp_converged"] and solving.deadline is not None:
        solving.skip(CONFIGURATION_LP_CUT)
    if instance.machine.allocation == "contiguous":
        solving.params["relaxation"] = CONTIGUOUS_RELAXATION
        return _bounded(solving)
    solving.candidates, solving.rejected = _fallback(instance, objective, incumbents)
    if chosen is not None:
        durations, method = round_durations(problem, chosen, deadline=solving.deadline)
        solving.params["rounding"] = method
        segments = lay_out(problem, chosen, durations)
        schedule = schedule_from_segments(instance, segments, MAKESPAN_BACKEND)
        _add_checked(solving, schedule)
    return conclude(solving)


def configuration_lp_bound(
    instance: Instance, *, deadline: float | None = None
) -> Bound:
    """``ceil`` of the certified configuration-LP value: a makespan bound.

    The preemptive optimum with migration is at most the optimum of every
    more restricted problem, so this bounds rigid (non-preemptive,
    contiguous or not) schedules as well; it dominates every closed-form
    makespan bound valid for preemption (:func:`preemptive_closed_form_bounds`).
    With a ``deadline`` (``time.monotonic``) the column generation stops
    there and the bound is the certified value reached
    (:attr:`~optsched.result.Bound.partial`).
    """
    started = time.perf_counter()
    if not instance.jobs:
        return Bound(0, "configuration-lp")
    problem = ConfigurationProblem.of(_relaxed(instance))
    generation = solve_configuration_lp(problem, deadline=deadline)
    chosen = generation.chosen
    return Bound(
        math.ceil(generation.lower_bound),
        "configuration-lp",
        time.perf_counter() - started,
        partial=not (chosen is not None and chosen.converged),
    )


def _fallback(
    instance: Instance, objective: Objective, incumbents: Sequence[Incumbent] = ()
) -> tuple[list[Candidate], list[str]]:
    """Checked upper-bound candidates: the non-preemptive list schedule in
    submit order (a preemptive schedule too, always feasible), for ``wct``
    also in Smith's order, then the incumbents. A schedule that kills jobs
    or fails the checker is rejected with its reason."""
    order = [j.id for j in sorted(instance.jobs, key=lambda j: (j.release, j.id))]
    raw = [("list:submit", list_schedule(instance, order, producer="list:submit"))]
    if objective.kind == "wct":
        # Smith's ratio on the area, w_j / (q_j p_j), largest first.
        ratio = {j.id: objective.weight(j) / max(1, j.area) for j in instance.jobs}
        smith = sorted(order, key=lambda jid: -ratio[jid])
        raw.append(
            ("list:smith", list_schedule(instance, smith, producer="list:smith"))
        )
    raw += [(incumbent.source, incumbent.schedule) for incumbent in incumbents]
    candidates, rejected = [], []
    for source, schedule in raw:
        if schedule.killed:
            rejected.append(f"{source}: kills jobs {sorted(schedule.killed)[:5]}")
            continue
        violations = check_schedule(instance, schedule)
        if violations:
            rejected.append(f"{source}: {violations[0]}")
            continue
        value = objective.value(instance, schedule)
        candidates.append(Candidate(source, schedule, value))
    return candidates, rejected


def _add_checked(solving: Solving, schedule: Schedule) -> None:
    """Check the model's schedule; a violation is a model bug (an error)."""
    instance, source = solving.instance, solving.backend
    violations = check_schedule(instance, schedule)
    if violations:
        solving.params["error"] = (
            f"{source}: the model's schedule fails the checker: {violations[0]}"
        )
        return
    # The model's schedule first: on equal values it names the optimum.
    value = solving.objective.value(instance, schedule)
    solving.candidates.insert(0, Candidate(source, schedule, value))


def _bounded(solving: Solving) -> Result:
    """A lower bound without a schedule (the contiguous relaxation)."""
    params = dict(solving.params)
    if solving.skipped:
        params["skipped"] = list(solving.skipped)
    return Result(
        status=SolveStatus.BOUNDED,
        objective=None,
        lower_bound=max(b.value for b in solving.bounds),
        schedule=None,
        runtime=time.perf_counter() - solving.started,
        backend=solving.backend,
        params=params,
        bounds=tuple(solving.bounds),
        skipped=tuple(solving.skipped),
    )


def preemptive_closed_form_bounds(
    instance: Instance, objective: Objective
) -> list[Bound]:
    r"""The closed-form bounds of :mod:`optsched.models.rigid.bounds` that also
    bound *preemptive* schedules (with migration).

    Makespan: ``area`` always (the work ``sum_j q_j p_j`` must fit in the
    free capacity from time 0, however it is cut). Without busy blocks also
    ``release`` (``C_j >= r_j + p_j``), ``energy`` (before ``t`` a job runs
    at most ``t - r_j`` seconds, preempted or not), ``wide-jobs`` (its
    relaxation is already the preemptive ``P_k | r_j, pmtn | C_max``) and
    ``dff`` (the energy argument on the sizes of the jobs running at each
    instant). Weighted completion time: ``squashed-area`` always, and
    without blocks ``height``, ``fluid`` and ``wide-jobs``: each relaxes
    ``C_j`` to ``r_j + p_j`` or to the mean busy time ``M_j + p_j / 2`` of a
    fluid schedule, and a preempted job's busy time, of measure ``p_j``
    inside ``[r_j, C_j)``, has its mean at most ``C_j - p_j / 2``, so the
    fluid argument of :func:`~optsched.models.rigid.bounds.fluid_bound` holds.
    With blocks, the bounds that use the effective release ``r'_j`` (the
    earliest *non-preemptive* start beside the blocks) are left out: a
    preempted job may start before ``r'_j``, work until a block and resume.
    ``tests/families/preempt/test_preemptive_models.py`` checks every
    closed-form bound against the exact preemptive optima of small instances
    without blocks.
    The list is explicit, so that a bound added later to
    :mod:`~optsched.models.rigid.bounds` is not used here before its proof is
    checked for preemption.
    """
    from optsched.models.rigid import bounds as closed

    blocked = bool(instance.machine.unavailable)
    if objective.kind == "cmax":
        if blocked:
            return [closed.area_bound(instance)]
        return [
            closed.area_bound(instance),
            closed.release_bound(instance),
            closed.energy_bound(instance),
            closed.wide_jobs_bound(instance),
            closed.dff_bound(instance),
        ]
    if blocked:
        return [closed.squashed_area_bound(instance, objective)]
    return [
        closed.squashed_area_bound(instance, objective),
        closed.height_bound(instance, objective),
        closed.fluid_bound(instance, objective),
        closed.wide_jobs_wct_bound(instance, objective),
    ]


# --------------------------------------------------------------------------
# Weighted completion time
# --------------------------------------------------------------------------


def preemptive_wct(
    instance: Instance,
    objective: Objective | str = "wct",
    *,
    time_limit: float | None = None,
    workers: int = DEFAULT_WORKERS,
    incumbents: Sequence[Incumbent] = (),
    max_horizon: int = MAX_HORIZON,
    max_slots: int = MAX_SLOTS,
    too_large: str = "raise",
    engine: str = "highs",
) -> Result:
    r"""The preemptive ``sum_j w_j C_j`` optimum on a small horizon.

    Parameters
    ----------
    instance
        The problem (``any``: exact; ``contiguous``: lower bound only, see
        the module notes).
    objective
        A ``wct`` objective (any weight rule, ``relative`` allowed);
        ``cmax`` is handed to :func:`preemptive_makespan`.
    time_limit
        Seconds for the search; ``None``: until proven optimal.
    workers
        CP-SAT threads.
    incumbents
        Further schedules, as for :func:`preemptive_makespan`; the best one
        also bounds the horizon.
    max_horizon, max_slots
        Size limits of the time-indexed model (latest deadline minus first
        release; number of job-slot variables).
    too_large
        Above the limits: ``"raise"`` (``ValueError``) or ``"bound"``: the
        interval between the best lower bound (the interval-indexed LP of
        :mod:`optsched.models.preempt.wct_lp` and the preemptive
        closed-form bounds) and the best checked schedule (the list
        schedule, the incumbents); ``params["skipped"]`` says why.
    engine
        ``"highs"`` (default: the MILP, which proves optimality much
        sooner; its bound loses ``1e-6`` relative before rounding, as the
        MILP back-end's) or ``"cpsat"`` (exact integer arithmetic, but
        weaker proofs on time-indexed models).

    Returns
    -------
    Result
        The optimal integer-time preemptive schedule and the solver's proven
        bound (``OPTIMAL`` when they meet).

    Raises
    ------
    ValueError
        Context-switch costs, or (with ``too_large="raise"``) a model above
        the size limits (the message gives the horizon and the limit).

    Notes
    -----
    Model: :mod:`optsched.models.preempt.timeindexed`. Pieces are the
    maximal runs of consecutive slots of a job; processors are assigned
    slot by slot (:func:`schedule_from_segments`), so a job may migrate
    between pieces.
    """
    objective = Objective.parse(objective)
    if objective.kind == "cmax":
        return preemptive_makespan(
            instance, time_limit=time_limit, incumbents=incumbents
        )
    if too_large not in ("raise", "bound"):
        raise ValueError(f"too_large {too_large!r} is not one of raise, bound")
    if engine not in ("highs", "cpsat"):
        raise ValueError(f"engine {engine!r} is not one of highs, cpsat")
    _refuse_switch_costs(instance, "preemptive_wct")
    relaxed = _relaxed(instance)
    solving = prepare(
        instance, objective, SolverSettings(time_limit=time_limit, workers=workers),
        backend=WCT_BACKEND, incumbents=incumbents,
        candidates=lambda _, objective, incumbents, __: _wct_fallback(
            relaxed, objective, incumbents
        ),
        bounds=None, record=PROBLEM_FACTS,
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    best = min(solving.candidates, key=lambda c: c.value)
    deadlines = completion_deadlines(relaxed, objective, best.schedule)
    refusal = horizon_refusal(
        relaxed, deadlines, max_horizon=max_horizon, max_slots=max_slots
    )
    if refusal is not None and too_large == "raise":
        raise ValueError(f"preemptive_wct: {refusal}")
    if refusal is not None:
        # Bounds and the best checked schedule: an interval.
        solving.skip(f"time-indexed model: {refusal}")
        solving.bounds = [
            *_wct_lp_bounds(solving, relaxed),
            *preemptive_closed_form_bounds(relaxed, objective),
        ]
        if instance.machine.allocation == "contiguous":
            return _bounded(solving)
        return conclude(solving)
    # The search gets the time left, not the whole limit: the fallback
    # schedules and the deadlines above already used some of it.
    left = None if time_limit is None else solving.left()
    if engine == "highs":
        solution = solve_slots_highs(relaxed, objective, deadlines, time_limit=left)
    else:
        solution = solve_slots(
            relaxed, objective, deadlines, hint=best.schedule,
            time_limit=left, workers=workers,
        )  # fmt: skip
    solving.params = {
        "time_limit": time_limit, **solving.params, "engine": engine,
        **solution.notes,
    }  # fmt: skip
    solving.bounds = preemptive_closed_form_bounds(relaxed, objective)
    if solution.bound is not None:
        value = solution.bound - objective.offset(instance)
        runtime = time.perf_counter() - solving.started
        solving.bounds.append(Bound(value, "time-indexed", runtime))
    if instance.machine.allocation == "contiguous":
        solving.params["relaxation"] = CONTIGUOUS_RELAXATION
        return _bounded(solving)
    if solution.slots is not None:
        schedule = schedule_from_segments(
            instance, slot_segments(solution.slots), WCT_BACKEND
        )
        _add_checked(solving, schedule)
    return conclude(solving)


WCT_LP_SKIPPED = (
    "preemptive-lp: the interval-indexed LP bound did not reach its optimum "
    "before the time limit (a stopped LP certifies nothing): closed-form "
    "bounds only"
)
"""``Result.skipped`` note when the LP bound of a large ``wct`` window is
left out for the time limit."""


def _wct_lp_bounds(solving: Solving, relaxed: Instance) -> list[Bound]:
    """The interval-indexed LP bound (:mod:`optsched.models.preempt.wct_lp`)
    if it is proven before the call's deadline; otherwise none, and a
    ``skipped`` note (:data:`WCT_LP_SKIPPED`)."""
    try:
        return [
            preemptive_wct_lp_bound(
                relaxed, solving.objective, deadline=solving.deadline
            )
        ]
    except OutOfTime:
        solving.skip(WCT_LP_SKIPPED)
        return []


def _wct_fallback(
    relaxed: Instance, objective: Objective, incumbents: Sequence[Incumbent]
) -> tuple[list[Candidate], list[str]]:
    """:func:`_fallback` on the ``any`` machine; ``RuntimeError`` when no
    schedule passes (the list schedule always should)."""
    candidates, rejected = _fallback(relaxed, objective, incumbents)
    if not candidates:
        raise RuntimeError(f"preemptive_wct: {rejected[0]}")
    return candidates, rejected


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    incumbents: Sequence[Incumbent] = (),
    max_horizon: int = MAX_HORIZON,
    max_slots: int = MAX_SLOTS,
    too_large: str = "bound",
) -> Result:
    """The back-end signature of :mod:`optsched.models`: the preemptive
    optimum of ``objective`` (:func:`preemptive_makespan` for ``cmax``,
    :func:`preemptive_wct` for ``wct``).

    A *relaxation* of the rigid (non-preemptive) problem
    (:data:`optsched.models.RELAXATIONS`): its lower bound bounds the rigid
    optimum too, but its schedules preempt jobs, so its objective is no
    upper bound for the rigid problem. In a suite, a window too large for
    the time-indexed ``wct`` model gets an interval (``too_large="bound"``)
    rather than a failed task.

    An instance with moldable jobs gets lower bounds only (status
    ``BOUNDED``; no preemptive moldable model exists yet): those of
    :func:`optsched.models.moldable.bounds.moldable_lower_bounds` with every
    job treated as malleable. A preempted job keeps one mode, which the
    malleable problem allows too (it may pause and switch modes), so the
    malleable bounds bound the preemptive moldable optimum; a job's
    earliest completion is then taken from its release, since its pieces
    may run around busy blocks.
    """
    settings = SolverSettings(time_limit=time_limit, workers=workers)
    objective = Objective.parse(objective)
    if instance.moldable:
        return _moldable_bounds_only(instance, objective, settings)
    if objective.kind == "cmax":
        return preemptive_makespan(
            instance, time_limit=time_limit, incumbents=incumbents
        )
    return preemptive_wct(
        instance,
        objective,
        time_limit=time_limit,
        workers=workers,
        incumbents=incumbents,
        max_horizon=max_horizon,
        max_slots=max_slots,
        too_large=too_large,
    )


def _moldable_bounds_only(
    instance: Instance, objective: Objective, settings: SolverSettings
) -> Result:
    """The preemptive back-end's answer for jobs with modes (see :func:`solve`)."""
    from optsched.models.moldable.bounds import moldable_lower_bounds

    solving = prepare(
        instance, objective, settings, backend="preemptive", candidates=None,
        bounds=None, record=(),
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    relaxed = instance.with_jobs(
        job.replace(modes=job.all_modes, malleable=True) for job in instance.jobs
    )
    # Without a time limit: the notes of bounds cut short cannot arise.
    solving.bounds, _ = moldable_lower_bounds(relaxed, objective, None)
    solving.params["moldable"] = "bounds only: every job as malleable"
    return conclude(solving)


def exact_value(value: Fraction) -> str:
    """A fraction as text, ``"7/2 (3.5)"``: exact and readable."""
    return f"{value} ({float(value):.6g})"
