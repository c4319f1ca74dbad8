"""What every back-end is told: time, threads, seed, log and the CP-SAT options.

:class:`SolverSettings` gathers the keywords the back-ends' ``solve``
functions share (:func:`optsched.models.solve` and each back-end keep their
keyword signatures; they build one of these at the top) and holds their
defaults in one place: :data:`DEFAULT_TIME_LIMIT`, :data:`DEFAULT_WORKERS`,
:data:`BOUND_SUBSOLVERS`. A settings object is checked once, when it is
made, so no back-end repeats the checks.

The module imports no solver: :mod:`optsched.models` can validate settings
without loading OR-Tools or PuLP.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = [
    "BOUND_SUBSOLVERS",
    "CPSAT_KEYWORDS",
    "DEFAULTS",
    "DEFAULT_TIME_LIMIT",
    "DEFAULT_WORKERS",
    "LogSink",
    "SolverSettings",
]

DEFAULT_TIME_LIMIT = 60.0
"""Seconds for a whole solve when the caller names none."""

DEFAULT_WORKERS = 2
"""Solver threads when the caller names none: two, so that CP-SAT runs its
bound-raising sub-solvers beside its main search (:data:`BOUND_SUBSOLVERS`)."""

BOUND_SUBSOLVERS: tuple[str, ...] = ("objective_lb_search", "objective_shaving")
"""CP-SAT sub-solvers added to raise the lower bound (names as in OR-Tools
9.15). See benchmarks/README.md for their measured effect."""

LogSink = Callable[[str], None]
"""Receives each line of a solver's log."""


@dataclass(frozen=True, slots=True)
class SolverSettings:
    """The settings of one solve, checked when made.

    Parameters
    ----------
    time_limit
        Seconds for the whole call (bounds and heuristics included);
        ``None``: no limit (the back-ends that can run without one).
    workers
        Solver threads.
    seed
        Random seed of the solver.
    log
        ``True`` to print the solver's log, or a function receiving each line.
    symmetry
        Add symmetry-breaking constraints for interchangeable jobs.
    cliques
        Add redundant no-overlap constraints over jobs that pairwise cannot
        run together.
    bound_domain
        Start the objective's domain at the best closed-form bound.
    bound_subsolvers
        Extra CP-SAT sub-solvers (``()``: CP-SAT's own portfolio only).
    parameters
        Further CP-SAT ``SatParameters`` fields (``None``: none).
    decompose
        ``wct``: solve a window block by block first
        (:mod:`optsched.models.rigid.wct_decompose`).

    Raises
    ------
    ValueError
        A negative or NaN time limit, or fewer than one worker.
    """

    time_limit: float | None = DEFAULT_TIME_LIMIT
    workers: int = DEFAULT_WORKERS
    seed: int = 0
    log: bool | LogSink = False
    symmetry: bool = True
    cliques: bool = False
    bound_domain: bool = True
    bound_subsolvers: tuple[str, ...] = BOUND_SUBSOLVERS
    parameters: Mapping[str, Any] | None = None
    decompose: bool = True

    def __post_init__(self) -> None:
        limit = self.time_limit
        if limit is not None and math.isnan(limit):
            raise ValueError("time limit nan must be a number of seconds")
        if limit is not None and limit < 0:
            raise ValueError(f"time limit {limit} must not be negative")
        if self.workers < 1:
            raise ValueError(f"workers {self.workers} must be at least 1")
        object.__setattr__(self, "bound_subsolvers", tuple(self.bound_subsolvers))
        # Read-only, so that a frozen settings object cannot change under
        # a solver that holds it.
        object.__setattr__(
            self, "parameters", MappingProxyType(dict(self.parameters or {}))
        )

    @classmethod
    def of(cls, given: Mapping[str, Any]) -> SolverSettings:
        """The settings among ``given``: a back-end's keyword arguments, its
        ``locals()`` as ``solve`` begins. Names that are no setting are
        left out; settings not given keep their defaults.
        """
        return cls(**{name: given[name] for name in _FIELDS if name in given})

    @classmethod
    def split(cls, given: Mapping[str, Any]) -> tuple[SolverSettings, dict[str, Any]]:
        """The settings among ``given`` (:meth:`of`) and the other names."""
        rest = {name: value for name, value in given.items() if name not in _FIELDS}
        return cls.of(given), rest

    def deadline(self) -> float | None:
        """The ``time.monotonic`` instant the call must end by (``None``:
        no limit), counted from now."""
        if self.time_limit is None:
            return None
        return time.monotonic() + self.time_limit

    def cpsat(self) -> dict[str, Any]:
        """The keywords of a CP-SAT solver's configuration in
        :mod:`optsched.models.rigid.cpsat`, all but its time (each search
        takes the time left)."""
        return {
            "workers": self.workers,
            "log": self.log,
            "subsolvers": self.bound_subsolvers,
            "seed": self.seed,
            "parameters": dict(self.parameters or {}),
        }

    def keywords(self, *names: str) -> dict[str, Any]:
        """The named settings as keywords of a back-end's ``solve``.

        ``parameters`` is given as ``None`` when empty, as the back-ends'
        signatures default it.
        """
        out = {name: getattr(self, name) for name in names}
        if "parameters" in out:
            out["parameters"] = dict(out["parameters"] or {}) or None
        return out


CPSAT_KEYWORDS = (
    "time_limit",
    "workers",
    "log",
    "symmetry",
    "bound_domain",
    "bound_subsolvers",
    "seed",
    "parameters",
)
"""The settings :func:`optsched.models.rigid.cpsat.solve` forwards when it
solves a relaxation with its own model (:func:`optsched.models.common.
relaxation.solve_planned`): all but its redundant cliques and the release
decomposition, which keep their defaults. A feature's own model gets the
whole :class:`SolverSettings` instead."""


_FIELDS = tuple(f.name for f in dataclasses.fields(SolverSettings))

DEFAULTS = SolverSettings()
"""The default settings (frozen, so one object serves every call): the
default of the family models' ``settings`` keyword."""
