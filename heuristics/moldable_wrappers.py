"""Policies that choose processor counts: rescaling, adaptive partitioning,
EASY with scaling and DEQ.

The engine of :mod:`optsched.heuristics.engine` runs each job at its
requested size. The algorithms here choose a mode per job (moldable) or
change a job's processor count while it runs (malleable, DEQ), so they build
their schedules themselves; :class:`MoldablePolicy` wraps each so that it is
named, parsed and simulated like every other policy (``optsched simulate -p
rescale:search=deluge,budget=1000,inner=pbi``).

On a rigid instance (no job has modes) the moldable policies have nothing
to choose: rescaling returns its inner scheduler's schedule, adaptive
partitioning and EASY with scaling run every job at its size, and DEQ
refuses (it needs malleable jobs).

``deq`` builds malleable pieces: its schedules are never offered as upper
bounds of the non-malleable problem (they fail the checker there: a job
that is not malleable must run in one piece of one mode).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from optsched.heuristics.engine import SimulationResult, SimulationStats
from optsched.heuristics.policies import Policy
from optsched.instance import Instance
from optsched.schedule import Schedule

MOLDABLE_NAMES: tuple[str, ...] = ("rescale", "adaptive", "easy-scaling", "deq")
"""Policy names that choose processor counts (see the module docstring)."""


def chooses_sizes(spec: str) -> bool:
    """Whether the policy ``spec`` chooses processor counts (by its name)."""
    return spec.strip().partition(":")[0].strip().lower() in MOLDABLE_NAMES


@dataclass(frozen=True)
class MoldablePolicy(Policy):
    """A moldable or malleable algorithm run as a policy.

    Parameters
    ----------
    algorithm
        Its spec: ``rescale:...``
        (:func:`optsched.heuristics.rescaling.parse_rescale`), ``adaptive``,
        ``easy-scaling``
        (:mod:`optsched.heuristics.moldable_policies`) or ``deq``
        (:func:`optsched.heuristics.deq.parse_deq`).
    """

    algorithm: str = "adaptive"

    rule: ClassVar[str] = "moldable"

    def __post_init__(self) -> None:
        super().__post_init__()
        self._options()  # refuse a bad spec at once

    @property
    def name(self) -> str:
        """``rescale``, ``adaptive``, ``easy-scaling`` or ``deq``."""
        return self.algorithm.partition(":")[0]

    @property
    def spec(self) -> str:
        """The algorithm's spec (``parse_policy(p.spec) == p``)."""
        return self.algorithm

    def _options(self) -> dict[str, Any]:
        if self.name == "rescale":
            from optsched.heuristics.rescaling import parse_rescale

            return parse_rescale(self.algorithm)
        if self.name == "deq":
            from optsched.heuristics.deq import parse_deq

            return parse_deq(self.algorithm)
        from optsched.heuristics.moldable_policies import parse_moldable_policy

        return parse_moldable_policy(self.algorithm)

    def decide(self, sim: Any, state: Any) -> None:
        raise TypeError(f"{self.spec} is not an engine policy: use run()")

    def run(self, instance: Instance) -> SimulationResult:
        """The schedule of ``instance`` (every job complete)."""
        began = time.perf_counter()
        schedule = self._schedule(instance)
        schedule = Schedule(schedule.placements, self.spec, schedule.killed)
        stats = SimulationStats(wall_time=time.perf_counter() - began)
        return SimulationResult(schedule=schedule, stats=stats)

    def _schedule(self, instance: Instance) -> Schedule:
        if self.name == "rescale":
            from optsched.heuristics.rescaling import run_rescale

            return run_rescale(instance, self.algorithm)
        if self.name == "deq":
            from optsched.heuristics.deq import deq

            return deq(instance, **self._options())
        from optsched.heuristics.moldable_policies import run_moldable_policy

        return run_moldable_policy(instance, self.algorithm)
