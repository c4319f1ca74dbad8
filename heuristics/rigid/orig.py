"""The recorded schedule of a trace, evaluated as if it were a policy.

``--policy orig`` starts every job at its recorded start, ``submit +
wait`` (SWF field 3), and runs it for its recorded run time. Its ratio to
the optimum is the site's own competitive gap (Mallmann 1997, §4.1: the
"orig" column of every comparison).

Processors are given greedily in time order (the lowest free ids), which
succeeds whenever the recorded schedule never holds more than ``m``
processors (interval graphs are coloured optimally in start order). A
recorded schedule that does hold more (a log's clock skew, runtimes
rounded up, a machine size override) is refused with the first instant
that breaks it, since no valid schedule reproduces it; ``orig:repair``
instead delays each job that does not fit, in recorded start order, to the
first instant its processors are free (:func:`recorded_schedule` says how
many jobs moved and by how much in all).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, ClassVar

from optsched.heuristics.engine.standalone import Standalone
from optsched.heuristics.spec import Family, SpecParts, join_spec, split_spec
from optsched.instance import Instance
from optsched.packing import Profile
from optsched.schedule import Placement, Schedule


@dataclass(frozen=True)
class Repairs:
    """What ``orig:repair`` changed: jobs delayed and their summed delay (s)."""

    delayed: int = 0
    delay: int = 0


def recorded_schedule(
    instance: Instance, *, repair: bool = False
) -> tuple[Schedule, Repairs]:
    """The recorded schedule of ``instance`` (module docstring) and its repairs."""
    machine = instance.machine
    if not machine.flat or machine.allocation != "any" or instance.moldable:
        raise ValueError(
            "policy orig needs identical processors, allocation 'any' and "
            "rigid jobs (a recorded schedule names no processors)"
        )
    if machine.unavailable:
        raise ValueError("policy orig takes no busy blocks (cut windows without them)")
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
    starts: dict[int, int] = {}
    repairs = Repairs()
    profile = Profile(0, m)
    for recorded, runtime, size, jid in runs:
        profile.advance(recorded)  # recorded starts never go back
        start = recorded
        if runtime > 0 and not profile.fits(recorded, runtime, size):
            if not repair:
                held = m - profile.min_free(recorded, recorded + runtime)
                raise ValueError(
                    f"the recorded schedule holds {held + size} processors "
                    f"after time {recorded} (job {jid} starts then), more than "
                    f"the machine's {m} (orig:repair delays such jobs)"
                )
            found = profile.earliest(size, runtime)
            assert found is not None  # size <= m: an empty future fits
            start = found
            repairs = Repairs(repairs.delayed + 1, repairs.delay + start - recorded)
        profile.add(start, start + runtime, -size)
        starts[jid] = start
    return _assigned(instance, starts), repairs


def _assigned(instance: Instance, starts: dict[int, int]) -> Schedule:
    """Processors for the given starts: the lowest free ids in start order
    (optimal colouring of the interval graph)."""
    free = list(range(instance.machine.processors))  # a heap of free ids
    ending: list[tuple[int, int, tuple[int, ...]]] = []  # (end, job, ids)
    placements: dict[int, Placement] = {}
    for jid, start in sorted(starts.items(), key=lambda item: (item[1], item[0])):
        job = instance.job(jid)
        while ending and ending[0][0] <= start:
            for p in heapq.heappop(ending)[2]:
                heapq.heappush(free, p)
        if job.runtime == 0:
            # A job of 0 s occupies nothing (the checker's rule 4): any ids.
            spare = sorted(free)[: job.size]
            ids = tuple(spare) if len(spare) == job.size else tuple(range(job.size))
            placements[jid] = Placement(start, start, ids)
            continue
        ids = tuple(sorted(heapq.heappop(free) for _ in range(job.size)))
        placements[jid] = Placement(start, start + job.runtime, ids)
        heapq.heappush(ending, (start + job.runtime, jid, ids))
    return Schedule(placements, "orig")


@dataclass(frozen=True)
class Orig(Standalone):
    """The trace's recorded schedule (module docstring)."""

    algorithm: str = "orig"

    rule: ClassVar[str] = "orig"

    def __post_init__(self) -> None:
        # Any spelling becomes the canonical spec (the results store's key).
        canonical = _canonical(_repair(split_spec(self.algorithm)))
        object.__setattr__(self, "algorithm", canonical)
        super().__post_init__()

    def _options(self) -> dict[str, Any]:
        return {"repair": self.algorithm == _canonical(True)}

    def _schedule(self, instance: Instance) -> Schedule:
        return recorded_schedule(instance, **self._options())[0]


def _repair(parts: SpecParts) -> bool:
    """Whether an ``orig`` spec asks for repairs (its one option, a flag).

    Raises
    ------
    ValueError
        Another name, another key, a value given to ``repair``.
    """
    if parts.name != "orig":
        raise ValueError(f"not an orig spec: {parts.text!r}")
    parts.check(("repair",), flags=("repair",))
    if parts.params.get("repair") is not None:
        raise parts.error("parameter 'repair' takes no value")
    return "repair" in parts.params


def _canonical(repair: bool) -> str:
    return join_spec("orig", ["repair"] if repair else [])


def parse_orig(parts: SpecParts) -> Orig:
    """The :class:`Orig` policy named by a spec's tokens."""
    return Orig(algorithm=_canonical(_repair(parts)))


FAMILY = Family(parse_orig, names=("orig",))
"""The recorded schedule in the spec parser's table
(:data:`optsched.heuristics.spec.FAMILIES`)."""
