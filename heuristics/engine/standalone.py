"""Policies that build their schedules themselves, outside the engine.

The engine of :mod:`optsched.heuristics.engine.core` starts each job in one
mode (its request, or the one its policy chooses at the start: adaptive
partitioning, EASY with scaling) and lets it run to its end. Preemptive
algorithms (PBI, PSRS, gang: pieces), rescaling (a search over whole
schedules) and DEQ (processor counts that change while a job runs) build
every placement themselves; :class:`Standalone` is their common shape, so
that each is named, parsed and simulated like every other policy.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from optsched.families import load
from optsched.heuristics.engine.core import SimulationResult, SimulationStats
from optsched.heuristics.rigid.policies import Policy
from optsched.heuristics.spec import SpecParts, spec_name, split_spec
from optsched.instance import Instance
from optsched.schedule import Schedule


@dataclass(frozen=True)
class Standalone(Policy):
    """An algorithm named by its spec, run by :meth:`run` (not the engine).

    Subclasses check the spec in :meth:`_options` (``ValueError`` on a bad
    one, at construction): by default with the parser :attr:`parsers` names
    for the algorithm (:func:`algorithm_options`); they build the schedule
    in :meth:`_schedule`.
    """

    algorithm: str = ""

    rule: ClassVar[str] = "standalone"
    parsers: ClassVar[Mapping[str, str]] = {}
    """Each algorithm name to the ``"module:function"`` parsing its specs,
    ``""`` for every other name (:func:`algorithm_options`)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._options()  # refuse a bad spec at once

    @property
    def name(self) -> str:
        """The algorithm's name (its spec before ``:``)."""
        return spec_name(self.algorithm)

    @property
    def spec(self) -> str:
        """The algorithm's spec (``parse_policy(p.spec) == p``)."""
        return self.algorithm

    def _options(self) -> dict[str, Any]:
        if not self.parsers:
            raise NotImplementedError
        return algorithm_options(self.algorithm, self.parsers)

    def _schedule(self, instance: Instance) -> Schedule:
        raise NotImplementedError

    def run(self, instance: Instance) -> SimulationResult:
        """The schedule of ``instance`` (every job complete), named by the spec."""
        began = time.perf_counter()
        schedule = self._schedule(instance)
        schedule = Schedule(schedule.placements, self.spec, schedule.killed)
        stats = SimulationStats(wall_time=time.perf_counter() - began)
        return SimulationResult(schedule=schedule, stats=stats)


def algorithm_options(
    spec: str | SpecParts, parsers: Mapping[str, str]
) -> dict[str, Any]:
    """The keyword arguments of an algorithm's spec (or of its tokens).

    The parser is the ``"module:function"`` that ``parsers`` gives for the
    spec's name (``parsers[""]`` for any other name), imported on first use
    (the algorithms import the runner, which imports this module); it
    raises ``ValueError`` on a bad spec. A parser that returns no mapping
    only checks the spec: no keyword arguments.
    """
    parts = split_spec(spec)
    options = load(parsers.get(parts.name, parsers[""]))(parts)
    return dict(options) if isinstance(options, Mapping) else {}


Scheduler = Callable[[Instance], Schedule]
"""A function ``instance -> schedule``."""

_POLICY_SCHEDULERS: list[Callable[[str], Scheduler]] = []


def register_policy_scheduler(make: Callable[[str], Scheduler]) -> None:
    """Register how a policy spec becomes a :data:`Scheduler`.

    :mod:`optsched.heuristics.engine.runner` registers its ``simulate`` when it is
    imported (as :mod:`optsched.heuristics` does), so that the algorithms
    built on inner policies (rescaling, PSRS's inner schedules) run them
    without importing the runner, which imports them.
    """
    _POLICY_SCHEDULERS[:] = [make]


def policy_scheduler(spec: str) -> Scheduler:
    """The :data:`Scheduler` of a policy spec, as ``simulate`` runs it
    (``ValueError`` on an unknown spec).

    Importing any module of :mod:`optsched.heuristics` runs the package's
    ``__init__`` first, which imports the runner: the registration is always
    there when a policy runs.
    """
    return _POLICY_SCHEDULERS[0](spec)
