"""Results of the offline models: status, bounds and schedule."""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from optsched.schedule import Schedule

if TYPE_CHECKING:
    from optsched.instance import Instance
    from optsched.objective import Objective


class SolveStatus(enum.StrEnum):
    """One status for every back-end (each maps its native status here).

    A ``str`` enum: ``SolveStatus.OPTIMAL == "OPTIMAL"``, so statuses stored
    as text (results store, JSON) compare with the members directly.
    """

    OPTIMAL = "OPTIMAL"
    """A schedule whose objective equals a proven lower bound."""
    FEASIBLE = "FEASIBLE"
    """A schedule, without proof of optimality."""
    INFEASIBLE = "INFEASIBLE"
    """Proven that no schedule exists (cannot happen for valid instances)."""
    BOUNDED = "BOUNDED"
    """A lower bound but no schedule (e.g. ``--lp-only``)."""
    UNKNOWN = "UNKNOWN"
    """Neither schedule nor bound (time limit hit before anything)."""
    ERROR = "ERROR"
    """The back-end failed; see :attr:`Result.error`."""


@dataclass(frozen=True, slots=True)
class Bound:
    """A lower bound on the optimal objective.

    Parameters
    ----------
    value
        The bound (same unit as the objective): an ``int`` when it is an
        integer (exact beyond ``2**53``), a float when it comes from float
        arithmetic (a solver, a non-integral objective).
    method
        Short name, e.g. ``"area"``, ``"energy"``, ``"cpsat"``, ``"lp"``.
    runtime
        Seconds spent computing it.
    partial
        The computation stopped at the deadline: the value is the best of
        the cases examined so far (still a valid bound, maybe a weaker one).
    """

    value: float
    method: str
    runtime: float = 0.0
    partial: bool = False


@dataclass(frozen=True, slots=True)
class Incumbent:
    """A schedule handed to a back-end as a starting point and upper bound.

    Back-ends never simulate policies themselves: the analysis pipeline
    (:mod:`optsched.analysis.gap`) gives them the policies' complete schedules and the
    offline heuristics' schedules. Each is checked before use; one that
    fails the checker, kills or migrates a job is rejected (listed in
    :attr:`Result.rejected`), never used as a bound.

    Parameters
    ----------
    source
        Where it comes from: ``"policy:easy"``, ``"list:lpt"``, ``"hint"``.
    schedule
        The schedule.
    """

    source: str
    schedule: Schedule


@dataclass(frozen=True, slots=True)
class Result:
    """Outcome of one solve.

    ``lower_bound`` is ``None`` when unknown, never a fake 0. ``objective`` is
    recomputed from ``schedule`` (never read from a solver).

    ``error`` holds the back-end's words when ``status`` is ``ERROR``;
    ``interrupted`` says that the solve was stopped (Ctrl-C) before its time
    limit, so its bounds are weaker than the limit allows; ``rejected`` lists
    the incumbents that could not be used, one line each; ``skipped`` lists
    one line per step left out for the time limit (a bound, an incumbent's
    check, the search) or because its model would not fit the solver's
    numbers (the result then rests on the bounds and heuristics); ``relaxed`` names
    the features of the family table (:data:`optsched.families.FEATURES`)
    relaxed for the lower bound because the back-end does not model them
    together (:mod:`optsched.models.common.relaxation`): the bounds hold for the
    instance, and the schedule, when there is one, passed the checker on
    it. ``params`` keeps
    the back-end's own settings and model facts (``hint_source``,
    ``weight_scale``, ...); ``params["skipped"]`` repeats ``skipped`` (when
    not empty) for the readers that still look there (``optsched bound``).
    """

    status: SolveStatus
    objective: float | None
    lower_bound: float | None
    schedule: Schedule | None
    runtime: float
    backend: str
    params: Mapping[str, Any] = field(default_factory=dict)
    bounds: tuple[Bound, ...] = ()
    upper_bound_source: str | None = None
    error: str | None = None
    interrupted: bool = False
    rejected: tuple[str, ...] = ()
    relaxed: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "bounds", tuple(self.bounds))
        object.__setattr__(self, "rejected", tuple(self.rejected))
        object.__setattr__(self, "relaxed", tuple(self.relaxed))
        object.__setattr__(self, "skipped", tuple(self.skipped))
        if (self.status is SolveStatus.ERROR) != (self.error is not None):
            raise ValueError(
                f"result of {self.backend}: status {self.status} with error "
                f"{self.error!r} (an ERROR status needs its error text, and only "
                "an ERROR status has one)"
            )

    @classmethod
    def exhaustive(
        cls,
        instance: Instance,
        objective: Objective,
        schedule: Schedule,
        backend: str,
        began: float,
        params: Mapping[str, Any],
    ) -> Result:
        """The result of a search that tried every schedule: ``schedule`` is
        optimal, its value (recomputed) is also the lower bound.

        ``began`` is the :func:`time.perf_counter` of the search's start.
        """
        value = objective.value(instance, schedule)
        runtime = time.perf_counter() - began
        return cls(
            status=SolveStatus.OPTIMAL,
            objective=value,
            lower_bound=value,
            schedule=schedule,
            runtime=runtime,
            backend=backend,
            params=params,
            bounds=(Bound(value, backend, runtime),),
            upper_bound_source=backend,
        )

    @property
    def gap(self) -> float | None:
        """Relative gap ``(UB - LB) / UB``; ``None`` if either is unknown.

        0 when UB = LB = 0.
        """
        if self.objective is None or self.lower_bound is None:
            return None
        if self.objective == 0:
            return 0.0 if self.lower_bound == 0 else math.inf
        return (self.objective - self.lower_bound) / abs(self.objective)

    @property
    def binding_bound(self) -> Bound | None:
        """The bound with the largest value (the one that is binding)."""
        return max(self.bounds, key=lambda b: b.value, default=None)
