"""The recorded schedule of a trace, evaluated as if it were a policy.

``--policy orig`` starts every job at its recorded start, ``submit +
wait`` (SWF field 3), and runs it for its recorded run time. Its ratio to
the optimum is the site's own competitive gap (Mallmann 1997, §4.1: the
"orig" column of every comparison).

Processors are given greedily in time order (the lowest free ids), which
succeeds whenever the recorded schedule never holds more than ``m``
processors (interval graphs are coloured optimally in start order). A
recorded schedule that does hold more (a log's clock skew, or a machine
size override) is refused with the first instant that breaks it, since no
valid schedule reproduces it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, ClassVar

from optsched.heuristics.standalone import Standalone
from optsched.instance import Instance
from optsched.schedule import Placement, Schedule


@dataclass(frozen=True)
class Orig(Standalone):
    """The trace's recorded schedule (module docstring)."""

    algorithm: str = "orig"

    rule: ClassVar[str] = "orig"

    def _options(self) -> dict[str, Any]:
        if self.algorithm != "orig":
            raise ValueError(f"policy orig takes no parameters, got {self.algorithm!r}")
        return {}

    def _schedule(self, instance: Instance) -> Schedule:
        machine = instance.machine
        if not machine.flat or machine.allocation != "any" or instance.moldable:
            raise ValueError(
                "policy orig needs identical processors, allocation 'any' and "
                "rigid jobs (a recorded schedule names no processors)"
            )
        missing = [job.id for job in instance.jobs if job.wait is None or job.wait < 0]
        if missing:
            raise ValueError(
                f"policy orig needs each job's recorded wait (SWF field 3); "
                f"{len(missing)} jobs have none, e.g. job {missing[0]}"
            )
        m = machine.processors
        runs = sorted(
            (job.release + (job.wait or 0), job.runtime, job.size, job.id)
            for job in instance.jobs
        )
        free = list(range(m))  # a heap of free processor ids
        ending: list[tuple[int, int, tuple[int, ...]]] = []  # (end, job, ids)
        placements: dict[int, Placement] = {}
        for start, runtime, size, jid in runs:
            while ending and ending[0][0] <= start:
                for p in heapq.heappop(ending)[2]:
                    heapq.heappush(free, p)
            if size > len(free):
                raise ValueError(
                    f"the recorded schedule holds {m - len(free) + size} processors "
                    f"at time {start} (job {jid} starts), more than the machine's {m}"
                )
            ids = tuple(sorted(heapq.heappop(free) for _ in range(size)))
            placements[jid] = Placement(start, start + runtime, ids)
            if runtime > 0:
                heapq.heappush(ending, (start + runtime, jid, ids))
            else:
                for p in ids:
                    heapq.heappush(free, p)
        return Schedule(placements, "orig")
