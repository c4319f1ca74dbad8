"""Policies that build their schedules themselves, outside the engine.

The engine of :mod:`optsched.heuristics.engine` starts jobs at their
requested size and lets them run to their end. Preemptive algorithms (PBI,
PSRS, gang: pieces) and algorithms that choose processor counts
(rescaling, adaptive partitioning, EASY with scaling, DEQ) build every
placement themselves; :class:`Standalone` is their common shape, so that
each is named, parsed and simulated like every other policy.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from optsched.heuristics.engine import SimulationResult, SimulationStats
from optsched.heuristics.policies import Policy
from optsched.instance import Instance
from optsched.schedule import Schedule


@dataclass(frozen=True)
class Standalone(Policy):
    """An algorithm named by its spec, run by :meth:`run` (not the engine).

    Subclasses check the spec in :meth:`_options` (``ValueError`` on a bad
    one, at construction) and build the schedule in :meth:`_schedule`.
    """

    algorithm: str = ""

    rule: ClassVar[str] = "standalone"

    def __post_init__(self) -> None:
        super().__post_init__()
        self._options()  # refuse a bad spec at once

    @property
    def name(self) -> str:
        """The algorithm's name (its spec before ``:``)."""
        return self.algorithm.partition(":")[0]

    @property
    def spec(self) -> str:
        """The algorithm's spec (``parse_policy(p.spec) == p``)."""
        return self.algorithm

    def _options(self) -> dict[str, Any]:
        raise NotImplementedError

    def _schedule(self, instance: Instance) -> Schedule:
        raise NotImplementedError

    def decide(self, sim: Any, state: Any) -> None:
        raise TypeError(f"{self.spec} is not an engine policy: use run()")

    def run(self, instance: Instance) -> SimulationResult:
        """The schedule of ``instance`` (every job complete), named by the spec."""
        began = time.perf_counter()
        schedule = self._schedule(instance)
        schedule = Schedule(schedule.placements, self.spec, schedule.killed)
        stats = SimulationStats(wall_time=time.perf_counter() - began)
        return SimulationResult(schedule=schedule, stats=stats)
