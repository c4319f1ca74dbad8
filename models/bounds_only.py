"""The ``bounds-only`` back-end: closed-form bounds and the best heuristic.

No search: the lower bound is the best of
:func:`optsched.models.bounds.lower_bounds`, the upper bound the best of the
offline list heuristic and the simulated online policies (run with exact run
times). Meant for windows too large for the exact models: it costs the
bounds plus a few simulations.
"""

from __future__ import annotations

import time
from typing import Any

from optsched.instance import Instance
from optsched.models.bounds import lower_bounds
from optsched.models.result import Result
from optsched.models.solution import empty_result, finish, upper_bound_candidates
from optsched.objective import Objective
from optsched.schedule import Schedule

BACKEND = "bounds-only"


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    time_limit: float | None = None,
    workers: int = 1,
    hint: Schedule | None = None,
    log: bool = False,
) -> Result:
    """Closed-form lower bounds and the best heuristic schedule.

    Parameters
    ----------
    instance, objective
        The problem.
    time_limit, workers
        Accepted for a uniform signature; unused (nothing searches).
    hint
        An extra upper-bound candidate.
    log
        Accepted for a uniform signature; there is no solver log.

    Returns
    -------
    Result
        ``OPTIMAL`` when the best heuristic meets the best bound, else
        ``FEASIBLE``.
    """
    del time_limit, workers, log
    started = time.perf_counter()
    objective = Objective.parse(objective)
    if not instance.jobs:
        return empty_result(objective, BACKEND, started)
    bounds = list(lower_bounds(instance, objective))
    candidates, rejected = upper_bound_candidates(instance, objective, hint=hint)
    params: dict[str, Any] = {
        "objective": objective.label,
        "allocation": instance.machine.allocation,
    }
    if rejected:
        params["rejected"] = rejected
    return finish(
        instance, objective, backend=BACKEND, candidates=candidates,
        bounds=bounds, started=started, params=params,
    )  # fmt: skip
