"""Offline exact and bounded models (imported as ``optsched.models``).

One module per back-end, all with the same signature
``solve(instance, objective, *, time_limit, workers, hint=None, **options)
-> Result``:

============== ============================================================
``cpsat``      OR-Tools CP-SAT, exact (:mod:`optsched.models.rigid.cpsat`);
               instances with modes: the moldable optimum
               (:mod:`optsched.models.moldable.model`); site calendars and
               job chains: :mod:`optsched.models.site.model`
``milp``       time-indexed MILP through PuLP, HiGHS or CBC
               (:mod:`optsched.models.rigid.milp`); rigid jobs only
``bounds-only`` closed-form bounds and the best heuristic
               (:mod:`optsched.models.common.bounds_only`); moldable bounds
               (:mod:`optsched.models.moldable.bounds`) for jobs with modes
``shelf``      CP-SAT, optimum of the *shelf-restricted* problem
               (:mod:`optsched.models.shelf.model`; see :data:`RESTRICTIONS`);
               rigid jobs only
``preemptive`` optimum of the *preemptive* relaxation: configuration LP
               (cmax), time-indexed model (wct)
               (:mod:`optsched.models.preempt.model`; see :data:`RELAXATIONS`);
               rigid jobs only
============== ============================================================

Moldable and malleable jobs (:attr:`optsched.instance.Job.modes`): ``cpsat``
chooses each job's mode (malleable jobs are scheduled as moldable ones, a
restriction: see :mod:`optsched.models.moldable.model`), ``bounds-only`` gives the
moldable bounds and the best of the heuristics (on the requested modes, and
greedy moldable list schedules), and the rigid-only back-ends refuse such
instances with a ``ValueError``.

:func:`solve` picks one by name from :data:`BACKENDS`. Back-end modules are
imported on first use, so ``import optsched.models`` loads neither OR-Tools
nor PuLP.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

from optsched.families import feature, offline_view, refusal
from optsched.instance import Instance
from optsched.models.common.relaxation import solve_relaxed
from optsched.models.common.settings import (
    DEFAULT_TIME_LIMIT,
    DEFAULT_WORKERS,
    SolverSettings,
)
from optsched.objective import Objective
from optsched.result import Bound, Incumbent, Result, SolveStatus
from optsched.schedule import Schedule

__all__ = [
    "BACKENDS",
    "RELAXATIONS",
    "RESTRICTIONS",
    "Bound",
    "Incumbent",
    "Objective",
    "Result",
    "SolveStatus",
    "solve",
]

_MODULES = {
    "cpsat": "optsched.models.rigid.cpsat",
    "milp": "optsched.models.rigid.milp",
    "bounds-only": "optsched.models.common.bounds_only",
    "shelf": "optsched.models.shelf.model",
    "preemptive": "optsched.models.preempt.model",
}

RESTRICTIONS: dict[str, str] = {"shelf": "shelves"}
"""Back-ends whose optimum is that of a restricted problem, and the
restriction's name. Their lower bounds bound only the restricted optimum;
their schedules, being feasible, bound the unrestricted one too."""

RELAXATIONS: dict[str, str] = {"preemptive": "preemption"}
"""Back-ends whose optimum is that of a relaxed problem, and the
relaxation's name: ``preemptive`` solves the problem with preemption (and
migration) allowed. Their lower bounds bound the unrelaxed optimum too
(``OPT_relaxed <= OPT``); their schedules are not schedules of the
unrelaxed problem and bound only the relaxed one."""

_COMMON = ("time_limit", "workers", "incumbents")


def _backend(module_name: str) -> Callable[..., Result]:
    def run(instance: Instance, objective: Objective | str, **kwargs: Any) -> Result:
        module = importlib.import_module(module_name)
        return module.solve(instance, objective, **kwargs)

    run.__name__ = f"solve_{module_name.rsplit('.', 1)[1]}"
    run.__doc__ = f"Lazy entry point of :func:`{module_name}.solve`."
    return run


BACKENDS: dict[str, Callable[..., Result]] = {
    name: _backend(module) for name, module in _MODULES.items()
}
"""Back-end name to its ``solve`` function."""


def backend_options(backend: str) -> tuple[str, ...]:
    """Keyword options that ``backend`` accepts beyond the common ones."""
    module = importlib.import_module(_MODULES[_checked_name(backend)])
    signature = inspect.signature(module.solve)
    return tuple(
        name
        for name, p in signature.parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and name not in _COMMON
    )


def solve(
    instance: Instance,
    objective: Objective | str = "cmax",
    *,
    backend: str = "cpsat",
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    incumbents: Sequence[Incumbent] = (),
    hint: Schedule | None = None,
    **options: Any,
) -> Result:
    """Solve or bound ``instance`` for ``objective`` with the named back-end.

    Parameters
    ----------
    instance
        The problem.
    objective
        :class:`Objective` or text (``"cmax"``, ``"wct"``, ``"wct:area:relative"``).
    backend
        A key of :data:`BACKENDS`.
    time_limit
        Seconds for the whole call, counted from its start (loading the
        back-end's module included).
    workers
        Solver threads.
    incumbents
        Schedules to start from (each checked; the best feasible one is the
        solver's hint and an upper-bound candidate). Back-ends never simulate
        policies themselves: :mod:`optsched.analysis.gap` passes the policies' and
        heuristics' schedules here.
    hint
        One more incumbent, named ``"hint"`` (a user's schedule).
    **options
        Back-end specific options (e.g. ``log``, ``lp_only``, ``grid``).

    Raises
    ------
    ValueError
        Unknown back-end (the message lists the valid ones), an option the
        back-end does not take, a negative time limit or fewer than one
        worker (:class:`~optsched.models.common.settings.SolverSettings`).
    """
    began = time.monotonic()
    run = BACKENDS[_checked_name(backend)]
    refused = refusal(instance, backend)
    if refused is not None:
        raise ValueError(refused)
    unknown = sorted(set(options) - set(backend_options(backend)))
    if unknown:
        raise ValueError(
            f"back-end {backend!r} takes no option {unknown[0]!r}; its options: "
            f"{', '.join(backend_options(backend)) or 'none'}"
        )
    SolverSettings(time_limit=time_limit, workers=workers)  # refuses bad values
    if time_limit is not None:
        # The limit counts from here: importing the back-end (OR-Tools,
        # pandas: seconds on a loaded machine) and the offline view are
        # part of the call.
        time_limit = max(0.0, time_limit - (time.monotonic() - began))
    offline = offline_view(instance)
    given = (*incumbents, *([Incumbent("hint", hint)] if hint else []))
    if offline is not instance:
        # Offline, outages are known: busy blocks. A schedule's lost
        # attempts then drop out (its complete runs avoid the outages).
        instance = offline
        given = tuple(
            dataclasses.replace(i, schedule=i.schedule.without_lost()) for i in given
        )
    if feature("user-limit").present(instance):
        # An online rule no back-end models: relaxed for the lower bound.
        return solve_relaxed(
            run, instance, Objective.parse(objective), given,
            relax=("user-limit",), time_limit=time_limit, workers=workers,
            **options,
        )  # fmt: skip
    return run(
        instance,
        Objective.parse(objective),
        time_limit=time_limit,
        workers=workers,
        incumbents=given,
        **options,
    )


def _checked_name(backend: str) -> str:
    if backend not in _MODULES:
        raise ValueError(
            f"unknown back-end {backend!r}; valid back-ends: {', '.join(_MODULES)}"
        )
    return backend
