"""The frame of every back-end's ``solve``: one preamble, one finish.

Every back-end does the same before its model and after it: start the
clock, parse the objective, answer an instance without jobs, collect the
checked starting schedules and the lower bounds within the time limit, and
in the end assemble one :class:`~optsched.result.Result` from what was
found (the best checked schedule, the best bound, the status rule of
:func:`~optsched.models.common.solution.finish`). :func:`prepare` does the
first part and hands back a :class:`Solving`, the typed record of the call
that the back-end fills while it builds and decodes its model;
:func:`conclude` does the second.

A separate module rather than more of :mod:`~optsched.models.common.solution`:
that module checks and compares schedules and knows nothing of settings or
of a call's bookkeeping; this one ties the two together (and is the only
one that needs :mod:`~optsched.models.common.settings`).

Usage (a back-end)::

    solving = prepare(instance, objective, settings, backend=BACKEND,
                      incumbents=incumbents, bounds=lower_bounds_within)
    if isinstance(solving, Result):
        return solving  # no jobs
    ...  # build, search, decode: solving.keep(...), solving.skip(...)
    return conclude(solving)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from optsched.instance import Instance
from optsched.models.common.settings import SolverSettings
from optsched.models.common.solution import (
    Candidate,
    bounds_deadline,
    empty_result,
    finish,
    upper_bound_candidates,
)
from optsched.objective import Objective
from optsched.result import Bound, Incumbent, Result

__all__ = [
    "PROBLEM_FACTS",
    "SEARCH_FACTS",
    "BoundSource",
    "CandidateSource",
    "ModelInputs",
    "OutOfTime",
    "Solving",
    "conclude",
    "on_time",
    "passed",
    "plain_candidates",
    "prepare",
]

_Built = TypeVar("_Built")

CandidateSource = Callable[
    [Instance, Objective, Sequence[Incumbent], "float | None"],
    tuple[list[Candidate], list[str]],
]
"""``(instance, objective, incumbents, deadline) -> (candidates, rejected)``:
checked starting schedules, best first, and one line per refused one (the
signature of the family table's ``candidates`` column)."""

BoundSource = Callable[
    [Instance, Objective, "float | None"], tuple[list[Bound], list[str]]
]
"""``(instance, objective, deadline) -> (bounds, skipped)``: lower bounds
computed until ``deadline`` and one note per bound left out or cut short."""

SEARCH_FACTS = (
    "time_limit",
    "workers",
    "objective",
    "allocation",
    "hint_source",
    "subsolvers",
)
"""What a searching back-end records in ``Result.params`` first."""

PROBLEM_FACTS = ("objective", "allocation")
"""What a back-end without settings of its own records (``bounds-only``)."""


def plain_candidates(
    instance: Instance,
    objective: Objective,
    incumbents: Sequence[Incumbent],
    deadline: float | None,
) -> tuple[list[Candidate], list[str]]:
    """:func:`~optsched.models.common.solution.upper_bound_candidates`: the
    incumbents and a list schedule (or the family table's candidates)."""
    return upper_bound_candidates(
        instance, objective, incumbents=incumbents, deadline=deadline
    )


class OutOfTime(Exception):
    """The call's deadline passed while a model was being built.

    Raised by :func:`on_time` inside a model's construction loops and caught
    by :meth:`Solving.build`, which notes it and leaves the search out: the
    call ends with the schedules and bounds found so far.
    """


def on_time(deadline: float | None) -> None:
    """Raise :class:`OutOfTime` once ``deadline`` (``time.monotonic``) has passed.

    Model builders call it once per job (or per row of a quadratic loop):
    a clock read costs about 0.1 µs, against microseconds for each variable
    or constraint the loop adds.
    """
    if passed(deadline):
        raise OutOfTime


def passed(deadline: float | None) -> bool:
    """Whether ``deadline`` (``time.monotonic``; ``None``: none) has passed."""
    return deadline is not None and time.monotonic() >= deadline


@dataclass(frozen=True)
class ModelInputs:
    """What a family's CP-SAT model is built from (:meth:`Solving.model_inputs`).

    ``incumbent`` is the hint (the best checked starting schedule; it fixes
    the completion deadlines), ``bounds`` the lower bounds that start the
    objective's domain (empty when the settings ask for the solver's own
    bound, ``bound_domain=False``), ``symmetry`` whether interchangeable
    jobs are ordered, ``deadline`` the call's (``time.monotonic``; ``None``
    without a limit), which a builder passes to :func:`on_time` as it goes.
    """

    instance: Instance
    objective: Objective
    incumbent: Candidate
    bounds: Sequence[Bound]
    symmetry: bool
    deadline: float | None = None


@dataclass(eq=False)
class Solving:
    """One call of a back-end under way: its problem, clock and findings.

    The lists grow while the back-end works; :func:`conclude` reads them.
    ``rejected`` holds one line per schedule refused (an incumbent, a
    decoded solution), ``skipped`` one line per step left out (for the time
    limit, or a model too large for the solver's numbers); ``restriction``
    names the restricted problem whose optimum the back-end seeks
    (:data:`optsched.models.RESTRICTIONS`), ``None`` for the problem itself.
    ``params`` holds the back-end's own settings and model facts.
    """

    instance: Instance
    objective: Objective
    backend: str
    settings: SolverSettings
    started: float
    deadline: float | None
    candidates: list[Candidate] = field(default_factory=list)
    bounds: list[Bound] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    restriction: str | None = None

    @property
    def hint(self) -> Candidate:
        """The best starting schedule (the solver's hint)."""
        return self.candidates[0]

    def expired(self) -> bool:
        """Has the time limit passed?"""
        return self.deadline is not None and time.monotonic() >= self.deadline

    @property
    def until(self) -> float:
        """The deadline as a number (infinite without a limit)."""
        return float("inf") if self.deadline is None else self.deadline

    def left(self) -> float:
        """Seconds left (at least 0; infinite without a limit)."""
        if self.deadline is None:
            return float("inf")
        return max(0.0, self.deadline - time.monotonic())

    def skip(self, note: str) -> None:
        """Record a step left out (``Result.skipped``)."""
        self.skipped.append(note)

    def keep(self, checked: tuple[Candidate | None, str | None]) -> None:
        """Add a decoded schedule's check (:func:`~optsched.models.common.
        solution.checked_candidate`): the candidate, or the reason it failed."""
        candidate, reason = checked
        if candidate is not None:
            self.candidates.append(candidate)
        else:
            self.rejected.append(str(reason))

    def model_inputs(self) -> ModelInputs:
        """The inputs of the CP-SAT model of this call (hinted with :attr:`hint`)."""
        settings = self.settings
        return ModelInputs(
            self.instance,
            self.objective,
            self.hint,
            self.bounds if settings.bound_domain else [],
            settings.symmetry,
            self.deadline,
        )

    def build(self, make: Callable[[], _Built], what: str = "model") -> _Built | None:
        """``make()``, or ``None`` when the deadline passed while it ran.

        ``make`` builds a model and calls :func:`on_time` as it goes (the
        deadline of :meth:`model_inputs`); when it raises :class:`OutOfTime`
        a ``skipped`` note says so and the caller leaves the search out.
        """
        try:
            return make()
        except OutOfTime:
            self.skip(f"{self.backend}: {what} building stopped (time limit)")
            return None

    def fact(self, name: str) -> Any:
        """One of :data:`SEARCH_FACTS` of this call."""
        facts: dict[str, Callable[[], Any]] = {
            "time_limit": lambda: self.settings.time_limit,
            "workers": lambda: self.settings.workers,
            "objective": lambda: self.objective.label,
            "allocation": lambda: self.instance.machine.allocation,
            "hint_source": lambda: self.hint.source,
            "subsolvers": lambda: list(self.settings.bound_subsolvers),
        }
        return facts[name]()


def prepare(
    instance: Instance,
    objective: Objective | str,
    settings: SolverSettings,
    *,
    backend: str,
    bounds: BoundSource | None,
    incumbents: Sequence[Incumbent] = (),
    candidates: CandidateSource | None = plain_candidates,
    searching: bool = True,
    record: Sequence[str] = SEARCH_FACTS,
    restriction: str | None = None,
) -> Solving | Result:
    """The preamble of a back-end's ``solve``; the answer when there are no jobs.

    Parameters
    ----------
    instance, objective
        The problem (the objective as text or parsed).
    settings
        The call's settings; the deadline is counted from now.
    backend
        The back-end's name (``Result.backend``).
    bounds
        The lower bounds to compute (``None``: the back-end computes its own).
    incumbents
        The caller's starting schedules.
    candidates
        The checked starting schedules (``None``: the back-end finds its own
        later): default, the incumbents and a list schedule.
    searching
        The back-end searches after the bounds: they stop at half the time
        left (:func:`~optsched.models.common.solution.bounds_deadline`), the
        search keeps the rest. ``False``: they may use all of it.
    record
        The facts written first into ``params`` (:meth:`Solving.fact`).
    restriction
        The name of the restricted problem the back-end solves, if any.

    Returns
    -------
    Solving or Result
        The record of the call, its candidates (the schedules first: the
        long bounds can stop at the deadline, the checks cannot) and bounds
        collected; or, for an instance without jobs, the final result.
    """
    started = time.perf_counter()
    deadline = settings.deadline()
    objective = Objective.parse(objective)
    if not instance.jobs:
        empty = empty_result(objective, backend, started)
        if restriction is None:
            return empty
        return replace(empty, params={**empty.params, "restriction": restriction})
    solving = Solving(
        instance, objective, backend, settings, started, deadline,
        restriction=restriction,
    )  # fmt: skip
    if candidates is not None:
        found, refused = candidates(instance, objective, incumbents, deadline)
        solving.candidates, solving.rejected = found, refused
    if bounds is not None:
        until = deadline
        if searching and deadline is not None:
            until = bounds_deadline(deadline)
        solving.bounds, solving.skipped = bounds(instance, objective, until)
    solving.params = {name: solving.fact(name) for name in record}
    if restriction is not None:
        solving.params["restriction"] = restriction
    return solving


def conclude(solving: Solving, *, schedules: bool = True) -> Result:
    """The :class:`Result` of ``solving`` (:func:`~optsched.models.common.
    solution.finish`: the best checked schedule, the best bound, the status).

    ``schedules=False`` reports the bounds only (status ``BOUNDED``): the
    schedules were starting points of a bound computation (``lp_only``).
    Rejections and error or interruption notes a search left in
    ``params`` join the typed fields.
    """
    params = dict(solving.params)
    rejected = [*solving.rejected, *params.pop("rejected", ())]
    if rejected:
        params["rejected"] = rejected
    skipped = [*solving.skipped, *params.pop("skipped", ())]
    if skipped:
        params["skipped"] = skipped
    return finish(
        solving.instance,
        solving.objective,
        backend=solving.backend,
        candidates=solving.candidates if schedules else [],
        bounds=solving.bounds,
        started=solving.started,
        params=params,
    )
