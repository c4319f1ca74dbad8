"""NQS's per-user limit offline: a relaxation and checked upper bounds.

The limit (:attr:`Calendar.user_limit <optsched.calendar.Calendar.user_limit>`,
checker rule 14) is an online rule: whether a job may start depends on
which jobs of other users wait at that instant. The back-ends do not model
it. Dropping it only adds schedules, so every back-end's lower bound on the
instance without the limit bounds the optimum with it
(``OPT_relaxed <= OPT``). Upper bounds must respect the limit: the solver's
schedule counts only if it passes the checker on the instance *with* the
limit; otherwise the best of the incumbents that pass (the policies'
schedules, which the simulator keeps within the limit) is the upper bound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.models.result import Incumbent, Result, SolveStatus
from optsched.objective import Objective


def solve_relaxed(
    run: Callable[..., Result],
    instance: Instance,
    objective: Objective,
    incumbents: Sequence[Incumbent],
    **options: Any,
) -> Result:
    """``run`` (a back-end's ``solve``) on ``instance`` without its user
    limit, its upper bound kept only when it respects the limit (module
    docstring)."""
    calendar = instance.machine.calendar
    assert calendar is not None
    relaxed = instance.replace(
        machine=instance.machine.replace(
            calendar=dataclasses.replace(calendar, user_limit=None)
        )
    )
    result = run(relaxed, objective, incumbents=incumbents, **options)
    params = dict(result.params) | {"user_limit": "relaxed for the lower bound"}
    if result.schedule is not None and not check_schedule(instance, result.schedule):
        return dataclasses.replace(result, params=params)
    best = _best_within_limit(instance, objective, incumbents)
    rejected = (*result.rejected, "the solver's schedule breaks the user limit")
    if best is None:
        bounded = result.lower_bound is not None
        status = SolveStatus.BOUNDED if bounded else SolveStatus.UNKNOWN
        return dataclasses.replace(
            result, status=status, objective=None, schedule=None,
            upper_bound_source=None, params=params, rejected=rejected,
        )  # fmt: skip
    value, source, schedule = best
    proven = result.lower_bound is not None and result.lower_bound >= value
    return dataclasses.replace(
        result,
        status=SolveStatus.OPTIMAL if proven else SolveStatus.FEASIBLE,
        objective=value,
        schedule=schedule,
        upper_bound_source=source,
        params=params,
        rejected=rejected,
    )


def _best_within_limit(
    instance: Instance, objective: Objective, incumbents: Sequence[Incumbent]
) -> tuple[float, str, Any] | None:
    """The best incumbent that passes the checker with the limit (objective
    recomputed from it), or ``None``."""
    best: tuple[float, str, Any] | None = None
    for incumbent in incumbents:
        schedule = incumbent.schedule
        if schedule.killed or check_schedule(instance, schedule):
            continue
        value = objective.value(instance, schedule)
        if best is None or value < best[0]:
            best = (value, incumbent.source, schedule)
    return best
