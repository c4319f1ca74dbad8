"""The ``bounds-only`` back-end: closed-form bounds and the best heuristic.

No search: the lower bound is the best of
:func:`optsched.models.rigid.bounds.lower_bounds`, the upper bound the best of the
offline list heuristic and the simulated online policies (run with exact run
times). Meant for windows too large for the exact models.

Moldable and malleable jobs: the bounds are those of
:mod:`optsched.models.moldable.bounds` (:func:`~optsched.models.rigid.bounds.
lower_bounds_within` dispatches), and the heuristics' schedules, which run
every job in its requested mode (one of its modes), are moldable schedules;
the greedy moldable list schedules of
:func:`optsched.models.moldable.model.add_greedy` join them, and so do checked
malleable schedules with pieces
(:func:`optsched.models.moldable.model.malleable_incumbents`).

Cost: the closed-form bounds (``O(n log n)`` each, see
:mod:`optsched.models.rigid.bounds`), one list schedule in submit order
(its lookback bounded by :data:`~optsched.models.common.solution.
LIST_WINDOW` breakpoints: ``O(n)`` steps of at most a few hundred each,
where the whole past made it quadratic on long strips) and one check of it
and of each incumbent (:func:`optsched.check.check_schedule`, vectorised
for valid schedules). On a 20,000-job KTH window the whole call takes about
0.3 s of CPU for ``cmax`` and 0.6 s for ``wct``, roughly linear in the
number of jobs (benchmarks/README.md, issue 16); a 200,000-job SWF and a
50,000-item strip take seconds (issue 30). The incumbents themselves
(offline heuristics, simulated policies) are the caller's cost.
"""

from __future__ import annotations

from collections.abc import Sequence

from optsched.instance import Instance
from optsched.models.common.settings import DEFAULT_WORKERS, SolverSettings
from optsched.models.common.template import (
    PROBLEM_FACTS,
    conclude,
    plain_candidates,
    prepare,
)
from optsched.models.rigid.bounds import lower_bounds_within
from optsched.objective import Objective
from optsched.result import Incumbent, Result

BACKEND = "bounds-only"


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    time_limit: float | None = None,
    workers: int = DEFAULT_WORKERS,
    incumbents: Sequence[Incumbent] = (),
    log: bool = False,
) -> Result:
    """Closed-form lower bounds and the best heuristic schedule.

    Parameters
    ----------
    instance, objective
        The problem.
    time_limit
        Seconds for the whole call: the long bounds stop, and the later ones
        and the checks of further incumbents are skipped, once it is spent
        (listed in ``params["skipped"]``).
    workers
        Accepted for a uniform signature; unused (nothing searches).
    incumbents
        Starting schedules, checked as for
        :func:`optsched.models.rigid.cpsat.solve`; the best feasible one is
        the fallback upper bound.
    log
        Accepted for a uniform signature; there is no solver log.

    Returns
    -------
    Result
        ``OPTIMAL`` when the best heuristic meets the best bound, else
        ``FEASIBLE``.
    """
    settings = SolverSettings.of(locals())
    candidates = plain_candidates
    if instance.moldable:
        # Greedy mode choice, and malleable incumbents with pieces (DEQ's):
        # imported here (the module loads OR-Tools).
        from optsched.models.moldable.model import moldable_candidates

        candidates = moldable_candidates
    solving = prepare(
        instance, objective, settings, backend=BACKEND, incumbents=incumbents,
        candidates=candidates, bounds=lower_bounds_within, searching=False,
        record=PROBLEM_FACTS,
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    return conclude(solving)
