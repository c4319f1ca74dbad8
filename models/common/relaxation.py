"""Solving a relaxation: lower bounds from it, upper bounds only when checked.

When no exact model handles every feature of an instance, or a feature is
an online rule no back-end models (NQS's user limit), the back-end solves
the instance with those features *relaxed* (:attr:`Feature.relax
<optsched.families.Feature.relax>`): every schedule of the original is one
of the relaxation, so ``OPT_relaxed <= OPT`` and every lower bound the
back-end proves on the relaxation bounds the original. Upper bounds must
respect the original: the solver's schedule counts only if it passes the
checker on the original instance; otherwise the best of the incumbents that
pass (the policies' schedules, which the simulators keep within the rules)
and of the original's own starting schedules (the family table's
candidates) is the upper bound. The result names the relaxed features
(:attr:`Result.relaxed <optsched.result.Result.relaxed>`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from optsched.check import check_schedule
from optsched.families import ExactPlan, feature, features_of, load, relaxed
from optsched.instance import Instance
from optsched.models.common.settings import CPSAT_KEYWORDS, SolverSettings
from optsched.models.common.solution import upper_bound_candidates
from optsched.objective import Objective
from optsched.result import Incumbent, Result, SolveStatus
from optsched.schedule import Schedule


def solve_relaxed(
    run: Callable[..., Result],
    instance: Instance,
    objective: Objective,
    incumbents: Sequence[Incumbent],
    *,
    relax: Sequence[str],
    **options: Any,
) -> Result:
    """``run`` (a back-end's ``solve``) on ``instance`` with the features
    named in ``relax`` relaxed; its upper bound kept only when it passes the
    checker on ``instance`` (module docstring)."""
    easier = relaxed(instance, relax)
    result = run(easier, objective, incumbents=incumbents, **options)
    dropped = (*result.relaxed, *(n for n in relax if n not in result.relaxed))
    if result.schedule is not None and not check_schedule(instance, result.schedule):
        # Valid on the instance itself: its value, recomputed there, is an
        # upper bound, and it meets the relaxation's bound when proven.
        value = objective.value(instance, result.schedule)
        proven = result.lower_bound is not None and result.lower_bound >= value
        status = SolveStatus.OPTIMAL if proven else SolveStatus.FEASIBLE
        if result.status is SolveStatus.ERROR:
            status = result.status  # keeps its error text with it
        return dataclasses.replace(
            result, objective=value, status=status, relaxed=dropped
        )
    # The better of the caller's incumbents and the instance's own starting
    # schedules (on speeds or SMP nodes: moldable jobs in the modes that end
    # first, which no incumbent of a rigid policy has).
    valid = (
        _best_valid(instance, objective, incumbents),
        _own_candidate(instance, objective),
    )
    best = min((b for b in valid if b is not None), key=lambda b: b[0], default=None)
    titles = " and the ".join(feature(name).title for name in relax)
    rejected = (*result.rejected, f"the solver's schedule breaks the {titles}")
    if result.schedule is None:
        rejected = result.rejected
    if best is None:
        bounded = result.lower_bound is not None
        status = SolveStatus.BOUNDED if bounded else SolveStatus.UNKNOWN
        if result.status is SolveStatus.ERROR:
            status = SolveStatus.ERROR
        return dataclasses.replace(
            result, status=status, objective=None, schedule=None,
            upper_bound_source=None, relaxed=dropped, rejected=rejected,
        )  # fmt: skip
    value, source, schedule = best
    proven = result.lower_bound is not None and result.lower_bound >= value
    return dataclasses.replace(
        result,
        status=SolveStatus.OPTIMAL if proven else SolveStatus.FEASIBLE,
        objective=value,
        schedule=schedule,
        upper_bound_source=source,
        relaxed=dropped,
        rejected=rejected,
        error=None,
    )


def _own_candidate(
    instance: Instance, objective: Objective
) -> tuple[float, str, Schedule] | None:
    """The best starting schedule of the instance itself (the family table's
    candidates: e.g. the calendar- and chain-aware list schedule), beside
    the caller's incumbents; ``None`` when there is none."""
    try:
        candidates, _ = upper_bound_candidates(instance, objective)
    except (RuntimeError, ValueError):
        return None  # no feasible starting schedule: only the bound is left
    best = candidates[0]
    return best.value, best.source, best.schedule


def _best_valid(
    instance: Instance, objective: Objective, incumbents: Sequence[Incumbent]
) -> tuple[float, str, Schedule] | None:
    """The best incumbent that passes the checker on ``instance`` (objective
    recomputed from it), or ``None``."""
    best: tuple[float, str, Schedule] | None = None
    for incumbent in incumbents:
        schedule = incumbent.schedule
        if schedule.killed or check_schedule(instance, schedule):
            continue
        value = objective.value(instance, schedule)
        if best is None or value < best[0]:
            best = (value, incumbent.source, schedule)
    return best


def solve_planned(
    plan: ExactPlan,
    instance: Instance,
    objective: Objective | str,
    incumbents: Sequence[Incumbent],
    settings: SolverSettings,
    rigid: Callable[..., Result],
) -> Result:
    """Solve ``instance`` as :func:`optsched.families.exact_plan` says.

    The leading feature's exact model, given ``settings`` as they are; or,
    when the plan names none, ``rigid`` (CP-SAT's model of rigid jobs),
    given the settings of :data:`~optsched.models.common.settings.
    CPSAT_KEYWORDS` as keywords (its redundant cliques and the release
    decomposition at their defaults). On the instance itself or, when the
    plan relaxes features, on the relaxation (:func:`solve_relaxed`). When
    no exact model handles the combination (``plan.blocking``), the
    ``bounds-only`` back-end answers: valid bounds and the best checked
    schedule, never a refusal.
    """
    objective = Objective.parse(objective)
    if plan.blocking is not None:
        bounds_only = load("optsched.models.common.bounds_only:solve")
        result = bounds_only(
            instance, objective, time_limit=settings.time_limit,
            incumbents=incumbents,
        )  # fmt: skip
        why = f"no exact model for {feature(plan.blocking).title} with " + ", ".join(
            f.title for f in features_of(instance) if f.name != plan.blocking
        )
        return dataclasses.replace(result, params={**result.params, "exact": why})
    if plan.model is not None:
        run, options = load(plan.model), {"settings": settings}
    else:
        run, options = rigid, settings.keywords(*CPSAT_KEYWORDS)
    if plan.relaxed:
        return solve_relaxed(
            run, instance, objective, incumbents, relax=plan.relaxed, **options
        )
    return run(instance, objective, incumbents=incumbents, **options)
